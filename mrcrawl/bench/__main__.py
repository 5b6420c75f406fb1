"""`python -m mrcrawl.bench`: how fast the crawler is, against its bounds and a peer.

    python -m mrcrawl.bench [--quick] [--repeat N] [--json FILE] [--scenarios fetch-uniform,...]
                            [--baseline CHECKOUT] [--real DIR]

Scenarios, run on a synthetic loopback web (scenarios.py, web.py):

  fetch-uniform     the Crawler job on 10,000 URLs over 200 hosts, vs Scrapy
  fetch-politeness  10,000 URLs on 200 Zipf-sized hosts, delay 0.2 s
  tail              fetch-politeness with max_layer_seconds at half its bound, then layer 1
  pipeline          a depth-3 crawl, -r local, at delay 0 and the default delay
  parse             the page stage (Parser and HtmlToXml on each page): pages per CPU second, vs --baseline's
  memory            peak RSS of one Crawler reducer task, 20,000 and 200,000 URLs
  db-update         a layer's crawl db update at 1M and 10M URLs, vs Nutch's full re-sort
  week              seven daily runs on one crawl db over a 50-site news web, vs crawls from scratch
  ordering          important pages reached in 20,000 fetches by each order, with and without STAR, beside a link farm
  feeds             our feed and sitemap parser against feedparser, fastfeedparser and feedparser-rs: right answers, entries/s
  partition         a 10M-URL layer's simulated time on 16 to 256 reducers: host hashing, two-tier + LPT, URL hashing

The README's Benchmark section gives each scenario's sizes and bound.

Each row gives wall time, pages per second, CPU milliseconds per page, the
scenario's theoretical bound and the ratio to it, and the ratio to the peer
where one ran.  Every fetch scenario also checks politeness in the server's
own request log and prints the worst gap seen.  --quick runs every scenario
small (under two minutes); its figures say the command works, not how fast.
--repeat N runs the scenarios N times over and reports each figure's median:
a ratio is taken within each run (ours and the peer's side by side), then
the median of those; the politeness columns report the worst run.

parse times the page stage's functions under the working tree's code and,
with --baseline CHECKOUT (another checkout of the crawler), under that
checkout's code too, in the same run, taking turns (page_stage.py), on
generated pages and, with --real DIR, on the real pages of the extraction
datasets cloned in DIR (real_pages.py); its rows' ratio is ours over the
baseline's pages per CPU second, and a row without a baseline is not judged.
"""
from __future__ import annotations

import argparse
import fnmatch
import json
import logging
import os
import platform
import statistics
import sys
import tempfile
import time
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path

from mrcrawl.bench import scenarios
from mrcrawl.bench.db_update import db_update
from mrcrawl.bench.feeds import FULL_FEEDS, QUICK_FEEDS, feeds, feeds_note, suite_tests
from mrcrawl.bench.ordering import RUNNER as ORDERING_RUNNER
from mrcrawl.bench.ordering import meets_target as ordering_meets_target
from mrcrawl.bench.ordering import ordering, ordering_note
from mrcrawl.bench.partition import FULL_PARTITION, QUICK_PARTITION, partition, partition_notes
from mrcrawl.bench.partition import meets_target as partition_meets_target
from mrcrawl.bench.scenarios import FULL, QUICK
from mrcrawl.bench.tail import meets_target as tail_meets_target
from mrcrawl.bench.tail import tail, tail_note
from mrcrawl.bench.week import FULL_WEEK, QUICK_WEEK, week, week_note
from mrcrawl.cli import run_command
from mrcrawl.logs import add_verbosity_options, configure_logging

SCENARIOS = ("fetch-uniform", "fetch-politeness", "tail", "pipeline", "parse", "memory", "db-update", "week", "ordering",
             "feeds", "partition")

