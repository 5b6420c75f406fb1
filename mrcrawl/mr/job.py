"""The two kinds of job of a crawl, as base classes: CrawlJob and DbFileJob.

A job class says how it is run by which of them it extends, and the
launcher (launcher.py) reads what they declare; a job that extends neither
is a plain MRJob and is run the plain way.

* CrawlJob: a job of a crawl.  Its tasks are told the crawl's context: the
  checked config (a file option, so mrjob ships the file to every task on
  every runner: a local path means nothing on a Hadoop node), the layer,
  the crawl db's partitions, the run's start and the run's clock (its
  offset from the wall clock, records.RunClock: the Crawler stamps its
  records' times by it).  On the inline and local runners it runs in one
  wave of tasks (onewave.py).  A job class names its step kind (`STEP`:
  the word its step, its counter group and its logic module share), owns
  its counters, and says in one line what they mean (`summary`).
* DbFileJob: a CrawlJob whose map task reads one whole db partition file
  (mapper_raw), given by name, and takes the partition's number from the
  file's name.  It may also be shipped the part files of the layer's batch,
  duplicates and seeds (file options, so that mrjob ships them to every
  task on every runner, HDFS and S3 paths included).  mrjob gives a mapper
  a whole file through an input manifest on the inline, local, Hadoop and
  EMR runners; its Spark runner has none, so there such a job runs as a
  Spark step of its own (`--spark-whole-files`, which the launcher passes):
  one Spark partition per input file, in input order, where the job's own
  mapper_raw reads a local copy of the file; its output lines are written
  in the same order, so that output part N is what input file N became, as
  on the other runners.  mrjob reads no counters of a Spark step: they are
  summed in a Spark accumulator and written, as JSON, to the file that
  `--spark-counters` names, on the machine of the Spark driver (the crawl
  driver's, unless Spark's deploy mode is cluster).
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections import Counter
from functools import cached_property
from typing import Iterator, NamedTuple

from mrjob.job import MRJob
from mrjob.step import SparkStep

from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.crawldb import DEFAULT_PARTITIONS, lines_starting
from mrcrawl.mr.onewave import one_wave_runner
from mrcrawl.store.cluster_store import is_cluster_path, mrjob_filesystem
from mrcrawl.store.records import RunClock


class JobCounter(NamedTuple):
    """One counter of a job: Hadoop's (group, name)."""

    group: str
    name: str

    def of(self, counters: dict) -> int:
        """Its amount in a job's counters (group -> name -> amount)."""
        return counters.get(self.group, {}).get(self.name, 0)


class CounterGroup(NamedTuple):
    """A group of counters whose names are values (an outcome, a kind of error)."""

    group: str

    def of(self, counters: dict) -> Counter:
        return Counter(counters.get(self.group, {}))


class TaskCounters(NamedTuple):
    """A group of counters per reduce task: `<task> <what>` (`00003 urls`),
    the task's number zero-padded so that the names sort as the tasks do."""

    group: str

    def name(self, task: int, what: str) -> str:
        return f"{task:05d} {what}"

    def of(self, counters: dict) -> dict[int, dict[str, int]]:
        """Task -> what -> amount, from a job's counters."""
        tasks: dict[int, dict[str, int]] = {}
        for name, amount in counters.get(self.group, {}).items():
            task, _, what = name.partition(" ")
            tasks.setdefault(int(task), {})[what] = amount
        return tasks


class CrawlJob(MRJob):
    """A job of a crawl: `self.config`, `self.layer`, `self.partitions`,
    `self.options.run` and `self.clock`; run in one wave of tasks on the inline and local runners."""

    # What the launcher reads: this job takes the crawl's context options.
    TAKES_CRAWL_CONTEXT = True
    READS_WHOLE_FILES = False
    STEP = ""  # the step kind: each job sets its own

    def _runner_class(self):
        return one_wave_runner(super()._runner_class())

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--crawl-config", help="the crawl's config, as JSON (written by the driver)")
        self.add_passthru_arg("--layer", type=int, default=0, help="the layer this job works on")
        self.add_passthru_arg("--db-partitions", type=int, default=DEFAULT_PARTITIONS,
                              help="how many partitions the crawl db has (its db.json says)")
        self.add_passthru_arg("--run", help="the start of the run this job works for, ISO 8601 UTC")
        self.add_passthru_arg("--clock-offset", type=float, default=0.0,
                              help="seconds from the wall clock to the run's clock, which stamps the records' times")

    @cached_property
    def config(self) -> CrawlConfig:
        with open(self.options.crawl_config, encoding="utf-8") as config_file:
            return CrawlConfig.from_json(config_file.read())

    @property
    def layer(self) -> int:
        return self.options.layer

    @property
    def clock(self) -> RunClock:
        return RunClock(self.options.clock_offset)

    @property
    def partitions(self) -> int:
        return self.options.db_partitions

    def count(self, counter: JobCounter, amount: int = 1) -> None:
        self.increment_counter(counter.group, counter.name, amount)

    def count_for_task(self, counters: TaskCounters, task: int, what: str, amount: int) -> None:
        self.increment_counter(counters.group, counters.name(task, what), amount)

    # ---- what the driver says of the job's counters -----------------------------

    # One line of what a finished step did: the names of the job's JobCounter
    # attributes in braces, each replaced by its amount.
    SUMMARY = ""

    @classmethod
    def summary(cls, counters: dict, seconds: float) -> str:
        """One line of what a finished step did, from its counters."""
        if not cls.SUMMARY:
            return cls.progress(counters)[1]
        return cls.SUMMARY.format(**{name: counter.of(counters) for name, counter in cls.counters().items()})

    @classmethod
    def counters(cls) -> dict[str, JobCounter]:
        """The job's counters, by the name of the attribute that declares each."""
        return {name: getattr(cls, name) for name in dir(cls) if isinstance(getattr(cls, name), JobCounter)}

    @classmethod
    def progress(cls, counters: dict) -> tuple[int | None, str]:
        """While the step runs: the records done out of its input, when the
        job counts them in a way that a total can be set against (None
        otherwise), and its counters so far in words."""
        own = counters.get(cls.STEP, {})
        return None, ", ".join(f"{name} {amount}" for name, amount in sorted(own.items()))


