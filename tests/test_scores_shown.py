"""Scores where people look: `mrcrawl db top`, `db stats`, the crawl report,
the XML and the Parquet page index.

One crawl of the test web serves every test: its db is made by injecting
the seeds, whose records are then given scores, so that the crawl's layer
0 queues each seed with the score its db record holds.  For `top`, `stats`
and the report, a copy of the db after the crawl has every record's score
rewritten (ties and unscored records among them); the oracle is the db's
records as read back.
"""
from __future__ import annotations

import hashlib
import json
import math
import os
import shutil
import subprocess
import tracemalloc
from pathlib import Path
from types import SimpleNamespace

import pyarrow.parquet as pq
import pytest
from lxml import html
from selenium.webdriver.common.by import By

from crawl_support import crawl, db_records, layer_docs, read_records, write_inputs, xml_pages
from report_support import start_browser
from test_cli import CONSOLE_SCRIPT
from mrcrawl import inject
from mrcrawl.bench.db_update import NewsDb, write_db
from mrcrawl.db import STATS_TOP
from mrcrawl.frontier.crawldb import CrawlDb
from mrcrawl.frontier.db_update import queue_mark
from mrcrawl.frontier.generate import layer_zero, queued_for
from mrcrawl.frontier.score_spread import top_scored
from mrcrawl.report import write_report
from mrcrawl.report.figures import TOP_SCORES
from mrcrawl.store.crawl_reader import read_part
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import new_db_record
from mrcrawl.testweb import start_test_web

NOW = "2026-01-05T06:00:00Z"
_lines = Utf8JsonProtocol()


def set_scores(db: Path, score_of) -> None:
    """Give every record of the db the score `score_of(url, record)` (None:
    unscored), rewriting each URL partition file in its own order: the keys
    do not change, so each stays sorted."""
    for part in CrawlDb(CrawlStore(db)).partition_files():
        rewritten = Path(f"{part}.rescored")
        with open(rewritten, "wb") as written:
            for url, record in read_part(Path(part)):
                written.write(_lines.write(url, {**record, "score": score_of(url, record)}) + b"\n")
        os.replace(rewritten, part)