# The targets, by (row name pattern, runner or None for any): (description, check on a row).
TARGETS = {
    ("fetch-uniform", "inline"): ("≥ 1.8× best Scrapy", lambda r: r["ratio_to_peer"] and r["ratio_to_peer"] >= 1.8),
    ("fetch-uniform", "local"): ("≥ 2.5× best Scrapy", lambda r: r["ratio_to_peer"] and r["ratio_to_peer"] >= 2.5),
    ("fetch-politeness", None): ("wall ≤ 1.15× bound", lambda r: r["ratio_to_bound"] <= 1.15),
    # Both layers end within 5% of the limit plus a request's timeout; the second takes up what the first left.
    ("tail", None): ("≤ 1.05× limit + timeout, next layer takes the rest", tail_meets_target),
    # With delay 0 fetching is CPU-bound: the worst case for the other jobs' share.
    ("pipeline delay=0", None): ("non-fetch ≤ 50% of wall", lambda r: r["overhead_share"] <= 0.50),
    ("pipeline delay=*", None): ("non-fetch ≤ 30% of wall", lambda r: r["overhead_share"] <= 0.30),
    # Pages per CPU second of the page stage, against --baseline's in the same run.
    ("page stage (20 KB, 100 links)", None): ("≥ 2× baseline pages/s/core", lambda r: r["ratio_to_baseline"] >= 2.0),
    ("page stage (real pages)", None): ("≥ 2× baseline pages/s/core", lambda r: r["ratio_to_baseline"] >= 2.0),
    ("memory", None): ("≤ 300 MB, flat RSS", lambda r: r["peak_rss_mb"] <= 300 and r.get("rss_growth", 1) <= 1.25),
    # Judged at the largest db; the growths are from the smallest db to it (10× the URLs).
    ("db-update", None): ("≤ 0.25× re-sort, RSS ≤ 1.2×, time ≤ db growth",
                          lambda r: r["ratio_to_resort"] <= 0.25 and r["rss_growth"] <= 1.2
                          and r["time_growth"] <= r["urls_growth"]),
    # Days 2-7 against six crawls from scratch, grounded by day 1 being one.
    ("week total", None): ("≤ 0.10× fresh crawls, recall 1.0 daily",
                           lambda r: r["ratio_to_fresh"] <= 0.10 and r["worst_recall"] == 1.0
                           and r["first_day_as_fresh"]),
    ("ordering*", None): ("pagerank ≥ 1.5× bfs at the first mark; STAR: farm ≤ 2%; every link recorded",
                          ordering_meets_target),
    ("partition *", None): ("two-tier + LPT ≤ 1.1× bound", partition_meets_target),
}


def scenarios_help() -> str:
    """The docstring's list of scenarios, one line each, for --help."""
    paragraphs = __doc__.split("\n\n")
    heading = next(index for index, paragraph in enumerate(paragraphs) if paragraph.startswith("Scenarios"))
    return "\n\n".join(paragraphs[heading:heading + 2])


def parse_args(argv):
    # Raw formatting keeps the scenario list one line per scenario.
    parser = argparse.ArgumentParser(prog="mrcrawl bench", allow_abbrev=False,
                                     description="How fast the crawler is, against its bounds and a peer.",
                                     epilog=scenarios_help(), formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true",
                        help="every scenario, small: proves the command works (default: the full sizes)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON (default: none)")
    parser.add_argument("--repeat", type=int, default=1, metavar="N",
                        help="run every scenario N times and report medians (the machine is shared: use 3 or more) "
                             "(default: 1)")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), metavar="NAMES",
                        help="comma-separated subset to run, listed below (default: all)")
    parser.add_argument("--runners", default="inline,local", metavar="NAMES",
                        help="runners for fetch-uniform (default: inline,local)")
    parser.add_argument("--no-peer", action="store_true",
                        help="do not run Scrapy even if it is installed (default: run it if installed)")
    web = parser.add_argument_group("the bench web of the fetch and pipeline scenarios")

    def size_option(option: str, kind, what: str, metavar: str = "N") -> None:
        field = option.removeprefix("--").replace("-", "_").replace("delay", "polite_delay")
        full, quick = getattr(FULL, field), getattr(QUICK, field)
        default = f"{full:g}" + (", also with --quick" if quick == full else f", with --quick {quick:g}")
        web.add_argument(option, type=kind, metavar=metavar, help=f"{what} (default: {default})")

    size_option("--hosts", int, "hosts the pages are spread over")
    size_option("--pages", int, "pages in all (uniform: pages / hosts each)")
    size_option("--page-bytes", int, "bytes of each page")
    size_option("--links", int, "links per page")
    size_option("--latency", float, "seconds each response waits", "SECONDS")
    size_option("--threads", int, "fetch threads per Crawler task (the config's threads)")
    size_option("--zipf-exponent", float, "host-size skew of fetch-politeness and tail", "EXPONENT")
    size_option("--delay", float, "politeness delay of fetch-politeness and tail", "SECONDS")
    parser.add_argument("--real-feeds", type=Path, metavar="DIR",
                        help="feeds: also score the parsers on feedparser's test feeds, read from DIR, a clone of "
                             "https://github.com/kurtmckee/feedparser (default: none)")
    parser.add_argument("--baseline", type=Path, metavar="CHECKOUT",
                        help="parse: also time the page stage under the code of CHECKOUT, another checkout of the "
                             "crawler, and give each row's ratio to it (default: none, the rows are not judged)")
    parser.add_argument("--real", type=Path, metavar="DIR",
                        help="parse: also time the page stage on the real pages of the extraction datasets cloned "
                             "in DIR (mrcrawl/bench/real_pages.py) (default: none)")
    add_verbosity_options(parser)
    args = parser.parse_args(argv)
    args.scenarios = [name.strip() for name in args.scenarios.split(",") if name.strip()]
    for name in args.scenarios:
        if name not in SCENARIOS:
            parser.error(f"--scenarios: unknown scenario {name!r}; choose from {', '.join(SCENARIOS)}")
    if args.real_feeds is not None and suite_tests(args.real_feeds) is None:
        parser.error(f"--real-feeds: {args.real_feeds} holds no tests/wellformed/: not a clone of feedparser")
    if args.baseline is not None and not (args.baseline / "mrcrawl" / "__init__.py").is_file():
        parser.error(f"--baseline: {args.baseline} holds no mrcrawl package: not a checkout of the crawler")
    if args.real is not None and not args.real.is_dir():
        parser.error(f"--real: {args.real} is not a directory")
    if args.repeat < 1:
        parser.error(f"--repeat: must be at least 1, got {args.repeat}")
    args.runners = [name.strip() for name in args.runners.split(",") if name.strip()]
    for name in args.runners:
        if name not in ("inline", "local"):
            parser.error(f"--runners: {name!r}: choose inline and/or local")
    return args