class DbFileJob(CrawlJob):
    """A CrawlJob whose map task reads one whole db partition file (mapper_raw)."""

    READS_WHOLE_FILES = True

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--batch-part", action="append", default=[],
                          help="a part file of the batch DbBatch wrote (repeat for each)")
        self.add_passthru_arg("--batch-sorted", action="store_true",
                              help="each batch part file is sorted by key, as a reduce task writes it on every "
                                   "runner but Spark: a task then reads only its partition's lines")
        self.add_file_arg("--duplicates-part", action="append", default=[],
                          help="a part file of the duplicates the Dedup job wrote (repeat for each)")
        self.add_file_arg("--seeds-part", action="append", default=[],
                          help="a part file of the run's seeds, one URL per line (repeat for each)")
        self.add_passthru_arg("--spark-whole-files", action="store_true",
                              help="run as a Spark step: one Spark partition per input file (for mrjob's Spark runner)")
        self.add_passthru_arg("--spark-counters", help="with --spark-whole-files: write the counters here, as JSON")

    # ---- the files a task is shipped -----------------------------------------

    def batch_lines(self, prefix: bytes) -> Iterator[bytes]:
        """The lines of the batch that start with `prefix` (one partition's), undecoded."""
        for path in self.options.batch_part:
            yield from lines_starting(path, prefix, self.options.batch_sorted)

    def duplicate_lines(self) -> Iterator[bytes]:
        """Every line of the layer's duplicate store, undecoded."""
        yield from lines_of(self.options.duplicates_part)

    def seed_urls(self) -> Iterator[str]:
        for line in lines_of(self.options.seeds_part):
            url = line.decode("utf-8").strip()
            if url:
                yield url

    # ---- the Spark form --------------------------------------------------------

    def steps(self):
        if self.options.spark_whole_files:
            return [SparkStep(spark=self.spark_over_whole_files)]
        return super().steps()

    def spark_over_whole_files(self, input_path: str, output_path: str) -> None:
        from pyspark import AccumulatorParam, SparkContext  # only where Spark runs the job

        class CounterSum(AccumulatorParam):
            def zero(self, value):
                return {}

            def addInPlace(self, total, more):
                for group, counters in more.items():
                    for name, amount in counters.items():
                        total.setdefault(group, {})
                        total[group][name] = total[group].get(name, 0) + amount
                return total

        spark = SparkContext.getOrCreate()
        counted = spark.accumulator({}, CounterSum())

        def lines(numbered_uri):
            # In the executor's copy of the job: its counters go to the accumulator.
            self.increment_counter = lambda group, name, amount=1: counted.add({group: {name: amount}})
            yield from self.lines_of_whole_file(numbered_uri)

        uris = input_path.split(",")  # mrjob joins a step's inputs with commas
        files = spark.parallelize(list(enumerate(uris)), len(uris))
        files.flatMap(lines).saveAsTextFile(output_path)
        # In Spark's cluster deploy mode this runs on another machine than the
        # crawl driver, where the file's directory does not exist: no counters then.
        counters_path = self.options.spark_counters
        if counters_path and os.path.isdir(os.path.dirname(counters_path)):
            with open(counters_path, "w", encoding="utf-8") as written:
                json.dump(counted.value, written)

    def lines_of_whole_file(self, numbered_uri: tuple[int, str]) -> Iterator[str]:
        """What mapper_raw makes of one input file, as the lines of the job's output protocol."""
        _, uri = numbered_uri
        protocol = self.output_protocol()
        with local_copy(uri) as path:
            for key, value in self.mapper_raw(path, uri):
                yield protocol.write(key, value).decode("utf-8")


def lines_of(paths: list[str]) -> Iterator[bytes]:
    for path in paths:
        with open(path, "rb") as lines:
            yield from lines


@contextlib.contextmanager
def local_copy(uri: str) -> Iterator[str]:
    """A local path holding the file at `uri`: the file itself when it is on
    local disk, else a copy in a temporary directory, removed afterwards."""
    if not is_cluster_path(uri) or uri.startswith("file://"):
        yield uri.removeprefix("file://")
        return
    with tempfile.TemporaryDirectory(prefix="mrcrawl-whole-file-") as scratch:
        path = os.path.join(scratch, uri.rstrip("/").rsplit("/", 1)[-1])
        with open(path, "wb") as copy:
            for chunk in mrjob_filesystem().cat(uri):
                copy.write(chunk)
        yield path
