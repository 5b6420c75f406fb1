"""Each pay-level domain's fetches per run within `pld_budget` (IRLbot's
STAR budgets, BEAST's deferral: mrcrawl/frontier/budgets.py): two daily
runs of the test web with its link farm and popular site, under a budget
and a topN, checked layer by layer against the oracle's frontiers for each
day; a run killed inside the budget step, then resumed.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from crawl_support import db_records, driver_command, layer_docs, layer_triples, read_records, write_inputs
from mrcrawl.config import PldBudget
from mrcrawl.frontier.budgets import allowance, within_budget
from mrcrawl.frontier.budgets import pld_indegree as pld_indegree_line
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import (
    DEFERRALS,
    DEFERRED_BY_LAYER_CAP,
    DEFERRED_BY_PLD_BUDGET,
    FETCHED,
    TRAPPED,
    UNFETCHED,
)
from mrcrawl.testweb.oracle import pay_level_domain_of, pld_indegree, walk_for_config
from mrcrawl.testweb.server import TestWebServer
from mrcrawl.testweb.web import generate_web
from test_kill_anywhere import assert_same_as_uninterrupted, kill, start_paused_at

HOSTS = 10  # the test web's 8, a popular site and a link farm
DEPTH = 4
BUDGET = {"floor": 2, "per_linking_pld": 3}
TOPN = 14
DAYS = ("2026-03-02T06:00:00Z", "2026-03-03T06:00:00Z")
# Nothing fetched is due again on the second day (no revisit, no retry): its
# layer 0 is the seeds and the URLs that wait, as the oracle's next run has it.
REVISIT = {"hub_days": 30, "first_days": 30, "max_days": 30, "retry_days": 30}


def frontier_store(output: Path, layer: int) -> dict[str, str | None]:
    return {url: entry["deferred"] for url, entry in read_records(output / "in" / str(layer))}


def layers_of(output: Path) -> list[int]:
    return sorted(int(path.name) for path in (output / "in").iterdir() if path.name.isdigit())


def indegree_used(output: Path) -> dict[str, int]:
    """The PLD in-degree store the run's budget step read; none (every in-degree 0) when scoring wrote none."""
    store = Path(CrawlStore(output).pld_indegree())
    if not store.is_dir():
        return {}
    return dict(filter(None, map(pld_indegree_line, read_records(store))))


def fetched_per_pld(output: Path) -> Counter:
    """Fetches the run spent per pay-level domain: its frontiers' entries neither held back nor seeds."""
    return Counter(pay_level_domain_of(url) for layer in layers_of(output)
                   for url, entry in read_records(output / "in" / str(layer))
                   if not entry["deferred"] and not entry["seed"])


def farm_web(port: int):
    return generate_web(1, HOSTS, port=port, link_farm=True)


@pytest.fixture(scope="module")
def farm_days(tmp_path_factory):
    """Two days of the test web with its link farm, on one db: each day's
    crawl directory, its db records, and the oracle's walk of it."""
    directory = tmp_path_factory.mktemp("budget-days")
    with TestWebServer(hosts=HOSTS, web_factory=farm_web) as server:
        seeds, conf, config = write_inputs(server, directory)
        config = {**config, "order": "bfs", "pld_budget": BUDGET, "max_urls_per_layer": TOPN, "revisit": REVISIT}
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
        db = directory / "db"
        days, walked = [], None
        for day, now in enumerate(DAYS, 1):
            output = directory / f"day{day}"
            run = subprocess.run(driver_command(seeds, conf, output, DEPTH, "--db", str(db), "--now", now),
                                 capture_output=True, text=True)
            assert run.returncode == 0, run.stderr
            walked = walk_for_config(server.web, config, server.seeds, DEPTH, pld_inlinks=indegree_used(output),
                                     after=walked)
            days.append(SimpleNamespace(output=output, records=dict(db_records(db)), walk=walked))
            shutil.copytree(db, directory / f"db-day{day}")
        yield SimpleNamespace(server=server, web=server.web, seeds=seeds, conf=conf, config=config, days=days,
                              directory=directory)


