"""The benchmark's week scenario, at --quick's size: seven daily runs on one
crawl db, each against a crawl from scratch of that day's web.

No timing is asserted (the machine is shared); what is asserted holds on any
machine: every day ran, fetched every new article within the depth, and day
1, itself a crawl from scratch, made exactly the requests the model says one
makes, so the total row's ratio compares like with like.
"""
from __future__ import annotations

import pytest

from bench_support import quick_bench
from mrcrawl.bench.scenarios import ROW_KEYS
from mrcrawl.bench.week import PATHS, QUICK_WEEK, week_note


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The scenario as `python -m mrcrawl.bench --quick --scenarios week` runs it: its output and rows."""
    output, report = quick_bench(tmp_path_factory.mktemp("bench-week"), "week", timeout=600)
    return output, report["scenarios"]


@pytest.fixture(scope="module")
def rows(run):
    return run[1]


def test_the_table_and_its_notes_show_every_row(run):
    stdout, rows = run
    for row in rows:
        assert row["name"] in stdout and week_note(row) in stdout


def test_the_announced_only_articles_and_the_silent_sites_are_in_the_recall(rows):
    *days, _ = rows
    for path in PATHS:  # each way to find a new article is met, and every article met is fetched
        assert sum(day[f"new_{path}"] for day in days) > 0, path
        assert all(day[f"new_{path}_fetched"] == day[f"new_{path}"] for day in days), path
    assert all(sum(day[f"new_{path}"] for path in PATHS) == day["new_articles"] for day in days)


def test_one_row_per_day_and_a_total(rows):
    days = QUICK_WEEK.spec.days
    assert [row["name"] for row in rows] == [f"week day {day}" for day in range(1, days + 1)] + ["week total"]
    for row in rows:
        assert set(ROW_KEYS) <= set(row), row["name"]
        assert row["runner"] == QUICK_WEEK.runner
        assert row["wall_s"] > 0 and row["requests"] > 0 and row["bytes"] > 0
        assert row["pages"] == row["requests"]
        assert week_note(row).startswith(row["name"])


def test_every_new_article_within_the_depth_is_fetched_on_its_day(rows):
    *days, total = rows
    for day in days:
        assert day["new_articles"] > 0, day["name"]
        assert day["new_articles_fetched"] == day["new_articles"] and day["recall"] == 1.0, day
    assert total["worst_recall"] == 1.0


def test_day_one_is_the_models_crawl_from_scratch(rows):
    first, total = rows[0], rows[-1]
    assert (first["requests"], first["robots_requests"], first["bytes"]) == (
        first["fresh_requests"], first["fresh_robots_requests"], first["fresh_bytes"])
    assert first["ratio_to_fresh"] == 1.0
    assert total["first_day_as_fresh"] is True


def test_the_ratio_is_the_later_days_requests_over_crawls_from_scratch(rows):
    *days, total = rows
    later = days[1:]
    revisits, fresh = sum(day["requests"] for day in later), sum(day["fresh_requests"] for day in later)
    assert (total["revisit_requests"], total["revisit_fresh_requests"]) == (revisits, fresh)
    assert total["ratio_to_fresh"] == pytest.approx(revisits / fresh)
    assert total["bytes_ratio_to_fresh"] == pytest.approx(
        sum(day["bytes"] for day in later) / sum(day["fresh_bytes"] for day in later))
    # The db saves a later day most of a crawl from scratch: it skips the
    # articles fetched before and not yet due.
    assert all(day["requests"] < day["fresh_requests"] for day in later)
    assert total["requests"] == sum(day["requests"] for day in days)
    assert total["wall_s"] == pytest.approx(sum(day["wall_s"] for day in days))


def test_the_week_was_polite(rows):
    total = rows[-1]
    assert total["polite"] is True and total["overlaps"] == 0 and total["gaps_below_delay"] == 0, total
