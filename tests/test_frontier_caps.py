"""A layer's frontier within max_urls_per_host and max_urls_per_layer
(mrcrawl/frontier/caps.py): crawls of the test web checked against the
oracle's frontiers layer by layer, a week of daily runs whose topN is
smaller than the URLs due, and runs killed inside the steps that choose a
frontier, then resumed.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter, defaultdict
from pathlib import Path

import pytest
import yaml

from crawl_support import crawl, db_records, driver_command, layer_docs, layer_triples, read_records, write_inputs
from mrcrawl.frontier.caps import order_value, threshold, within_layer_cap
from mrcrawl.store.records import DEFERRED_BY_HOST_CAP, DEFERRED_BY_LAYER_CAP, UNFETCHED, iso_utc
from mrcrawl.testweb.daily import DailySpec, start_daily_web
from mrcrawl.testweb.oracle import walk_for_config
from test_kill_anywhere import (
    EXPORTS,
    FIRST_DEPTH,
    REVISIT,
    SPEC,
    Day2,
    assert_intact,
    assert_same_as_uninterrupted,
    day2_command,
    kill,
    kill_at,
    start_paused_at,
)

CAPS = (DEFERRED_BY_LAYER_CAP, DEFERRED_BY_HOST_CAP)


def with_caps(conf: Path, config: dict, **caps) -> dict:
    """The crawl config `conf` holds, rewritten with the caps given (config keys)."""
    config = {**config, **caps}
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    return config


def frontier_store(output: Path, layer: int) -> dict[str, str | None]:
    """Layer L's frontier store: each URL, with the cap that held it back, or None."""
    return {url: entry["deferred"] for url, entry in read_records(output / "in" / str(layer))}


def capped_layers(output: Path) -> list[int]:
    return sorted(int(path.name) for path in (output / "in").iterdir() if path.name.isdigit())


# -- the order and the threshold -------------------------------------------------------------------

RUN = "2026-01-05T06:00:00.000Z"


def test_a_deferral_counts_as_one_hop_less_and_earlier_runs_come_first():
    record = {"hops": 2, "deferrals": 0, "first_run": RUN, "first_layer": 1}
    held_twice = {**record, "deferrals": 2}
    found_before = {**record, "first_run": "2026-01-04T06:00:00.000Z"}
    nearer = {**record, "hops": 1}
    unknown = {**record, "hops": None}
    assert order_value(held_twice, RUN) < order_value(nearer, RUN) < order_value(found_before, RUN) \
        < order_value(record, RUN) < order_value(unknown, RUN)
    # Held back more often than it has hops, it comes before the seeds' own depth.
    assert order_value({**record, "deferrals": 3}, RUN) < order_value({**record, "hops": 0}, RUN)


def test_the_threshold_keeps_whole_cells_and_never_more_than_the_cap():
    # Three cells in the crawl's order: 2, 3 and 1 candidates.
    cells = [("100001.002.00a", 2), ("100001.002.0f0", 3), ("100002.002.000", 1), ("100001.002.0f0", 0)]
    assert threshold(cells, 6) is None
    assert threshold(cells, 5) == "100002.002.000"
    assert threshold(cells, 4) == "100001.002.0f0"  # the 3 of that cell do not fit: none of them stays
    assert threshold(cells, 1) == "100001.002.00a"
    first, threshold_cell = "100001.002.00a" + "0" * 13, "100001.002.0f0" + "1" * 13
    kept = within_layer_cap({"seed": False, "deferred": None, "order": first}, threshold(cells, 4))
    held = within_layer_cap({"seed": False, "deferred": None, "order": threshold_cell}, threshold(cells, 4))
    seed = within_layer_cap({"seed": True, "deferred": None, "order": None}, threshold(cells, 1))
    assert (kept["deferred"], held["deferred"], seed["deferred"]) == (None, DEFERRED_BY_LAYER_CAP, None)


# -- crawls of the test web under caps -------------------------------------------------------------------

DEPTH = 4


