"""The trap guards: the guard function on its own, with StormCrawler's and
Nutch's cases; the Parser's out record; and a crawl of the test web's
calendar trap, whose chains the guards (or the depth) stop: every URL a
guard caught is `trapped` in the crawl db with its guard and was never
requested, the rest of the web is crawled as the oracle says, an injected
or seeded trapped URL is fetched all the same, and `mrcrawl db stats` and
the crawl report show what waits per pay-level domain.
"""
from __future__ import annotations

import itertools
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
from lxml import html
from selenium.webdriver.common.by import By

from crawl_support import crawl, db_records, layer_docs, layer_triples, read_records, write_inputs
from report_support import start_browser
from test_crawldb import update
from test_report import OVERFLOWS, REPORT_WINDOW
from mrcrawl import inject
from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.waiting import waiting_in
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.traps import NO_GUARDS, TrapGuards, trap_guard
from mrcrawl.page.urls import UrlFilter
from mrcrawl.report import write_report
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import (
    DEFERRED_BY_HOST_CAP,
    DEFERRED_BY_LAYER_CAP,
    DEFERRED_BY_TIME_LIMIT,
    FETCHED,
    REDIRECT,
    TRAP_GUARDS,
    TRAPPED,
    TRAPPED_BY_LENGTH,
    TRAPPED_BY_PATH_REPEATS,
    TRAPPED_BY_QUERY_PARAMS,
    UNFETCHED,
    encode_body,
    new_doc,
    new_frontier_entry,
)
from mrcrawl.testweb import expected_layers_for_config, expected_traps_for_config, generate_web, start_test_web
from mrcrawl.testweb.oracle import CrawlRules
from mrcrawl.testweb.sites import CALENDAR_MONTHS

DEFAULTS = TrapGuards.of(CrawlConfig(language="en", user_agent="mrcrawl-test/1.0"))
SITE = "http://news.example"
# Nutch's default regex-urlfilter.txt: "skip URLs with slash-delimited
# segment that repeats 3+ times, to break loops".
NUTCH_REPEATS = re.compile(r"(/[^/]+)/[^/]+\1/[^/]+\1/")
NUTCH_MAX_OUTLINK = 4096  # characters: Nutch's bound on an outlink
STORMCRAWLER_MAX_LENGTH = 1024  # StormCrawler's BasicURLFilter maxLength
STORMCRAWLER_MAX_REPETITION = 3  # and maxPathRepetition


def stormcrawler_drops(url: str, max_repetition: int = STORMCRAWLER_MAX_REPETITION) -> bool:
    """StormCrawler's BasicURLFilter on path repetition: the URL split at
    every slash, and dropped once one part has been seen `max_repetition`
    times (a URL of four parts or fewer is never dropped)."""
    parts = url.split("/")
    if len(parts) <= 4:
        return False
    seen = {}
    for part in filter(None, parts):
        seen[part] = seen.get(part, 0) + 1
        if seen[part] == max_repetition:
            return True
    return False


# ---- the guards on their own -------------------------------------------------------------

def test_the_defaults_are_the_configs():
    assert DEFAULTS == TrapGuards(max_url_length=1024, max_path_repeats=3, max_query_params=12)
    assert tuple(DEFAULTS._fields) == TRAP_GUARDS  # each guard is its config key


@pytest.mark.parametrize("path, guard", [
    ("/a/a/a/index.html", None),  # a segment three times: no more than max_path_repeats
    ("/a/a/a/a/index.html", TRAPPED_BY_PATH_REPEATS),
    ("/x/x/x/x/", TRAPPED_BY_PATH_REPEATS),
    ("/a/b/a/b/a/b/a/", TRAPPED_BY_PATH_REPEATS),  # not adjacent: a four times
    ("/a/b/a/b/a/b/", None),  # a and b three times each
    ("/2019/11/11/story.html", None),  # a date path: 11 twice
    ("/11/11/11/story.html", None),  # a two-digit year: three times
    ("/x//x//x//x", TRAPPED_BY_PATH_REPEATS),  # empty segments are none
    ("/x//x//x/", None),
    ("/A/a/A/a/A/a/", None),  # segments compare as spelt: A three times, a three times
    ("/cal/?x/x/x/x/", None),  # the query is no part of the path
    ("/%41/%41/%41/%41/", TRAPPED_BY_PATH_REPEATS),
])
def test_path_repeats_count_one_segments_occurrences(path, guard):
    assert trap_guard(SITE + path, DEFAULTS) == guard


