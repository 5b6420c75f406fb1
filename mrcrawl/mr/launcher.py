"""The one place that turns a step into an mrjob run: the runner's flags, the
package zip, the task options, the Spark and local details, and the
counters back.

A job class says how it is run by what it declares (mr/job.py): a CrawlJob
is told the crawl's context (`TAKES_CRAWL_CONTEXT`), a DbFileJob reads whole
files given by name (`READS_WHOLE_FILES`); a job that declares neither is
run as a plain MRJob over its inputs.
"""
from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
import shutil
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager

from mrjob.job import MRJob
from mrjob.parse import is_uri

from mrcrawl.mr.progress import TaskReports, task_reports

RUNNERS = ("inline", "local", "spark", "hadoop", "emr")
# Runners whose tasks import the package from a zip (local tasks are forked
# from this process, which has imported it: see onewave.py).
SHIPPING_RUNNERS = ("spark", "hadoop", "emr")
# mrjob's runners that work on local disk only, reading inputs as globs.
LOCAL_DISK_RUNNERS = ("inline", "local")

# What the launcher is given to watch a running job: a function that
# returns its tasks' reports so far; it returns the context manager that
# shows them while the job runs.
Watch = Callable[[Callable[[], TaskReports]], ContextManager]


@dataclass(frozen=True)
class RunnerSettings:
    """Which mrjob runner runs a crawl's jobs, and how."""

    runner: str = "inline"
    mrjob_conf: str | None = None  # an mrjob.conf for the runner: clusters, EMR
    spark_master: str | None = None  # for spark: else the mrjob.conf's, else local[*]
    reducers: int | None = None  # reduce tasks per job, where the runner honours it (spark, hadoop, emr)

    @property
    def master(self) -> str | None:
        """The Spark master the jobs are given, if any."""
        return self.spark_master or (None if self.mrjob_conf else "local[*]")

    @property
    def tasks_on_this_machine(self) -> bool:
        """Whether the tasks are processes of this machine, with this interpreter
        at hand (inline runs them inside the driver's own process): a local
        master's, or those of a standalone master on loopback, whose workers
        can only be processes of this machine."""
        if self.runner == "local":
            return True
        return self.runner == "spark" and ((self.master or "").startswith("local") or self.standalone_on_loopback)

    @property
    def standalone_on_loopback(self) -> bool:
        """Whether the master is a Spark standalone master on a loopback address."""
        if not (self.runner == "spark" and (self.master or "").startswith("spark://")):
            return False
        hosts = [address.rsplit(":", 1)[0] for address in self.master.removeprefix("spark://").split(",")]
        return all(is_loopback_host(host) for host in hosts)

    @property
    def reduce_tasks(self) -> int:
        """How many reduce tasks a layer's fetching is planned on (frontier/placement.py):
        --reducers where the runner honours it; else one inline (its tasks run one
        after another), a core's worth on the local runner and a local Spark master,
        and one on a cluster, whose size the driver cannot know."""
        if self.runner == "inline":
            return 1
        if self.reducers:
            return self.reducers
        if self.runner == "local":
            return os.cpu_count() or 1
        master = self.master or ""
        if self.runner == "spark" and master.startswith("local"):
            threads = master.removeprefix("local").strip("[]")
            return int(threads) if threads.isdigit() else os.cpu_count() or 1
        return 1

    @property
    def reads_local_disk_only(self) -> bool:
        return self.runner in LOCAL_DISK_RUNNERS

    @property
    def sorts_reduce_output(self) -> bool:
        """Whether a reduce task's output file is sorted by key: on every runner
        but Spark, whose shuffle groups keys without sorting them."""
        return self.runner != "spark"


@dataclass(frozen=True)
class JobContext:
    """What every CrawlJob of a crawl is told."""

    config_path: str  # the checked config, as JSON
    layer: int
    db_partitions: int
    run: str  # the run's start, ISO 8601 UTC
    clock_offset: float  # seconds from the wall clock to the run's clock (records.RunClock)

    def args(self) -> list[str]:
        return ["--crawl-config", self.config_path, "--layer", str(self.layer),
                "--db-partitions", str(self.db_partitions), "--run", self.run,
                "--clock-offset", repr(self.clock_offset)]


def package_root() -> str:
    """The directory that holds the mrcrawl package."""
    return str(Path(__file__).resolve().parents[2])


