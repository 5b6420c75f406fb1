"""The crawl db's link store (frontier/links.py): which pages link to each
URL, with their anchor text and the run that first saw the link.

One crawl of the test web, two layers deep as of day 1, then a second day on
the same db, are shared by the tests; the model of the test web, which knows
each page's links and their anchors, is the oracle.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import defaultdict
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from crawl_support import crawl, driver_command, read_records, write_inputs
from mrcrawl.frontier.crawldb import DB_FORMAT, DB_META, CrawlDb, partition_of, read_db, read_digest_index
from mrcrawl.frontier.links import read_links
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import MAX_ANCHOR_CHARS, extract_anchored_links
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import FETCHED, new_out, out_anchors
from mrcrawl.testweb import start_test_web
from mrcrawl.testweb.oracle import CrawlRules, expected_layers_for_config
from test_cli import CONSOLE_SCRIPT
from test_kill_anywhere import kill, start_paused_at

DEPTH = 2
DAY1, DAY2 = "2026-01-05T06:00:00Z", "2026-01-06T06:00:00Z"
RUN1, RUN2 = "2026-01-05T06:00:00.000Z", "2026-01-06T06:00:00.000Z"


def expected_links(web, config: dict, sources) -> dict[str, dict[str, str | None]]:
    """target -> {source: anchor} for the pages `sources` as the model has
    them: their links in the crawl's scope that no trap guard catches, a
    page's link to itself left out (None: an anchor the model does not know)."""
    rules = CrawlRules(tuple(config.get("url_allow", ())), tuple(config.get("url_deny", ())), True, 2, 10.0,
                       "", 5, True)
    links: dict[str, dict[str, str | None]] = defaultdict(dict)
    for source in sources:
        page = web.page(source)
        anchors = page.anchors or (None,) * len(page.links)
        for target, anchor in zip(page.outlinks, anchors):
            if target != source and rules.passes_filters(target) and rules.trap(target) is None:
                links[target][source] = anchor
    return links


def stored_links(db: Path) -> dict[str, dict[str, tuple[str, str]]]:
    """target -> {source: (anchor, run)} of a db's link store."""
    return {target: {source: (anchor, run) for source, anchor, run in record["inlinks"]}
            for target, record in read_links(db)}


def fetched_pages(output: Path) -> set[str]:
    """The pages a crawl fetched, as its doc stores say."""
    return {doc["url"] for layer in range(DEPTH) for _, doc in read_records(output / "doc" / str(layer))
            if doc["outcome"] == FETCHED}


def link_files(db: Path) -> list[Path]:
    return [Path(part) for part in CrawlDb(CrawlStore(db)).link_files()]


def day_command(crawled, day: str, output: Path, db: Path, *extra: str) -> list[str]:
    return driver_command(crawled.seeds, crawled.conf, output, DEPTH, "--db", str(db), "--now", day, *extra)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """Day 1 into a db, copied; then day 2 on the same db."""
    directory = tmp_path_factory.mktemp("link-store")
    with start_test_web(seed=1) as server:
        # bfs: no scoring steps, whose own tests are elsewhere; the link store is kept whatever the order.
        seeds, conf, config = write_inputs(server, directory)
        conf.write_text(yaml.safe_dump({**config, "order": "bfs"}), encoding="utf-8")
        day1, db = directory / "day1", directory / "db"
        assert crawl(seeds, conf, day1, DEPTH, "inline", "--db", str(db), "--now", DAY1) == 0
        db_day1 = directory / "db-day1"
        shutil.copytree(db, db_day1)
        layers = expected_layers_for_config(server.web, config, server.seeds, DEPTH)
        sources = {final for layer in layers for _, outcome, final in layer if outcome == FETCHED}
        day2 = directory / "day2"
        assert crawl(seeds, conf, day2, DEPTH, "inline", "--db", str(db), "--now", DAY2) == 0
        yield SimpleNamespace(server=server, web=server.web, config=config, seeds=seeds, conf=conf, day1=day1,
                              day2=day2, db_day1=db_day1, db=db, sources=sources, directory=directory)


# ---- the anchors of the out records -----------------------------------------------------------

def test_an_anchor_is_the_links_text_collapsed_or_its_images_alt_and_the_first_of_a_repeated_link():
    page = parse_html(
        '<a href="/a">  Breaking\n\t <b>news</b> </a><a href="/img"><img alt=" The  front page "></a>'
        '<a href="/a">a second anchor</a><area href="/map" alt="A map"><iframe src="/frame"></iframe>'
        f'<a href="/long">{"word " * 100}</a><a href="/none"></a>')
    anchored = extract_anchored_links(page, "http://127.0.0.2/", "utf-8")
    long = ("word " * 100).strip()[:MAX_ANCHOR_CHARS]
    assert anchored == {"http://127.0.0.2/a": "Breaking news", "http://127.0.0.2/img": "The front page",
                        "http://127.0.0.2/map": "A map", "http://127.0.0.2/frame": "", "http://127.0.0.2/long": long,
                        "http://127.0.0.2/none": ""}


