"""The crawl report: its figures against the crawl's own records and the web's
ground truth, its trend across two days on one crawl db, its escaping of
what pages and servers send, its refusals of bad input, and the page itself
as headless Chromium shows it.

One crawl of the daily test web over two simulated days (`--now`) on one
shared `--db` serves every test (tests/report_support.py makes it; the
README's screenshot is made from the same two days).  That crawl runs inline,
on one reduce task a layer; the table of a layer's tasks is checked on more
than it lists on one local-runner crawl of the small test web.
"""
from __future__ import annotations

import base64
import http.server
import json
import shutil
import subprocess
import sys
import threading
from collections import Counter
from pathlib import Path

import pytest
from lxml import html
from selenium.webdriver.common.by import By

from crawl_support import (PageHandler, crawl, crawl_docs, db_records, layer_docs, read_records, write_config,
                           write_inputs, xml_pages)
from report_support import DAYS, DEPTH, crawl_two_days, start_browser
from test_failed_crawls import write_unanswered_inputs
from mrcrawl.driver import EXIT_NOTHING_FETCHED, EXIT_OK
from mrcrawl.page.urls import host_key
from mrcrawl.report import gather
from mrcrawl.report.__main__ import EXIT_NOT_WRITTEN, EXIT_USAGE, main
from mrcrawl.report.figures import TEXT_LENGTH_BINS, text_length_bin
from mrcrawl.report.page import TASKS_LISTED
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import FETCHED, GONE, NOT_MODIFIED, error_kind
from mrcrawl.testweb import start_test_web

CHARTS = ("chart-layer-outcomes", "chart-layer-seconds", "chart-throughput", "chart-hosts", "chart-charsets",
          "chart-content-types", "chart-text-lengths", "chart-trend")
HOSTILE = {
    "url": 'http://127.0.0.9:1/"><script>window.injected=1</script>',
    "error": "<img src=x onerror=\"window.injected=2\"> HTTP 500 & more",
    "content_type": "text/<b onmouseover=window.injected=3>bold</b>",
    "name": "</title><script>window.injected=4</script>",
}
PLACED_DEPTH = 2
PLACED_TASKS = TASKS_LISTED + 1  # one more than a layer's table lists


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    return crawl_two_days(tmp_path_factory.mktemp("report"))


@pytest.fixture(scope="module")
def placed(tmp_path_factory):
    """A local-runner crawl of the small test web on more reduce tasks than a
    layer's table lists, and than the web has hosts: some tasks get no URL."""
    directory = tmp_path_factory.mktemp("placed")
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, directory)
        status = crawl(seeds, conf, directory / "crawl", PLACED_DEPTH, "local", "--reducers", str(PLACED_TASKS))
    assert status == EXIT_OK
    return directory / "crawl"


def crawl_counters(output: Path, group: str) -> Counter:
    """A counter group summed over the crawl steps crawl.json records."""
    done = json.loads((output / "crawl.json").read_text())["done"]
    return sum((Counter(step["counters"].get(group, {})) for name, step in done.items() if name.startswith("crawl/")),
               Counter())


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(path.relative_to(directory)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(directory.rglob("*"))}


def test_every_run_writes_its_report_and_the_db_counts_each_run_once(days):
    assert days.statuses == {day: EXIT_OK for day in DAYS}
    assert all((days.outputs[day] / "report.html").stat().st_size > 0 for day in DAYS)
    runs = json.loads((days.db / "db.json").read_text())["runs"]
    records = dict(db_records(days.db))
    # New URLs: the db's records by the run that discovered them.
    assert {run: entry["urls added"] for run, entry in runs.items()} == Counter(r["first_run"] for r in records.values())
    for day, (run, entry) in zip(DAYS, sorted(runs.items())):
        assert run.startswith(days.web.date_iso(day)[:10])
        outcomes = crawl_counters(days.outputs[day], "outcome")
        assert (entry["urls fetched"], entry["urls not modified"]) == (outcomes[FETCHED], outcomes[NOT_MODIFIED])
    # Articles are deleted from day 2 on: every gone URL turned gone then, and day 2 saw some.
    gone = sum(record["status"] == GONE for record in records.values())
    assert [entry["urls gone"] for _, entry in sorted(runs.items())] == [0, gone] and gone > 0
    assert [entry["urls not modified"] > 0 for _, entry in sorted(runs.items())] == [False, True]