@pytest.mark.parametrize("caps, runner", [
    ({DEFERRED_BY_LAYER_CAP: 12}, "inline"),
    ({DEFERRED_BY_HOST_CAP: 4}, "inline"),
    ({DEFERRED_BY_LAYER_CAP: 12, DEFERRED_BY_HOST_CAP: 4}, "inline"),
    ({DEFERRED_BY_LAYER_CAP: 12, DEFERRED_BY_HOST_CAP: 4}, "local"),
])
def test_each_layers_frontier_under_caps_equals_the_oracles(web_server, tmp_path, caps, runner):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    # The oracle walks in bfs's order: a first run's provisional scores would reorder the layers.
    config = with_caps(conf, {**config, "order": "bfs"}, **caps)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, DEPTH, runner) == 0
    expected = walk_for_config(web_server.web, config, web_server.seeds, DEPTH)
    assert capped_layers(output) == list(range(len(expected.frontiers)))
    held_somewhere = Counter()
    for layer, oracle in enumerate(expected.frontiers):
        stored = frontier_store(output, layer)
        assert stored == oracle, f"layer {layer}: {sorted(set(stored.items()) ^ set(oracle.items()))[:6]}"
        assert layer_triples(output, layer) == expected.layers[layer], f"layer {layer}"
        # Only the URLs the caps let through were requested, and no more than they allow.
        assert {doc["requested_url"] for doc in layer_docs(output, layer)} == {u for u, cap in stored.items() if not cap}
        entries = dict(read_records(output / "in" / str(layer)))
        fetched = [url for url, entry in entries.items() if not entry["deferred"] and not entry["seed"]]
        assert len(fetched) <= caps.get(DEFERRED_BY_LAYER_CAP, len(fetched))
        per_host = Counter(url.split("/")[2] for url in fetched)
        assert max(per_host.values(), default=0) <= caps.get(DEFERRED_BY_HOST_CAP, len(fetched))
        # Seeds are never held back, and what was held back is offered again on the next layer.
        assert all(not entry["deferred"] for entry in entries.values() if entry["seed"])
        if layer + 1 < len(expected.frontiers):
            offered = frontier_store(output, layer + 1)
            attempted = {url for doc in layer_docs(output, layer) for url in (doc["requested_url"], doc["url"])}
            assert {url for url, cap in stored.items() if cap} - attempted <= offered.keys()
        held_somewhere.update(cap for cap in stored.values() if cap)
    assert set(held_somewhere) == set(caps), held_somewhere  # each cap held some URL back
    assert frontier_store(output, 0) == dict.fromkeys(web_server.seeds)  # layer 0: the seeds, none held back
    # Held back at one layer, fetched at a later one: the deferred URL aged.
    fetched_later = {url for layer, oracle in enumerate(expected.frontiers) for url, cap in oracle.items()
                     if not cap and any(before.get(url) for before in expected.frontiers[:layer])}
    assert fetched_later
    # The db says why each URL waits, and how often it waited in a row; it stays unfetched.
    records = dict(db_records(output / "db"))
    waiting = {url: (record["deferred"], record["deferrals"]) for url, record in records.items()
               if record["deferred"] in CAPS}
    assert waiting == expected.waiting
    assert all(records[url]["status"] == UNFETCHED for url in waiting)
    assert all(records[url]["status"] != UNFETCHED and records[url]["deferrals"] == 0
               and records[url]["deferred"] is None for url in fetched_later)
    # The candidates' stores were written beside the frontiers.
    assert (output / "cand" / "1").is_dir()
    assert (output / "hist" / "1").is_dir() == (DEFERRED_BY_LAYER_CAP in caps)


def test_other_caps_predict_other_frontiers(web_server):
    """The oracle's frontiers depend on the caps: the checks above can fail."""
    config = web_server.web.crawl_config()
    walks = [walk_for_config(web_server.web, {**config, **caps}, web_server.seeds, DEPTH).frontiers
             for caps in ({}, {DEFERRED_BY_LAYER_CAP: 12}, {DEFERRED_BY_LAYER_CAP: 13}, {DEFERRED_BY_HOST_CAP: 4})]
    assert all(walks[i] != walks[j] for i in range(len(walks)) for j in range(i))


