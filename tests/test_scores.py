"""Scores (mrcrawl/frontier/scores.py): PageRank and in-degree over the
crawl db's links, computed at the start of each run, checked over simulated
days of the test web against an oracle that computes PageRank by the same
rules from the test web's model; the provisional values of the URLs a run
finds; runs killed inside the scoring steps, then resumed; and no scoring
at all with order `bfs`.
"""
from __future__ import annotations

import json
import shutil
import signal
import time
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from crawl_support import crawl, db_records, driver_command, read_records, write_daily_inputs, write_inputs
from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.caps import order_value
from mrcrawl.page.urls import host_key, host_of
from mrcrawl.store.records import BLOCKED, DUPLICATE, FETCHED, NOT_MODIFIED, TRAPPED, iso_utc
from mrcrawl.testweb.daily import DailySpec, start_daily_web
from mrcrawl.testweb.oracle import CrawlRules
from mrcrawl.testweb.server import start_test_web
from test_kill_anywhere import db_contents, kill, start_paused_at

DAYS = 5
DEPTH = 3
ITERATIONS = CrawlConfig.pagerank_iterations
TELEPORT = 0.15
FIRST_DAY = datetime(2026, 1, 5, 6, tzinfo=timezone.utc)


def now(day: int) -> str:
    return iso_utc(FIRST_DAY + timedelta(days=day - 1))


# -- the oracle ---------------------------------------------------------------------------------

def model_links(web, config: dict, page: str) -> list[str]:
    """What the test web's model says a fetched page links, as the db keeps
    it: in the crawl's scope, not trapped, not itself, each once."""
    rules = CrawlRules(tuple(config["url_allow"]), tuple(config["url_deny"]), True, 1, 1.0, "", 5, True)
    if not web.page(page).is_html:
        return []
    return list(dict.fromkeys(link for link in web.page(page).outlinks
                              if link != page and rules.passes_filters(link) and rules.trap(link) is None))


def oracle_graph(web, config: dict, records: dict[str, dict]) -> tuple[list[str], dict[str, list[str]]]:
    """The nodes (the db's URLs but trapped and blocked ones) and, for each
    page the db has fetched, its links by the model."""
    nodes = sorted(url for url, record in records.items() if record["status"] not in (TRAPPED, BLOCKED))
    links = {url: model_links(web, config, url) for url, record in records.items()
             if record["status"] in (FETCHED, NOT_MODIFIED, DUPLICATE)}
    return nodes, links


def oracle_pagerank(nodes: list[str], links: dict[str, list[str]], start: dict[str, float | None],
                    iterations: int) -> dict[str, float]:
    """PageRank's power iterations from `start` (None: 1/n): a page with no
    link to a node (dangling, unfetched) spreads its score over every node;
    each iteration is divided by the sum it started from."""
    n = len(nodes)
    score = {url: 1 / n if start.get(url) is None else start[url] for url in nodes}
    for _ in range(iterations):
        total = sum(score.values())
        received = dict.fromkeys(nodes, 0.0)
        spread = 0.0
        for page in nodes:
            targets = links.get(page) or []
            for target in targets:
                if target in received:
                    received[target] += score[page] / len(targets)
                else:
                    spread += score[page] / len(targets)
            if not targets:
                spread += score[page]
        score = {url: TELEPORT / n + (1 - TELEPORT) * (received[url] + spread / n) / total for url in nodes}
    return score


def linking(links: dict[str, list[str]]) -> dict[str, set[str]]:
    """Each linked URL's linking pages."""
    found = defaultdict(set)
    for page, targets in links.items():
        for target in targets:
            found[target].add(page)
    return found


# -- days of crawls ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def days(tmp_path_factory):
    """The test web crawled on DAYS simulated days into one db: each day's
    crawl directory, and a copy of the db after each day."""
    directory = tmp_path_factory.mktemp("scores")
    with start_test_web(seed=1) as server:
        seeds, conf, config = write_inputs(server, directory)
        db = directory / "db"
        dbs = {0: None}
        for day in range(1, DAYS + 1):
            assert crawl(seeds, conf, directory / f"day{day}", DEPTH, "inline", "--db", str(db), "--now", now(day)) == 0
            dbs[day] = directory / f"db-after-{day}"
            shutil.copytree(db, dbs[day])
        yield server, seeds, conf, config, directory, dbs