def test_the_farm_is_linked_from_one_pay_level_domain_and_the_popular_site_from_every_home(farm_days):
    web = farm_days.web
    farm, popular = (pay_level_domain_of(web.role(role).url("/")) for role in ("farm", "popular"))
    indegree = pld_indegree(web, [day.walk for day in farm_days.days])
    assert indegree[farm] == 1
    assert indegree[popular] >= 6
    # The farm has no end: each page links five more.
    assert len(web.page(web.role("farm").url("/farm/100000")).outlinks) == 5


def test_each_days_frontiers_equal_the_oracles_and_the_farm_gets_its_budget(farm_days):
    web = farm_days.web
    farm, popular = (pay_level_domain_of(web.role(role).url("/")) for role in ("farm", "popular"))
    held, filled = Counter(), []
    for number, day in enumerate(farm_days.days, 1):
        expected = day.walk
        assert layers_of(day.output) == list(range(len(expected.frontiers))), f"day {number}"
        for layer, oracle in enumerate(expected.frontiers):
            stored = frontier_store(day.output, layer)
            assert stored == oracle, f"day {number}, layer {layer}: {sorted(set(stored.items()) ^ set(oracle.items()))[:6]}"
            assert layer_triples(day.output, layer) == expected.layers[layer], f"day {number}, layer {layer}"
            assert {doc["requested_url"] for doc in layer_docs(day.output, layer)} == {u for u, cap in stored.items()
                                                                                       if not cap}
            held.update(cap for cap in stored.values() if cap)
        # Seeds are never held back.
        entries = dict(read_records(day.output / "in" / "0"))
        assert all(not entry["deferred"] for entry in entries.values() if entry["seed"])
        assert {url for url, entry in entries.items() if entry["seed"]} == set(farm_days.web.seed_urls)
        # The farm's PLD in-degree is 1 at most: it gets no more than F + K fetches a run, and
        # all its in-degree allows, for it always offers more.
        used = indegree_used(day.output)
        assert used.get(farm, 0) <= 1
        spent = fetched_per_pld(day.output)
        assert spent[farm] <= allowance(PldBudget(**BUDGET), used.get(farm, 0)) <= BUDGET["floor"] + BUDGET["per_linking_pld"]
        assert all(count <= allowance(PldBudget(**BUDGET), used.get(pld, 0)) for pld, count in spent.items())
        filled.append(spent[farm] == allowance(PldBudget(**BUDGET), used.get(farm, 0)))
        # The in-degree the run used is the oracle's, over the pages fetched on the runs before (none on the first).
        counted = pld_indegree(web, [earlier.walk for earlier in farm_days.days[:number - 1]])
        assert {pld: used.get(pld, 0) for pld in (farm, popular)} == {pld: counted.get(pld, 0) for pld in (farm, popular)}
    assert any(filled), "the farm never used its whole budget: the budget was not tested"
    assert set(held) == {DEFERRED_BY_PLD_BUDGET, DEFERRED_BY_LAYER_CAP}, held


def test_every_farm_and_trap_url_seen_says_why_it_waits(farm_days):
    web = farm_days.web
    farm, plain = web.role("farm").origin, web.role("plain").origin
    held_farm, last = 0, set()
    for number, day in enumerate(farm_days.days, 1):
        records = day.records
        waiting = {url: (record["deferred"], record["deferrals"]) for url, record in records.items()
                   if record["deferred"] in DEFERRALS}
        assert waiting == day.walk.waiting, f"day {number}"
        assert all(records[url]["status"] == UNFETCHED for url in waiting)
        trapped = {url: record["deferred"] for url, record in records.items() if record["status"] == TRAPPED}
        assert trapped == day.walk.trapped, f"day {number}"
        # A farm or calendar trap URL the crawl saw is fetched, or waits for the budget or a cap, or
        # was trapped by a guard, or was linked on the last layer of this day or an earlier one only,
        # which no frontier offered (a URL only linked is not due on a later run: the depth bounds it).
        last |= {link for _, outcome, url in day.walk.layers[-1] if outcome == FETCHED for link in web.page(url).outlinks}
        farm_urls = [url for url in records if url.startswith(farm)]
        held_farm += sum(waiting.get(url, ("",))[0] == DEFERRED_BY_PLD_BUDGET for url in farm_urls)
        for url in farm_urls + [url for url in records if url.startswith(f"{plain}/cal/")]:
            record = records[url]
            assert record["status"] == FETCHED or url in waiting or url in trapped or url in last, (url, record)
    # The budget held some of the farm back (on which day depends on the order keys' hashes, of URLs
    # that hold the server's port: the oracle's `waiting` above is the exact check).
    assert held_farm, "the budget never held a farm URL back: it was not tested"