def test_a_crawl_without_caps_writes_no_candidates_and_runs_no_step_of_theirs(web_server, tmp_path):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 2) == 0
    assert not any((output / store).exists() for store in ("cand", "hostcap", "hist"))
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert [step.split("/")[0] for step in done] == [
        "generate", *["place", "crawl", "parse", "dbbatch", "dedup", "dbupdate", "optimize"],
        *["place", "crawl", "parse", "dbbatch", "dedup", "dbupdate"], "merge", "xml"]
    # The frontier entries are today's: no order key, nothing held back.
    assert all("order" not in entry and entry["deferred"] is None
               for layer in range(2) for _, entry in read_records(output / "in" / str(layer)))


# -- a week of daily runs with a topN smaller than the URLs due -----------------------------------

WEEK = DailySpec()  # 3 sites of 3 sections and 40 articles; 4 new articles a day each, days 1 to 7
WEEK_DEPTH = 3
WEEK_TOPN = 20  # a day fetches the 3 seeds and 3 layers of 20: from day 2 on, layer 0 alone has 60 to 100 candidates
# The bound: a URL first held back on day d is fetched on day d + 2 at the latest.  On
# this web a URL is 1 or 2 hops from a seed, so one held back twice comes before every
# URL never held back, and those still ahead of it, held back as long, are fewer than
# the next day's 60 fetches.  (Without the aging, the same week leaves URLs waiting 6
# days and more, held back 19 times in a row, and the backlog grows.)
BOUND_DAYS = 2


@pytest.fixture(scope="module")
def capped_week(tmp_path_factory):
    """Each day's frontier stores, doc records and db, and the web's seeds."""
    directory = tmp_path_factory.mktemp("capped-week")
    days = {}
    with start_daily_web(WEEK) as server:
        seeds, conf, config = write_inputs(server, directory, retries=0)
        with_caps(conf, {**config, "revisit": {"first_days": 2}}, max_urls_per_layer=WEEK_TOPN)
        db = directory / "db"
        for day in server.web.days:
            server.set_day(day)
            output = directory / f"day{day}"
            assert crawl(seeds, conf, output, WEEK_DEPTH, "inline", "--db", str(db),
                         "--now", server.web.date_iso(day)) == 0, f"day {day}"
            layers = capped_layers(output)
            days[day] = ([dict(read_records(output / "in" / str(layer))) for layer in layers],
                         [layer_docs(output, layer) for layer in layers], dict(db_records(db)))
        return server.web.seed_urls, days


def test_a_week_under_a_topn_fetches_the_seeds_every_day_and_no_more_than_the_cap(capped_week):
    seed_urls, days = capped_week
    for day, (frontiers, docs, _) in days.items():
        first = frontiers[0]
        assert {url for url, entry in first.items() if entry["seed"]} == set(seed_urls), f"day {day}"
        assert all(not first[url]["deferred"] for url in seed_urls)
        assert set(seed_urls) <= {doc["requested_url"] for doc in docs[0]}
        for layer, frontier in enumerate(frontiers):
            chosen = [url for url, entry in frontier.items() if not entry["deferred"] and not entry["seed"]]
            assert len(chosen) <= WEEK_TOPN, f"day {day}, layer {layer}"
            assert {doc["requested_url"] for doc in docs[layer]} == {
                url for url, entry in frontier.items() if not entry["deferred"]}
    # The topN is smaller than what is due: layer 0 holds back due URLs from day 2 on.
    due = [sum(not entry["seed"] for entry in frontiers[0].values()) for frontiers, _, _ in days.values()]
    assert all(count > WEEK_TOPN for count in due[1:]), due


def test_a_week_under_a_topn_fetches_every_url_within_the_bound(capped_week):
    _, days = capped_week
    last = max(days)
    held_since: dict[str, int] = {}  # URL -> the day it was first held back, while it waits
    waited = Counter()  # days from first held back to fetched, over every wait
    for day, (frontiers, docs, records) in days.items():
        for frontier, layer_docs_ in zip(frontiers, docs):
            attempted = {doc["requested_url"] for doc in layer_docs_}
            for url, entry in frontier.items():
                if entry["deferred"]:
                    held_since.setdefault(url, day)
                elif url in held_since:
                    assert url in attempted
                    waited[day - held_since.pop(url)] += 1
        # Every URL that waits has a db record saying so, and it waits as it was.
        for url in held_since:
            assert records[url]["deferred"] == DEFERRED_BY_LAYER_CAP and records[url]["deferrals"] >= 1, url
    late = {url: since for url, since in held_since.items() if since + BOUND_DAYS < last}
    assert not late, f"waiting since before day {last - BOUND_DAYS}: {sorted(late.items())[:5]}"
    assert waited and max(waited) <= BOUND_DAYS, sorted(waited.items())
    assert sum(waited.values()) > 100  # the cap held back, and the bound was tested, many times