def test_the_figures_are_the_crawls_records_and_counters(days):
    output = days.outputs[2]
    figures = gather(output)
    done = json.loads((output / "crawl.json").read_text())["done"]
    for layer in figures.layers:
        assert layer.outcomes == Counter(done[f"crawl/{layer.layer}"]["counters"]["outcome"])
        assert layer.seconds["crawl"] == done[f"crawl/{layer.layer}"]["seconds"]
    docs = crawl_docs(output)
    assert figures.attempted == len(docs) == sum(host.urls for host in figures.hosts.values())
    # The hosts are the web's sites, each asked politely.
    assert set(figures.hosts) == {host_key(url) for url in days.web.seed_urls}
    for name, host in figures.hosts.items():
        assert host.smallest_gap is not None and host.smallest_gap >= days.config["delay"] - 0.001, name
    assert figures.bytes == sum(len(base64.b64decode(doc.get("body") or doc.get("archive_body") or ""))
                                for doc in docs)
    errors = crawl_counters(output, "error")
    assert {kind: error.count for kind, error in figures.errors.items()} == errors and errors
    for kind, error in figures.errors.items():
        assert set(error.examples) <= {doc["requested_url"] for doc in docs if error_kind(doc) == kind}
    assert figures.charsets == {"utf-8": crawl_counters(output, "outcome")[FETCHED]}  # every page of the web is UTF-8
    # Main-text lengths: the run's XML pages, each in its bin.
    lengths = [len(page.findtext("content") or "") for page in xml_pages(output).values()]
    expected = Counter(text_length_bin(length) for length in lengths)
    assert figures.text_lengths == [expected[index] for index in range(len(TEXT_LENGTH_BINS))] and lengths
    assert sum(figures.requests_per_second.values()) == sum(1 for doc in docs if doc["attempts"])
    assert [day.day for day in figures.trend] == [days.web.date_iso(day)[:10] for day in DAYS]
    assert figures.result == "complete"


def test_day_one_is_the_web_as_it_was_on_day_one(days):
    """The first run requests what the web's ground truth says is within the
    depth, layer by layer; its only errors are the articles that fail that day."""
    figures = gather(days.outputs[1])
    reachable = days.web.reachable(1, depth=len(figures.layers))
    assert [sum(layer.outcomes.values()) for layer in figures.layers] == [
        list(reachable.values()).count(layer) for layer in range(len(figures.layers))]
    failing = set(days.web.events(1).failing)
    assert set(figures.errors) == {FailureKind.HTTP_5XX} and set(figures.errors[FailureKind.HTTP_5XX].examples) <= failing
    assert figures.errors[FailureKind.HTTP_5XX].count == len(failing & set(reachable))


def summary_rows(report: Path) -> dict[str, str]:
    page = html.parse(str(report))
    return {row[0].text_content(): row[1].text_content() for row in page.xpath("//table[@id='summary-table']/tr[td]")}


def test_the_summary_names_the_runs_xml_pages_and_due_urls(days):
    """The counts are the steps' counters, and those are what the stores hold:
    the lines of xml/, and the frontier entries of layer 0 that are no seeds."""
    for day in DAYS:
        output = days.outputs[day]
        summary = summary_rows(output / "report.html")
        done = json.loads((output / "crawl.json").read_text())["done"]
        [xml_step] = [step for name, step in done.items() if name.startswith("xml/")]
        pages = len(xml_pages(output))
        assert xml_step["counters"]["xml"]["pages"] == pages
        assert summary["XML pages written"].split()[0] == f"{pages:,}"
        due = sum(not entry["seed"] for _, entry in read_records(output / "in" / "0"))
        assert done["generate/0"]["counters"]["generate"].get("due urls", 0) == due
        assert summary["URLs due"].split()[0] == f"{due:,}"
    # Day 1 found an empty db; on day 2 the hubs and the articles of day 1 were due, and some changed.
    assert summary_rows(days.outputs[1] / "report.html")["URLs due"].split()[0] == "0"
    assert due > 0 and 0 < pages < sum(1 for doc in crawl_docs(output) if doc["outcome"] == FETCHED)