def test_the_out_records_carry_anchors_parallel_to_their_outlinks_as_the_model_has_them(crawled):
    checked = 0
    for layer in range(DEPTH):
        for url, out in read_records(crawled.day1 / "out" / str(layer)):
            assert len(out["anchors"]) == len(out["outlinks"]), url
            page = crawled.web.page(url)
            modelled = dict(zip(page.links, page.anchors))
            for link, anchor in zip(out["outlinks"], out["anchors"]):
                if modelled.get(link) is not None:
                    assert anchor == modelled[link], (url, link)
                    checked += 1
    assert checked > 100


def test_an_out_record_written_before_anchors_reads_as_links_without_anchor_text():
    out = new_out(["http://127.0.0.2/a", "http://127.0.0.2/b"], 0, 0, RUN1)
    del out["anchors"]
    assert out_anchors(out) == ["", ""]


# ---- the link store after day 1 ---------------------------------------------------------------

def test_the_link_store_holds_exactly_the_links_of_the_pages_fetched_with_their_anchors(crawled):
    expected = expected_links(crawled.web, crawled.config, crawled.sources)
    stored = stored_links(crawled.db_day1)
    assert set(stored) == set(expected)
    for target, sources in expected.items():
        assert set(stored[target]) == set(sources), target
        for source, anchor in sources.items():
            assert stored[target][source][1] == RUN1
            if anchor is not None:
                assert stored[target][source][0] == anchor, (target, source)
    assert max(len(sources) for sources in expected.values()) >= 3


def test_db_inlinks_lists_the_pages_that_link_to_a_url(crawled):
    expected = expected_links(crawled.web, crawled.config, crawled.sources)
    target = max(sorted(expected), key=lambda url: len(expected[url]))
    shown = subprocess.run([str(CONSOLE_SCRIPT), "db", "inlinks", str(crawled.db_day1), target],
                           capture_output=True, text=True, timeout=120)
    assert (shown.returncode, shown.stderr) == (0, "")
    lines = [line.split("\t") for line in shown.stdout.splitlines()]
    assert [source for source, _, _ in lines] == sorted(expected[target])
    for source, anchor, run in lines:
        assert run == RUN1
        assert expected[target][source] in (None, anchor)
    as_json = subprocess.run([str(CONSOLE_SCRIPT), "db", "inlinks", "--json", str(crawled.db_day1), target],
                             capture_output=True, text=True, timeout=120)
    assert json.loads(as_json.stdout) == {"url": target, "inlinks": [list(line) for line in lines]}


def test_db_inlinks_of_a_url_without_inlinks_says_whether_the_db_holds_it(crawled):
    seed = crawled.web.seed_urls[0]
    linked = stored_links(crawled.db_day1)
    unlinked = next(url for url, _ in read_db(crawled.db_day1) if url not in linked)
    held = subprocess.run([str(CONSOLE_SCRIPT), "db", "inlinks", str(crawled.db_day1), unlinked],
                          capture_output=True, text=True, timeout=120)
    assert (held.returncode, held.stdout) == (1, "")
    assert held.stderr.startswith(f"mrcrawl db: {unlinked}: no inlinks in {crawled.db_day1}: the db holds it (")
    missing = subprocess.run([str(CONSOLE_SCRIPT), "db", "inlinks", str(crawled.db_day1), seed + "never-linked"],
                             capture_output=True, text=True, timeout=120)
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == (f"mrcrawl db: {seed}never-linked: no inlinks in {crawled.db_day1}: "
                              "the db does not hold it at all\n")


def test_the_link_files_are_sorted_and_partitioned_as_the_url_partitions(crawled):
    db = CrawlDb(CrawlStore(crawled.db))
    assert db.meta()["format"] == DB_FORMAT
    files = link_files(crawled.db)
    assert len(files) == db.partitions and files == [Path(part) for part in db.files()[2 * db.partitions:]]
    for partition, part in enumerate(files):
        lines = part.read_bytes().splitlines()
        keys = [line.split(b"\t", 1)[0] for line in lines]
        assert keys == sorted(set(keys)), part
        for target, record in read_records_of(part):
            assert partition_of(target, db.partitions) == partition
            sources = [source for source, _, _ in record["inlinks"]]
            assert sources == sorted(set(sources))


def read_records_of(part: Path):
    for line in part.read_text(encoding="utf-8").splitlines():
        key, value = line.split("\t", 1)
        yield json.loads(key), json.loads(value)


# ---- day 2 --------------------------------------------------------------------------------------

