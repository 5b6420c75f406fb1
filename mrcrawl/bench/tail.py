"""The tail scenario: a layer's time limit (max_layer_seconds) cutting the
tail that a few big hosts make, and the next layer taking up what it left.

The web and frontier are fetch-politeness's: every page of the Zipf-sized
hosts in layer 0, fetched with its delay, and max_layer_seconds is half its
politeness bound (the busiest host's pages x the delay).  Layer 0's Crawler
runs in a process of its own, as in fetch-politeness; then the rest of layer
0 (the Parser, the crawl db's update, the Optimizer) in this process, unmeasured;
then layer 1's Crawler in a process of its own, under the same limit, and
the rest of layer 1 as its last layer.

A layer's length is its Crawler step's own (from the job's start to its
end, the politeness it holds at the end included): the limit counts from
its reduce task's start.  The server's log gives each layer's requests, and
a request started more than the limit after the layer's first is late.

Layer 1 cannot fetch all that layer 0 left: its limit is half the bound
too, and the busiest host's other half needs its robots.txt again and, at
the delay counted from each answer, more than half the bound.  What layer 1
must do is take all of it up: its frontier is exactly what layer 0 left,
and each such URL is fetched there or, when layer 1's own time runs out,
deferred a second time (the db counts 2 deferrals); none is lost.
"""
from __future__ import annotations

from pathlib import Path

from jobs.crawler import MRCrawler
from mrcrawl.bench.scenarios import BENCH_TIMEOUT, Sizes, new_crawl_dir, polite_columns, row, run_step
from mrcrawl.bench.web import BenchWeb, BenchWebSpec
from mrcrawl.crawl_dir import crawl_db
from mrcrawl.frontier.crawldb import read_db
from mrcrawl.mr.launcher import Launcher, RunnerSettings
from mrcrawl.pipeline import Pipeline
from mrcrawl.plan import layer_steps
from mrcrawl.store.crawl_reader import read_part
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import DEFERRED_BY_TIME_LIMIT, FETCHED

RUNNER = "inline"  # one reduce task: the limit counts from one start


def tail(sizes: Sizes, work: Path, say) -> list[dict]:
    spec = BenchWebSpec(hosts=sizes.hosts, pages=sizes.pages, distribution="zipf",
                        zipf_exponent=sizes.zipf_exponent, page_bytes=sizes.page_bytes,
                        links_per_page=sizes.links, latency=sizes.latency)
    with BenchWeb(spec) as web:
        busiest = max(web.model.page_counts)
        bound = busiest * sizes.polite_delay
        limit = bound / 2
        say(f"tail: {spec.pages} URLs, {spec.hosts} hosts (Zipf, busiest {busiest} pages), delay "
            f"{sizes.polite_delay} s, max_layer_seconds {limit:.1f} (half the bound), two layers, {RUNNER}")
        crawl_dir, _, _ = new_crawl_dir(work / "tail", web.urls(), threads=sizes.threads, delay=sizes.polite_delay,
                                        max_layer_seconds=limit)
        web.clear_log()
        measured, first = run_step(crawl_dir, MRCrawler.STEP, 0, RUNNER)
        first_log = web.request_log()
        run_layer_rest(crawl_dir, 0, last=False)
        web.clear_log()
        _, second = run_step(crawl_dir, MRCrawler.STEP, 1, RUNNER)
        second_log = web.request_log()
        run_layer_rest(crawl_dir, 1, last=True)  # into the db: what layer 1 left again
    store = CrawlStore(crawl_dir)
    left = set(urls_of(store.frontier(0))) - {doc["requested_url"] for _, doc in records_of(store.docs(0))}
    next_frontier = set(urls_of(store.frontier(1)))
    fetched_next = {doc["requested_url"] for _, doc in records_of(store.docs(1)) if doc["outcome"] == FETCHED}
    deferred_twice = {url for url, record in read_db(Path(CrawlState.load(store).db))
                      if record["deferred"] == DEFERRED_BY_TIME_LIMIT and record["deferrals"] == 2}
    pages = MRCrawler.pages(MRCrawler.OUTCOMES.of(first["counters"]))
    return [row("tail", RUNNER, pages=pages, wall_s=first["seconds"],
                cpu_ms_per_page=1000 * measured.cpu_s / max(pages, 1), bound_s=limit,
                limit_s=limit, timeout_s=BENCH_TIMEOUT, politeness_bound_s=bound, busiest_host_pages=busiest,
                left=MRCrawler.URLS_LEFT.of(first["counters"]), left_urls=len(left),
                last_start_s=last_start(first_log), late_starts=late_starts(first_log, limit) + late_starts(second_log, limit),
                next_wall_s=second["seconds"], next_frontier=len(next_frontier),
                next_frontier_is_left=next_frontier == left, next_fetched=len(left & fetched_next),
                left_again=MRCrawler.URLS_LEFT.of(second["counters"]), deferred_twice=len(left & deferred_twice),
                lost=len(left - fetched_next - deferred_twice),
                **polite_columns(first_log + second_log, sizes.polite_delay))]


def run_layer_rest(crawl_dir: Path, layer: int, last: bool) -> None:
    """The steps of `layer` after its Crawler's, as a crawl runs them
    (the Optimizer's too, unless it is the `last` layer)."""
    store = CrawlStore(crawl_dir)
    state = CrawlState.load(store)
    settings = RunnerSettings()
    with Launcher(settings) as launcher:
        pipeline = Pipeline(store, state, crawl_db(state.db), launcher, say=lambda message: None)
        pipeline.run(layer_steps(store, layer, last=last, batch_sorted=settings.sorts_reduce_output,
                                 reduce_tasks=settings.reduce_tasks))


def records_of(directory) -> list[tuple[str, dict]]:
    return [record for part in sorted(Path(directory).glob("part-*")) for record in read_part(part)]


def urls_of(directory) -> list[str]:
    return [url for url, _ in records_of(directory)]


def last_start(log) -> float | None:
    """When the layer's last request started, in seconds after its first."""
    return log[-1].start - log[0].start if log else None


def late_starts(log, limit: float) -> int:
    """Requests started more than `limit` after the layer's first (which
    started after the task, whose clock the limit runs on)."""
    return sum(entry.start > log[0].start + limit for entry in log)


def meets_target(row: dict) -> bool:
    within = 1.05 * row["limit_s"] + row["timeout_s"]
    return (row["wall_s"] <= within and row["next_wall_s"] <= within and row["late_starts"] == 0
            and row["next_frontier_is_left"] and row["next_fetched"] > 0 and row["lost"] == 0)


def tail_note(row: dict) -> str:
    within = 1.05 * row["limit_s"] + row["timeout_s"]
    return (f"tail: max_layer_seconds {row['limit_s']:.1f} s, half the bound of {row['politeness_bound_s']:.1f} s "
            f"(busiest host {row['busiest_host_pages']} pages); layer 0 took {row['wall_s']:.1f} s "
            f"(target ≤ 1.05 × limit + timeout = {within:.1f} s), its last request started "
            f"{row['last_start_s']:.1f} s after its first, {row['late_starts']} requests of both layers late; "
            f"{row['left']} URLs left; layer 1: a frontier of {row['next_frontier']} "
            f"({'exactly' if row['next_frontier_is_left'] else 'NOT'} those left), {row['next_fetched']} of them "
            f"fetched in {row['next_wall_s']:.1f} s, {row['left_again']} left again ({row['deferred_twice']} "
            f"deferred twice), {row['lost']} lost")