def spread_score(url: str, record: dict) -> float | None:
    """A score of a few values, many URLs sharing each (ties broken by URL),
    one URL in five unscored, and the hosts' home pages far above the rest."""
    drawn = int.from_bytes(hashlib.blake2b(url.encode(), digest_size=4).digest(), "big")
    if record["seed"]:
        return 0.05 + (drawn % 3) / 100
    return None if drawn % 5 == 0 else (1 + drawn % 4) / 10_000


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The test web crawled two layers deep on a db that held its seeds, all
    scored but the last; and a copy of the db after it, every record rescored."""
    directory = tmp_path_factory.mktemp("scores")
    db = directory / "db"
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, directory)
        assert inject.main([str(db), str(seeds), "--conf", str(conf), "--now", NOW, "-q"]) == 0
        seed_scores = {url: None if url == server.seeds[-1] else (index + 1) / 100
                       for index, url in enumerate(server.seeds)}
        set_scores(db, lambda url, record: seed_scores[url])
        output = directory / "crawl"
        assert crawl(seeds, conf, output, 2, "inline", "--db", str(db), "--now", NOW, "--export", "index") == 0
    rescored = directory / "rescored-db"
    shutil.copytree(db, rescored)
    set_scores(rescored, spread_score)
    unscored = directory / "unscored-db"
    shutil.copytree(db, unscored)
    set_scores(unscored, lambda url, record: None)
    return SimpleNamespace(output=output, seed_scores=seed_scores, rescored=rescored, unscored=unscored,
                           records=db_records(rescored))


def expected_top(records, count: int) -> list[tuple[float, str, str]]:
    scored = [(record["score"], url, record["status"]) for url, record in records if record["score"] is not None]
    return sorted(scored, key=lambda item: (-item[0], item[1]))[:count]


def db_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CONSOLE_SCRIPT), "db", *args], capture_output=True, text=True, timeout=120)


# ---- the score reaches the page's doc record, its XML and its index row ----------------------------

def test_a_page_carries_the_score_its_db_record_had_when_queued(crawled):
    docs = layer_docs(crawled.output, 0)
    assert sorted(doc["requested_url"] for doc in docs) == sorted(crawled.seed_scores)
    expected = {doc["url"]: crawled.seed_scores[doc["requested_url"]] for doc in docs}
    assert [doc["score"] for doc in docs] == [crawled.seed_scores[doc["requested_url"]] for doc in docs]
    for url, entry in read_records(crawled.output / "in" / "0"):
        assert entry["score"] == crawled.seed_scores[url]

    pages = xml_pages(crawled.output)
    home_pages = {url: page for url, page in pages.items() if url in expected}
    assert set(home_pages) == set(expected)  # every home page is new to the index
    for url, page in home_pages.items():
        score = expected[url]
        assert page.get("score") == (None if score is None else repr(score)), url
        if score is not None:
            assert float(page.get("score")) == score
    for page in pages.values():  # the other layer's pages: their own doc record's score, as written
        assert set(page.keys()) <= {"url", "redirect_from", "fetched_at", "encoding", "language", "layer", "digest",
                                    "score"}

    index = pq.read_table(crawled.output / "index").to_pylist()
    assert pq.read_schema(next((crawled.output / "index").glob("*-L0.parquet"))).field("score").type == "double"
    by_url = {row["url"]: row for row in index if row["layer"] == 0}
    assert {url: by_url[url]["score"] for url in expected} == expected
    scores_by_doc = {(doc["url"], doc["layer"]): doc["score"] for layer in (0, 1)
                     for doc in layer_docs(crawled.output, layer)}
    assert {(row["url"], row["layer"]): row["score"] for row in index} == scores_by_doc


def test_the_generator_and_the_optimizer_queue_a_url_with_its_db_score():
    run = "2026-01-05T06:00:00.000Z"
    due = {**new_db_record("http://127.0.0.2/due", "http://127.0.0.2"), "due_at": run, "hops": 1, "score": 0.125}
    queued = {**new_db_record("http://127.0.0.2/queued", "http://127.0.0.2"), "queued": queue_mark(run, 1),
              "hops": 2, "score": 0.25}
    lines = [_lines.write(record["url"], record) + b"\n" for record in (due, queued)]
    assert [(url, entry["score"]) for url, entry in layer_zero(lines, [], run)] == [(due["url"], 0.125)]
    assert [(url, entry["score"]) for url, entry in queued_for(lines, run, 1, ordered=True)] == [(queued["url"], 0.25)]


# ---- mrcrawl db top --------------------------------------------------------------------------------

def test_top_prints_the_highest_scores_first_and_equal_scores_by_url(crawled):
    records = crawled.records
    scored = sum(record["score"] is not None for _, record in records)
    assert len({record["score"] for _, record in records}) < scored / 4  # many ties
    for count in (1, 5, 23, scored + 10):
        printed = db_command("top", str(crawled.rescored), "-n", str(count))
        assert (printed.returncode, printed.stderr) == (0, "")
        assert printed.stdout.splitlines() == [f"{score:.6g}\t{url}\t{status}"
                                               for score, url, status in expected_top(records, count)]
    as_json = db_command("top", str(crawled.rescored), "--json")
    assert as_json.returncode == 0
    rows = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert [(row["score"], row["url"], row["status"]) for row in rows] == expected_top(records, 20)
    by_url = dict(records)
    assert [(row["inlinks"], row["inlink_hosts"]) for row in rows] == [
        (by_url[row["url"]].get("inlinks"), by_url[row["url"]].get("inlink_hosts")) for row in rows]


def test_top_of_a_db_without_scores_says_so_and_exits_1(crawled):
    said = db_command("top", str(crawled.unscored))
    assert (said.returncode, said.stdout) == (1, "")
    assert said.stderr == f"mrcrawl db: {crawled.unscored}: no URL has a score yet\n"


@pytest.mark.parametrize("count", ["0", "-3", "2.5", "all"])
def test_top_refuses_a_count_that_is_no_whole_number_of_at_least_1(crawled, count):
    refused = db_command("top", str(crawled.rescored), "-n", count)
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == f"mrcrawl db top: argument -n: not a whole number >= 1: '{count}'\n"


def test_top_holds_n_records_however_large_the_db(tmp_path):
    """A db of 4,000 scored articles, some 12 MB of records once decoded:
    the top 10 are found holding far less than one partition of them."""
    db = tmp_path / "db"
    write_db(db, NewsDb(urls=4000, urls_per_host=100, fetches=0, new_urls=0, partitions=2), NOW)
    set_scores(db, lambda url, record: int(hashlib.sha1(url.encode()).hexdigest()[:6], 16) / 2 ** 24)
    records = db_records(db)
    stored = sum(os.path.getsize(part) for part in CrawlDb(CrawlStore(db)).partition_files())
    tracemalloc.start()
    try:
        top = top_scored(db, 10)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [(entry.score, entry.url, entry.status) for entry in top] == expected_top(records, 10)
    assert stored > 3_000_000 and peak < stored / 20, (stored, peak)


# ---- mrcrawl db stats ------------------------------------------------------------------------------

def expected_spread(records) -> tuple[int, float, dict[int, int]]:
    """The URLs scored, the sum of their scores, and the URLs per power of
    two of score / mean score, in the db's order."""
    scores = [record["score"] for _, record in records if record["score"] is not None]
    total = sum(scores)
    buckets: dict[int, int] = {}
    for score in scores:
        power = math.floor(math.log2(score * len(scores) / total))
        buckets[power] = buckets.get(power, 0) + 1
    return len(scores), total, buckets


