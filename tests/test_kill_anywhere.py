"""Kill anywhere, and a full disk: a day's crawl on a crawl db that already
holds a day, stopped the hard way again and again, ends as an uninterrupted
run of that day ends.

The web is a small daily web (mrcrawl/testweb/daily.py) with no article that
fails its first request: whether such an article's 503 fell before or after a
kill would change its doc record's `attempts`, which is not what is tested
here.  Day 1 is crawled two layers deep into a db; day 2, three layers deep
with `--export warc,index`, is run once without a break (the oracle: the
same web, the same `--now`, a copy of day 1's db) and once killed and
resumed, or starved of disk and resumed.

The runs stop at named points: the driver stops itself (SIGSTOP) where the
test-only variable MRCRAWL_PAUSE_AT names (crawl_store.pause_point), and the
test then kills it (SIGKILL) there, or lets it go on for a random part of the
step's length first, or fills its disk and lets it go on.  The points are
`start <step>` (the step's job is about to run: between steps), `written
<step>` (the job has finished, nothing committed), `replacing <scratch>`
(the old store is gone, the new one not yet in place), `db committed <run>
<step>` (db.json names the new generation, the old one is still there) and
`committed <step>` (the store is in place, crawl.json does not say so yet);
the exports are the steps `export-warc` and `export-index`.
"""
from __future__ import annotations

import contextlib
import errno
import gzip
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator

from crawl_support import db_records, driver_command, write_daily_inputs
from mrcrawl.driver import EXIT_OK, EXIT_STEP_FAILED
from mrcrawl.frontier.crawldb import CrawlDb, read_digest_index
from mrcrawl.store.crawl_store import PAUSE_AT, CrawlStore
from mrcrawl.store.records import iso_utc
from mrcrawl.testweb.daily import DailySpec, start_daily_web

SPEC = DailySpec(sites=2, sections=2, articles=20, latest=4, fail_once_share=0.0)
FIRST_DEPTH = 2  # day 1 leaves URLs it found and never fetched: day 2 then has three layers
DEPTH = 3
REVISIT = {"first_days": 2}
EXPORTS = ("export-warc", "export-index")
KILLS = 20
# The schedule's seed; set MRCRAWL_KILL_SEED to run another schedule (a failure prints the seed it ran).
SEED = int(os.environ.get("MRCRAWL_KILL_SEED", "20260106"))
# A kill inside a step comes at most this share of the step's uninterrupted
# length after it started: a step may run faster than it did then (a share of
# 0.6 once missed the end of a 0.1 s merge), and a kill after the step is not inside it.
INSIDE_SHARE = 0.3

# What two runs of one day may differ in, and why: the times of the requests
# (fetched_at, the out record's timestamp, a duplicate's original_fetched_at,
# the db's fetched_at and changed_at, which is a fetch time) and the server's
# Date header, which says the same.
TIME_KEYS = frozenset({"fetched_at", "changed_at", "timestamp", "original_fetched_at"})
# In the WARC files, besides: the record IDs (uuid5 of the URL and the fetch
# time) and the references to them, the dates, and the block digest and
# length, which cover the HTTP headers and with them the Date header.
WARC_TIME_HEADERS = frozenset({"WARC-Date", "WARC-Record-ID", "WARC-Warcinfo-ID", "WARC-Concurrent-To",
                               "WARC-Refers-To", "WARC-Refers-To-Date", "WARC-Block-Digest", "Content-Length"})


# -- the day, uninterrupted ---------------------------------------------------------------

class Day2(NamedTuple):
    server: object
    seeds: Path
    conf: Path
    day1_db: Path  # day 1's db, kept as it was: copy it for each run of day 2
    clean: Path  # the uninterrupted run's crawl directory
    clean_db: Path
    steps: list[str]  # day 2's steps in the order they run, the exports last
    seconds: dict[str, float]  # how long each took uninterrupted


