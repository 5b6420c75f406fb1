"""A layer's time limit (`max_layer_seconds`, Nutch's fetcher.timelimit.mins):
once it has run out no request starts, the requests in flight finish, and
every URL left is deferred in the crawl db and fetched by the next layer.

The crawl is of a one-site daily web whose home page links its 7 other
pages, one host with a delay of DELAY: layer 1 needs robots.txt and 7 pages,
8 × DELAY, and LIMIT lets it start robots.txt and 4 pages.  The limit falls
half a delay after the last request it allows, so which URLs are left
(the last 3 in the host's order) does not depend on timing, and a run killed
inside the crawl step and resumed must leave what an uninterrupted run
leaves.
"""
from __future__ import annotations

import http.server
import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest
import yaml

from crawl_support import db_records, driver_command, frontier, layer_docs, write_inputs
from jobs.crawler import MRCrawler
from jobs.optimizer import MROptimizer
from mrcrawl.bench.web import politeness_report
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.fetch.hostqueue import SPILL_BATCH, HostQueue, MemoryBudget, SpillQueue
from mrcrawl.frontier.db_update import queue_mark
from mrcrawl.store.records import DEFERRED_BY_TIME_LIMIT, FETCHED, UNFETCHED, iso_utc
from mrcrawl.testweb.daily import DailySpec, start_daily_web
from test_kill_anywhere import db_contents, kill, start_paused_at

SPEC = DailySpec(sites=1, sections=1, articles=6, latest=6, fail_once_share=0.0, days=1)
DELAY = 1.0
LIMIT = 4.5  # robots.txt at 0, pages at 1, 2, 3, 4 (each a little later): the 5th would start at 5
TIMEOUT = 2.0
LAYER_URLS, FETCHED_IN_TIME = 7, 4
PROGRESS_EVERY = 0.5
ETA_LINE = re.compile(r"^crawl/1: .*; ETA (?P<eta>\d+) s \((?P<which>[a-z ]+)\); (?P<elapsed>\d+) s elapsed$")


# -- the host queue and the fetcher ----------------------------------------------------------

def test_a_host_under_a_time_limit_is_done_one_delay_after_it(tmp_path):
    host = HostQueue("http://127.0.0.1:1", SpillQueue(str(tmp_path / "q"), MemoryBudget(100)), delay=1.0)
    for number in range(100):
        host.urls.push(f"http://127.0.0.1:1/{number}")
    now = time.monotonic()
    assert host.politeness_bound(now) == pytest.approx(100.0)
    assert host.politeness_bound(now, deadline=now + 5) == pytest.approx(6.0)
    host.busy = True  # the answer in flight starts the clock; after the deadline only its delay is left
    assert host.politeness_bound(now, deadline=now - 1) == pytest.approx(1.0)
    host.busy = False
    host.next_start = now + 3.0  # backed off past the deadline: that wait stands
    assert host.politeness_bound(now, deadline=now + 1) == pytest.approx(3.0)


def test_a_host_drops_its_work_from_memory_and_disk(tmp_path):
    budget = MemoryBudget(10)
    host = HostQueue("http://127.0.0.1:1", SpillQueue(str(tmp_path / "q"), budget), delay=0.0)
    for number in range(3 * SPILL_BATCH):
        host.urls.push(f"http://127.0.0.1:1/{number}")
    host.urls.flush()
    host.urls.pop()
    host.resumed.append("a retry")
    assert (tmp_path / "q").exists()
    assert host.drop_work() == 3 * SPILL_BATCH  # the retry is its URL's: one URL, counted once
    assert not host.has_work() and budget.used == 0 and not (tmp_path / "q").exists()


class SlowOrBusy(http.server.BaseHTTPRequestHandler):
    """/slow answers after SLOW seconds, /busy always 503; the rest at once.
    The server keeps (path, start, end) of every request."""

    SLOW = 1.0

    def do_GET(self):
        started = time.monotonic()
        if self.path == "/busy":
            self.send_response(503)
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            if self.path == "/slow":
                time.sleep(self.SLOW)
            body = b"<html><body><p>a page</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        self.server.requests.append((self.path, started, time.monotonic()))

    def log_message(self, *args):
        pass


