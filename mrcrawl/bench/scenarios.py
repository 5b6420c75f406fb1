"""The scenarios of `python -m mrcrawl.bench`: each returns rows of the result table.

A row is a dict with the keys of ROW_KEYS (None where a key does not apply)
and any scenario-specific extras.  Every job is measured in a process of its
own (bench/step.py, or the Crawler's reducer run as Hadoop streaming runs
it), and os.wait4 gives that process tree's CPU time and peak RSS: the
figures are the kernel's, and the benchmark's own work is never in them.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from urllib.parse import quote

import mrcrawl
from jobs.crawler import MRCrawler
from mrcrawl.bench.web import BenchWeb, BenchWebModel, BenchWebSpec, politeness_report
from mrcrawl.config import load_config
from mrcrawl.crawl_dir import crawl_db, db_root, open_crawl, open_db
from mrcrawl.frontier.crawldb import DEFAULT_PARTITIONS
from mrcrawl.frontier.generate import OTHER_RANK
from mrcrawl.frontier.placement import DEFAULT_SLOTS, Placement
from mrcrawl.mr.launcher import Launcher, RunnerSettings
from mrcrawl.page.urls import host_key
from mrcrawl.pipeline import Pipeline
from mrcrawl.plan import run_start
from mrcrawl.store.crawl_state import StepName
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import FETCHED, encode_body, new_doc, new_frontier_entry

ROW_KEYS = ("name", "runner", "pages", "wall_s", "pages_per_s", "cpu_ms_per_page", "bound_s",
            "ratio_to_bound", "peer", "peer_pages_per_s", "ratio_to_peer")
CORES = os.cpu_count() or 1
BENCH_TIMEOUT = 10.0  # the bench config's timeout, in seconds
_records = Utf8JsonProtocol()


@dataclass(frozen=True)
class Sizes:
    """How big each scenario is: the issue's sizes, or --quick's."""

    hosts: int = 200
    pages: int = 10_000
    page_bytes: int = 20_000
    links: int = 10
    latency: float = 0.02
    threads: int = 30
    zipf_exponent: float = 1.0
    polite_delay: float = 0.2
    pipeline_depth: int = 3
    # delay 0 makes fetching CPU-bound, the worst case for the other jobs'
    # share; the config's default delay (1 s) is how a crawl really runs.
    pipeline_delays: tuple = (0.0, 1.0)
    parse_pages: int = 3_000
    parse_repeat: int = 3  # passes over each page set; each page counts at its fastest
    parse_chunk: int = 500  # pages per run of page_stage.py: the baseline and ours take turns chunk by chunk
    parse_real_pages: int | None = None  # with --real: that many of the real pages, spread over them; None: all
    memory_hosts: int = 1_000
    memory_sizes: tuple = (20_000, 200_000)
    scrapy_concurrency: tuple = (30, 60)
    too_many_threads: int = 4  # fetch-uniform also runs with this many times the threads
    # db-update: a news-like crawl db at each size, and one layer's update of it.
    db_update_sizes: tuple = (1_000_000, 10_000_000)
    db_update_urls_per_host: int = 2_000
    db_update_partitions: int = DEFAULT_PARTITIONS  # the crawl db's
    db_update_fetches: int = 100_000  # pages the db holds, fetched again
    db_update_new_urls: int = 100_000  # outlinks the db does not hold
    # ordering: a web of `ordering_pages` on `ordering_hosts` hosts and a farm as large, crawled from the home pages
    # of `ordering_seeds` hosts, `ordering_layer_cap` URLs a layer; the fetches are counted up to the last mark.
    ordering_hosts: int = 1_000
    ordering_pages: int = 100_000
    ordering_seeds: int = 200
    ordering_layer_cap: int = 2_200  # 200 seeds + 9 full layers: 20,000 fetches; one more layer to spare
    ordering_depth: int = 11
    ordering_budget: tuple = (100, 20)  # pld_budget's floor and per_linking_pld
    ordering_marks: tuple = (5_000, 10_000, 20_000)


def replace_sizes(sizes: Sizes, changes: dict) -> Sizes:
    return replace(sizes, **changes)


def sizes_dict(sizes: Sizes) -> dict:
    return asdict(sizes)


FULL = Sizes()
QUICK = Sizes(hosts=20, pages=600, polite_delay=0.05, pipeline_depth=2, pipeline_delays=(0.0, 0.05), parse_pages=200,
              parse_repeat=1, parse_chunk=100, parse_real_pages=20,
              memory_hosts=50, memory_sizes=(1_000, 4_000),
              db_update_sizes=(20_000, 50_000), db_update_urls_per_host=200, db_update_partitions=4,
              db_update_fetches=2_000, db_update_new_urls=2_000,
              ordering_hosts=40, ordering_pages=3_000, ordering_seeds=10, ordering_layer_cap=200, ordering_depth=4,
              ordering_budget=(10, 2), ordering_marks=(150, 300, 600))


# ---- measuring a process -------------------------------------------------------

@dataclass
class Measured:
    wall_s: float
    cpu_s: float
    peak_rss_mb: float
    output: str


# What is measured runs as a crawl normally runs: with Python's output
# buffered.  PYTHONUNBUFFERED (set in some shells and container images) makes
# every task write each record with two system calls: a third of a job's
# time in the db-update scenario.
MEASURED_ENVIRONMENT = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}


def run_measured(args: list[str], stdin_path: str | None = None, stdout_path: str | None = None) -> Measured:
    """Run `python args...`: its wall time, and the CPU time and peak RSS of it
    and of every task it starts (through measure.py, which says why)."""
    with tempfile.TemporaryDirectory(prefix="mrcrawl-measure-") as scratch:
        report = Path(scratch) / "report.json"
        stdin = open(stdin_path, "rb") if stdin_path else subprocess.DEVNULL
        stdout = open(stdout_path, "wb") if stdout_path else subprocess.PIPE
        try:
            started = time.monotonic()
            result = subprocess.run([sys.executable, "-m", "mrcrawl.bench.measure", str(report), "--",
                                     sys.executable, *args], stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                                    env=MEASURED_ENVIRONMENT)
            wall = time.monotonic() - started
        finally:
            for handle in (stdin, stdout):
                if handle not in (subprocess.DEVNULL, subprocess.PIPE):
                    handle.close()
        if result.returncode != 0:
            error = result.stderr.decode(errors="replace")[-3000:]
            raise RuntimeError(f"python {' '.join(args[:4])} failed (exit {result.returncode}):\n{error}")
        usage = json.loads(report.read_text(encoding="utf-8"))
    return Measured(wall, usage["cpu_s"], usage["peak_rss_mb"], (result.stdout or b"").decode(errors="replace"))


def row(name: str, runner: str, **values) -> dict:
    result = dict.fromkeys(ROW_KEYS)
    result.update(name=name, runner=runner, **values)
    pages, wall = result.get("pages"), result.get("wall_s")
    if pages and wall and result["pages_per_s"] is None:
        result["pages_per_s"] = pages / wall
    if result["bound_s"] and wall and result["ratio_to_bound"] is None:
        result["ratio_to_bound"] = wall / result["bound_s"]
    return result


# ---- a crawl directory to run jobs in -------------------------------------------

def bench_config(directory: Path, threads: int, delay: float, timeout: float = BENCH_TIMEOUT,
                 max_layer_seconds: float | None = None) -> Path:
    """A crawl config for the bench web: its hosts are loopback addresses."""
    path = directory / "bench.yaml"
    path.write_text(
        "name: bench\nlanguage: en\nuser_agent: 'mrcrawl-bench/0.1'\n"
        f"threads: {threads}\ndelay: {delay}\ntimeout: {timeout}\nretries: 1\n"
        + (f"max_layer_seconds: {max_layer_seconds}\n" if max_layer_seconds is not None else "")
        + "allow_private_networks: true\nurl_allow: ['^http://127[.]']\n", encoding="utf-8")
    return path


def new_crawl_dir(directory: Path, seeds: list[str], threads: int = 30, delay: float = 0.0,
                  max_layer_seconds: float | None = None) -> tuple[Path, Path, Path]:
    """A crawl directory whose frontier 0 is `seeds`: (crawl dir, seed file, config)."""
    directory.mkdir(parents=True, exist_ok=True)
    conf = bench_config(directory, threads, delay, max_layer_seconds=max_layer_seconds)
    seed_file = directory / "seeds.txt"
    seed_file.write_text("".join(url + "\n" for url in seeds), encoding="utf-8")
    crawl_dir = directory / "crawl"
    store, config = CrawlStore(crawl_dir), load_config(str(conf))
    db = crawl_db(db_root(None, store))
    open_db(db)
    state = open_crawl(store, config, str(conf), str(seed_file.absolute()), str(seed_file), seeds, db,
                       now=None, resume=False)
    # Layer 0's frontier, made as a run makes it: from the seeds and the (new, empty) db.
    with Launcher(RunnerSettings()) as launcher:
        Pipeline(store, state, db, launcher, say=lambda message: None).run(run_start(store))
    return crawl_dir, seed_file, conf


def run_step(crawl_dir: Path, step: str, layer: int, runner: str) -> tuple[Measured, dict]:
    measured = run_measured(["-m", "mrcrawl.bench.step", str(crawl_dir), step, str(layer), "--runner", runner])
    return measured, json.loads(measured.output.strip().splitlines()[-1])


def fetched(counters: dict) -> int:
    return MRCrawler.OUTCOMES.of(counters)[FETCHED]


def polite_columns(log, delay: float) -> dict:
    report = politeness_report(log, delay)
    return {"delay_s": delay, "worst_gap_s": report["worst_gap_s"], "overlaps": report["overlaps"],
            "gaps_below_delay": report["gaps_below_delay"], "polite": report["polite"]}


# ---- 1. fetch-uniform ---------------------------------------------------------------

def fetch_uniform(sizes: Sizes, work: Path, runners: list[str], peer: bool, say) -> list[dict]:
    spec = BenchWebSpec(hosts=sizes.hosts, pages=sizes.pages, page_bytes=sizes.page_bytes,
                        links_per_page=sizes.links, latency=sizes.latency)
    rows = []
    runs = [(runner, sizes.threads) for runner in runners]
    if "inline" in runners and sizes.too_many_threads > 1:
        runs.append(("inline", sizes.threads * sizes.too_many_threads))
    with BenchWeb(spec) as web:
        urls = web.urls()
        for runner, threads in runs:
            name = "fetch-uniform" if threads == sizes.threads else f"fetch-uniform threads={threads}"
            say(f"{name}: {len(urls)} URLs, {spec.hosts} hosts, {runner}, {threads} threads")
            crawl_dir, _, _ = new_crawl_dir(work / f"uniform-{runner}-{threads}", urls, threads=threads)
            web.clear_log()
            measured, step = run_step(crawl_dir, MRCrawler.STEP, 0, runner)
            log = web.request_log()
            pages = fetched(step["counters"])
            # The latency bound: every request takes the time the server's own
            # log shows, and `threads` requests are in flight in each of the
            # reduce tasks running at once.  The CPU bound: our CPU time over
            # the cores those tasks can use (one process holds one core).
            request_s = statistics.median(entry.end - entry.start for entry in log if entry.path.startswith("/p/"))
            tasks = 1 if runner == "inline" else CORES
            latency_bound = pages * request_s / (threads * tasks)
            cpu_bound = measured.cpu_s / tasks
            rows.append(row(name, runner, pages=pages, wall_s=measured.wall_s,
                            cpu_ms_per_page=1000 * measured.cpu_s / max(pages, 1),
                            bound_s=max(latency_bound, cpu_bound),
                            bound="latency" if latency_bound >= cpu_bound else "cpu",
                            request_ms=1000 * request_s, peak_rss_mb=measured.peak_rss_mb,
                            **polite_columns(log, 0.0)))
        peers = scrapy_rows(sizes, work, urls, say) if peer else []
    best = max(peers, key=lambda peer_row: peer_row["pages_per_s"], default=None)
    if best is not None:
        for ours in rows:
            ours.update(peer=best["runner"], peer_pages_per_s=best["pages_per_s"],
                        ratio_to_peer=ours["pages_per_s"] / best["pages_per_s"])
    return rows + peers


def scrapy_rows(sizes: Sizes, work: Path, urls: list[str], say) -> list[dict]:
    url_file = work / "uniform-urls.txt"
    url_file.write_text("".join(url + "\n" for url in urls), encoding="utf-8")
    rows = []
    for concurrency in sizes.scrapy_concurrency:
        say(f"fetch-uniform: Scrapy, CONCURRENT_REQUESTS={concurrency}")
        result = subprocess.run([sys.executable, "-m", "mrcrawl.bench.scrapy_peer", str(url_file),
                                 "--concurrency", str(concurrency)], capture_output=True, text=True)
        if result.returncode != 0:
            say(f"  Scrapy did not run ({result.stdout.strip() or result.stderr.strip()[-300:]}): no peer figures")
            return []
        report = json.loads(result.stdout.strip().splitlines()[-1])
        rows.append(row("fetch-uniform", f"scrapy {report['version']} c={concurrency}", pages=report["ok"],
                        wall_s=report["wall_s"], cpu_ms_per_page=1000 * report["cpu_s"] / max(report["ok"], 1)))
    return rows


# ---- 2. fetch-politeness -------------------------------------------------------------

def fetch_politeness(sizes: Sizes, work: Path, runner: str, say) -> list[dict]:
    spec = BenchWebSpec(hosts=sizes.hosts, pages=sizes.pages, distribution="zipf",
                        zipf_exponent=sizes.zipf_exponent, page_bytes=sizes.page_bytes,
                        links_per_page=sizes.links, latency=sizes.latency)
    with BenchWeb(spec) as web:
        busiest = max(web.model.page_counts)
        say(f"fetch-politeness: {spec.pages} URLs, {spec.hosts} hosts (Zipf, busiest {busiest} pages), "
            f"delay {sizes.polite_delay} s, {runner}")
        crawl_dir, _, _ = new_crawl_dir(work / "politeness", web.urls(), threads=sizes.threads,
                                        delay=sizes.polite_delay)
        web.clear_log()
        measured, step = run_step(crawl_dir, MRCrawler.STEP, 0, runner)
        log = web.request_log()
    pages = fetched(step["counters"])
    busiest_address = max(range(spec.hosts), key=lambda host: web.model.page_counts[host])
    busiest_log = [entry for entry in log if entry.address == web.model.addresses[busiest_address]]
    return [row("fetch-politeness", runner, pages=pages, wall_s=measured.wall_s,
                cpu_ms_per_page=1000 * measured.cpu_s / max(pages, 1),
                bound_s=busiest * sizes.polite_delay, busiest_host_pages=busiest,
                # When the busiest host's first and last requests went out, from
                # the job's start: a late first request is a tail the bound misses.
                busiest_host_span_s=busiest_log[-1].start - busiest_log[0].start if busiest_log else None,
                **polite_columns(log, sizes.polite_delay))]


# ---- 3. pipeline -------------------------------------------------------------------

def pipeline(sizes: Sizes, work: Path, runner: str, say) -> list[dict]:
    spec = BenchWebSpec(hosts=sizes.hosts, pages=sizes.pages, page_bytes=sizes.page_bytes,
                        links_per_page=sizes.links, latency=sizes.latency)
    rows = []
    with BenchWeb(spec) as web:
        for delay in sizes.pipeline_delays:
            say(f"pipeline: depth {sizes.pipeline_depth} from {spec.hosts} seeds over a {spec.pages}-page web, "
                f"delay {delay:g} s, {runner}")
            directory = work / f"pipeline-{delay:g}"
            directory.mkdir(parents=True, exist_ok=True)
            seed_file = directory / "seeds.txt"
            seed_file.write_text("".join(url + "\n" for url in web.seeds()), encoding="utf-8")
            conf = bench_config(directory, sizes.threads, delay)
            crawl_dir = directory / "crawl"
            web.clear_log()
            measured = run_measured(["-m", "mrcrawl.driver", str(seed_file), "--depth", str(sizes.pipeline_depth),
                                     "--conf", str(conf), "--runner", runner, "--output", str(crawl_dir)])
            rows.append(pipeline_row(crawl_dir, runner, delay, measured, web.request_log()))
    return rows


def pipeline_row(crawl_dir: Path, runner: str, delay: float, measured: Measured, log) -> dict:
    done = json.loads((crawl_dir / "stats.json").read_text(encoding="utf-8"))
    by_job: dict[str, float] = {}
    for name, step in done.items():
        job = StepName.parse(name).kind
        by_job[job] = by_job.get(job, 0.0) + step["seconds"]
    fetch_s = by_job.get(MRCrawler.STEP, 0.0)
    pages = sum(fetched(step["counters"]) for name, step in done.items() if StepName.parse(name).kind == MRCrawler.STEP)
    return row(f"pipeline delay={delay:g}", runner, pages=pages, wall_s=measured.wall_s,
               cpu_ms_per_page=1000 * measured.cpu_s / max(pages, 1),
               # Were every job but the Crawler free, the crawl would take its fetch steps' time.
               bound_s=fetch_s, fetch_s=fetch_s, overhead_s=measured.wall_s - fetch_s,
               overhead_share=(measured.wall_s - fetch_s) / measured.wall_s,
               share_by_job={job: seconds / measured.wall_s for job, seconds in by_job.items()},
               driver_s=measured.wall_s - sum(by_job.values()), **polite_columns(log, delay))


# ---- 4. parse ----------------------------------------------------------------------

def fetched_doc(url: str, body: bytes) -> dict:
    doc = new_doc(url, 0)
    doc.update(status=200, reason="OK", http_version="HTTP/1.1", content_type="text/html", encoding="utf-8",
               headers=[["Content-Type", "text/html; charset=utf-8"]], attempts=1, outcome=FETCHED,
               body=encode_body(body))
    return doc


def parse_pages(sizes: Sizes) -> dict[str, list[tuple[str, bytes]]]:
    """The generated page sets the page stage is timed on: (URL, body) pairs."""
    sets = {}
    # A news page links 100 to 300 pages (menus, lists); 30 shows what the
    # links cost, since joining and canonicalising them is most of the Parser's work.
    for page_bytes, links, share in ((20_000, 100, 1), (20_000, 30, 1), (100_000, 100, 5)):
        spec = BenchWebSpec(hosts=20, pages=max(sizes.parse_pages // share, 20), page_bytes=page_bytes,
                            links_per_page=links, latency=0.0)
        model = BenchWebModel(spec, port=8080)
        sets[f"{page_bytes // 1000} KB, {links} links"] = [
            (model.url(host, page), model.body(host, page))
            for host, count in enumerate(model.page_counts) for page in range(count)]
    from mrcrawl.bench.corpus import corpus
    news = corpus()
    sets["news layouts"] = [(f"http://127.0.0.1:8080/{page.name}.html", page.html.encode("utf-8")) for page in news]
    return sets


def real_parse_pages(data_dir: Path, sizes: Sizes) -> list[tuple[str, bytes]]:
    """The real pages of the extraction datasets under `data_dir`, read as
    the extraction benchmark reads them (real_pages.py), each served as
    UTF-8; --quick's few are spread over every dataset found."""
    from mrcrawl.bench import real_pages
    pages, _ = real_pages.load(data_dir)
    if not pages:
        raise ValueError(f"--real: no dataset found in {data_dir} (see mrcrawl/bench/real_pages.py)")
    if sizes.parse_real_pages is not None:
        pages = pages[::max(len(pages) // sizes.parse_real_pages, 1)][:sizes.parse_real_pages]
    return [(f"http://127.0.0.1:8080/{quote(page.dataset)}/{quote(page.name)}.html", page.html.encode("utf-8"))
            for page in pages]


# Run by file path under a checkout's code (page_stage.py says why); the
# working tree is the checkout holding the running mrcrawl package.
PAGE_STAGE = Path(__file__).resolve().with_name("page_stage.py")
WORKING_TREE = Path(mrcrawl.__file__).resolve().parent.parent
_PAGE_STAGE_SUMS = ("pages", "parser_cpu_s", "xml_cpu_s", "xml_pages", "outlinks", "joined_pages")


def run_page_stage(code: Path, pages_file: Path, repeat: int) -> dict:
    """page_stage.py's figures for the pages of `pages_file` under the code of `code`."""
    measured = run_measured([str(PAGE_STAGE), "--code", str(code), "--pages", str(pages_file), "--repeat", str(repeat)])
    return json.loads(measured.output.strip().splitlines()[-1])


def page_stage_row(label: str, pages: list[tuple[str, bytes]], sizes: Sizes, directory: Path,
                   baseline: Path | None) -> dict:
    """The page stage's row for `pages`: the working tree's pages per CPU
    second, and the baseline checkout's beside it when there is one.  The
    pages go in chunks, each run under the baseline's code and then ours,
    so that a burst of load on the shared machine falls on both alike."""
    directory.mkdir(parents=True, exist_ok=True)
    files = []
    for start in range(0, len(pages), sizes.parse_chunk):
        files.append(directory / f"pages-{len(files)}")
        with open(files[-1], "wb") as part:
            for url, body in pages[start:start + sizes.parse_chunk]:
                part.write(_records.write(url, fetched_doc(url, body)) + b"\n")
    ours, theirs = dict.fromkeys(_PAGE_STAGE_SUMS, 0), dict.fromkeys(_PAGE_STAGE_SUMS, 0)
    wall = 0.0
    for pages_file in files:
        if baseline is not None:
            figures = run_page_stage(baseline, pages_file, sizes.parse_repeat)
            for key in _PAGE_STAGE_SUMS:
                theirs[key] += figures[key]
        started = time.monotonic()
        figures = run_page_stage(WORKING_TREE, pages_file, sizes.parse_repeat)
        wall += time.monotonic() - started
        for key in _PAGE_STAGE_SUMS:
            ours[key] += figures[key]
    cpu = ours["parser_cpu_s"] + ours["xml_cpu_s"]
    theirs_columns = dict.fromkeys(("baseline", "baseline_pages_per_core_s", "baseline_parser_ms_per_page",
                                    "baseline_xml_ms_per_page", "baseline_xml_pages", "ratio_to_baseline"))
    if baseline is not None:
        baseline_rate = theirs["pages"] / (theirs["parser_cpu_s"] + theirs["xml_cpu_s"])
        theirs_columns.update(baseline=str(baseline), baseline_pages_per_core_s=baseline_rate,
                              baseline_parser_ms_per_page=1000 * theirs["parser_cpu_s"] / theirs["pages"],
                              baseline_xml_ms_per_page=1000 * theirs["xml_cpu_s"] / theirs["pages"],
                              baseline_xml_pages=theirs["xml_pages"],
                              ratio_to_baseline=ours["pages"] / cpu / baseline_rate)
    # The wall time holds every pass and each run's interpreter start: the
    # pages per second are one core's, from the page stage's CPU seconds.
    return row(f"page stage ({label})", "functions", pages=ours["pages"], wall_s=wall,
               pages_per_s=ours["pages"] / cpu, cpu_ms_per_page=1000 * cpu / ours["pages"],
               pages_per_core_s=ours["pages"] / cpu, parser_ms_per_page=1000 * ours["parser_cpu_s"] / ours["pages"],
               xml_ms_per_page=1000 * ours["xml_cpu_s"] / ours["pages"], xml_pages=ours["xml_pages"],
               links_per_page=ours["outlinks"] / ours["pages"], joined_pages=ours["joined_pages"], **theirs_columns)


def parse(sizes: Sizes, work: Path, say, baseline: Path | None = None, real: Path | None = None) -> list[dict]:
    """The page stage, the Parser's and HtmlToXml's work on each page
    (page_stage.py), on generated pages and, with `real`, on the real pages
    of the extraction datasets cloned there; beside `baseline`'s when given."""
    sets = parse_pages(sizes)
    if real is not None:
        sets["real pages"] = real_parse_pages(real, sizes)
    rows = []
    for label, pages in sets.items():
        say(f"parse: the page stage on {len(pages)} pages, {label}"
            + (f", and under the code of {baseline}" if baseline is not None else ""))
        rows.append(page_stage_row(label, pages, sizes, work / f"page-stage-{len(rows)}", baseline))
    return rows


# ---- 5. memory ---------------------------------------------------------------------

def memory(sizes: Sizes, work: Path, say) -> list[dict]:
    rows = []
    largest = max(sizes.memory_sizes)
    spec = BenchWebSpec(hosts=sizes.memory_hosts, pages=largest, page_bytes=4_000, links_per_page=10, latency=0.0)
    with BenchWeb(spec) as web:
        every_url = web.urls()
        for size in sizes.memory_sizes:
            # An even share of every host's pages, so both sizes span all hosts.
            urls = every_url[:: largest // size][:size]
            say(f"memory: one Crawler reducer task fed {len(urls):,} URLs over {spec.hosts} hosts")
            directory = work / f"memory-{size}"
            crawl_dir, _, _ = new_crawl_dir(directory, urls[:1], threads=sizes.threads)
            # The reducer's input as Hadoop streaming hands it over: internal
            # protocol lines, sorted, so a host's URLs arrive together.
            entry = new_frontier_entry(OTHER_RANK, False, None, None)
            # As the Crawler's mapper keys them for a plan of one task: its key,
            # then queue, host, rank, order key (none: the layer is not ordered), URL, entry.
            plan = Placement(1, DEFAULT_SLOTS)
            task_key = plan.task_keys[0]
            lines = sorted(_records.write(task_key, [host_key(url), host_key(url), entry["rank"], "", url, entry])
                           for url in urls)
            reducer_input = directory / "reducer-input"
            reducer_input.write_bytes(b"\n".join(lines) + b"\n")
            placement = directory / "placement"
            placement.write_bytes(_records.write("placement", plan.to_json()) + b"\n")
            web.clear_log()
            measured = run_measured(
                ["-m", "jobs.crawler", "--step-num=0", "--reducer", "--placement-part", str(placement),
                 "--crawl-config", str(CrawlStore(crawl_dir).config_path), "--layer", "0"],
                stdin_path=str(reducer_input), stdout_path=str(directory / "reducer-output"))
            with open(directory / "reducer-output", "rb") as output:
                pages = sum(b'"outcome":"fetched"' in line for line in output)
            rows.append(row("memory", "reducer task", pages=pages, wall_s=measured.wall_s, urls=len(urls),
                            cpu_ms_per_page=1000 * measured.cpu_s / max(pages, 1),
                            peak_rss_mb=measured.peak_rss_mb, **polite_columns(web.request_log(), 0.0)))
    return rows