def test_a_step_whose_runner_reported_no_counters_is_said_to_be_uncounted(days, tmp_path):
    """Spark reports no counters of an ordinary step: crawl.json keeps them empty."""
    copy = shutil.copytree(days.outputs[2], tmp_path / "day2")
    state = json.loads((copy / "crawl.json").read_text())
    for name, step in state["done"].items():
        if name.startswith(("xml/", "generate/")):
            step["counters"] = {}
    (copy / "crawl.json").write_text(json.dumps(state))
    assert main([str(copy)]) == EXIT_OK
    summary = summary_rows(copy / "report.html")
    assert summary["XML pages written"].startswith("not counted: ")
    assert summary["URLs due"].startswith("not counted: ")


def test_the_page_says_what_the_figures_say(days):
    page = html.parse(str(days.outputs[2] / "report.html"))
    summary = summary_rows(days.outputs[2] / "report.html")
    outcomes = crawl_counters(days.outputs[2], "outcome")
    assert summary["URLs attempted"] == f"{sum(outcomes.values()):,}"
    assert summary["pages fetched"] == f"{outcomes[FETCHED]} fetched, {outcomes[NOT_MODIFIED]} not modified"
    assert summary["result"] == "complete" and summary["runner"] == "inline"
    runs = json.loads((days.db / "db.json").read_text())["runs"]
    trend = [[cell.text_content() for cell in row] for row in page.xpath("//table[@id='trend-table']/tr[td]")]
    assert [row[2:] for row in trend] == [[f"{entry[name]:,}" for name in ("urls added", "urls fetched",
                                           "urls not modified", "urls gone")] for _, entry in sorted(runs.items())]


def hostile_copy(days, directory: Path) -> Path:
    """Day 1's crawl, with a record whose URL, error and content type are
    markup, and a crawl name that is markup."""
    copy = shutil.copytree(days.outputs[1], directory / "hostile")
    doc = {"url": HOSTILE["url"], "requested_url": HOSTILE["url"], "layer": 0, "outcome": "http_error",
           "status": 500, "error": HOSTILE["error"], "error_kind": FailureKind.HTTP_5XX, "content_type": HOSTILE["content_type"],
           "fetched_at": "2026-01-05T06:00:01.000Z", "attempts": 1, "body": None, "archive_body": None}
    with open(copy / "doc" / "0" / "part-00000", "a", encoding="utf-8") as part:
        part.write(json.dumps(HOSTILE["url"]) + "\t" + json.dumps(doc) + "\n")
    config = json.loads((copy / "config.json").read_text())
    (copy / "config.json").write_text(json.dumps({**config, "name": HOSTILE["name"]}))
    return copy


def test_markup_from_pages_and_servers_is_shown_as_text(days, tmp_path):
    copy = hostile_copy(days, tmp_path)
    assert main([str(copy)]) == EXIT_OK
    page = html.parse(str(copy / "report.html"))
    assert not page.xpath("//script | //img | //*[@onerror or @onmouseover] | //b")
    text = page.getroot().text_content()
    assert page.findtext(".//title") == f"mrcrawl report: {HOSTILE['name']}"
    assert HOSTILE["url"] in text and HOSTILE["content_type"] in text and "HTTP 500" in text
    [row] = [row for row in page.xpath("//table[@id='error-table']/tr[td]") if HOSTILE["url"] in row.text_content()]
    assert row[0].text_content() == FailureKind.HTTP_5XX.label


