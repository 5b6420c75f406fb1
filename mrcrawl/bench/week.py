"""The week scenario: seven daily crawls of a news web sharing one crawl db,
against what seven crawls from scratch would cost.

Day 1 is a crawl from scratch of the daily web (testweb/daily.py).  Each of
days 2 to 7 is one `python -m mrcrawl.driver` run on the same `--db`, as of
the day's morning (`--now`), with the server serving that day: it fetches the
seeds, the db's due URLs (the hub pages, daily) and what they link that the
db never fetched (the day's new articles).  Every run is depth 3: home page,
then its sections, then the sections' articles.

Per day, from the server's own request log: the page requests (robots.txt
counted apart) and the bytes of the answers' bodies.  The log keeps each
answer's status, not its size, so a body is the model's page for that day,
which is what the server sent: a 200's page or a 404's notice; a 304 sends
no body, and the short notice of a 503 (an article failing once) is left out
on both sides of the comparison.  Against each day, the same figures for a
crawl from scratch, from the model: every URL that day's web holds within
the depth (DailyWeb.reachable), one more request for each that fails once
(the crawler retries a 503 at once), and a robots.txt per host and layer
(each layer's Crawler job asks every host it meets).  Day 1 is such a crawl,
so its measured figures must equal the model's: that grounds the comparison.

The new articles of a day are those published that day and within the
depth; recall is the share of them the day's run fetched (its doc records).
The total row holds the target's figures: the requests of days 2 to 7 over
those of six crawls from scratch, and the worst day's recall.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from mrcrawl.bench.scenarios import Measured, polite_columns, row, run_measured
from mrcrawl.page.urls import host_key
from mrcrawl.store.crawl_reader import CrawlReader, read_part
from mrcrawl.store.records import FETCHED
from mrcrawl.testweb.daily import (
    ANNOUNCING_BENCHMARK_SPEC,
    BOTH,
    LINKED,
    UNREACHED,
    DailySpec,
    DailyWeb,
    start_daily_web,
)

ROBOTS_PATH = "/robots.txt"
# A 200 carries the page and a 404 the model's "not found" notice; the others
# carry none the comparison counts (see the docstring).
STATUSES_WITH_PAGE_BODY = (200, 404)


# How a news crawl of the week reads what the sites announce
# (docs/announcements.md): it wants the last two days' articles (the window
# of a Google News sitemap), so a page never fetched that a sitemap dated
# older is left, linked or not; and the sites that announce have their
# section pages revisited weekly, since their feeds and news sitemaps list
# every new article.  The home pages, seeds, are fetched on every run.
NEWS_MAX_AGE_DAYS = 2.0
NEWS_SETTINGS = {"announced_max_age_days": NEWS_MAX_AGE_DAYS, "revisit": {"announcing_hub_days": 7.0}}
# The ways a day's new article can be found, as the table reports them.
PATHS = ("linked", "announced", "both")


@dataclass(frozen=True)
class WeekSizes:
    spec: DailySpec
    runner: str
    depth: int = 3  # home page -> section pages -> articles


# Inline, not local: on 2 cores the local runner's week took 315 s to the
# inline runner's 194 s (38 s to 20 s a later day).  A later day's run is 16
# small jobs, and the local runner adds about a second to each (task
# processes, sorting); only day 1's fetching is big enough to gain from the
# second core, and not by enough (85 s to 73 s).
FULL_WEEK = WeekSizes(ANNOUNCING_BENCHMARK_SPEC, runner="inline")
# 3 sites of 3 sections and 40 articles, 4 new a day each, two of them
# announcing: seven runs take about half a minute, nearly all of it the
# driver's start and its jobs'.
QUICK_WEEK = WeekSizes(DailySpec(announcing_share=0.67, announced_only_share=0.1), runner="inline")


@dataclass(frozen=True)
class DayCost:
    """What one crawl asks of the server on one day."""

    requests: int  # page requests, retries of a 503 included
    robots_requests: int
    bytes: int  # the bodies of the 200 and 404 answers


def week(sizes: WeekSizes, work: Path, say) -> list[dict]:
    directory = work / "week"
    directory.mkdir(parents=True, exist_ok=True)
    rows, week_log = [], []
    with start_daily_web(sizes.spec) as server:
        web: DailyWeb = server.web
        config = {**web.crawl_config(), **NEWS_SETTINGS}
        conf = directory / "daily.yaml"
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
        seeds = directory / "seeds.txt"
        seeds.write_text("".join(url + "\n" for url in web.seed_urls), encoding="utf-8")
        for day in web.days:
            within_depth = web.reachable(day, sizes.depth, max_age_days=NEWS_MAX_AGE_DAYS)
            fresh = fresh_crawl_cost(web, day, within_depth, config["retries"])
            say(f"week: day {day}, {sizes.spec.sites} sites, depth {sizes.depth}, {sizes.runner} "
                f"(a crawl from scratch: {fresh.requests:,} requests)")
            server.set_day(day)
            server.clear_log()
            output = directory / f"day{day}"
            measured = run_measured(["-m", "mrcrawl.driver", str(seeds), "--depth", str(sizes.depth),
                                     "--conf", str(conf), "--runner", sizes.runner, "--output", str(output),
                                     "--db", str(directory / "db"), "--now", web.date_iso(day)])
            server.wait_idle()
            log = server.log
            week_log += log
            rows.append(day_row(day, sizes.runner, measured, logged_cost(web, day, log), fresh,
                                wanted_articles(web, day, sizes.depth), fetched_urls(output)))
    rows.append(total_row(rows, sizes.runner, polite_columns(week_log, config["delay"])))
    return rows


def fresh_crawl_cost(web: DailyWeb, day: int, layer_of: dict[str, int], retries: int) -> DayCost:
    """What a crawl from scratch of `day`'s web asks for: `layer_of` is what
    it requests, each URL with its layer (DailyWeb.reachable)."""
    retried = sum(web.fails_once(url, day) for url in layer_of) if retries else 0
    hosts_per_layer = {(layer, host_key(url)) for url, layer in layer_of.items()}
    page_bytes = sum(len(web.page(url, day).body) for url in layer_of)
    return DayCost(len(layer_of) + retried, len(hosts_per_layer), page_bytes)


def logged_cost(web: DailyWeb, day: int, log) -> DayCost:
    """What the server's log says a run asked for on `day`."""
    pages = [entry for entry in log if entry.path != ROBOTS_PATH]
    page_bytes = sum(len(web.respond(entry.address, entry.path, day).body)
                     for entry in pages if entry.status in STATUSES_WITH_PAGE_BODY)
    return DayCost(len(pages), len(log) - len(pages), page_bytes)