# -- killed inside the steps that choose a frontier, then resumed ---------------------------------------

KILL_CAPS = {DEFERRED_BY_LAYER_CAP: 6, DEFERRED_BY_HOST_CAP: 4}
CAP_STEPS = ("hostcap", "histogram", "layercap")
KILL_SEED = int(os.environ.get("MRCRAWL_KILL_SEED", "20260107"))


@pytest.fixture(scope="module")
def capped_day2(tmp_path_factory):
    """test_kill_anywhere's day 2, under both caps: run once uninterrupted."""
    directory = tmp_path_factory.mktemp("capped-day2")
    with start_daily_web(SPEC) as server:
        seeds, conf, config = write_inputs(server, directory)
        with_caps(conf, {**config, "revisit": dict(REVISIT)}, **KILL_CAPS)
        day1_db = directory / "day1-db"
        run = subprocess.run(driver_command(seeds, conf, directory / "day1", FIRST_DEPTH, "--db", str(day1_db),
                                            "--now", server.web.date_iso(1)), capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        server.set_day(2)
        clean, clean_db = directory / "clean", directory / "clean-db"
        shutil.copytree(day1_db, clean_db)
        run = subprocess.run(day2_command(server, seeds, conf, clean, clean_db), capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        done = json.loads((clean / "crawl.json").read_text())["done"]
        held = Counter(cap for layer in capped_layers(clean) for cap in frontier_store(clean, layer).values() if cap)
        assert set(held) == set(CAPS), f"day 2 held back {held}: the kills would test no cap"
        seconds = {step: finished["seconds"] for step, finished in done.items()}
        yield Day2(server, seeds, conf, day1_db, clean, clean_db, [*done, *EXPORTS], seconds)


def test_a_day_killed_inside_each_step_that_chooses_a_frontier_equals_an_uninterrupted_day(capped_day2, tmp_path):
    day2, rng = capped_day2, random.Random(KILL_SEED)
    run = iso_utc(day2.server.web.date(2))
    steps = [step for step in day2.steps if step.split("/")[0] in CAP_STEPS]
    schedule = []
    for kind in CAP_STEPS:  # a kill inside a step of each kind
        step = rng.choice([step for step in steps if step.startswith(f"{kind}/")])
        schedule.append(kill_at(step, "inside", run, day2.seconds[step], rng))
    for what in ("between steps", "written, not committed", "half replaced", "committed, not recorded"):
        step = rng.choice(steps)
        schedule.append(kill_at(step, what, run, day2.seconds[step], rng))
    schedule.sort(key=lambda planned: (day2.steps.index(planned.step), planned.wait or 0))
    output, db, log = tmp_path / "killed", tmp_path / "db", tmp_path / "runs.log"
    shutil.copytree(day2.day1_db, db)
    inside = defaultdict(int)
    for number, planned in enumerate(schedule):
        resume = ("--resume",) if number else ()
        process = start_paused_at(day2_command(day2.server, day2.seeds, day2.conf, output, db, *resume),
                                  planned.point, log)
        if planned.wait is not None:
            os.kill(process.pid, signal.SIGCONT)
            time.sleep(planned.wait)
        kill(process)
        done = assert_intact(output, db, day2.steps)
        if planned.what == "inside" and planned.step not in done:
            inside[planned.step.split("/")[0]] += 1
    assert day2.server.wait_idle()
    finished = subprocess.run(day2_command(day2.server, day2.seeds, day2.conf, output, db, "--resume"),
                              capture_output=True, text=True)
    assert finished.returncode == 0, f"MRCRAWL_KILL_SEED={KILL_SEED}: {finished.stderr}"
    assert set(inside) == set(CAP_STEPS), f"MRCRAWL_KILL_SEED={KILL_SEED}: kills inside {dict(inside)} only; see {log}"
    assert_same_as_uninterrupted(day2, output, db, f"killed in the capped steps (MRCRAWL_KILL_SEED={KILL_SEED})")