def test_a_second_day_adds_its_links_without_repeating_a_source_and_keeps_the_first_seen_run(crawled):
    before, after = stored_links(crawled.db_day1), stored_links(crawled.db)
    day2 = expected_links(crawled.web, crawled.config, fetched_pages(crawled.day2))
    assert day2, "day 2 fetched no page with links"
    for target, sources in before.items():  # nothing of day 1 lost, and its runs stand
        for source, (_, run) in sources.items():
            assert after[target][source][1] == run == RUN1
    for target, sources in after.items():
        for source, (anchor, run) in sources.items():
            if source not in before.get(target, {}):
                assert run == RUN2 and source in day2[target], (target, source)
    for target, sources in day2.items():
        assert set(sources) <= set(after[target])
    assert any(source not in before.get(target, {}) for target, sources in day2.items() for source in sources), \
        "day 2 found no new link: the test would not see a run of its own"
    # The batch's counters: day 2's DbBatch counted its links, DbUpdate its link records.
    state = json.loads((crawled.day2 / "crawl.json").read_text())
    batched = sum(step["counters"].get("dbbatch", {}).get("links", 0) for name, step in state["done"].items()
                  if name.startswith("dbbatch/"))
    assert batched == sum(len(sources) for sources in day2.values())


# ---- a db of format 2 -------------------------------------------------------------------------

def as_format_2(db: Path) -> None:
    """The db as a version before the link store wrote it: no link files, format 2."""
    for part in link_files(db):
        part.unlink()
    meta = json.loads((db / DB_META).read_text())
    (db / DB_META).write_text(json.dumps({**meta, "format": 2}) + "\n")


def test_a_format_2_db_is_read_as_one_without_links_and_upgraded_by_a_run_with_nothing_lost(crawled, tmp_path):
    db = tmp_path / "db"
    shutil.copytree(crawled.db_day1, db)
    as_format_2(db)
    records, digests = dict(read_db(db)), dict(read_digest_index(db))
    target = next(iter(stored_links(crawled.db_day1)))
    for command in (["stats", str(db)], ["get", str(db), target], ["dump", str(db)]):
        read = subprocess.run([str(CONSOLE_SCRIPT), "db", *command], capture_output=True, text=True, timeout=120)
        assert (read.returncode, read.stderr) == (0, ""), command
    none = subprocess.run([str(CONSOLE_SCRIPT), "db", "inlinks", str(db), target], capture_output=True, text=True,
                          timeout=120)
    assert none.returncode == 1 and "the db holds it" in none.stderr
    assert json.loads((db / DB_META).read_text())["format"] == 2  # reading upgrades nothing

    # A run killed between writing the link files and rewriting db.json leaves a format-2 db.
    output, log = tmp_path / "day2", tmp_path / "runs.log"
    kill(start_paused_at(day_command(crawled, DAY2, output, db), "db upgrading", log))
    assert json.loads((db / DB_META).read_text())["format"] == 2
    assert dict(read_db(db)) == records and list(read_links(db)) == []
    shutil.rmtree(output)
    finished = subprocess.run(day_command(crawled, DAY2, output, db), capture_output=True, text=True, timeout=600)
    assert finished.returncode == 0, finished.stderr

    assert json.loads((db / DB_META).read_text())["format"] == DB_FORMAT
    upgraded = dict(read_db(db))
    assert set(records) <= set(upgraded)
    assert {url: record["first_run"] for url, record in upgraded.items() if url in records} == \
           {url: record["first_run"] for url, record in records.items()}
    assert set(digests) <= set(dict(read_digest_index(db)))
    links = stored_links(db)  # the links of day 2's pages alone: day 1's were never stored
    day2 = expected_links(crawled.web, crawled.config, fetched_pages(output))
    assert {target: set(sources) for target, sources in links.items()} == \
           {target: set(sources) for target, sources in day2.items()}
    assert {run for sources in links.values() for _, run in sources.values()} == {RUN2}


# ---- killed inside the update -------------------------------------------------------------------

def test_a_run_killed_inside_dbupdate_and_resumed_leaves_the_link_files_of_an_uninterrupted_run(crawled, tmp_path):
    step = f"dbupdate/{DEPTH - 1}"
    seconds = json.loads((crawled.day2 / "crawl.json").read_text())["done"][step]["seconds"]
    db, output, log = tmp_path / "db", tmp_path / "day2", tmp_path / "runs.log"
    shutil.copytree(crawled.db_day1, db)
    process = start_paused_at(day_command(crawled, DAY2, output, db), f"start {step}", log)
    os.kill(process.pid, signal.SIGCONT)
    time.sleep(max(seconds, 0.05) * 0.3)
    kill(process)
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert step not in done, f"the kill came after {step} finished; see {log}"
    assert CrawlDb(CrawlStore(db)).meta()["applied"] != CrawlDb.update_name(RUN2, step)
    resumed = subprocess.run(day_command(crawled, DAY2, output, db, "--resume"), capture_output=True, text=True,
                             timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert [part.read_bytes() for part in link_files(db)] == [part.read_bytes() for part in link_files(crawled.db)]

