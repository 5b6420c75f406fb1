"""`python -m mrcrawl.bench --quick` runs every scenario and reports what it measured.

The scenarios with a test file of their own (RUN_ON_THEIR_OWN) are left to
it, so that the suite runs each once.

No timing is asserted: the machine is shared.  What is asserted holds on any
machine: every scenario ran, fetched what it was given, stayed polite by the
server's own log, and db-update's two ways of updating the db left the same records.
"""
from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bench_support import quick_bench
import requests

from mrcrawl.bench.__main__ import SCENARIOS, combine, parse_args
from mrcrawl.bench.ordering import OrderingWebSpec, link_graph, pagerank
from mrcrawl.bench.scenarios import QUICK, ROW_KEYS
from mrcrawl.bench.web import BenchWeb, BenchWebSpec, pages_per_host
from mrcrawl.config import ORDERS

HREF = re.compile(r'href="([^"]+)"')
# Scenario -> the test file that runs it at --quick's size and checks its rows.
RUN_ON_THEIR_OWN = {"week": "test_bench_week.py", "feeds": "test_bench_feeds.py",
                    "partition": "test_bench_partition.py", "parse": "test_bench_parse.py"}
HERE = [name for name in SCENARIOS if name not in RUN_ON_THEIR_OWN]


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    return quick_bench(tmp_path_factory.mktemp("bench"), ",".join(HERE), timeout=900)


def rows_named(result, prefix):
    return [row for row in result["scenarios"] if row["name"].startswith(prefix)]


def test_every_scenario_reports_in_the_documented_shape(quick_run):
    stdout, result = quick_run
    names = {row["name"].split(" ")[0] for row in result["scenarios"]}
    assert names == set(HERE)
    for name, test_file in RUN_ON_THEIR_OWN.items():  # the others are run there, with the same names
        runs = re.compile(rf'"--scenarios", "{name}"|quick_bench\(.*, "{name}", timeout=')
        assert name in SCENARIOS and runs.search((Path(__file__).parent / test_file).read_text(encoding="utf-8"))
    for row in result["scenarios"]:
        assert set(ROW_KEYS) <= set(row), row["name"]
        assert row["wall_s"] > 0
    assert result["machine"]["cores"] >= 1
    assert result["quick"] is True
    # The table names every scenario and the worst gap the server saw.
    for name in HERE:
        assert name in stdout
    assert "worst gap" in stdout


def test_fetch_scenarios_fetch_every_url_politely(quick_run):
    _, result = quick_run
    ours = [row for row in rows_named(result, "fetch-") if not row["runner"].startswith("scrapy")]
    assert {row["runner"] for row in ours} >= {"inline", "local"}
    for row in ours:
        assert row["pages"] == QUICK.pages, row
        assert row["polite"] is True and row["overlaps"] == 0 and row["gaps_below_delay"] == 0, row
        assert row["bound_s"] > 0 and row["ratio_to_bound"] == pytest.approx(row["wall_s"] / row["bound_s"])
    (polite,) = rows_named(result, "fetch-politeness")
    assert polite["worst_gap_s"] >= QUICK.polite_delay
    spec = BenchWebSpec(hosts=QUICK.hosts, pages=QUICK.pages, distribution="zipf")
    assert polite["busiest_host_pages"] == max(pages_per_host(spec))
    assert polite["bound_s"] == pytest.approx(polite["busiest_host_pages"] * QUICK.polite_delay)


def test_tail_cuts_the_layer_at_its_limit_and_the_next_layer_takes_up_the_rest(quick_run):
    stdout, result = quick_run
    (tail,) = rows_named(result, "tail")
    spec = BenchWebSpec(hosts=QUICK.hosts, pages=QUICK.pages, distribution="zipf")
    assert tail["politeness_bound_s"] == pytest.approx(max(pages_per_host(spec)) * QUICK.polite_delay)
    assert tail["limit_s"] == tail["bound_s"] == pytest.approx(tail["politeness_bound_s"] / 2)
    # The limit cut the layer short: URLs were left, none started late, each of them taken up by layer 1.
    assert 0 < tail["pages"] < QUICK.pages and tail["left"] == tail["left_urls"] == QUICK.pages - tail["pages"]
    assert tail["late_starts"] == 0 and tail["last_start_s"] <= tail["limit_s"]
    assert tail["next_frontier_is_left"] and tail["next_frontier"] == tail["left"]
    assert tail["next_fetched"] > 0 and tail["lost"] == 0
    assert tail["next_fetched"] + tail["deferred_twice"] == tail["left"] and tail["deferred_twice"] == tail["left_again"]
    assert tail["polite"] is True and tail["overlaps"] == 0 and tail["gaps_below_delay"] == 0, tail
    assert "tail: max_layer_seconds" in stdout


