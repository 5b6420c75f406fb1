"""The crawl on a Spark standalone cluster: a master and two workers on
loopback, each a JVM of its own, started as the README shows (spark_cluster.py).

The test web is crawled three layers deep with a crawl db and both exports,
once through `--runner spark --spark-master spark://127.0.0.1:P --reducers 2`
and once inline, both as of one `--now`: their stores, their dbs and their
exports must be the same but for when each page was fetched, and both
workers must have run tasks.  This is the suite's one Spark crawl: it also
checks what a Spark run shows and leaves behind (progress lines, no mrjob
warnings, no temporary files).
"""
from __future__ import annotations

import contextlib
import io
import json
import re
import tempfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pyarrow.dataset as ds
import pytest
from mrjob.job import MRJob

from crawl_support import crawl, write_inputs
from mrcrawl.mr.launcher import Launcher, RunnerSettings
from mrcrawl.testweb import start_test_web
from spark_cluster import DOCUMENTED_MASTER, documented_crawl, group_alive, start_cluster
from test_export import read_warc_files
from test_runners import rounded, stores_of

DEPTH = 3
REDUCERS = 2
EXPORTS = "warc,index"
# What differs between two crawls of one web as of one --now: when each
# page was fetched (the db's fetched_at and changed_at, a digest's
# fetched_at), and what follows from it in the exports.
FETCH_TIMES = ("fetched_at", "changed_at")
# A WARC record's headers that name a fetch time, its id (derived from
# it) or its file; a header that refers to another record by its id is
# compared as the record it names.
WARC_TIMING = ("WARC-Date", "WARC-Refers-To-Date", "WARC-Record-ID", "WARC-Filename")
WARC_REFERENCES = ("WARC-Warcinfo-ID", "WARC-Concurrent-To", "WARC-Refers-To")
# A response's block holds the Date header the server stamped.
WARC_BLOCK_DIGEST = "WARC-Block-Digest"
# How a layer's fetching was spread over reduce tasks (a place step's plan,
# a group of counters per task, "00003 urls") differs with their number: one inline.
PLACEMENT_STEP = "place/"
PER_TASK_COUNTER = re.compile(r"\d{5} ")
PROGRESS = re.compile(r"\w+/[\d-]+: stage [\d.]+: \d+/\d+ tasks; \d+ s elapsed$")
# The first test that reads the crawl on the cluster waits for it (some
# 7 minutes alone on two cores, every step a spark-submit), and for the
# cluster to start, which the suite's other processes slow down.
pytestmark = pytest.mark.timeout(1800)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    cluster = start_cluster(tmp_path_factory.mktemp("spark-cluster"))
    try:
        yield cluster
    finally:
        cluster.stop()
        left = [process.pid for process in cluster.processes if group_alive(process.pid)]
        assert not left, f"process groups left after stopping the cluster: {left}"


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1) as server:
        yield server


@pytest.fixture(scope="module")
def now() -> str:
    """The run time both crawls run as of, so that the db's and the exports' run times agree."""
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def crawl_into(server, directory: Path, runner: str, now: str, *extra: str) -> int:
    """Crawl the test web into DIRECTORY/crawl, with its db in DIRECTORY/db; the driver's exit status."""
    server.reset_flaky()  # each crawl meets the flaky pages' first failure
    directory.mkdir()
    seeds, conf, _ = write_inputs(server, directory)
    return crawl(seeds, conf, directory / "crawl", DEPTH, runner, "--db", str(directory / "db"), "--now", now,
                 "--export", EXPORTS, *extra)