def sizes_from(args) -> scenarios.Sizes:
    sizes = QUICK if args.quick else FULL
    overrides = {"hosts": args.hosts, "pages": args.pages, "page_bytes": args.page_bytes, "links": args.links,
                 "latency": args.latency, "threads": args.threads, "zipf_exponent": args.zipf_exponent,
                 "polite_delay": args.delay}
    return scenarios.replace_sizes(sizes, {key: value for key, value in overrides.items() if value is not None})


def machine() -> dict:
    cpu_model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as cpuinfo:
            cpu_model = next((line.split(":", 1)[1].strip() for line in cpuinfo if line.startswith("model name")), None)
    except OSError:
        pass
    versions = {}
    for package in ("mrcrawl", "mrjob", "urllib3", "lxml", "scrapy"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return {"cores": os.cpu_count(), "cpu": cpu_model, "memory_gb": _memory_gb(), "python": platform.python_version(),
            "platform": platform.platform(), "versions": versions,
            "date": datetime.now(timezone.utc).isoformat(timespec="seconds")}


def _memory_gb():
    try:
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError):
        return None


# Politeness is judged by the worst run, not the median one.
_WORST_OF = {"worst_gap_s": min, "overlaps": max, "gaps_below_delay": max, "polite": all, "same_records": all,
             "worst_recall": min, "first_day_as_fresh": all, "late_starts": max, "lost": max,
             "next_frontier_is_left": all}


def _median(values: list):
    if all(isinstance(value, dict) for value in values):
        return {key: _median([value.get(key) for value in values]) for key in values[0]}
    if all(isinstance(value, (int, float)) and not isinstance(value, bool) for value in values):
        return statistics.median(values)
    return values[0]


def combine(runs: list[list[dict]]) -> list[dict]:
    """One row per scenario row of the runs: each figure's median over the runs."""
    grouped: dict[tuple, list[dict]] = {}
    for rows in runs:
        for row in rows:
            # memory and db-update rows of one scenario differ by their size
            grouped.setdefault((row["name"], row["runner"], row.get("urls")), []).append(row)
    combined = []
    for group in grouped.values():
        row = {key: (_WORST_OF[key] if key in _WORST_OF else _median)([r.get(key) for r in group])
               for key in group[0]}
        row["runs"] = len(group)
        combined.append(row)
    return combined


def judge(rows: list[dict], quick: bool) -> None:
    """Add each row's target and whether it holds (None: not judged)."""
    group = [row for row in rows if row["name"] == "memory"]
    if len(group) > 1:
        growth = max(row["peak_rss_mb"] for row in group) / min(row["peak_rss_mb"] for row in group)
        for row in group:
            row["rss_growth"] = growth
    for row in rows:
        target = target_of(row)
        if target is None or row["runner"].startswith("scrapy"):
            row["target"], row["meets_target"] = None, None
            continue
        row["target"] = target[0]
        judged = not quick
        # A ratio to a baseline that did not run cannot be judged.
        if "ratio_to_baseline" in row and row["ratio_to_baseline"] is None:
            judged = False
        if row["name"] in ("memory", "db-update"):
            judged = judged and row["urls"] == max(r["urls"] for r in rows if r["name"] == row["name"])
        row["meets_target"] = bool(target[1](row)) if judged else None