@pytest.fixture(scope="module")
def day2(tmp_path_factory):
    directory = tmp_path_factory.mktemp("day2")
    with start_daily_web(SPEC) as server:
        seeds, conf, _ = write_daily_inputs(server, directory, revisit=REVISIT)
        day1_db = directory / "day1-db"
        run = subprocess.run(driver_command(seeds, conf, directory / "day1", FIRST_DEPTH, "--db", str(day1_db),
                                            "--now", server.web.date_iso(1)), capture_output=True, text=True)
        assert run.returncode == EXIT_OK, run.stderr
        server.set_day(2)
        clean, clean_db = directory / "clean", directory / "clean-db"
        shutil.copytree(day1_db, clean_db)
        run = subprocess.run(day2_command(server, seeds, conf, clean, clean_db), capture_output=True, text=True)
        assert run.returncode == EXIT_OK, run.stderr
        done = json.loads((clean / "crawl.json").read_text())["done"]
        assert len([step for step in done if step.startswith("crawl/")]) == DEPTH, f"day 2 crawled {list(done)}"
        seconds = {step: done[step]["seconds"] for step in done}
        for export in EXPORTS:
            seconds[export] = float(re.search(rf"{export[7:]}: .*\(([\d.]+) s,", run.stderr).group(1))
        yield Day2(server, seeds, conf, day1_db, clean, clean_db, [*done, *EXPORTS], seconds)


def day2_command(server, seeds: Path, conf: Path, output: Path, db: Path, *extra: str) -> list[str]:
    return driver_command(seeds, conf, output, DEPTH, "--db", str(db), "--now", server.web.date_iso(2),
                          "--export", "warc,index", *extra)


# -- stopping a run at a point ----------------------------------------------------------------

def start_paused_at(command: list[str], point: str, log: Path) -> subprocess.Popen:
    """Start the driver; return once it has stopped itself at `point`."""
    with open(log, "ab") as said:
        said.write(f"\n=== {' '.join(command[3:])}  (paused at {point!r})\n".encode())
        said.flush()
        process = subprocess.Popen(command, stdout=said, stderr=subprocess.STDOUT, env={**os.environ, PAUSE_AT: point})
    deadline = time.monotonic() + 120
    while not is_stopped(process.pid):
        if process.poll() is not None:
            raise AssertionError(f"the run exited {process.returncode} before reaching {point!r}; see {log}")
        assert time.monotonic() < deadline, f"{point!r} not reached within 120 s; see {log}"
        time.sleep(0.002)
    return process