def test_a_url_the_budget_held_back_is_fetched_on_a_later_run(farm_days):
    first, second = farm_days.days
    held = {url for url, (why, _) in first.walk.waiting.items() if why == DEFERRED_BY_PLD_BUDGET}
    fetched_next = {url for layer in range(len(second.walk.layers)) for url in
                    {doc["requested_url"] for doc in layer_docs(second.output, layer)}} & held
    # Which of them day 2 takes depends on the order keys' hashes (of URLs that hold the server's
    # port): the oracle says which; none is lost, each is fetched or waits still.
    predicted = {url for records in second.walk.layers for url, _, _ in records} & held
    assert fetched_next == predicted
    assert all(url in fetched_next or second.records[url]["deferred"] for url in held)
    assert all(second.records[url]["status"] != UNFETCHED and second.records[url]["deferred"] is None
               and second.records[url]["deferrals"] == 0 for url in fetched_next)
    # The budget is per run: day 2 spent on the farm what the oracle's day 2 spends, within its budget again.
    farm = pay_level_domain_of(farm_days.web.role("farm").url("/"))
    seeds = set(farm_days.web.seed_urls)
    predicted_spent = sum(pay_level_domain_of(url) == farm for frontier in second.walk.frontiers
                          for url, cap in frontier.items() if not cap and url not in seeds)
    assert fetched_per_pld(second.output)[farm] == predicted_spent


def test_the_budget_keeps_a_plds_first_urls_in_the_crawls_order_after_what_it_spent():
    candidate = {"seed": False, "deferred": None}
    seed = {"seed": True, "deferred": None, "order": None}
    ranked = [["", "http://a/s", seed], ["", "http://a/1", None], ["100001.001.a", "http://a/2", candidate],
              ["100001.001.b", "http://a/3", candidate], ["100002.001.a", "http://a/4", candidate]]
    kept = {url: entry["deferred"] for url, entry in within_budget("a", ranked, 3)}
    assert kept == {"http://a/s": None, "http://a/2": None, "http://a/3": None, "http://a/4": DEFERRED_BY_PLD_BUDGET}
    assert allowance(PldBudget(floor=2, per_linking_pld=3), 4) == 14


def test_without_a_budget_the_web_with_a_farm_runs_no_budget_step(farm_days, tmp_path):
    config = {key: value for key, value in farm_days.config.items() if key != "pld_budget"}
    conf = tmp_path / "nobudget.yaml"
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    output = tmp_path / "crawl"
    run = subprocess.run(driver_command(farm_days.seeds, conf, output, 2), capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert not any(step.startswith("pldbudget/") for step in done) and not (output / "budget").exists()
    assert all(entry["deferred"] != DEFERRED_BY_PLD_BUDGET for layer in layers_of(output)
               for _, entry in read_records(output / "in" / str(layer)))


# -- killed inside the budget step, then resumed -----------------------------------------------

def test_a_run_killed_inside_the_budget_step_and_resumed_equals_the_uninterrupted_run(farm_days, tmp_path):
    first = farm_days.days[0]
    farm_days.server.reset_flaky()  # as on the uninterrupted run's fresh server
    seconds = json.loads((first.output / "crawl.json").read_text())["done"]["pldbudget/2"]["seconds"]
    output, db, log = tmp_path / "killed", tmp_path / "db", tmp_path / "runs.log"
    command = driver_command(farm_days.seeds, farm_days.conf, output, DEPTH, "--db", str(db), "--now", DAYS[0])
    for number, (point, wait) in enumerate([("start pldbudget/2", seconds / 2), ("written pldbudget/3", None)]):
        process = start_paused_at(command + (["--resume"] if number else []), point, log)
        if wait is not None:
            os.kill(process.pid, signal.SIGCONT)
            time.sleep(wait)
        kill(process)
    assert farm_days.server.wait_idle()
    finished = subprocess.run(command + ["--resume"], capture_output=True, text=True)
    assert finished.returncode == 0, finished.stderr
    clean = SimpleNamespace(clean=first.output, clean_db=farm_days.directory / "db-day1")
    assert_same_as_uninterrupted(clean, output, db, "killed in the budget step")