def test_the_peer_row_is_scrapy_when_it_is_installed(quick_run):
    _, result = quick_run
    peers = [row for row in result["scenarios"] if row["runner"].startswith("scrapy")]
    if importlib.util.find_spec("scrapy") is None:
        assert not peers
        return
    assert len(peers) == len(QUICK.scrapy_concurrency)
    assert all(row["pages"] == QUICK.pages for row in peers)
    best = max(row["pages_per_s"] for row in peers)
    for row in rows_named(result, "fetch-uniform"):
        if not row["runner"].startswith("scrapy"):
            assert row["ratio_to_peer"] == pytest.approx(row["pages_per_s"] / best)


def test_pipeline_accounts_for_every_job(quick_run):
    _, result = quick_run
    rows = rows_named(result, "pipeline")
    assert [row["delay_s"] for row in rows] == list(QUICK.pipeline_delays)
    for row in rows:
        assert row["pages"] > QUICK.hosts  # more than the seeds: later layers ran
        assert set(row["share_by_job"]) == {"generate", "place", "crawl", "parse", "dbbatch", "dedup", "dbupdate", "optimize", "merge", "xml"}
        assert row["overhead_s"] == pytest.approx(row["wall_s"] - row["fetch_s"])
        assert 0 < row["overhead_share"] < 1
        assert row["polite"] is True and row["overlaps"] == 0 and row["gaps_below_delay"] == 0, row
    # The same web and depth, so the same pages; only the pace differs.
    assert rows[0]["pages"] == rows[1]["pages"]


def test_memory_scenario(quick_run):
    _, result = quick_run
    memory_rows = rows_named(result, "memory")
    assert [row["urls"] for row in memory_rows] == list(QUICK.memory_sizes)
    for row in memory_rows:
        assert row["pages"] == row["urls"] and row["polite"] is True
        assert 0 < row["peak_rss_mb"] < 1024


def test_db_update_and_the_resort_leave_the_same_records(quick_run):
    _, result = quick_run
    partitioned = [row for row in result["scenarios"] if row["name"] == "db-update"]
    resorts = [row for row in result["scenarios"] if row["name"] == "db-update re-sort"]
    sizes = list(QUICK.db_update_sizes)
    assert [row["urls"] for row in partitioned] == [row["urls"] for row in resorts] == sizes
    for row in partitioned + resorts:
        # Every URL of the db and every new outlink once, and one digest and one content signature per article
        # (each refetch claims its new payload and content and releases its old ones).
        assert row["same_records"] is True and row["records"] == 3 * row["urls"] + QUICK.db_update_new_urls, row
        assert row["wall_s"] > 0 and row["peak_rss_mb"] > 0
    for ours, resort in zip(partitioned, resorts):
        assert ours["wall_s"] == pytest.approx(ours["batch_s"] + ours["dedup_s"] + ours["merge_s"])
        assert ours["ratio_to_resort"] == pytest.approx(ours["wall_s"] / resort["wall_s"])
        assert ours["urls_growth"] == sizes[-1] / sizes[0]
        assert ours["time_growth"] == pytest.approx(partitioned[-1]["wall_s"] / partitioned[0]["wall_s"])


def test_db_update_with_scores_adds_the_link_store_and_the_pagerank_iterations(quick_run):
    stdout, result = quick_run
    scored = rows_named(result, "db-update scoring")
    resorts = {row["urls"]: row for row in rows_named(result, "db-update re-sort")}
    assert [row["urls"] for row in scored] == list(QUICK.db_update_sizes)
    for row in scored:
        assert row["iterations"] >= 1 and row["links_s"] > 0 and row["scores_s"] > 0
        assert row["wall_s"] == pytest.approx(row["update_s"] + row["links_s"] + row["scores_s"])
        assert row["ratio_to_resort"] == pytest.approx(row["wall_s"] / resorts[row["urls"]]["wall_s"])
        assert row["rss_growth"] == pytest.approx(scored[-1]["peak_rss_mb"] / scored[0]["peak_rss_mb"])
    assert "db-update scoring:" in stdout