def is_stopped(pid: int) -> bool:
    with contextlib.suppress(FileNotFoundError):
        stat = Path(f"/proc/{pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0] == "T"  # the state follows the command's name in parentheses
    return False


def kill(process: subprocess.Popen) -> None:
    process.kill()
    process.wait(timeout=30)


def done_steps(output: Path) -> list[str]:
    return list(json.loads((output / "crawl.json").read_text())["done"])


# -- the kill schedule --------------------------------------------------------------------------

class Kill(NamedTuple):
    step: str
    point: str  # where the run is stopped
    wait: float | None  # None: killed there; else let go on, and killed that many seconds later
    what: str  # which kind of moment this is


# Where within a step each kind of moment falls, to keep the schedule in the run's order.
MOMENT_ORDER = ("between steps", "inside", "written, not committed", "half replaced", "db committed",
                "committed, not recorded")


def moments(step: str) -> list[str]:
    """The kinds of moment a step has."""
    kinds = ["between steps", "inside", "written, not committed"]
    if step.startswith(("dbupdate/", "rankupdate/")):  # a step whose output is the db's next generation
        kinds.append("db committed")
    else:
        kinds.append("half replaced")
    if step not in EXPORTS:
        kinds.append("committed, not recorded")  # an export is recorded nowhere: it is redone
    return kinds


def kill_at(step: str, what: str, run: str, seconds: float, rng: random.Random) -> Kill:
    point = {
        "between steps": f"start {step}",
        "inside": f"start {step}",
        "written, not committed": f"written {step}",
        "half replaced": f"replacing {step.replace('/', '-')}",
        "db committed": f"db committed {run} {step}",
        "committed, not recorded": f"committed {step}",
    }[what]
    # A step's length as measured, or as printed (an export's, to 0.1 s), is never taken as below 0.02 s.
    wait = rng.uniform(0.05, INSIDE_SHARE) * max(seconds, 0.02) if what == "inside" else None
    return Kill(step, point, wait, what)


def kill_schedule(steps: list[str], seconds: dict[str, float], run: str, rng: random.Random) -> list[Kill]:
    """KILLS moments in the order a run meets them: one inside each kind of
    job and each export, one of each other kind of moment, the rest drawn
    from all of them."""
    def kind(step):
        return step.split("/")[0]

    chosen = []
    for job in dict.fromkeys(kind(step) for step in steps):
        step = rng.choice([step for step in steps if kind(step) == job])
        chosen.append(kill_at(step, "inside", run, seconds[step], rng))
    for what in MOMENT_ORDER:
        if what != "inside":
            step = rng.choice([step for step in steps if what in moments(step)])
            chosen.append(kill_at(step, what, run, seconds[step], rng))
    every = [(step, what) for step in steps for what in moments(step)]
    while len(chosen) < KILLS:
        step, what = rng.choice(every)
        chosen.append(kill_at(step, what, run, seconds[step], rng))
    return sorted(chosen, key=lambda kill: (steps.index(kill.step), MOMENT_ORDER.index(kill.what), kill.wait or 0))


# -- comparing two runs of the day ----------------------------------------------------------------

def timeless(value):
    """A record without the times of its requests (TIME_KEYS, and those of a
    batch's digest claims: [[url, fetched_at], ...]) and the server's Date header."""
    if isinstance(value, dict):
        return {key: (without_date(item) if key == "headers" else
                      [url for url, _ in item] if key == "claims" else timeless(item))
                for key, item in value.items() if key not in TIME_KEYS}
    if isinstance(value, list):
        return [timeless(item) for item in value]
    return value


def without_date(headers):
    return headers if headers is None else [[name, text] for name, text in headers if name.lower() != "date"]


def store_lines(part: Path) -> list:
    """A part file's lines, as comparable values, in a fixed order (a store's
    order of lines is the order its tasks finished them in)."""
    text = part.read_text(encoding="utf-8")
    if part.parent.parent.name == "xml":  # url TAB <page ... fetched_at="..." ...>
        return sorted(re.sub(r' fetched_at="[^"]*"', "", line) for line in text.splitlines())
    if part.parent.name == "seeds":
        return text.splitlines()
    rows = []
    for line in text.splitlines():
        key, record = line.split("\t", 1)
        rows.append(json.dumps([json.loads(key), timeless(json.loads(record))], sort_keys=True))
    return sorted(rows)


def warc_records(path: Path) -> list:
    records = []
    with open(path, "rb") as stream:
        for record in ArchiveIterator(stream):
            headers = sorted((name, value) for name, value in record.rec_headers.headers
                             if name not in WARC_TIME_HEADERS)
            http = None if record.http_headers is None else (
                record.http_headers.statusline, without_date(sorted(record.http_headers.headers)))
            records.append(repr((headers, http, record.content_stream().read())))
    return sorted(records)


def index_rows(path: Path) -> list:
    return sorted(repr(row) for row in pq.read_table(path).drop_columns(["fetched_at"]).to_pylist())


def crawl_contents(output: Path) -> dict[str, object]:
    """Every file of a crawl directory that a run stores, by path, as comparable
    values.  Kept out: the lock, stats.json (each step's length, and the
    counters of the steps this run did: a resumed run redid some), and the
    report drawn from it."""
    contents = {}
    for path in sorted(output.rglob("*")):
        name = str(path.relative_to(output))
        if path.is_dir() or name in (".lock", "stats.json", "report.html"):
            continue
        if name == "crawl.json":
            state = json.loads(path.read_text())
            # The steps done, in order; the db's path, and the clock's offset
            # from the real time each run began at, are each run's own.
            contents[name] = {**state, "done": list(state["done"]), "db": None, "clock_offset": None}
        elif path.suffix == ".gz":
            contents[name] = warc_records(path)
        elif path.suffix == ".parquet":
            contents[name] = index_rows(path)
        elif path.name.startswith("part-"):
            contents[name] = store_lines(path)
        else:
            contents[name] = path.read_bytes()
    return contents


def db_contents(db: Path) -> dict[str, object]:
    return {
        "files": sorted(str(path.relative_to(db)) for path in db.rglob("*")),
        "db.json": json.loads((db / "db.json").read_text()),
        "records": [(url, timeless(record)) for url, record in db_records(db)],
        "digest index": [(digest, timeless(original)) for digest, original in read_digest_index(db)],
    }


def differences(got: dict, expected: dict, what: str) -> list[str]:
    problems = [f"{what}: {name} is missing" for name in expected.keys() - got.keys()]
    problems += [f"{what}: {name} should not be there" for name in got.keys() - expected.keys()]
    for name in sorted(got.keys() & expected.keys()):
        if got[name] != expected[name]:
            shown = [item for item in got[name] if item not in expected[name]][:2] if isinstance(got[name], list) else got[name]
            problems.append(f"{what}: {name} differs, e.g. {str(shown)[:600]}")
    return problems


def assert_same_as_uninterrupted(day2: Day2, output: Path, db: Path, how: str) -> None:
    problems = differences(crawl_contents(output), crawl_contents(day2.clean), f"{how}: the crawl directory")
    problems += differences(db_contents(db), db_contents(day2.clean_db), f"{how}: the crawl db")
    assert not problems, "\n".join(problems[:12])


def assert_intact(output: Path, db: Path, steps: list[str]) -> list[str]:
    """What a killed or failed run must leave: crawl.json readable, naming the
    day's first steps in order; a db whose db.json names a complete generation."""
    done = done_steps(output)
    assert done == steps[:len(done)], f"crawl.json names {done}"
    CrawlDb(CrawlStore(db)).meta()  # raises NoCrawlDb when a partition file of its generation is missing
    return done


# -- kill anywhere ----------------------------------------------------------------------------------

def test_a_day_killed_twenty_times_and_resumed_equals_an_uninterrupted_day(day2, tmp_path):
    rng = random.Random(SEED)
    run = iso_utc(day2.server.web.date(2))
    schedule = kill_schedule(day2.steps, day2.seconds, run, rng)
    print(f"kill schedule (MRCRAWL_KILL_SEED={SEED}):")
    for number, planned in enumerate(schedule, 1):
        print(f"  {number:2}. {planned.what:<24} {planned.point!r}" + (f" + {planned.wait:.3f} s" if planned.wait else ""))
    output, db, log = tmp_path / "killed", tmp_path / "db", tmp_path / "runs.log"
    shutil.copytree(day2.day1_db, db)
    started = time.monotonic()
    inside = Counter()
    for number, planned in enumerate(schedule):
        resume = ("--resume",) if number else ()
        process = start_paused_at(day2_command(day2.server, day2.seeds, day2.conf, output, db, *resume), planned.point, log)
        if planned.wait is not None:
            os.kill(process.pid, signal.SIGCONT)
            time.sleep(planned.wait)
        kill(process)
        done = assert_intact(output, db, day2.steps)
        if planned.what == "inside" and (planned.step in EXPORTS or planned.step not in done):
            still_running = process.returncode != EXIT_OK  # an export is not recorded: it ran if the run had not ended
            inside[planned.step.split("/")[0]] += still_running
    assert day2.server.wait_idle()
    finished = subprocess.run(day2_command(day2.server, day2.seeds, day2.conf, output, db, "--resume"),
                              capture_output=True, text=True)
    seconds = time.monotonic() - started
    print(f"{KILLS} kills and resumes, and the last resume: {seconds:.1f} s")
    assert finished.returncode == EXIT_OK, f"MRCRAWL_KILL_SEED={SEED}: {finished.stderr}"
    missed = [job for job in dict.fromkeys(step.split("/")[0] for step in day2.steps) if not inside[job]]
    assert not missed, f"MRCRAWL_KILL_SEED={SEED}: no kill landed inside {missed} (see the schedule printed)"
    assert not list((output / ".work").iterdir()), "scratch output left behind"
    assert_same_as_uninterrupted(day2, output, db, f"killed {KILLS} times (MRCRAWL_KILL_SEED={SEED})")


def test_a_run_killed_while_making_its_crawl_db_is_started_again(day2, tmp_path):
    """What a first run killed inside CrawlDb.create() leaves (db.json is
    written last) is no crawl db, and no other files either: the next run makes the db."""
    db, output = tmp_path / "db", tmp_path / "crawl"
    (db / "gen-000000").mkdir(parents=True)
    for name in ("part-00000", "part-00001", "part-00002.tmp"):
        (db / "gen-000000" / name).write_bytes(b"")
    (db / ".lock").write_bytes(b"")
    run = subprocess.run(driver_command(day2.seeds, day2.conf, output, 1, "--db", str(db), "--now",
                                        day2.server.web.date_iso(2)), capture_output=True, text=True)
    assert run.returncode == EXIT_OK, run.stderr
    meta = CrawlDb(CrawlStore(db)).meta()
    assert meta["generation"] == 1 and sorted(path.name for path in db.iterdir()) == [".lock", "db.json", "gen-000001"]
    assert {url for url, _ in db_records(db)} >= set(day2.server.web.seed_urls)

# -- a full disk ------------------------------------------------------------------------------------

# Where the disk fills, in the order a run meets them, and what must not be in place after.
# (point, what is being written there, how the failure is named, a store that must not be in place after)
FILLS = (
    ("start crawl/1", "the Crawler's output", "crawl/1", "doc/1"),
    ("start dbupdate/1", "the db's next generation", "dbupdate/1", None),
    ("written optimize/1", "crawl.json, the store being in place", "optimize/1", None),
    ("start export-warc", "the WARC export", "the warc export", "warc"),
)
DISK_MEGABYTES = 16  # the day's crawl and db take about 2 MB


@contextlib.contextmanager
def small_disk(directory: Path):
    """A tmpfs of DISK_MEGABYTES mounted at `directory`, unmounted afterwards."""
    directory.mkdir()
    try:
        mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={DISK_MEGABYTES}m", "tmpfs", str(directory)],
                                 capture_output=True, text=True)
    except FileNotFoundError:
        pytest.skip("no mount command: cannot make a small disk to fill")
    if mounted.returncode:
        pytest.skip(f"cannot mount a tmpfs (it takes root): {mounted.stderr.strip()}")
    try:
        yield directory
    finally:
        subprocess.run(["umount", str(directory)], check=True)