def records_after(days, day: int) -> dict[str, dict]:
    return dict(db_records(days[5][day]))


def done_steps(days, day: int) -> list[str]:
    return list(json.loads((days[4] / f"day{day}" / "crawl.json").read_text())["done"])


def test_each_run_scores_as_the_oracle_iterates_from_the_last_runs_scores(days):
    server, _, _, config, _, _ = days
    assert not [step for step in done_steps(days, 1) if step.startswith("rank")]  # nothing fetched before day 1
    for day in range(2, DAYS + 1):
        steps = done_steps(days, day)
        scoring = [f"{kind}/{i}" for i in range(ITERATIONS) for kind in ("rank", "rankupdate")]
        assert steps[:len(scoring) + 1] == [*scoring, "generate/0"], f"day {day}: {steps}"
        before, after = records_after(days, day - 1), records_after(days, day)
        nodes, links = oracle_graph(server.web, config, before)
        expected = oracle_pagerank(nodes, links, {url: before[url]["score"] for url in nodes}, ITERATIONS)
        got = {url: after[url]["score"] for url in nodes}
        wrong = {url: (got[url], expected[url]) for url in nodes if abs(got[url] - expected[url]) > 1e-9}
        assert not wrong, f"day {day}: {len(wrong)} of {len(nodes)} scores differ, e.g. {list(wrong.items())[:3]}"
        # Other oracle graphs give other scores: the check above can fail.
        assert max(abs(score - 1 / len(nodes)) for score in got.values()) > 1e-4
        # No trapped or blocked URL is scored.
        assert all(after[url]["score"] is None for url in before if url not in expected)


def test_scores_sum_to_one_and_stay_bounded_over_the_runs(days):
    for day in range(2, DAYS + 1):
        after, before = records_after(days, day), records_after(days, day - 1)
        scored = [after[url]["score"] for url in before if before[url]["status"] not in (TRAPPED, BLOCKED)]
        assert abs(sum(scored) - 1) < 1e-9, f"day {day}"
        assert all(0 < score < 1 for score in scored)


def test_the_scores_converge_from_run_to_run(days):
    """The largest change of a score from one run's scoring to the next shrinks."""
    changes = []
    for day in range(3, DAYS + 1):
        before, after = records_after(days, day - 1), records_after(days, day)
        common = [url for url in before if before[url]["score"] is not None and before[url]["first_run"] < now(day - 1)]
        changes.append(max(abs(after[url]["score"] - before[url]["score"]) for url in common))
    print("largest change of a score per run:", changes)
    assert all(later < earlier for earlier, later in zip(changes, changes[1:])), changes


def test_inlinks_and_inlink_hosts_count_the_fetched_pages_and_hosts_linking(days):
    server, _, _, config, directory, _ = days
    for day in range(2, DAYS + 1):
        before, after = records_after(days, day - 1), records_after(days, day)
        nodes, links = oracle_graph(server.web, config, before)
        pages = linking(links)
        got = {url: (after[url]["inlinks"], after[url]["inlink_hosts"]) for url in nodes}
        expected = {url: (len(pages[url]), len({host_key(page) for page in pages[url]})) for url in nodes}
        assert got == expected, f"day {day}"
        assert any(hosts > 1 for _, hosts in got.values())
        # The PLD in-degree store: each pay-level domain (here an IP) with the other domains linking to it.
        plds = defaultdict(set)
        for page, targets in links.items():
            for target in targets:
                if host_of(target) != host_of(page):
                    plds[host_of(target)].add(host_of(page))
        stored = {key: value for key, value in read_records(directory / f"day{day}" / "rank" / "last")
                  if key.startswith("~") and key != "~~totals"}
        assert stored == {f"~{pld}": {"pld_inlinks": len(sources)} for pld, sources in plds.items()}, f"day {day}"