def test_the_report_in_a_browser(days, tmp_path):
    """Headless Chromium: no console error, every chart shown with its marks,
    nothing fetched from anywhere; a hostile page's markup runs nothing."""
    report = days.outputs[2] / "report.html"
    source = report.read_text(encoding="utf-8")
    tree = html.fromstring(source)
    assert not tree.xpath("//script | //link | //img | //iframe | //*[@src or @href]") and "url(" not in source
    assert "http-equiv" in source and "default-src 'none'" in source
    hostile = hostile_copy(days, tmp_path)
    assert main([str(hostile)]) == EXIT_OK
    browser = start_browser()
    try:
        browser.get(report.resolve().as_uri())
        for chart_id in CHARTS:
            chart = browser.find_element(By.ID, chart_id)
            assert chart.is_displayed() and chart.size["width"] > 0 and chart.size["height"] > 0, chart_id
            marks = chart.find_elements(By.CSS_SELECTOR, "rect.mark")
            assert marks and all(mark.size["width"] > 0 and mark.size["height"] > 0 for mark in marks), chart_id
        trend_days = {mark.get_attribute("textContent").split(":")[0]
                      for mark in browser.find_elements(By.CSS_SELECTOR, "#chart-trend rect.mark")}
        assert trend_days == {days.web.date_iso(day)[:10] for day in DAYS}
        assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0
        assert browser.current_url.startswith("file://")
        logged = browser.get_log("browser")
        assert not [entry for entry in logged if entry["level"] == "SEVERE"], logged

        browser.get((hostile / "report.html").resolve().as_uri())
        assert browser.execute_script("return window.injected === undefined")
        assert HOSTILE["url"] in browser.find_element(By.ID, "error-table").text
        assert browser.title == f"mrcrawl report: {HOSTILE['name']}"
        logged = browser.get_log("browser")
        assert not [entry for entry in logged if entry["level"] == "SEVERE"], logged
    finally:
        browser.quit()


# A site whose URLs, and the errors they end in, are long unbroken words.
LONG_WORD = 240
REPORT_WINDOW = 1280  # CSS pixels: a laptop's window


class LongWordsSite(PageHandler):
    """Its home links two pages whose paths are one long word: one missing
    (404), one that redirects to a Location that is no http(s) URL, which
    its record's error quotes."""

    MISSING = "/" + "m" * LONG_WORD + ".html"
    ODD_REDIRECT = "/" + "r" * LONG_WORD
    ODD_LOCATION = "ftp://" + "f" * LONG_WORD

    def do_GET(self):
        if self.path == "/":
            links = "".join(f'<a href="{path}">a link</a> ' for path in (self.MISSING, self.ODD_REDIRECT))
            self.send_html(f"<html><head><title>Home</title></head><body><p>{links}</p></body></html>".encode())
        elif self.path == self.ODD_REDIRECT:
            self.send_response(302)
            self.send_header("Location", self.ODD_LOCATION)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)