def wanted_articles(web: DailyWeb, day: int, depth: int) -> dict[str, str]:
    """The day's new articles a run must fetch, each with how it can be found
    (PATHS).  Day 1 is a crawl from scratch: those it reaches within the
    depth (DailyWeb.discovery), by links, announcements or both.  A later
    day's run starts from the db, where the feeds and news sitemaps are due
    again and the hubs of the sites that announce nothing: every new
    article, announced by its site (also linked, unless announced only),
    or linked from a hub of a site that announces nothing."""
    if day == 1:
        found = web.discovery(day, depth, max_age_days=NEWS_MAX_AGE_DAYS)
        return {url: path for url, path in found.items() if path != UNREACHED}
    return {url: ("announced" if web.announced_only(url) else BOTH) if web.announces(url) else LINKED
            for url in web.events(day).published}


def fetched_urls(crawl_dir: Path) -> set[str]:
    """The URLs whose pages a run fetched (answered 200), from its doc records."""
    reader = CrawlReader(crawl_dir)
    return {doc["url"] for layer in reader.layers for part in reader.doc_parts(layer)
            for _, doc in read_part(part) if doc["outcome"] == FETCHED}


def day_row(day: int, runner: str, measured: Measured, cost: DayCost, fresh: DayCost,
            wanted: dict[str, str], fetched: set[str]) -> dict:
    """One day's row; `wanted` are the day's new articles the run must fetch
    (wanted_articles), by how they can be found: recall counts them, in all
    and per path."""
    new = list(wanted)
    new_fetched = sum(url in fetched for url in new)
    per_path = {}
    for path in PATHS:
        urls = [url for url, way in wanted.items() if way == path]
        per_path[f"new_{path}"] = len(urls)
        per_path[f"new_{path}_fetched"] = sum(url in fetched for url in urls)
    return row(f"week day {day}", runner, pages=cost.requests, wall_s=measured.wall_s, cpu_s=measured.cpu_s,
               cpu_ms_per_page=1000 * measured.cpu_s / max(cost.requests, 1), peak_rss_mb=measured.peak_rss_mb,
               day=day, requests=cost.requests, robots_requests=cost.robots_requests, bytes=cost.bytes,
               fresh_requests=fresh.requests, fresh_robots_requests=fresh.robots_requests, fresh_bytes=fresh.bytes,
               ratio_to_fresh=cost.requests / fresh.requests, new_articles=len(new),
               # A day with no new article within the depth has missed none.
               new_articles_fetched=new_fetched, recall=new_fetched / len(new) if new else 1.0, **per_path)