def test_n_runs_score_as_n_times_the_iterations_from_the_first_start(days):
    """From day 2 on, the test web's graph in the db no longer changes: the
    runs' iterations add up, each run starting from the scores the last left."""
    server, _, _, config, _, _ = days
    first = records_after(days, 1)
    nodes, links = oracle_graph(server.web, config, first)
    for day in range(2, DAYS + 1):
        # From day 1's provisional scores: the first run's URLs were all new.
        expected = oracle_pagerank(nodes, links, {url: first[url]["score"] for url in nodes}, (day - 1) * ITERATIONS)
        after = records_after(days, day)
        assert max(abs(after[url]["score"] - expected[url]) for url in nodes) < 1e-9, f"day {day}"


def test_a_url_first_seen_on_a_run_gets_provisional_values_from_its_sightings(tmp_path):
    """On the daily test web, each URL first seen on a run gets a score by
    PageRank's formula applied online: e·s0 + (1 - e)·Σ R(q)/outdeg(q) over the
    fetched pages q linking it, R(q) the score q was fetched with, or s0 for
    a page that had none; s0 = 1/N, N the URLs the db held at the run's start."""
    checked = defaultdict(int)
    with start_daily_web(DailySpec(sites=2, sections=2, articles=12, latest=4, fail_once_share=0.0)) as server:
        seeds, conf, config = write_daily_inputs(server, tmp_path)
        db = tmp_path / "db"
        for day in (1, 2):
            server.set_day(day)
            start = 1 / max(1, len(db_records(db)) if db.exists() else 0)
            output = tmp_path / f"day{day}"
            assert crawl(seeds, conf, output, 2, "inline", "--db", str(db), "--now", server.web.date_iso(day)) == 0
            run = json.loads((output / "crawl.json").read_text())["run"]
            records = dict(db_records(db))
            fetched = {doc["url"]: doc["score"] for layer in range(2) for _, doc in read_records(output / "doc" / str(layer))
                       if doc["outcome"] == FETCHED}
            web = server.web.on(day)
            links = {page: model_links(web, config, page) for page in fetched}
            for url, pages in linking(links).items():
                record = records[url]
                if record["first_run"] != run:
                    continue
                assert record["inlinks"] == len(pages), url
                assert record["inlink_hosts"] >= len({host_key(page) for page in pages}), url
                shares = sum((start if fetched[page] is None else fetched[page]) / len(links[page]) for page in pages)
                assert record["score"] == pytest.approx(TELEPORT * start + (1 - TELEPORT) * shares, rel=1e-12), url
                checked[day, "unscored" if any(fetched[page] is None for page in pages) else "scored"] += 1
    # Each day has URLs linked by unscored pages only (sharing s0) and by scored ones only.
    assert {key for key, count in checked.items() if count} >= {(1, "unscored"), (1, "scored"), (2, "scored")}, checked


def test_the_pagerank_order_puts_higher_scores_first(days):
    after = records_after(days, DAYS)
    run = now(DAYS + 1)
    scored = sorted((record for record in after.values() if record["score"]), key=lambda record: record["score"])
    low, high = scored[0], scored[-1]
    assert order_value(high, run, "pagerank") < order_value(low, run, "pagerank")
    assert order_value({**low, "score": None}, run, "pagerank") > order_value(low, run, "pagerank")
    # A deferral counts as a score twice as high.
    twice = {**low, "score": low["score"] * 2.0001}
    assert order_value(twice, run, "pagerank") < order_value({**low, "deferrals": 1}, run, "pagerank") \
        < order_value(low, run, "pagerank")
    most = max(after.values(), key=lambda record: record["inlinks"] or 0)
    assert order_value(most, run, "indegree") < order_value(low, run, "indegree")


# -- killed inside the scoring steps, then resumed ------------------------------------------------------