def crawl_long_words(directory: Path) -> Path:
    """A crawl of LongWordsSite into a directory of a long name: its report."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LongWordsSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        home = f"http://127.0.0.1:{server.server_address[1]}/"
        config = {"language": "en", "user_agent": "mrcrawl-test/1.0 (+http://127.0.0.1/)", "delay": 0,
                  "retries": 0, "timeout": 2, "allow_private_networks": True}
        seeds, conf = write_config(directory / "inputs", config, [home])
        output = directory / ("crawl-directory-of-a-long-name-" + "d" * 120)
        assert crawl(seeds, conf, output, 2) == EXIT_OK
    finally:
        server.shutdown()
        server.server_close()
    return output / "report.html"


# Each table, and each of its cells, against the box it sits in; the page against the window.
OVERFLOWS = """
const overflows = [];
const page = document.documentElement;
if (page.scrollWidth > page.clientWidth) overflows.push(`the page: ${page.scrollWidth} > ${page.clientWidth} px`);
for (const table of document.querySelectorAll('table')) {
  const box = table.parentElement.getBoundingClientRect();
  const shape = table.getBoundingClientRect();
  if (shape.left < box.left - 0.5 || shape.right > box.right + 0.5)
    overflows.push(`${table.id}: ${shape.width} px wide in a box of ${box.width} px`);
  if (table.scrollWidth > table.clientWidth)
    overflows.push(`${table.id}: its content is ${table.scrollWidth} px wide in ${table.clientWidth} px`);
  for (const cell of table.querySelectorAll('td, th'))
    if (cell.scrollWidth > cell.clientWidth)
      overflows.push(`${table.id}: a cell's content is ${cell.scrollWidth} px wide in ${cell.clientWidth} px`);
}
return overflows;
"""


def test_the_page_fits_a_laptop_window_with_long_urls_and_errors(tmp_path):
    """At 1,280 CSS pixels no table is cut or wider than its box, and the
    window does not scroll sideways: long URLs and errors wrap."""
    report = crawl_long_words(tmp_path)
    source = report.read_text(encoding="utf-8")
    quoted = LongWordsSite.ODD_LOCATION[:150]  # the error quotes the Location's start
    assert LongWordsSite.MISSING in source and quoted in source
    browser = start_browser()
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": REPORT_WINDOW, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        browser.get(report.resolve().as_uri())
        assert browser.execute_script("return window.innerWidth") == REPORT_WINDOW
        assert browser.execute_script(OVERFLOWS) == []
        # The long words are there to be read, whole, not cut off.
        assert quoted in browser.find_element(By.ID, "error-table").text.replace("\n", "")
    finally:
        browser.quit()


def test_a_crawl_that_fetched_nothing_gets_a_report_that_says_so(tmp_path, capsys):
    seeds, conf = write_unanswered_inputs(tmp_path)
    assert crawl(seeds, conf, tmp_path / "crawl", 1) == EXIT_NOTHING_FETCHED
    said = capsys.readouterr().err.splitlines()
    # Written before the line that ends the run, which stays the last one.
    assert said[-2:-1] == [f"report: {tmp_path / 'crawl' / 'report.html'}"] and "no page fetched" in said[-1], said
    page = html.parse(str(tmp_path / "crawl" / "report.html"))
    said = page.getroot().get_element_by_id("nothing-fetched").text_content()
    assert "fetched no page" in said and "Connection refused" in said
    assert not page.xpath("//svg[@id='chart-charsets']//*[@class='mark']")


def test_a_report_that_cannot_be_written_is_a_warning_and_the_run_keeps_its_status(days, tmp_path, capsys, caplog):
    copy = shutil.copytree(days.outputs[2], tmp_path / "day2")
    (copy / "report.html").unlink()
    (copy / "report.html").mkdir()  # where the report goes, something it cannot replace
    done = json.loads((copy / "crawl.json").read_text())["done"]
    assert crawl(days.seeds, days.conf, copy, DEPTH, "inline", "--resume") == EXIT_OK
    assert "report: " not in capsys.readouterr().out
    assert [record.levelname for record in caplog.records
            if "the crawl report was not written: IsADirectoryError" in record.getMessage()] == ["WARNING"]
    assert json.loads((copy / "crawl.json").read_text())["done"] == done


def test_a_crawl_stopped_before_its_first_step_still_gets_a_report(days, tmp_path):
    started = tmp_path / "started"
    started.mkdir()
    shutil.copy(days.outputs[1] / "config.json", started)
    state = json.loads((days.outputs[1] / "crawl.json").read_text())
    (started / "crawl.json").write_text(json.dumps({**state, "done": {}}))
    assert main([str(started), "--db", str(days.db)]) == EXIT_OK
    page = html.parse(str(started / "report.html"))
    assert "no step finished" in page.getroot().text_content()
    assert not page.xpath("//svg[@id='chart-layer-outcomes']//*[@class='mark']")
    assert page.xpath("//svg[@id='chart-trend']//*[@class='mark']")  # the db's runs are there all the same


def test_bad_input_is_one_line_and_touches_nothing(days, tmp_path, capsys):
    empty = tmp_path / "empty"
    empty.mkdir()
    result = subprocess.run([sys.executable, "-m", "mrcrawl.report", str(empty)], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == EXIT_USAGE and list(empty.iterdir()) == []
    assert result.stderr == f"mrcrawl report: {empty}: holds no crawl (no crawl.json)\n"

    day1 = days.outputs[1]
    before = snapshot(day1)
    assert main([str(tmp_path / "missing")]) == EXIT_USAGE
    assert main([str(day1), "--db", str(empty), "-o", str(tmp_path / "r.html")]) == EXIT_USAGE
    assert main([str(day1), "-o", str(tmp_path / "no" / "such" / "dir" / "r.html")]) == EXIT_NOT_WRITTEN
    with pytest.raises(SystemExit) as exited:
        main([])
    assert exited.value.code == EXIT_USAGE
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[:3] == [f"mrcrawl report: {tmp_path / 'missing'}: no such directory",
                         f"mrcrawl report: --db {empty}: {empty}: holds no crawl db (no db.json)",
                         f"mrcrawl report: cannot write {tmp_path / 'no' / 'such' / 'dir' / 'r.html'}: "
                         "No such file or directory"]
    assert snapshot(day1) == before and not (tmp_path / "r.html").exists()


def per_task(group: dict) -> dict[int, dict[str, int]]:
    """A group of per-task counters as stats.json holds it ("00003 urls": 4) by task."""
    tasks: dict[int, dict[str, int]] = {}
    for name, amount in group.items():
        task, what = name.split(" ", 1)
        tasks.setdefault(int(task), {})[what] = amount
    return tasks


def seconds(milliseconds: int) -> str:
    return f"{milliseconds / 1000:,.2f}"


def stated_tasks(output: Path, layer: int) -> tuple[dict, dict, float, dict]:
    """stats.json's word on a layer's tasks: the plan and the load per task,
    the Crawler step's seconds, and the placement's own counters."""
    stats = json.loads((output / "stats.json").read_text())
    place, crawled = stats[f"place/{layer}"], stats[f"crawl/{layer}"]
    planned = per_task(place["counters"]["planned load"])
    loads = per_task(crawled["counters"]["task load"])
    for task in planned.keys() - loads.keys():  # a task given no URL counts nothing, not even its time
        assert planned[task]["urls"] == 0, (layer, task)
        loads[task] = {"urls": 0, "hosts": 0, "busy ms": 0}
    return planned, loads, crawled["seconds"], place["counters"]["place"]


def expected_task_table(output: Path, layer: int) -> tuple[list[list[str]], str, float]:
    """A layer's task table as stats.json says it should read, the busiest
    first and the rest summed in one row; its line's start; its imbalance."""
    planned, loads, crawl_seconds, place = stated_tasks(output, layer)
    slowest = max(load["busy ms"] for load in loads.values())
    ranked = sorted(loads, key=lambda task: (-loads[task]["busy ms"], task))

    def cells(tasks):
        total = lambda source, what: sum(source[task][what] for task in tasks)  # noqa: E731
        return [f"{total(planned, 'urls'):,}", f"{total(planned, 'queues'):,}", seconds(total(planned, "expected ms")),
                f"{total(loads, 'urls'):,}", f"{total(loads, 'hosts'):,}", seconds(total(loads, "busy ms")),
                seconds(sum(slowest - loads[task]["busy ms"] for task in tasks))]
    rows = [["task", "planned URLs", "planned queues", "expected s", "URLs", "hosts", "busy s", "idle s"]]
    rows += [[str(task), *cells([task])] for task in ranked[:TASKS_LISTED]]
    rest = ranked[TASKS_LISTED:]
    if rest:
        rows.append([f"{len(rest)} more {'task' if len(rest) == 1 else 'tasks'} (sums)", *cells(rest)])
    line = (f"Layer {layer}: expected {seconds(place['expected layer ms'])} s by the plan; "
            f"the Crawler step took {crawl_seconds:,.2f} s; slowest task busy {seconds(slowest)} s")
    return rows, line, slowest / (sum(load["busy ms"] for load in loads.values()) / len(loads))


