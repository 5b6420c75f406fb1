"""What the crawl db's jobs are told: the db's partitions, the run, the batch.

Like CrawlJobOptions, a mixin that only calls methods of the MRJob it is
mixed into.  The batch's part files are file options, so that mrjob ships
them to every merge task on every runner (HDFS and S3 paths included).
"""
from __future__ import annotations

from mrcrawl.frontier.crawldb import DEFAULT_PARTITIONS


class DbJobOptions:
    """Mix into an MRJob (before MRJob) for `--db-partitions`, `--run` and `--batch-part`."""

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--db-partitions", type=int, default=DEFAULT_PARTITIONS,
                              help="how many partitions the crawl db has (its db.json says)")
        self.add_passthru_arg("--run", help="the start of the run making this update, ISO 8601 UTC")
        self.add_file_arg("--batch-part", action="append", default=[],
                          help="a part file of the batch DbBatch wrote (repeat for each)")

    @property
    def partitions(self) -> int:
        return self.options.db_partitions
