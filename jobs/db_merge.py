"""Crawl db, step 2, DbMerge (map only): each partition file, merged with its
share of the batch in one sequential pass.

Map (one task per partition file, read whole): take the partition's updates
from the batch, sort them, and write the partition back in key order, with
each update applied (the revisit policy, and the cycle filter's queue mark
for the next layer) and every untouched record copied as it was, in slices
of many lines.
"""
from mrjob.job import MRJob

from mrcrawl.frontier.crawldb import merge_partition, partition_number, partition_updates
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import LineChunkProtocol


class MRDbMerge(OneWaveJob, CrawlJobOptions, DbJobOptions, MRJob):
    OUTPUT_PROTOCOL = LineChunkProtocol

    def mapper_raw(self, partition_path, partition_uri):
        updates = partition_updates(self.batch_lines(), partition_number(partition_uri))
        policy = RevisitPolicy.from_config(self.config.revisit)
        added = queued = 0

        def apply(record, url, update):
            nonlocal added, queued
            added += record is None
            updated = apply_update(record, url, update, self.options.run, self.layer, policy)
            queued += updated["queued"] is not None and updated["queued"] != (record or {}).get("queued")
            return updated

        urls = 0
        with open(partition_path, "rb") as partition:
            for chunk in merge_partition(partition, updates, apply):
                urls += chunk.count(b"\n") + 1
                yield None, chunk
        # Counted once per task: a counter update per line would cost a write each.
        self.increment_counter("dbupdate", "urls", urls)
        self.increment_counter("dbupdate", "urls added", added)
        self.increment_counter("dbupdate", "urls updated", len(updates) - added)
        self.increment_counter("dbupdate", "urls queued", queued)


if __name__ == "__main__":
    MRDbMerge.run()
