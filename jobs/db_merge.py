"""Crawl db, step 2, DbMerge (map only): each partition file, merged with its
share of the batch in one sequential pass.

Map (one task per partition file, read whole): take the partition's updates
from the batch, sort them, and write the partition back in key order, with
each update applied and every untouched record copied as it was.
"""
from pathlib import PurePosixPath

from mrjob.job import MRJob

from mrcrawl.frontier.crawldb import merge_partition, partition_updates
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import UndecodedRecordProtocol


class MRDbMerge(OneWaveJob, DbJobOptions, MRJob):
    OUTPUT_PROTOCOL = UndecodedRecordProtocol

    def mapper_raw(self, partition_path, partition_uri):
        partition = int(PurePosixPath(partition_uri).name.removeprefix("part-"))
        updates = partition_updates(self._batch_lines(), partition)
        policy = RevisitPolicy()

        added = 0

        def apply(record, url, update):
            nonlocal added
            added += record is None
            return apply_update(record, url, update, self.options.run, policy)

        urls = 0
        with open(partition_path, "rb") as stored:
            for line in merge_partition(stored, updates, apply):
                urls += 1
                yield tuple(line.split(b"\t", 1))
        # Counted once per task: a counter update per line would cost a write each.
        self.increment_counter("db", "urls", urls)
        self.increment_counter("db", "urls added", added)
        self.increment_counter("db", "urls updated", len(updates) - added)

    def _batch_lines(self):
        for part in self.options.batch_part:
            with open(part, "rb") as lines:
                yield from lines


if __name__ == "__main__":
    MRDbMerge.run()