@pytest.mark.parametrize("query, params", [
    ("a=1&a=2&b", 3),  # a name repeated counts each time; a name alone is a parameter
    ("a=1&&b=2", 2),  # empty fields are none
    ("&&&", 0),
    ("utm_source=x", 1),
    ("a=1;b=2", 1),  # only & separates
])
def test_query_params_are_the_non_empty_ampersand_fields(query, params):
    url = f"{SITE}/page?{query}"
    assert trap_guard(url, TrapGuards(max_query_params=params)) is None
    if params:
        assert trap_guard(url, TrapGuards(max_query_params=params - 1)) == TRAPPED_BY_QUERY_PARAMS


def test_a_news_link_with_every_tracking_parameter_passes_the_default():
    """The five utm_* of a tagged link, an id, a page and the ads' click ids: twelve."""
    tagged = (f"{SITE}/world/story?id=4711&page=2&utm_source=newsletter&utm_medium=email&utm_campaign=daily"
              "&utm_term=world&utm_content=top&fbclid=IwAR0&gclid=Cj0K&ref=home&share=1&lang=en")
    assert trap_guard(tagged, DEFAULTS) is None
    assert trap_guard(tagged + "&from=2025-01", DEFAULTS) == TRAPPED_BY_QUERY_PARAMS


def test_stormcrawlers_default_cases():
    """StormCrawler drops a URL of more than 1,024 characters, as the default
    here does; and a URL at a segment's third occurrence, which here is
    max_path_repeats 2: the default 3 lets a third occurrence (a date path
    /11/11/11/) through and catches the fourth."""
    stormcrawler = TrapGuards(STORMCRAWLER_MAX_LENGTH, STORMCRAWLER_MAX_REPETITION - 1, None)
    assert trap_guard("http://www.sourcedomain.com/a/a/a/index.html", stormcrawler) == TRAPPED_BY_PATH_REPEATS
    assert trap_guard("http://www.sourcedomain.com/a/b/a/index.html", stormcrawler) is None
    assert trap_guard("http://www.sourcedomain.com/a/a/a/index.html", DEFAULTS) is None
    longest = f"{SITE}/" + "a" * (STORMCRAWLER_MAX_LENGTH - len(SITE) - 1)
    assert len(longest) == 1024
    for guards in (stormcrawler, DEFAULTS):
        assert trap_guard(longest, guards) is None
        assert trap_guard(longest + "b", guards) == TRAPPED_BY_LENGTH
    # The same verdicts as StormCrawler's filter, on every path of up to six segments of three names.
    for path in sample_paths():
        url = SITE + path
        assert (trap_guard(url, stormcrawler) is not None) == stormcrawler_drops(url), url
        assert (trap_guard(url, DEFAULTS) is not None) == stormcrawler_drops(url, DEFAULTS.max_path_repeats + 1), url


def test_nutchs_default_cases():
    """Nutch's regex drops a segment's third occurrence when one segment
    stands between each (/a/b/a/c/a/): max_path_repeats 2 traps every URL it
    drops, and more (/a/a/a/ too).  Nutch keeps outlinks of up to 4,096
    characters: max_url_length 4096 does the same."""
    nutch = TrapGuards(NUTCH_MAX_OUTLINK, 2, None)
    assert NUTCH_REPEATS.search(f"{SITE}/a/b/a/c/a/d.html") and trap_guard(f"{SITE}/a/b/a/c/a/d.html", nutch)
    assert not NUTCH_REPEATS.search(f"{SITE}/a/a/a/d.html") and trap_guard(f"{SITE}/a/a/a/d.html", nutch)
    dropped = [path for path in sample_paths() if NUTCH_REPEATS.search(SITE + path)]
    assert dropped and all(trap_guard(SITE + path, nutch) == TRAPPED_BY_PATH_REPEATS for path in dropped)
    longest = f"{SITE}/" + "a" * (NUTCH_MAX_OUTLINK - len(SITE) - 1)
    assert trap_guard(longest, nutch) is None and trap_guard(longest + "b", nutch) == TRAPPED_BY_LENGTH


def sample_paths() -> list[str]:
    paths = []
    for length in range(1, 7):
        for names in itertools.product("abc", repeat=length):
            paths += ["/" + "/".join(names), "/" + "/".join(names) + "/"]
    return paths


def test_the_first_guard_that_catches_a_url_names_it_and_null_turns_a_guard_off():
    url = f"{SITE}/x/x/x/x/?" + "&".join(f"p{n}=1" for n in range(13)) + "&pad=" + "z" * 1000
    assert trap_guard(url, DEFAULTS) == TRAPPED_BY_LENGTH
    assert trap_guard(url, DEFAULTS._replace(max_url_length=None)) == TRAPPED_BY_PATH_REPEATS
    assert trap_guard(url, TrapGuards(None, None, 12)) == TRAPPED_BY_QUERY_PARAMS
    assert trap_guard(url, NO_GUARDS) is None