def shown_tables(browser, output: Path) -> dict[int, tuple[list[list[str]], str]]:
    """Per layer of the crawl, its task table's cells and its line, as the browser shows them."""
    browser.get((output / "report.html").resolve().as_uri())
    logged = browser.get_log("browser")
    assert not [entry for entry in logged if entry["level"] == "SEVERE"], logged
    layers = sorted({int(name.split("/")[1]) for name in json.loads((output / "stats.json").read_text())
                     if name.startswith("crawl/")})
    shown = {}
    for layer in layers:
        table = browser.find_element(By.ID, f"task-table-{layer}")
        assert table.is_displayed() and table.size["height"] > 0
        rows = [[cell.text for cell in row.find_elements(By.CSS_SELECTOR, "th, td")]
                for row in table.find_elements(By.TAG_NAME, "tr")]
        shown[layer] = rows, browser.find_element(By.ID, f"tasks-{layer}").text
    return shown


def assert_tables_are_the_stats(browser, output: Path) -> None:
    for layer, (rows, line) in shown_tables(browser, output).items():
        expected_rows, expected_line, imbalance = expected_task_table(output, layer)
        assert rows == expected_rows, layer
        assert line.startswith(expected_line), (line, expected_line)
        shown_imbalance = float(line.split("imbalance ")[1].split()[0])
        assert shown_imbalance == pytest.approx(imbalance, abs=0.005), line


