"""One clock per run: every time a run records is on the run's clock.

A run as of `--now` stamps its fetches `--now` plus the wall time elapsed
since it began; a run without `--now` stamps the wall clock.  Each test
crawls the test web and reads back every time the run recorded: the doc,
out and duplicate stores, the crawl db and its digest index, the XML, the
page index and the WARC files; each must lie between the run's start and
its start plus the run's wall duration.  The run as of `--now` runs on the
local runner, whose tasks are processes of their own, told the clock on
their command line.  The servers' own Date headers stay as they were sent,
and politeness stays on the real clock.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pyarrow.parquet as pq
from warcio.archiveiterator import ArchiveIterator

from crawl_support import crawl, db_records, driver_command, politeness_violations, read_records, write_inputs
from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.crawldb import read_digest_index
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import PAUSE_AT, CrawlStore

DEPTH = 2
NOW = datetime(2021, 1, 5, 6, 0, tzinfo=timezone.utc)  # years before any machine runs these tests
# Slack around a measured wall span: the stamps are taken inside it, but the
# servers' Date headers are cut to the second.
MARGIN = timedelta(seconds=1)
WARC_TIME_HEADERS = ("WARC-Date", "WARC-Refers-To-Date")


def moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def recorded_times(output: Path, db: Path) -> dict[str, list[datetime]]:
    """Every time the run recorded in its stores, by where it was found
    (the db's due_at, a time to come, is checked on its own)."""
    times: dict[str, list[datetime]] = {}

    def add(where: str, text: str | None) -> None:
        if text is not None:
            times.setdefault(where, []).append(moment(text))

    for store in sorted((output / "doc").iterdir()):
        for _, doc in read_records(store):
            add("doc fetched_at", doc["fetched_at"])
    for store in sorted((output / "out").iterdir()):
        for _, out in read_records(store):
            add("out timestamp", out["timestamp"])
    for store in sorted((output / "dup").iterdir()):
        for _, duplicate in read_records(store):
            add("dup original_fetched_at", duplicate["original_fetched_at"])
    for _, record in db_records(db):
        for field in ("first_run", "fetched_at", "changed_at"):
            add(f"db {field}", record[field])
    for _, original in read_digest_index(db):
        add("digest index fetched_at", original["fetched_at"])
    for part in (output / "xml").glob("*/part-*"):
        for stamp in re.findall(r' fetched_at="([^"]*)"', part.read_text(encoding="utf-8")):
            add("xml fetched_at", stamp)
    for row in pq.read_table(output / "index").select(["fetched_at"]).to_pylist():
        times.setdefault("index fetched_at", []).append(row["fetched_at"])
    for path in sorted((output / "warc").iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                for name in WARC_TIME_HEADERS:
                    add(f"WARC {record.rec_type} {name}", record.rec_headers.get_header(name))
    return times


def outside(times: dict[str, list[datetime]], earliest: datetime, latest: datetime) -> list[str]:
    return [f"{where}: {stamp.isoformat()} not within [{earliest.isoformat()}, {latest.isoformat()}]"
            for where, stamps in times.items() for stamp in stamps if not earliest <= stamp <= latest]


def server_dates(output: Path) -> list[datetime]:
    """The Date header of every response the doc records keep, as the servers sent it."""
    return [datetime.strptime(value, "%a, %d %b %Y %H:%M:%S GMT").replace(tzinfo=timezone.utc)
            for store in sorted((output / "doc").iterdir()) for _, doc in read_records(store)
            for name, value in doc["headers"] or [] if name.lower() == "date"]


def wall_now() -> datetime:
    return datetime.now(timezone.utc)


def due_problems(db: Path, run: datetime) -> list[str]:
    """The revisit times count from the run's start, not from the fetch's
    stamp: on a first run each is the start plus whole days (the config's)."""
    return [f"{url}: due_at {record['due_at']}" for url, record in db_records(db) if record["due_at"] is not None
            and not (moment(record["due_at"]) > run and (moment(record["due_at"]) - run) % timedelta(days=1) == timedelta(0))]


def test_a_run_as_of_now_records_every_time_on_its_own_clock(web_server, tmp_path):
    assert wall_now() - NOW > timedelta(days=300), "the test needs a --now far from the machine's clock"
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output, db = tmp_path / "crawl", tmp_path / "db"
    began = wall_now()
    assert crawl(seeds, conf, output, DEPTH, "local", "--db", str(db), "--now", NOW.isoformat(),
                 "--export", "warc,index") == 0
    lasted = wall_now() - began

    times = recorded_times(output, db)
    expected = {"doc fetched_at", "out timestamp", "db first_run", "db fetched_at", "db changed_at",
                "digest index fetched_at", "xml fetched_at", "index fetched_at",
                "WARC warcinfo WARC-Date", "WARC request WARC-Date", "WARC response WARC-Date"}
    assert expected <= set(times), sorted(expected - set(times))
    assert outside(times, NOW, NOW + lasted + MARGIN) == []
    # The fetches are spread over the run as the wall clock saw them, not all stamped at its start.
    fetched = times["doc fetched_at"]
    assert max(fetched) - min(fetched) > timedelta(milliseconds=100)
    assert due_problems(db, NOW) == []
    # What the servers said stays as they said it: their Date headers are the wall clock's.
    dates = server_dates(output)
    assert dates and all(began - MARGIN <= date <= began + lasted + MARGIN for date in dates)
    # Politeness is kept on the real clock, whatever the run's clock says.
    assert politeness_violations(web_server.log, web_server.web, config) == []


def test_a_run_without_now_records_the_wall_clock(web_server, tmp_path):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output, db = tmp_path / "crawl", tmp_path / "db"
    began = wall_now()
    assert crawl(seeds, conf, output, DEPTH, "inline", "--db", str(db), "--export", "warc,index") == 0
    ended = wall_now()

    times = recorded_times(output, db)
    assert {"doc fetched_at", "db first_run", "WARC warcinfo WARC-Date", "index fetched_at"} <= set(times)
    # Stamped to the millisecond, so the run's start may read up to 1 ms before `began`.
    assert outside(times, began - timedelta(milliseconds=1), ended) == []
    assert json.loads((output / "crawl.json").read_text())["clock_offset"] == 0


def stopped(process: subprocess.Popen) -> bool:
    """Whether the process stopped itself (SIGSTOP, at a pause point)."""
    return Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


def test_a_resumed_run_keeps_its_clock_going(web_server, tmp_path):
    """The clock of a resumed run goes on from the offset its run began with:
    the time the run stood still passes on its clock too, and the resumed
    layers are stamped after the layers done before."""
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output, db = tmp_path / "crawl", tmp_path / "db"
    began = wall_now()
    command = driver_command(seeds, conf, output, DEPTH, "--db", str(db), "--now", NOW.isoformat())
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                               env={**os.environ, PAUSE_AT: "start crawl/1"})
    try:
        deadline = time.monotonic() + 120
        while not stopped(process):
            assert process.poll() is None and time.monotonic() < deadline, "the run never reached crawl/1"
            time.sleep(0.05)
        paused = wall_now()
    finally:
        process.kill()
        process.wait(timeout=30)
    offset = json.loads((output / "crawl.json").read_text())["clock_offset"]
    time.sleep(2)  # the run stands still

    resumed = wall_now()
    assert crawl(seeds, conf, output, DEPTH, "inline", "--resume", "--export", "warc,index") == 0
    ended = wall_now()

    assert json.loads((output / "crawl.json").read_text())["clock_offset"] == offset
    layers = [[moment(doc["fetched_at"]) for _, doc in read_records(output / "doc" / str(layer))]
              for layer in range(DEPTH)]
    assert layers[0] and layers[1]
    assert outside({"layer 0": layers[0]}, NOW, NOW + (paused - began) + MARGIN) == []
    # The resumed layer is as far from the run's start as the real time that passed since the run began.
    assert outside({"layer 1": layers[1]}, NOW + (resumed - paused), NOW + (ended - began) + MARGIN) == []
    assert max(layers[0]) < min(layers[1])
    assert outside(recorded_times(output, db), NOW, NOW + (ended - began) + MARGIN) == []



def test_a_crawl_json_without_a_clock_resumes_on_the_wall_clock(tmp_path):
    """A crawl started before crawl.json kept the run's clock stamped the wall clock: its resume goes on so."""
    store = CrawlStore(tmp_path)
    CrawlState.new(CrawlConfig(language="en", user_agent="mrcrawl-test/1.0"), "/seeds.txt", 1, NOW,
                   str(tmp_path / "db")).save(store)
    written = json.loads(store.state_path.read_text())
    assert written["clock_offset"] < -300 * 86400  # as of NOW, years behind the wall clock
    del written["clock_offset"]
    store.state_path.write_text(json.dumps(written))
    assert CrawlState.load(store).clock_offset == 0