def test_the_oracle_reads_every_url_of_the_test_web_as_the_guards_do():
    """The oracle's guards (urllib's reading of a URL) and the crawler's agree,
    on every URL the test web serves or links, under several settings."""
    web = generate_web(seed=1, port=41000)
    urls = set(web.pages) | {link for page in web.pages.values() for link in page.links}
    for guards in (DEFAULTS, TrapGuards(60, 1, 1), TrapGuards(200, 2, 3), NO_GUARDS):
        rules = CrawlRules((), (), True, 0, 1.0, "x", 5, True, *guards)
        assert {url: rules.trap(url) for url in urls} == {url: trap_guard(url, guards) for url in urls}, guards


# ---- the Parser ----------------------------------------------------------------------

PAGE_URL = "http://127.0.0.2:41000/cal/x/x/x/"
SCOPE = UrlFilter([r"^http://127\.0\.0\.2:41000/"], [])


def test_the_parser_puts_the_links_a_guard_catches_apart_with_their_guard():
    page = (f'<p><a href="x/">deeper</a> <a href="/story.html">a story</a> <a href="?{"&amp;".join(["p=1"] * 13)}">'
            'filtered</a> <a href="http://127.0.0.9:41000/x/x/x/x/">out of scope</a></p>')
    doc = new_doc(PAGE_URL, 3, {"hops": 3, "known": None})
    doc.update(outcome=FETCHED, status=200, content_type="text/html", encoding="utf-8",
               body=encode_body(page.encode()), meta_follow=True)
    out = out_record(doc, SCOPE, guards=DEFAULTS)
    assert out["outlinks"] == ["http://127.0.0.2:41000/story.html"]
    assert out["trapped"] == [[PAGE_URL + "x/", TRAPPED_BY_PATH_REPEATS],
                              [PAGE_URL + "?" + "&".join(["p=1"] * 13), TRAPPED_BY_QUERY_PARAMS]]
    # Without guards (the default), every link in scope is followed, as before.
    assert out_record(doc, SCOPE)["outlinks"] == ["http://127.0.0.2:41000/cal/x/x/x/x/",
                                                  "http://127.0.0.2:41000/story.html", out["trapped"][1][0]]


def test_a_redirects_target_meets_the_guards_as_a_link_does():
    redirect = new_doc("http://127.0.0.2:41000/go", 1, {"hops": 1, "known": None})
    redirect.update(outcome=REDIRECT, status=302, redirect_to=PAGE_URL + "x/")
    out = out_record(redirect, SCOPE, guards=DEFAULTS)
    assert (out["outlinks"], out["trapped"]) == ([], [[PAGE_URL + "x/", TRAPPED_BY_PATH_REPEATS]])
    assert out_record(redirect, SCOPE, guards=DEFAULTS._replace(max_path_repeats=4))["outlinks"] == [PAGE_URL + "x/"]


# ---- a crawl of the calendar trap ----------------------------------------------------------

DEPTH = 5  # the guards catch their chains on layer 3's pages: layer 4 would have fetched them


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("traps")
    with start_test_web(seed=1) as server:
        seeds, conf, config = write_inputs(server, directory)
        output = directory / "crawl"
        assert crawl(seeds, conf, output, DEPTH) == 0
        server.wait_idle()
        yield SimpleNamespace(server=server, web=server.web, seeds=seeds, conf=conf, config=config, output=output,
                              db=output / "db", log=list(server.log), directory=directory)


def requested(log, web) -> set[str]:
    return {f"http://{entry.address}:{web.port}{entry.path}" for entry in log}


