"""What the crawl db's jobs are told: the db's partitions, the run, the batch, the duplicates, the seeds.

Like CrawlJobOptions, a mixin that only calls methods of the MRJob it is
mixed into.  The batch's and the seeds' part files are file options, so
that mrjob ships them to every task on every runner (HDFS and S3 paths
included).
"""
from __future__ import annotations

from typing import Iterator

from mrcrawl.frontier.crawldb import DEFAULT_PARTITIONS, lines_starting


class DbJobOptions:
    """Mix into an MRJob (before MRJob) for `--db-partitions`, `--run`, `--batch-part`,
    `--batch-sorted`, `--duplicates-part` and `--seeds-part`."""

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--db-partitions", type=int, default=DEFAULT_PARTITIONS,
                              help="how many partitions the crawl db has (its db.json says)")
        self.add_passthru_arg("--run", help="the start of the run making this update, ISO 8601 UTC")
        self.add_file_arg("--batch-part", action="append", default=[],
                          help="a part file of the batch DbBatch wrote (repeat for each)")
        self.add_passthru_arg("--batch-sorted", action="store_true",
                              help="each batch part file is sorted by key, as a reduce task writes it on every "
                                   "runner but Spark: a task then reads only its partition's lines")
        self.add_file_arg("--duplicates-part", action="append", default=[],
                          help="a part file of the duplicates the Duplicates job wrote (repeat for each)")
        self.add_file_arg("--seeds-part", action="append", default=[],
                          help="a part file of the run's seeds, one URL per line (repeat for each)")

    @property
    def partitions(self) -> int:
        return self.options.db_partitions

    def batch_lines(self, prefix: bytes) -> Iterator[bytes]:
        """The lines of the batch that start with `prefix` (one partition's), undecoded."""
        for path in self.options.batch_part:
            yield from lines_starting(path, prefix, self.options.batch_sorted)

    def duplicate_lines(self) -> Iterator[bytes]:
        """Every line of the layer's duplicate store, undecoded."""
        yield from self._lines_of(self.options.duplicates_part)

    def seed_urls(self) -> Iterator[str]:
        for line in self._lines_of(self.options.seeds_part):
            url = line.decode("utf-8").strip()
            if url:
                yield url

    @staticmethod
    def _lines_of(paths: list[str]) -> Iterator[bytes]:
        for path in paths:
            with open(path, "rb") as lines:
                yield from lines