@pytest.fixture(scope="module")
def inline(server, now, tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("inline") / "run"
    assert crawl_into(server, directory, "inline", now) == 0
    return directory


@pytest.fixture(scope="module")
def on_cluster(cluster, server, now, tmp_path_factory):
    """The crawl on the cluster: its directory, what it said on stderr, and
    what it left in the temporary directory."""
    directory = tmp_path_factory.mktemp("on-cluster")
    temp = directory / "temp"
    temp.mkdir()
    said = io.StringIO()
    with pytest.MonkeyPatch.context() as patch, contextlib.redirect_stderr(said):
        patch.setattr(tempfile, "tempdir", str(temp))
        patch.setenv("SPARK_CONF_DIR", str(cluster.conf_dir))
        status = crawl_into(server, directory / "run", "spark", now, "--spark-master", cluster.master_url,
                            "--reducers", str(REDUCERS), "--progress-every", "5")
    assert status == 0, f"{said.getvalue()[-8000:]}\n{cluster.log_tails()}"
    return SimpleNamespace(directory=directory / "run", said=said.getvalue().splitlines(),
                           temp_left=sorted(path.name for path in temp.iterdir()))


# ---- what is compared -------------------------------------------------------


def db_files(db: Path) -> dict[str, object]:
    """A crawl db's db.json, and each of its part files (records, digests,
    links) by its path in the db, line by line in file order, each value with
    its fetch times only as set or not, and its scores rounded (test_runners).
    (Spark also leaves its _SUCCESS and .crc files, and a run its lock file,
    which hold no record.)"""
    files: dict[str, object] = {"db.json": json.loads((db / "db.json").read_text(encoding="utf-8"))}
    for path in sorted(db.rglob("part-*")):
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            key, value = line.split("\t", 1)
            lines.append((key, rounded(without_fetch_times(json.loads(value)))))
        files[str(path.relative_to(db))] = lines
    return files


def without_fetch_times(value):
    if isinstance(value, dict):
        return {key: (item is not None) if key in FETCH_TIMES else without_fetch_times(item)
                for key, item in value.items()}
    if isinstance(value, list):
        return [without_fetch_times(item) for item in value]
    return value


def warc_by_layer(directory: Path) -> dict[str, tuple[set, Counter]]:
    """Each layer's WARC records, whatever files they are in: its warcinfo
    records (one a file, alike), and how many of each other record there are,
    its references to other records replaced by what those records are."""
    files = read_warc_files(directory)
    named = {record.headers.get_header("WARC-Record-ID"): record for records in files.values() for record in records}
    layers: dict[str, tuple[set, Counter]] = {}
    for name, records in files.items():
        layer = re.search(r"-L(\d+)-", name).group(1)
        infos, others = layers.setdefault(layer, (set(), Counter()))
        for record in records:
            comparable = comparable_warc(record, named)
            if record.type == "warcinfo":
                infos.add(comparable)
            else:
                others[comparable] += 1
    return layers


def comparable_warc(record, named: dict) -> tuple:
    """A WARC record but for its times and ids; `named`: every record by its id."""
    headers = []
    for key, value in record.headers.headers:
        if key in WARC_TIMING or (key == WARC_BLOCK_DIGEST and record.http is not None and record.type != "request"):
            continue
        if key in WARC_REFERENCES:
            referred = named[value]
            value = (referred.type, referred.headers.get_header("WARC-Target-URI"), referred.payload)
        headers.append((key, value))
    http = None
    if record.http is not None:
        http = (record.http.statusline, tuple((key, value) for key, value in record.http.headers if key.lower() != "date"))
    return record.type, tuple(headers), http, record.payload


def step_counters(crawl_dir: Path) -> dict[str, dict]:
    """Each step's counters, as the driver kept them, but for how the step was spread over reduce tasks."""
    done = json.loads((crawl_dir / "crawl.json").read_text(encoding="utf-8"))["done"]
    return {step: {group: names for group, names in record["counters"].items()
                   if not all(PER_TASK_COUNTER.match(name) for name in names)}
            for step, record in done.items() if not step.startswith(PLACEMENT_STEP)}


def index_rows(directory: Path) -> list[tuple]:
    """The page index's rows but for their fetch time, their scores rounded, in one order."""
    table = ds.dataset(directory, format="parquet").to_table()
    rows = [tuple((key, rounded(value)) for key, value in row.items() if key not in FETCH_TIMES) for row in table.to_pylist()]
    return sorted(rows, key=repr)


# ---- the tests ----------------------------------------------------------------


def test_the_readme_crawls_on_its_cluster_as_the_test_does():
    assert f"--runner spark --spark-master {DOCUMENTED_MASTER} --reducers {REDUCERS}" in documented_crawl()


@pytest.mark.parametrize("master, on_this_machine", [
    ("spark://127.0.0.1:7077", True), ("spark://localhost:7077", True), ("spark://[::1]:7077", True),
    ("spark://127.0.0.1:7077,127.0.0.2:7077", True), ("spark://10.1.2.3:7077", False),
    ("spark://127.0.0.1:7077,10.1.2.3:7077", False), ("yarn", False)])
def test_only_a_standalone_master_on_loopback_gets_this_machines_python_and_disk(master, on_this_machine, monkeypatch):
    monkeypatch.setenv("SPARK_LOCAL_IP", "127.0.0.1")  # what the launcher sets for tasks on this machine
    with Launcher(RunnerSettings("spark", spark_master=master)) as launcher:
        args = launcher.args(MRJob, [], "out", None)
    assert ("--python-bin" in args) == ("--spark-tmp-dir" in args) == on_this_machine, args


def test_the_stores_equal_the_inline_crawls(on_cluster, inline):
    assert stores_of(on_cluster.directory / "crawl", DEPTH) == stores_of(inline / "crawl", DEPTH)


def test_the_crawl_db_equals_the_inline_crawls(on_cluster, inline):
    cluster_db, inline_db = db_files(on_cluster.directory / "db"), db_files(inline / "db")
    assert sorted(cluster_db) == sorted(inline_db)
    for name in inline_db:
        assert cluster_db[name] == inline_db[name], name


def test_the_exports_equal_the_inline_crawls(on_cluster, inline):
    cluster_warc, inline_warc = warc_by_layer(on_cluster.directory / "crawl" / "warc"), warc_by_layer(inline / "crawl" / "warc")
    assert sorted(cluster_warc) == sorted(inline_warc) == [str(layer) for layer in range(DEPTH)]
    for layer, (infos, records) in inline_warc.items():
        assert cluster_warc[layer] == (infos, records), f"layer {layer}"
    cluster_index, inline_index = index_rows(on_cluster.directory / "crawl" / "index"), index_rows(inline / "crawl" / "index")
    assert cluster_index == inline_index


def test_every_step_counts_what_the_inline_crawls_step_counts(on_cluster, inline):
    # mrjob reads a streaming step's counters from files in its Spark temp
    # dir; a db job run as a Spark step writes them itself (mr/job.py).
    cluster_counters, inline_counters = step_counters(on_cluster.directory / "crawl"), step_counters(inline / "crawl")
    assert sorted(cluster_counters) == sorted(inline_counters)
    for step, counters in inline_counters.items():
        assert cluster_counters[step] == counters, step


def test_every_step_ran_on_both_workers(on_cluster, cluster):
    steps = json.loads((on_cluster.directory / "crawl" / "crawl.json").read_text(encoding="utf-8"))["done"]
    apps = cluster.state()["completedapps"]
    # One application a step, each given both workers' cores, and each finished.
    assert len(apps) == len(steps), (len(apps), sorted(steps))
    assert {app["state"] for app in apps} == {"FINISHED"} and {app["cores"] for app in apps} == {2}
    workers = cluster.worker_dirs()
    assert len(workers) == 2
    for worker in workers:
        tasks = cluster.finished_tasks(worker)
        assert set(tasks) == {app["id"] for app in apps}, worker.name  # an executor of every step on every worker
        assert sum(tasks.values()) > 0, f"{worker.name}: its executors finished no task"


def test_a_spark_run_shows_progress_hides_mrjob_warnings_and_leaves_no_temp_files(on_cluster):
    said = on_cluster.said
    # While a step runs, the progress lines show Spark's finished tasks, as spark-submit logs them.
    assert any(PROGRESS.match(line) for line in said), said
    # Spark's and Hadoop's own warnings, which mrjob relays, are hidden without -v.
    assert not [line for line in said if line.startswith("mrjob")], said
    assert on_cluster.temp_left == []  # daily runs must not pile up leftovers