def target_of(row: dict):
    for (pattern, runner), target in TARGETS.items():
        if fnmatch.fnmatchcase(row["name"], pattern) and runner in (None, row["runner"]):
            return target
    return None


def _cell(value, digits=1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def table(rows: list[dict]) -> str:
    columns = [("scenario", "name", 0), ("runner", "runner", 0), ("pages", "pages", 0), ("wall s", "wall_s", 1),
               ("pages/s", "pages_per_s", 0), ("CPU ms/page", "cpu_ms_per_page", 2), ("bound s", "bound_s", 1),
               ("×bound", "ratio_to_bound", 2), ("×peer", "ratio_to_peer", 2), ("peak MB", "peak_rss_mb", 0),
               ("worst gap s", "worst_gap_s", 3), ("target", "target", 0), ("met", "meets_target", 0)]
    cells = [[title for title, _, _ in columns]]
    for row in rows:
        met = {True: "yes", False: "NO", None: "-"}[row.get("meets_target")]
        cells.append([met if key == "meets_target" else _cell(row.get(key), digits) for _, key, digits in columns])
    widths = [max(len(line[i]) for line in cells) for i in range(len(columns))]
    lines = ["  ".join(cell.ljust(width) if i < 2 else cell.rjust(width) for i, (cell, width)
                       in enumerate(zip(line, widths))).rstrip() for line in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def notes(rows: list[dict]) -> list[str]:
    """The lines under the table: what a column cannot show."""
    lines = []
    for row in rows:
        if row.get("delay_s") is not None:
            lines.append(f"politeness, {row['name']} {row['runner']} (server log): worst gap between two requests "
                         f"to one host {row['worst_gap_s']:.3f} s with delay {row['delay_s']:g} s; "
                         f"{row['overlaps']} requests overlapping another to the same host; "
                         f"{row['gaps_below_delay']} gaps below the delay")
    for row in rows:
        if row["name"].startswith("pipeline"):
            shares = ", ".join(f"{job} {share:.0%}" for job, share in sorted(row["share_by_job"].items(),
                                                                             key=lambda item: -item[1]))
            lines.append(f"{row['name']}: fetch {row['fetch_s']:.1f} s, everything else {row['overhead_s']:.1f} s "
                         f"({row['overhead_share']:.0%} of wall); share of wall by job: {shares}")
        elif row["name"].startswith("page stage"):
            lines.append(page_stage_note(row))
        elif row["name"] == "memory":
            lines.append(f"{row['name']}: {row['urls']:,} URLs, peak RSS {row['peak_rss_mb']:.0f} MB"
                         + (f" (largest / smallest size: {row['rss_growth']:.2f}×)" if "rss_growth" in row else ""))
        elif row["name"] == "db-update":
            lines.append(db_update_note(row, rows))
        elif row["name"] == "db-update scoring":
            lines.append(scoring_note(row))
        elif row["name"].startswith("week "):
            lines.append(week_note(row))
        elif row["name"] == "tail":
            lines.append(tail_note(row))
        elif row["name"].startswith("ordering "):
            lines.append(ordering_note(row))
        elif row["name"].startswith("feeds "):
            lines.append(feeds_note(row))
        elif row["name"] == "fetch-politeness":
            lines.append(f"fetch-politeness: busiest host {row['busiest_host_pages']} pages, its requests "
                         f"spanned {row['busiest_host_span_s']:.1f} s; bound {row['bound_s']:.1f} s")
        elif row["name"].startswith("fetch-uniform") and row.get("bound"):
            lines.append(f"{row['name']} {row['runner']}: {row['bound']}-bound; server time per request "
                         f"{row['request_ms']:.1f} ms")
    return lines + partition_notes(rows)


def page_stage_note(row: dict) -> str:
    line = (f"{row['name']}: {row['pages_per_core_s']:,.0f} pages/s per core (Parser {row['parser_ms_per_page']:.2f} "
            f"+ HtmlToXml {row['xml_ms_per_page']:.2f} CPU ms a page), {row['xml_pages']:,} XML pages, "
            f"{row['links_per_page']:.0f} links kept per page, {row['joined_pages']:,} pages handed from the Parser "
            f"to HtmlToXml")
    if row["baseline_pages_per_core_s"] is None:
        return line + "; no baseline"
    return (line + f"; baseline {row['baseline_pages_per_core_s']:,.0f} pages/s per core (Parser "
            f"{row['baseline_parser_ms_per_page']:.2f} + HtmlToXml {row['baseline_xml_ms_per_page']:.2f}), "
            f"{row['baseline_xml_pages']:,} XML pages: {row['ratio_to_baseline']:.2f}×")


def db_update_note(ours: dict, rows: list[dict]) -> str:
    resort = next(row for row in rows if row["name"] == "db-update re-sort" and row["urls"] == ours["urls"])
    line = (f"db-update: {ours['urls']:,} URLs in {ours['partitions']} partitions, {ours['fetches']:,} fetched and "
            f"{ours['new_urls']:,} new: DbBatch {ours['batch_s']:.1f} s + Dedup {ours['dedup_s']:.1f} s "
            f"+ DbUpdate {ours['merge_s']:.1f} s, "
            f"peak RSS {ours['peak_rss_mb']:.0f} MB; re-sort {resort['wall_s']:.1f} s, {resort['peak_rss_mb']:.0f} MB; "
            f"{ours['ratio_to_resort']:.2f}× the re-sort's time; "
            f"{'the same' if ours['same_records'] else 'NOT the same'} {ours['records']:,} records")
    smallest = min(row["urls"] for row in rows if row["name"] == "db-update")
    if ours["urls"] > smallest:
        line += (f"; against {smallest:,} URLs ({ours['urls_growth']:g}× the db): {ours['time_growth']:.2f}× the time, "
                 f"{ours['rss_growth']:.2f}× the peak RSS")
    return line


def scoring_note(row: dict) -> str:
    return (f"db-update scoring: {row['urls']:,} URLs: the update {row['update_s']:.1f} s + the link store "
            f"{row['links_s']:.1f} s + {row['iterations']} PageRank iterations {row['scores_s']:.1f} s, "
            f"peak RSS {row['peak_rss_mb']:.0f} MB; {row['ratio_to_resort']:.2f}× the re-sort's time; "
            f"{row['urls_growth']:g}× the db: {row['time_growth']:.2f}× the time, {row['rss_growth']:.2f}× the peak RSS")


def run_scenarios(args, sizes: scenarios.Sizes, work: Path, say) -> list[dict]:
    rows: list[dict] = []
    for name in args.scenarios:
        if name == "fetch-uniform":
            rows += scenarios.fetch_uniform(sizes, work, args.runners, not args.no_peer, say)
        elif name == "fetch-politeness":
            rows += scenarios.fetch_politeness(sizes, work, "inline", say)
        elif name == "tail":
            rows += tail(sizes, work, say)
        elif name == "pipeline":
            rows += scenarios.pipeline(sizes, work, "local", say)
        elif name == "parse":
            rows += scenarios.parse(sizes, work, say, args.baseline, args.real)
        elif name == "memory":
            rows += scenarios.memory(sizes, work, say)
        elif name == "db-update":
            rows += db_update(sizes, work, say)
        elif name == "week":
            rows += week(QUICK_WEEK if args.quick else FULL_WEEK, work, say)
        elif name == "ordering":
            rows += ordering(sizes, work, ORDERING_RUNNER, say)
        elif name == "feeds":
            rows += feeds(QUICK_FEEDS if args.quick else FULL_FEEDS, work, say, args.real_feeds)
        elif name == "partition":
            rows += partition(QUICK_PARTITION if args.quick else FULL_PARTITION, say)
    return rows


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    configure_logging(args.verbosity)
    sizes = sizes_from(args)
    started = time.monotonic()
    progress = logging.getLogger("mrcrawl.bench")

    def say(message: str) -> None:
        progress.info(f"[{time.monotonic() - started:6.1f} s] {message}")

    runs = []
    for number in range(args.repeat):
        if args.repeat > 1:
            say(f"run {number + 1} of {args.repeat}")
        with tempfile.TemporaryDirectory(prefix="mrcrawl-bench-") as scratch:
            runs.append(run_scenarios(args, sizes, Path(scratch), say))
    rows = combine(runs) if args.repeat > 1 else runs[0]
    judge(rows, args.quick)
    print(table(rows))
    print()
    for line in notes(rows):
        print(line)
    if args.repeat > 1:
        print(f"\nEach figure is the median of {args.repeat} runs; ratios were taken within each run; "
              "politeness columns give the worst run.")
    if args.quick:
        print("\n--quick: small sizes; these figures show the command works and are not judged against targets.")
    result = {"scenarios": rows, "machine": machine(), "quick": args.quick, "repeat": args.repeat,
              "sizes": scenarios.sizes_dict(sizes), "seconds": time.monotonic() - started}
    if args.repeat > 1:
        result["runs"] = runs
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(run_command(main))