def package_zip(directory: str) -> str:
    """Zip the mrcrawl package so that tasks on any runner can import it."""
    package = Path(__file__).resolve().parents[1]
    archive = os.path.join(directory, "mrcrawl.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(package.rglob("*.py")):
            zipped.write(path, path.relative_to(package.parent).as_posix())
    return archive


def local_task_args() -> list[str]:
    """What the local runner is told so that its tasks are forks of this process.

    The tasks have the package and mrjob already.  Shipping either (mrjob
    zips itself for every job unless told not to) would wrap every task in
    mrjob's setup script, and so make it a new interpreter again.  Should an
    mrjob.conf add setup commands anyway, those tasks find the package where
    this process did, with this interpreter.
    """
    return ["--no-bootstrap-mrjob", "--cmdenv", f"PYTHONPATH={package_root()}", "--python-bin", sys.executable]


class Launcher:
    """Runs jobs with one runner's settings; close() removes what it made."""

    def __init__(self, settings: RunnerSettings):
        self.settings = settings
        self._scratch = contextlib.ExitStack()  # the package zip, the Spark steps' counter files
        self._runner_args = self._make_runner_args()

    def close(self) -> None:
        self._scratch.close()

    def __enter__(self) -> "Launcher":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def _make_runner_args(self) -> list[str]:
        settings = self.settings
        args = ["-r", settings.runner]
        if settings.mrjob_conf:
            args += ["--conf-path", settings.mrjob_conf]
        if settings.runner == "local":
            args += local_task_args()
        elif settings.runner in SHIPPING_RUNNERS:
            # Tasks run in other processes (or machines) and import the
            # package from this zip, not from wherever the driver found it.
            args += ["--py-files", package_zip(self._scratch_dir("mrcrawl-run-"))]
        if settings.tasks_on_this_machine and settings.runner != "local":
            args += ["--python-bin", sys.executable]
        if settings.runner == "spark":
            if settings.master:
                args += ["--spark-master", settings.master]
            if settings.tasks_on_this_machine:
                # Spark otherwise binds its driver to the host's first
                # non-loopback address; a local master needs no network.
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            if settings.standalone_on_loopback:
                # mrjob's default temp dir for a master that is not local
                # is on HDFS; this master's workers share this disk.
                args += ["--spark-tmp-dir", self._scratch_dir("mrcrawl-spark-")]
                LOOPBACK_TMP_DIR_WARNING.install()
        return args

    def _scratch_dir(self, prefix: str) -> str:
        return self._scratch.enter_context(tempfile.TemporaryDirectory(prefix=prefix))

    def args(self, job_class: type, inputs: list, output, context: JobContext | None, options=()) -> list[str]:
        """The command line of one job for this runner.  `inputs` are stores
        (directories) or part files, or for a job that reads whole files, the files."""
        whole_files = getattr(job_class, "READS_WHOLE_FILES", False)
        args = [*self._runner_args, "--output-dir", str(output)]
        if self.settings.reducers and job_class.reducer is not MRJob.reducer and self.settings.runner in SHIPPING_RUNNERS:
            args += ["--jobconf", f"mapreduce.job.reduces={self.settings.reducers}"]
        args += options  # after the runner's reduce tasks: a step's own (the Crawler's plan) win
        if whole_files and self.settings.runner == "spark":
            # mrjob's Spark runner has no input manifests, and reads no counters of a Spark step (mr/job.py).
            args += ["--spark-whole-files", "--spark-counters",
                     os.path.join(self._scratch_dir("mrcrawl-counters-"), "counters.json")]
        if getattr(job_class, "TAKES_CRAWL_CONTEXT", False):
            args += context.args()
        if whole_files:
            # The db's jobs read whole partition files, a task each, and are
            # given them by name: a task takes its partition from the name.
            args += [str(part) for part in inputs]
        elif self.settings.reads_local_disk_only:
            # These runners, given a directory, read every file in it
            # (.crc and _SUCCESS too): name the part files.  A part file
            # given itself (a db partition file, read line by line) is kept.
            args += [str(place) if is_part_file(place) else f"{place}/part-*" for place in inputs]
        else:
            # Spark and Hadoop read directories and skip their marker files,
            # and Spark cannot expand a local glob.
            args += [str(directory) for directory in inputs]
        return args

    def run(self, job_class: type, inputs: list, output, context: JobContext | None, options=(),
            watch: Watch | None = None) -> dict | None:
        """Run one job; its counters (group -> name -> amount), or None when the
        runner reported none (a Spark step whose driver ran on another machine)."""
        job = job_class(args=self.args(job_class, inputs, output, context, options))
        with job.make_runner() as runner, contextlib.ExitStack() as made_here:
            if job.options.runner == "spark" and not is_uri(runner._spark_tmp_dir):
                # mrjob 0.7.4 writes counters there on a local master
                # without creating it first, and leaves it behind: one
                # directory per job in the temp directory, every day.
                os.makedirs(runner._spark_tmp_dir, exist_ok=True)
                made_here.callback(shutil.rmtree, runner._spark_tmp_dir, ignore_errors=True)
            with contextlib.ExitStack() as watching:
                if watch is not None:
                    watching.enter_context(watch(watching.enter_context(task_reports(runner))))
                runner.run()
            if getattr(job.options, "spark_whole_files", False):
                return spark_step_counters(job.options.spark_counters)
            return merge_counters(runner.counters())


def is_loopback_host(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class _LoopbackTmpDirWarning(logging.Filter):
    """Drops mrjob's warning that the executors of a master that is not
    local may not reach a spark_tmp_dir on local disk: on a loopback
    master they are processes of this machine, and reach it."""

    def filter(self, record: logging.LogRecord) -> bool:
        said = record.getMessage()
        if not said.startswith("Warning: executors on Spark master "):
            return True
        master = said.removeprefix("Warning: executors on Spark master ").split(" ", 1)[0]
        return not RunnerSettings("spark", spark_master=master).standalone_on_loopback

    def install(self) -> None:
        logging.getLogger("mrjob.spark.runner").addFilter(self)  # once: a filter is added only if absent


LOOPBACK_TMP_DIR_WARNING = _LoopbackTmpDirWarning()


def is_part_file(place) -> bool:
    """Whether a job's input is a part file (a store's directory is never named so)."""
    return str(place).rstrip("/").rsplit("/", 1)[-1].startswith("part-")


def spark_step_counters(path: str) -> dict | None:
    """The counters a job run as a Spark step wrote, or None when there are none
    here (Spark's cluster deploy mode runs the step's driver on another machine)."""
    try:
        with open(path, encoding="utf-8") as written:
            return json.load(written)
    except FileNotFoundError:
        return None


def merge_counters(per_step: list[dict]) -> dict:
    merged: dict = {}
    for step in per_step:
        for group, counters in step.items():
            for name, amount in counters.items():
                merged.setdefault(group, {})
                merged[group][name] = merged[group].get(name, 0) + amount
    return merged