def test_each_layers_tasks_in_a_browser_are_what_stats_json_holds(days, placed):
    """Inline, a layer's one task; on the local runner, more tasks than the
    table lists: the busiest, then one row of the rest."""
    browser = start_browser()
    try:
        for output in days.outputs.values():
            assert_tables_are_the_stats(browser, output)
        assert_tables_are_the_stats(browser, placed)
        rows, _ = shown_tables(browser, placed)[0]
        assert len(rows) == 1 + TASKS_LISTED + 1 and rows[-1][0] == f"{PLACED_TASKS - TASKS_LISTED} more task (sums)"
    finally:
        browser.quit()


def test_the_task_figures_are_the_counters_and_each_tasks_doc_part(placed):
    """On the local runner reduce task N writes doc/L/part-N (an empty one is
    not kept): the URLs and hosts a task counted are those of its part."""
    figures = gather(placed)
    assert [layer.layer for layer in figures.layers] == list(range(PLACED_DEPTH))
    for layer in figures.layers:
        planned, loads, crawl_seconds, place = stated_tasks(placed, layer.layer)
        assert [task.task for task in layer.tasks] == list(range(PLACED_TASKS)) == sorted(planned)
        assert layer.expected_seconds == place["expected layer ms"] / 1000
        assert layer.expected_seconds == max(task.expected_seconds for task in layer.tasks)
        assert layer.crawler_seconds == crawl_seconds
        for task in layer.tasks:
            part = placed / "doc" / str(layer.layer) / f"part-{task.task:05d}"
            lines = part.read_text().splitlines() if part.exists() else []
            docs = [json.loads(line.split("\t", 1)[1]) for line in lines]
            assert (task.urls, task.hosts) == (len(docs), len({host_key(doc["requested_url"]) for doc in docs}))
            plan = planned[task.task]
            assert (task.planned_urls, task.planned_queues) == (plan["urls"], plan["queues"])
            assert task.busy_seconds == loads[task.task]["busy ms"] / 1000
        assert sum(task.urls for task in layer.tasks) == len(layer_docs(placed, layer.layer)) == place["urls"]
        # Some tasks were given no URL: they sat idle the whole layer.
        idle = [task for task in layer.tasks if not task.urls]
        assert idle and all(layer.idle_seconds(task) == layer.slowest_busy for task in idle)
        busiest = max(layer.tasks, key=lambda task: task.busy_seconds)
        assert layer.idle_seconds(busiest) == 0 and layer.imbalance > 1


def test_a_crawl_from_before_placement_gets_its_report_without_tasks(days, tmp_path):
    """A crawl directory whose steps counted no plan and no task load:
    `mrcrawl report` writes the page, every other section in it, and no
    reduce tasks."""
    old = shutil.copytree(days.outputs[2], tmp_path / "old")
    for state_file in ("crawl.json", "stats.json"):
        state = json.loads((old / state_file).read_text())
        done = state["done"] if state_file == "crawl.json" else state
        for name in [name for name in done if name.startswith("place/")]:
            del done[name]
        for name, step in done.items():
            step["counters"].pop("task load", None)
        (old / state_file).write_text(json.dumps(state))
    shutil.rmtree(old / "place")
    (old / "report.html").unlink()
    result = subprocess.run([sys.executable, "-m", "mrcrawl", "report", str(old)], capture_output=True, text=True,
                            timeout=120)
    assert (result.returncode, result.stdout, result.stderr) == (EXIT_OK, f"{old / 'report.html'}\n", "")
    page = html.parse(str(old / "report.html"))
    assert not page.xpath("//*[@id='tasks' or starts-with(@id, 'task-table') or starts-with(@id, 'tasks-')]")
    figures = gather(old)
    assert figures.layers and all(not layer.tasks and layer.expected_seconds is None for layer in figures.layers)
    assert summary_rows(old / "report.html")["result"] == "complete"
    assert page.xpath("//table[@id='layer-table']/tr[td]") and page.xpath("//svg[@id='chart-hosts']//*[@class='mark']")