def fill(disk: Path) -> Path:
    """Write a ballast file until not one more byte fits."""
    ballast = disk / "ballast"
    handle = os.open(ballast, os.O_WRONLY | os.O_CREAT, 0o600)
    size = 1 << 20
    try:
        while size:
            try:
                os.write(handle, bytes(size))
            except OSError as error:
                assert error.errno == errno.ENOSPC, error
                size //= 2
    finally:
        os.close(handle)
    return ballast


def test_a_full_disk_fails_the_step_with_exit_1_and_resume_finishes_once_space_is_freed(day2, tmp_path):
    with small_disk(tmp_path / "disk") as disk:
        output, db = disk / "crawl", disk / "db"
        shutil.copytree(day2.day1_db, db)
        for number, (point, what, step, store) in enumerate(FILLS):
            log = tmp_path / f"run-{number}.log"
            resume = ("--resume",) if number else ()
            process = start_paused_at(day2_command(day2.server, day2.seeds, day2.conf, output, db, *resume), point, log)
            done, meta = done_steps(output), (db / "db.json").read_bytes()
            ballast = fill(disk)
            os.kill(process.pid, signal.SIGCONT)
            try:
                process.wait(timeout=120)
            finally:
                if process.poll() is None:
                    kill(process)
            said = log.read_text()
            assert process.returncode == EXIT_STEP_FAILED, f"full disk at {what}: exit {process.returncode}\n{said}"
            failed, kept = [line for line in said.splitlines() if line.startswith("mrcrawl: ")][-2:]
            assert failed.startswith(f"mrcrawl: {step} failed") and failed.endswith(
                "No space left on device (the disk is full)"), f"full disk at {what}:\n{said}"
            assert "free some space, then run: " in kept and kept.endswith("--resume"), kept
            # Nothing of the failed step counts: crawl.json and the db are as they were.
            assert done_steps(output) == done and assert_intact(output, db, day2.steps)
            assert (db / "db.json").read_bytes() == meta or point == "written optimize/1"
            assert store is None or not (output / store).exists(), f"{store} is in place after the disk filled"
            ballast.unlink()
        finished = subprocess.run(day2_command(day2.server, day2.seeds, day2.conf, output, db, "--resume"),
                                  capture_output=True, text=True)
        assert finished.returncode == EXIT_OK, finished.stderr
        assert_same_as_uninterrupted(day2, output, db, "resumed after four full disks")
