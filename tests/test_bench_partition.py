"""The benchmark's partition scenario, at --quick's size (a tenth of the full
frontier and of its host cap): the layer time of host hashing, the two-tier
plan (frontier/placement.py) and URL hashing, simulated on 16 to 256 reducers.

The figures are a deterministic simulation, not a timing, so the target is
asserted: the two-tier plan within 1.1x the bound at every size, and host
hashing slower wherever the threads' work, not one host's politeness, sets
the bound.
"""
from __future__ import annotations

import pytest

from bench_support import quick_bench
from mrcrawl.bench.partition import (
    HOST_HASHING,
    PLACEMENTS,
    QUICK_PARTITION,
    TARGET_RATIO,
    TWO_TIER,
    URL_HASHING,
    host_name,
    host_sizes,
    layer_seconds,
    partition_notes,
    url_hashes,
    url_hashing_seconds,
)
from mrcrawl.bench.scenarios import ROW_KEYS
from mrcrawl.frontier.placement import FetchModel, stable_hash


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The scenario as `python -m mrcrawl.bench --quick --scenarios partition` runs it: its output and rows."""
    output, report = quick_bench(tmp_path_factory.mktemp("bench-partition"), "partition", timeout=300)
    return output, report["scenarios"]


def test_one_row_per_reducer_count_with_each_placement_against_the_bound(run):
    stdout, rows = run
    sizes = QUICK_PARTITION
    assert [row["reducers"] for row in rows] == list(sizes.reducers)
    for row in rows:
        assert row["name"] == f"partition {row['reducers']} reducers" and set(ROW_KEYS) <= set(row)
        assert (row["urls"], row["hosts"], row["host_cap"]) == (sizes.urls, sizes.hosts, sizes.host_cap)
        assert row["floor_s"] == row["biggest_host"] * sizes.delay == sizes.host_cap * sizes.delay
        assert row["work_per_reducer_s"] == pytest.approx(sizes.urls * sizes.request_seconds / sizes.threads
                                                          / row["reducers"])
        assert row["bound_s"] == max(row["floor_s"], row["work_per_reducer_s"])
        assert set(row["placements"]) == set(PLACEMENTS)
        for figures in row["placements"].values():
            assert figures["ratio_to_bound"] == pytest.approx(figures["layer_s"] / row["bound_s"])
            # No placement beats the threads' work spread evenly.
            assert figures["layer_s"] >= row["work_per_reducer_s"] * (1 - 1e-9)
        for polite in (HOST_HASHING, TWO_TIER):  # a host on one reducer: the floor holds
            assert row["placements"][polite]["layer_s"] >= row["bound_s"] * (1 - 1e-9)
        # The plan's own estimate is what the simulation finds.
        assert row["planned_s"] == pytest.approx(row["placements"][TWO_TIER]["layer_s"])
        assert row["ratio_to_bound"] == row["placements"][TWO_TIER]["ratio_to_bound"]
    for line in partition_notes(rows):
        assert line in stdout
    assert "URL hashing breaks politeness" in stdout


def test_the_two_tier_plan_is_within_the_target_and_beats_host_hashing(run):
    _, rows = run
    for row in rows:
        assert row["placements"][TWO_TIER]["ratio_to_bound"] <= TARGET_RATIO, row
    work_bound = [row for row in rows if row["work_per_reducer_s"] > row["floor_s"]]
    assert len(work_bound) >= 3  # the capped Zipf frontier leaves the threads' work the bound at most sizes
    for row in work_bound:
        assert row["placements"][HOST_HASHING]["ratio_to_bound"] > row["placements"][TWO_TIER]["ratio_to_bound"], row
    assert max(row["placements"][HOST_HASHING]["ratio_to_bound"] for row in rows) > 1.1
    # Where the cap's floor is the bound, URL hashing goes under it: a host is fetched from many reducers at once.
    floor_bound = [row for row in rows if row["floor_s"] > row["work_per_reducer_s"]]
    assert floor_bound and all(row["placements"][URL_HASHING]["ratio_to_bound"] < 1 for row in floor_bound)


def test_the_frontier_is_a_capped_zipf_of_exactly_the_urls_and_hosts():
    sizes = host_sizes(10_000, 100_000, 1.0, 500)
    assert len(sizes) == 10_000 and sum(sizes) == 100_000
    assert sizes == sorted(sizes, reverse=True) and sizes[0] == 500 and sizes[-1] == 1
    assert 1 < sizes.count(500) < 100  # the cap binds a few of the biggest hosts, not most
    # Below the cap, Zipf with s = 1: rank k holds about twice rank 2k.
    uncapped = sizes.count(500) + 1
    assert sizes[2 * uncapped] == pytest.approx(sizes[uncapped] / 2, rel=0.02)
    assert sum(host_sizes(50, 5_000, 1.0, None)) == 5_000 and host_sizes(4, 8, 0.0, None) == [2, 2, 2, 2]
    for hosts, urls, cap, problem in ((10, 5, None, "one"), (10, 100, 5, "cap of 5")):
        with pytest.raises(ValueError, match=problem):
            host_sizes(hosts, urls, 1.0, cap)


def test_url_hashing_counts_only_the_hosts_that_can_set_a_reducers_time_and_is_exact():
    sizes = host_sizes(2_000, 40_000, 1.0, None)
    hashes = url_hashes(sizes)
    assert len(hashes) == 40_000 and hashes[0] == stable_hash(f"{host_name(0)}/page0")
    model = FetchModel(delay=1.0, threads=30)
    for tasks in (4, 8, 32):
        urls, biggest = [0] * tasks, [0] * tasks
        start = 0
        for size in sizes:  # every host's share on every reducer
            shares = [0] * tasks
            for hashed in hashes[start:start + size]:
                shares[hashed % tasks] += 1
            biggest = [max(pair) for pair in zip(biggest, shares)]
            urls = [total + share for total, share in zip(urls, shares)]
            start += size
        assert url_hashing_seconds(hashes, sizes, tasks, model) == layer_seconds(urls, biggest, model)