def fraction(power: int) -> str:
    return str(2 ** power) if power >= 0 else f"1/{2 ** -power}"


def test_stats_shows_how_the_scores_spread_and_the_top_5(crawled):
    records = crawled.records
    printed = db_command("stats", str(crawled.rescored), "--now", NOW)
    assert printed.returncode == 0, printed.stderr
    lines = printed.stdout.splitlines()
    scored, total, buckets = expected_spread(records)
    start = lines.index(f"scores: {scored} of {len(records)} URLs scored, mean {total / scored:.6g}")
    powers = range(min(buckets), max(buckets) + 1)
    shown = lines[start + 2:start + 2 + len(powers)]
    assert [line.split() for line in shown] == [[f"{fraction(p)}–{fraction(p + 1)}", str(buckets.get(p, 0))]
                                                for p in powers]
    assert len(powers) >= 3 and sum(buckets.values()) == scored
    assert lines[start + 2 + len(powers)] == f"top {STATS_TOP} by score"
    top = lines[start + 3 + len(powers):start + 3 + len(powers) + STATS_TOP]
    assert top == [f"  {score:.6g}\t{url}\t{status}" for score, url, status in expected_top(records, STATS_TOP)]
    assert lines[start + 3 + len(powers) + STATS_TOP:][1].startswith("waiting: ")  # what waits comes last

    unscored = db_command("stats", str(crawled.unscored), "--now", NOW)
    assert f"\nscores: none yet (0 of {len(records)} URLs scored)\n" in unscored.stdout


# ---- the crawl report ------------------------------------------------------------------------------

def test_the_report_draws_the_spread_and_lists_the_top_urls(crawled, tmp_path):
    records = crawled.records
    report = write_report(crawled.output, tmp_path / "report.html", db=str(crawled.rescored))
    page = html.parse(str(report))
    rows = [[cell.text_content() for cell in row] for row in page.xpath("//table[@id='score-table']/tr[td]")]
    assert [(float(row[1]), row[4], row[3]) for row in rows] == [
        (float(f"{score:.6g}"), url, status) for score, url, status in expected_top(records, TOP_SCORES)]
    assert [row[0] for row in rows] == [str(rank) for rank in range(1, TOP_SCORES + 1)]
    scored, total, buckets = expected_spread(records)
    marks = [mark.text_content() for mark in page.xpath("//svg[@id='chart-scores']//*[@class='mark']/title")]
    assert marks == [f"{fraction(power)}–{fraction(power + 1)}: URLs {count:,}"
                     for power, count in sorted(buckets.items())]

    unscored = html.parse(str(write_report(crawled.output, tmp_path / "unscored.html", db=str(crawled.unscored))))
    assert "No URL of the crawl db has a score yet" in unscored.getroot().get_element_by_id("scores").getnext() \
        .text_content()
    assert not unscored.xpath("//svg[@id='chart-scores']//*[@class='mark']") and not unscored.xpath(
        "//table[@id='score-table']")

    browser = start_browser()
    try:
        browser.get(report.resolve().as_uri())
        chart = browser.find_element(By.ID, "chart-scores")
        assert chart.is_displayed() and chart.size["width"] > 0 and chart.size["height"] > 0
        shown = chart.find_elements(By.CSS_SELECTOR, "rect.mark")
        assert len(shown) == len(buckets) and all(mark.size["width"] > 0 and mark.size["height"] > 0
                                                  for mark in shown)
        table = browser.find_element(By.ID, "score-table")
        assert table.is_displayed() and expected_top(records, 1)[0][1] in table.text
        logged = browser.get_log("browser")
        assert not [entry for entry in logged if entry["level"] == "SEVERE"], logged
    finally:
        browser.quit()