def test_ordering_reports_each_order_with_and_without_star(quick_run):
    stdout, result = quick_run
    rows = rows_named(result, "ordering")
    assert sorted((row["order"], row["star"]) for row in rows) == sorted(
        (order, star) for order in ORDERS for star in (False, True))
    marks = QUICK.ordering_marks
    for row in rows:
        assert row["name"] == f"ordering {row['order']}" + (" STAR" if row["star"] else "")
        assert row["pages"] == min(row["fetches"], marks[-1]) and row["fetches"] > QUICK.ordering_seeds
        assert row["important"] == QUICK.ordering_pages // 100
        shares = [row["important_at"][str(mark)] for mark in marks]
        assert 0 < shares[0] and shares == sorted(shares) and shares[-1] <= 1
        assert 0 <= row["farm_share"] == row["farm_fetches"] / row["pages"] < 1
        # Every URL a fetched page links has a db record.
        assert row["linked_urls"] > row["fetches"] and row["unrecorded_links"] == 0, row
        bfs = next(other for other in rows if other["order"] == "bfs" and other["star"] == row["star"])
        first = str(marks[0])
        assert row["ratio_to_bfs"] == pytest.approx(row["important_at"][first] / bfs["important_at"][first])
        assert f"{row['name']}: {row['fetches']:,} fetches" in stdout


def test_the_ordering_web_has_a_power_law_and_one_link_into_its_farm():
    spec = OrderingWebSpec(hosts=20, pages=2_000, farm_pages=500)
    graph = link_graph(spec)
    assert graph == link_graph(OrderingWebSpec(hosts=20, pages=2_000, farm_pages=500))  # drawn from the seed
    assert graph.pages == 2_000 and graph.page_counts == pages_per_host(
        BenchWebSpec(hosts=20, pages=2_000, distribution="zipf"))
    indegree = [0] * graph.pages
    for page in range(graph.pages):
        targets = list(graph.out(page))
        assert page not in targets and len(targets) == len(set(targets))
        for target in targets:
            indegree[target] += 1
    ranked = sorted(indegree, reverse=True)
    # Zipf in-degrees: the top 1% of the pages hold far more than 1% of the links.
    assert sum(ranked[:20]) > 0.1 * sum(ranked)
    scores = pagerank(graph)
    assert sum(scores) == pytest.approx(1.0)
    assert max(range(graph.pages), key=scores.__getitem__) in graph.first_page  # a home page leads
    with BenchWeb(spec) as web, requests.Session() as session:
        model = web.model
        into_farm = []
        for page in range(graph.pages):
            links = HREF.findall(session.get(model.url(page), timeout=5).text) if page % 97 == 0 else model.links(page)
            assert links == model.links(page)
            into_farm += [(page, link) for link in links if model.is_farm(link)]
        assert into_farm == [(graph.first_page[0], model.farm_url(0))]
        farm_links = HREF.findall(session.get(model.farm_url(7), timeout=5).text)
        assert farm_links and all(model.is_farm(link) and link != model.farm_url(7) for link in farm_links)
        assert session.get(model.farm_url(spec.farm_pages), timeout=5).status_code == 404
        assert session.get(model.url(graph.pages - 1), timeout=5).status_code == 200


def test_repeated_runs_combine_into_medians_and_the_worst_politeness():
    def run(wall, ratio, gap, overlaps, shares):
        return [{"name": "fetch-uniform", "runner": "inline", "wall_s": wall, "ratio_to_peer": ratio,
                 "worst_gap_s": gap, "overlaps": overlaps, "polite": overlaps == 0, "bound": "cpu",
                 "share_by_job": shares},
                {"name": "memory", "runner": "reducer task", "wall_s": wall * 10, "peak_rss_mb": 60.0 + wall}]
    runs = [run(10.0, 2.0, 0.021, 0, {"crawl": 0.5}), run(30.0, 1.5, 0.020, 1, {"crawl": 0.7}),
            run(20.0, 2.5, 0.022, 0, {"crawl": 0.6})]
    fetch, memory = combine(runs)
    assert (fetch["wall_s"], fetch["ratio_to_peer"], fetch["share_by_job"]) == (20.0, 2.0, {"crawl": 0.6})
    assert (fetch["worst_gap_s"], fetch["overlaps"], fetch["polite"]) == (0.020, 1, False)
    assert fetch["bound"] == "cpu" and fetch["runs"] == 3
    assert (memory["wall_s"], memory["peak_rss_mb"], memory["runs"]) == (200.0, 80.0, 3)
    with pytest.raises(SystemExit):
        parse_args(["--repeat", "0"])


def test_help_lists_every_scenario_on_a_line_of_its_own():
    result = subprocess.run([sys.executable, "-m", "mrcrawl.bench", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    # A scenario's line: its name, then what it measures.
    named = [line.split(None, 1) for line in result.stdout.splitlines() if line.split()[:1] and line.split()[0] in SCENARIOS]
    assert [words[0] for words in named] == list(SCENARIOS), result.stdout
    assert all(len(words) == 2 for words in named), named