def test_the_guards_trap_the_calendars_chains_and_nothing_else_changes(crawled):
    web, config = crawled.web, crawled.config
    expected = expected_layers_for_config(web, config, crawled.server.seeds, DEPTH)
    for layer, oracle in enumerate(expected):
        assert layer_triples(crawled.output, layer) == oracle, f"layer {layer}"
    traps = expected_traps_for_config(web, config, crawled.server.seeds, DEPTH)
    # One chain caught by each guard, on a page of layer 3.
    assert sorted(traps.values()) == sorted(TRAP_GUARDS)
    records = dict(db_records(crawled.db))
    assert {url: record["deferred"] for url, record in records.items() if record["status"] == TRAPPED} == traps
    for url in traps:
        record = records[url]
        assert (record["first_layer"], record["queued"], record["due_at"], record["fetch_count"]) == (4, None, None, 0)
    assert not requested(crawled.log, web) & set(traps)
    # The month chain is made of ordinary URLs: only the depth stops it.
    months = sorted(url for url in records if "/cal/?month=" in url)
    assert len(months) == DEPTH and records[months[-1]]["status"] == UNFETCHED and records[months[-1]]["queued"]
    assert all(records[url]["status"] == FETCHED for url in months[:-1]) and DEPTH < CALENDAR_MONTHS
    # The Parser put them in its out records' `trapped`, and counted them.
    trapped_links = {tuple(link) for layer in range(DEPTH)
                     for _, out in read_records(crawled.output / "out" / str(layer)) for link in out["trapped"]}
    assert trapped_links == set(traps.items())
    done = json.loads((crawled.output / "crawl.json").read_text())["done"]
    assert [done[f"parse/{layer}"]["counters"]["parse"].get("links trapped", 0) for layer in range(DEPTH)] == [
        0, 0, 0, 3, 0]


def test_an_injected_or_seeded_trapped_url_is_the_operators_and_is_fetched(crawled, tmp_path):
    """The operator's URLs never meet the guards: a trapped URL injected into
    the db is due again, a trapped URL given as a seed is fetched; what they
    link is guarded as any link is."""
    traps = expected_traps_for_config(crawled.web, crawled.config, crawled.server.seeds, DEPTH)
    by_guard = {guard: url for url, guard in traps.items()}
    injected, seeded = by_guard[TRAPPED_BY_QUERY_PARAMS], by_guard[TRAPPED_BY_PATH_REPEATS]
    db = shutil.copytree(crawled.db, tmp_path / "db")
    (tmp_path / "inject.txt").write_text(injected + "\n", encoding="utf-8")
    inject.inject(str(db), str(tmp_path / "inject.txt"), str(crawled.conf))
    assert dict(db_records(db))[injected]["status"] == UNFETCHED
    (tmp_path / "seeds.txt").write_text(seeded + "\n", encoding="utf-8")
    since = len(crawled.server.log)
    assert crawl(tmp_path / "seeds.txt", crawled.conf, tmp_path / "again", 1, "inline", "--db", str(db)) == 0
    crawled.server.wait_idle()
    assert {injected, seeded} <= requested(crawled.server.log[since:], crawled.web)
    records = dict(db_records(db))
    for url in (injected, seeded):
        assert (records[url]["status"], records[url]["deferred"]) == (FETCHED, None), url
    assert {doc["url"] for doc in layer_docs(tmp_path / "again", 0)} == {injected, seeded}
    assert records[seeded + "x/"]["status"] == TRAPPED and records[seeded + "x/"]["deferred"] == TRAPPED_BY_PATH_REPEATS


# ---- what waits, per pay-level domain ----------------------------------------------------

HELD_BACK = 6  # the layer whose frontier holds the URLs a cap held back


def with_deferred_urls(crawled, directory: Path) -> tuple[Path, dict[str, str]]:
    """A copy of the crawl's db after one more layer whose frontier held URLs
    back (as the caps write them: each entry's `deferred` names its cap) and
    one URL the layer never started (its time ran out), merged by the real
    DbBatch, Dedup and DbUpdate jobs; and those URLs with why they wait."""
    db = shutil.copytree(crawled.db, directory / "db")
    crawl_dir = directory / "crawl"
    shutil.copytree(crawled.output, crawl_dir, ignore=shutil.ignore_patterns("db", "doc", "out", "in", "xml"))
    plain, news = crawled.web.role("plain"), crawled.web.role("news")
    waiting = {
        plain.url("/cal/?month=2025-05"): DEFERRED_BY_HOST_CAP,  # known to the db, never fetched
        news.url("/later.html"): DEFERRED_BY_LAYER_CAP,  # and two the db never knew
        news.url("/much-later.html"): DEFERRED_BY_LAYER_CAP,
        plain.url("/cal/late.html"): None,  # in the layer's frontier, never started
    }
    lines = Utf8JsonProtocol()
    for store in ("in", "doc", "out"):
        (crawl_dir / store / str(HELD_BACK)).mkdir(parents=True)
        (crawl_dir / store / str(HELD_BACK) / "part-00000").write_bytes(b"".join(
            lines.write(url, new_frontier_entry(5, False, 5, None, cap)) + b"\n" for url, cap in waiting.items())
            if store == "in" else b"")
    update(db, crawl_dir, HELD_BACK, "inline", directory)
    return db, {url: cap or DEFERRED_BY_TIME_LIMIT for url, cap in waiting.items()}