def test_a_run_killed_inside_each_scoring_step_and_resumed_scores_as_an_uninterrupted_one(days, tmp_path):
    server, seeds, conf, _, _, dbs = days
    run = now(2)
    log = tmp_path / "runs.log"

    def command(output: Path, db: Path, *extra: str) -> list[str]:
        return driver_command(seeds, conf, output, DEPTH, "--db", str(db), "--now", run, *extra)

    def until_generate(output: Path, db: Path, *extra: str) -> None:
        kill(start_paused_at(command(output, db, *extra), "start generate/0", log))

    clean_db = tmp_path / "clean-db"
    shutil.copytree(dbs[1], clean_db)
    until_generate(tmp_path / "clean", clean_db)
    killed_db = tmp_path / "killed-db"
    shutil.copytree(dbs[1], killed_db)
    output = tmp_path / "killed"
    # In the run's order: inside each step (killed a little after it started), and after a job, and after a commit.
    kills = [("start rank/0", 0.02), ("written rank/0", None), ("start rankupdate/0", 0.02),
             ("written rankupdate/0", None), ("start rank/1", 0.02), ("start rankupdate/1", 0.02),
             (f"db committed {run} rankupdate/1", None), ("start rank/2", 0.02), ("start rankupdate/2", 0.02)]
    assert len(kills) == 3 * ITERATIONS
    for point, wait in kills:
        process = start_paused_at(command(output, killed_db, *(["--resume"] if output.exists() else [])), point, log)
        if wait is not None:  # let it go on into the job
            process.send_signal(signal.SIGCONT)
            time.sleep(wait)
        kill(process)
    until_generate(output, killed_db, "--resume")
    assert db_contents(killed_db) == db_contents(clean_db)
    scores = {url: record["score"] for url, record in db_records(killed_db)}
    assert scores == {url: record["score"] for url, record in db_records(dbs[2]) if url in scores}


# -- no scores with order bfs -------------------------------------------------------------------------

def test_with_order_bfs_no_run_computes_scores(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    conf.write_text(yaml.safe_dump({**config, "order": "bfs"}), encoding="utf-8")
    db = tmp_path / "db"
    for day in (1, 2):
        assert crawl(seeds, conf, tmp_path / f"day{day}", 1, "inline", "--db", str(db), "--now", now(day)) == 0
    steps = list(json.loads((tmp_path / "day2" / "crawl.json").read_text())["done"])
    assert steps[0] == "generate/0" and not [step for step in steps if step.startswith("rank")]
    assert not (tmp_path / "day2" / "rank").exists()
    records = dict(db_records(db))
    assert all(record["score"] is None and record["inlinks"] in (None, 1) for record in records.values())
    # The db keeps the links all the same.
    assert any(record["outlinks"] for record in records.values())


def test_the_db_keeps_a_pages_links_and_clears_them_when_it_is_gone():
    from mrcrawl.frontier.db_update import RevisitPolicy, apply_update, updates_from_out
    from mrcrawl.config import RevisitConfig
    from mrcrawl.store.records import GONE, LINKS_FROM_PAGE, new_out

    policy = RevisitPolicy.from_config(RevisitConfig())
    page = "http://a.example/"
    out = new_out([page, "http://a.example/x", "http://b.example/"], LINKS_FROM_PAGE, 0, now(1), 0, "sig", False)
    update = next(iter(updates_from_out(out, page)))[1]

    def fetch(outcome, status):
        return {"outcome": outcome, "status": status, "fetched_at": now(1), "error": None, "error_kind": None,
                "redirect_to": None, "last_modified": None, "etag": None, "digest": "sha1:X"}

    record = apply_update(None, page, {**update, "fetch": fetch(FETCHED, 200)}, now(1), 0, policy)
    assert record["outlinks"] == ["http://a.example/x", "http://b.example/"]  # not itself
    record = apply_update(record, page, {"fetch": fetch(NOT_MODIFIED, 304)}, now(2), 0, policy)
    assert record["outlinks"] == ["http://a.example/x", "http://b.example/"]
    record = apply_update(record, page, {"fetch": {**fetch("http_error", 404), "digest": None}}, now(3), 0, policy)
    assert (record["status"], record["outlinks"]) == (GONE, [])