def serving():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), SlowOrBusy)
    server.requests = []
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return server


def test_no_request_starts_after_the_limit_and_those_in_flight_finish():
    limit, delay = 0.4, 0.2
    slow, busy = serving(), serving()
    try:
        origin = {server: f"http://127.0.0.1:{server.server_address[1]}" for server in (slow, busy)}
        config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=4, delay=delay, retries=1,
                             timeout=3.0, obey_robots=False, allow_private_networks=True)
        reports = []
        fetcher = Fetcher(config, layer=0, on_progress=reports.append, time_limit=limit)
        started = time.monotonic()
        for url in (f"{origin[slow]}/slow", f"{origin[slow]}/a", f"{origin[busy]}/busy", f"{origin[busy]}/b"):
            fetcher.add(url)
        docs = list(fetcher.finish())
        ended = time.monotonic()
    finally:
        for server in (slow, busy):
            server.shutdown()
            server.server_close()
    # /slow was in flight when the time ran out, and finished; /busy's retry
    # (0.5 s later) and the other two never started: no record, counted as left.
    assert [(doc["requested_url"], doc["outcome"]) for doc in docs] == [(f"{origin[slow]}/slow", FETCHED)]
    assert fetcher.left == 3
    requests = slow.requests + busy.requests
    assert sorted(path for path, _, _ in requests) == ["/busy", "/slow"]
    assert all(start <= started + limit for _, start, _ in requests), requests
    assert ended - started >= SlowOrBusy.SLOW  # it waited for the answer in flight
    assert ended - started <= SlowOrBusy.SLOW + delay + 0.5  # and then only for its politeness
    # Every report says the time left, and no bound goes past it by more than a delay.
    assert reports and all("time_left" in report for report in reports)
    assert all(report["bound"] <= report["time_left"] + delay + 0.05 for report in reports), reports


# -- a crawl: layer 1 cut short, layer 2 fetching what it left --------------------------------

def write_limited_inputs(server, directory: Path) -> tuple[Path, Path]:
    seeds, conf, config = write_inputs(server, directory, delay=DELAY, timeout=TIMEOUT)
    conf.write_text(yaml.safe_dump({**config, "max_layer_seconds": LIMIT}), encoding="utf-8")
    return seeds, conf


def limited_command(server, seeds: Path, conf: Path, output: Path, depth: int, *extra: str) -> list[str]:
    return driver_command(seeds, conf, output, depth, "--db", str(output.parent / "db"),
                          "--now", server.web.date_iso(1), *extra)