def total_row(days: list[dict], runner: str, politeness: dict) -> dict:
    """The week in one row: the target's figures are over the runs that had a db to start from."""
    first, later = days[0], days[1:]

    def summed(key: str, rows: list[dict]) -> float:
        return sum(day[key] for day in rows)

    requests, cpu_s = summed("requests", days), summed("cpu_s", days)
    return row("week total", runner, pages=requests, wall_s=summed("wall_s", days), cpu_s=cpu_s,
               cpu_ms_per_page=1000 * cpu_s / max(requests, 1),
               peak_rss_mb=max(day["peak_rss_mb"] for day in days), days=len(days),
               requests=requests, robots_requests=summed("robots_requests", days), bytes=summed("bytes", days),
               revisit_requests=summed("requests", later), revisit_fresh_requests=summed("fresh_requests", later),
               revisit_bytes=summed("bytes", later), revisit_fresh_bytes=summed("fresh_bytes", later),
               ratio_to_fresh=summed("requests", later) / summed("fresh_requests", later),
               bytes_ratio_to_fresh=summed("bytes", later) / summed("fresh_bytes", later),
               worst_recall=min(day["recall"] for day in days),
               first_day_as_fresh=all(first[key] == first[f"fresh_{key}"]
                                      for key in ("requests", "robots_requests", "bytes")),
               **politeness)


def week_note(figures: dict) -> str:
    """The line under the table for one row of the week."""
    if figures["name"] == "week total":
        grounded = "equals" if figures["first_day_as_fresh"] else "does NOT equal"
        return (f"week total: days 2-{figures['days']} made {figures['revisit_requests']:,} page requests, "
                f"{figures['ratio_to_fresh']:.3f}× the {figures['revisit_fresh_requests']:,} of crawls from scratch "
                f"({figures['bytes_ratio_to_fresh']:.3f}× their bytes); worst recall of new articles "
                f"{figures['worst_recall']:.3f}; day 1 {grounded} the model's crawl from scratch")
    return (f"week day {figures['day']}: {figures['requests']:,} page requests + {figures['robots_requests']} "
            f"robots.txt, {figures['bytes'] / 1e6:.2f} MB; from scratch {figures['fresh_requests']:,} + "
            f"{figures['fresh_robots_requests']}, {figures['fresh_bytes'] / 1e6:.2f} MB "
            f"({figures['ratio_to_fresh']:.3f}×); new articles fetched {figures['new_articles_fetched']:,} of "
            f"{figures['new_articles']:,} (" + ", ".join(
                f"{path} {figures[f'new_{path}_fetched']:,}/{figures[f'new_{path}']:,}" for path in PATHS) + ")")