def test_db_stats_counts_what_waits_per_pay_level_domain(crawled, tmp_path):
    db, deferred = with_deferred_urls(crawled, tmp_path)
    records = dict(db_records(db))
    assert {url: record["deferred"] for url, record in records.items()
            if record["deferred"] and record["status"] != TRAPPED} == deferred
    assert all(records[url]["deferrals"] == 1 for url in deferred)
    stats = subprocess.run([sys.executable, "-m", "mrcrawl.db", "stats", str(db)], capture_output=True, text=True,
                           timeout=60)
    assert stats.returncode == 0, stats.stderr
    waiting = stats.stdout.split("\n\nwaiting: ", 1)[1].splitlines()
    plain, news = (crawled.web.role(role).address for role in ("plain", "news"))
    assert waiting == [
        "4 URLs deferred, 3 trapped",
        f"{'pay-level domain':<40} {'deferred':>8} {'trapped':>8}  why",
        f"{plain:<40} {2:>8} {3:>8}  max_urls_per_host 1, max_layer_seconds 1, max_url_length 1, "
        "max_path_repeats 1, max_query_params 1",
        f"{news:<40} {2:>8} {0:>8}  max_urls_per_layer 2",
    ]
    # The report's reading skips the records that wait for nothing, and counts the same.
    tally = waiting_in(db)
    assert (tally.deferred, tally.trapped, tally.reasons()) == (4, 3, [
        DEFERRED_BY_LAYER_CAP, DEFERRED_BY_HOST_CAP, DEFERRED_BY_TIME_LIMIT, *TRAP_GUARDS])
    # A db with nothing waiting says so.
    fresh = subprocess.run([sys.executable, "-m", "mrcrawl.db", "stats", str(crawled.output / "db")],
                           capture_output=True, text=True, timeout=60)
    assert "\n\nwaiting: 0 URLs deferred, 3 trapped\n" in fresh.stdout


def test_the_report_shows_what_waits_per_pay_level_domain_in_a_browser(crawled, tmp_path):
    db, _ = with_deferred_urls(crawled, tmp_path)
    report = write_report(crawled.output, tmp_path / "report.html", db=str(db))
    page = html.parse(str(report))
    rows = [[cell.text_content() for cell in row] for row in page.xpath("//table[@id='waiting-table']/tr")]
    plain, news = (crawled.web.role(role).address for role in ("plain", "news"))
    assert rows == [
        ["pay-level domain", "deferred", "trapped", "max_urls_per_layer", "max_urls_per_host", "max_layer_seconds",
         *TRAP_GUARDS],
        [plain, "2", "3", "0", "1", "1", "1", "1", "1"],
        [news, "2", "0", "2", "0", "0", "0", "0", "0"],
    ]
    assert "4 URLs deferred, 3 trapped" in page.getroot().get_element_by_id("waiting").getnext().text_content()
    # The crawl's own report (written at the end of its run) read the crawl's db: trapped only.
    own = html.parse(str(crawled.output / "report.html"))
    assert [[cell.text_content() for cell in row] for row in own.xpath("//table[@id='waiting-table']/tr")][1] == [
        plain, "0", "3", "1", "1", "1"]
    browser = start_browser()
    try:
        browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                {"width": REPORT_WINDOW, "height": 900, "deviceScaleFactor": 1, "mobile": False})
        browser.get(report.resolve().as_uri())
        table = browser.find_element(By.ID, "waiting-table")
        assert table.is_displayed() and table.size["width"] > 0
        assert [row.text.split() for row in table.find_elements(By.TAG_NAME, "tr")][1:] == [
            [plain, "2", "3", "0", "1", "1", "1", "1", "1"], [news, "2", "0", "2", "0", "0", "0", "0", "0"]]
        assert browser.execute_script(OVERFLOWS) == []
        logged = browser.get_log("browser")
        assert not [entry for entry in logged if entry["level"] == "SEVERE"], logged
    finally:
        browser.quit()


def test_a_report_whose_crawl_db_cannot_be_read_says_so(crawled, tmp_path):
    copy = shutil.copytree(crawled.output, tmp_path / "crawl", ignore=shutil.ignore_patterns("db"))
    state = json.loads((copy / "crawl.json").read_text())
    (copy / "crawl.json").write_text(json.dumps({**state, "db": str(tmp_path / "gone")}))
    page = html.parse(str(write_report(copy)))
    said = page.getroot().get_element_by_id("waiting").getnext().text_content()
    assert said.startswith("Not read: the crawl db is not readable: ") and not page.xpath("//*[@id='waiting-table']")