@pytest.fixture(scope="module")
def limited(tmp_path_factory):
    """The crawl, 2 layers deep, uninterrupted; the db as that run left it."""
    directory = tmp_path_factory.mktemp("limited")
    with start_daily_web(SPEC) as server:
        seeds, conf = write_limited_inputs(server, directory)
        output = directory / "crawl"
        run = subprocess.run(limited_command(server, seeds, conf, output, 2, "--progress-every", str(PROGRESS_EVERY)),
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        assert server.wait_idle()
        yield {"server": server, "seeds": seeds, "conf": conf, "output": output, "db": directory / "db",
               "stderr": run.stderr, "log": server.log, "records": dict(db_records(directory / "db")),
               "db contents": db_contents(directory / "db")}


def test_the_layer_ends_within_its_limit_and_what_it_left_waits_in_the_db(limited):
    output, records = limited["output"], limited["records"]
    layer = frontier(output, 1)
    docs = {doc["requested_url"]: doc for doc in layer_docs(output, 1)}
    assert len(layer) == LAYER_URLS
    # The first URLs in the host's order were fetched, and the rest left without a doc record.
    assert list(docs) == sorted(docs) and len(docs) == FETCHED_IN_TIME
    assert all(doc["outcome"] == FETCHED for doc in docs.values())
    left = [url for url in layer if url not in docs]
    assert left == sorted(left) and min(left) > max(docs)
    run = iso_utc(limited["server"].web.date(1))
    for url in left:  # unfetched, deferred once, queued for the next layer, due for the next run
        record = records[url]
        assert (record["status"], record["deferred"], record["deferrals"]) == (UNFETCHED, DEFERRED_BY_TIME_LIMIT, 1)
        assert record["queued"] == queue_mark(run, 2) and record["due_at"] == run
    for url in docs:
        assert (records[url]["deferred"], records[url]["deferrals"]) == (None, 0)
    # The server saw layer 1 (after layer 0's robots.txt and home page) start nothing after the
    # limit, counted from its first request (the task started before it), and end within the
    # limit plus a request's timeout; politely.
    requests = limited["log"][2:]
    assert requests[0].path == "/robots.txt" and len(requests) == 1 + FETCHED_IN_TIME
    assert all(entry.start <= requests[0].start + LIMIT for entry in requests), requests
    assert requests[-1].end - requests[0].start <= LIMIT + TIMEOUT
    assert politeness_report(limited["log"], DELAY)["polite"]
    # The crawl step, from its job's start to its end (the last delay held included).
    stats = json.loads((output / "stats.json").read_text())
    assert stats["crawl/1"]["seconds"] <= LIMIT + TIMEOUT
    # Its counters and its line say what was left.
    assert MRCrawler.URLS_LEFT.of(stats["crawl/1"]["counters"]) == len(left)
    assert MRCrawler.URLS_LEFT.of(stats["crawl/0"]["counters"]) == 0
    assert f"{len(left)} left when the layer's time ran out (max_layer_seconds)" in limited["stderr"]


def test_the_eta_is_never_past_the_limit(limited):
    lines = [ETA_LINE.match(line) for line in limited["stderr"].splitlines() if line.startswith("crawl/1:")]
    etas = [(int(match["eta"]), int(match["elapsed"])) for match in lines if match]
    assert len(etas) >= 3, limited["stderr"]
    for eta, elapsed in etas:
        # Both are rounded to whole seconds; the task's clock started a little after the step's.
        assert eta <= LIMIT - elapsed + DELAY + 1.5, (eta, elapsed, limited["stderr"])


def test_a_run_killed_inside_the_crawl_step_and_resumed_leaves_the_same_urls(limited, tmp_path):
    server = limited["server"]
    output = tmp_path / "crawl"
    command = limited_command(server, limited["seeds"], limited["conf"], output, 2)
    process = start_paused_at(command, "start crawl/1", tmp_path / "runs.log")
    os.kill(process.pid, signal.SIGCONT)
    time.sleep(LIMIT / 2)  # inside the fetch
    kill(process)
    assert "crawl/1" not in json.loads((output / "crawl.json").read_text())["done"]
    assert server.wait_idle()
    time.sleep(DELAY)  # the killed run held no politeness
    resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    assert db_contents(tmp_path / "db") == limited["db contents"]


def test_the_next_layer_fetches_what_was_left(limited):
    server, output = limited["server"], limited["output"]
    left = sorted(set(frontier(output, 1)) - {doc["requested_url"] for doc in layer_docs(output, 1)})
    deeper = subprocess.run(limited_command(server, limited["seeds"], limited["conf"], output, 3, "--resume"),
                            capture_output=True, text=True, timeout=120)
    assert deeper.returncode == 0, deeper.stderr
    # The Optimizer read them out of the db, and layer 2 fetched them all.
    assert sorted(frontier(output, 2)) == left
    stats = json.loads((output / "stats.json").read_text())
    assert MROptimizer.NEW_URLS.of(stats["optimize/1"]["counters"]) == len(left)
    assert f"layer 2: {len(left)} URLs, {len(left)} of them left when layer 1's time ran out" in deeper.stderr
    docs = layer_docs(output, 2)
    assert sorted(doc["requested_url"] for doc in docs) == left
    assert all(doc["outcome"] == FETCHED for doc in docs)
    records = dict(db_records(limited["db"]))
    for url in left:
        assert (records[url]["status"], records[url]["deferred"], records[url]["deferrals"]) == (FETCHED, None, 0)
