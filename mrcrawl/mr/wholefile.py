"""Jobs whose map task reads one whole input file (mapper_raw): the crawl db's.

Each of the db's jobs (Generator, Duplicates, DbMerge, Optimizer) reads a
partition file whole, in one sequential pass, and takes the partition's
number from the file's name.  mrjob gives a mapper a whole file through an
input manifest, on the inline, local, Hadoop and EMR runners; its Spark
runner has no input manifests.  On Spark such a job runs as a Spark step of
its own (`--spark-whole-files`, which the driver passes there): one Spark
partition per input file, in input order, where the job's own mapper_raw
reads a local copy of the file; its output lines are written in the same
order, so that output part N is what input file N became, as on the other
runners.  mrjob reads no counters of a Spark step: the job's counters are
summed in a Spark accumulator and written, as JSON, to the file that
`--spark-counters` names, on the machine of the Spark driver (the crawl
driver's, unless Spark's deploy mode is cluster).
"""
from __future__ import annotations

import contextlib
import json
import os
import tempfile
from typing import Iterator

from mrjob.step import SparkStep

from mrcrawl.store.cluster_store import is_cluster_path, mrjob_filesystem


class WholeFileJob:
    """Mix into an MRJob (before MRJob) that defines mapper_raw, for its Spark form."""

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--spark-whole-files", action="store_true",
                              help="run as a Spark step: one Spark partition per input file (for mrjob's Spark runner)")
        self.add_passthru_arg("--spark-counters", help="with --spark-whole-files: write the counters here, as JSON")

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
