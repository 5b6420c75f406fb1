"""Crawl db, step 3, DbMerge (map only): each partition file, merged with its
share of the batch in one sequential pass.

Map (one task per partition file, read whole): take the partition's updates
from the batch, sort them, and write the partition back in key order, with
each update applied and every untouched record copied as it was, in slices
of many lines.
- A URL partition: the URL updates, with the layer's duplicates of its URLs
  (the revisit policy, and the cycle filter's queue mark for the next layer).
- A digest partition: the digest claims, each digest's original decided as
  the Duplicates job decided it (frontier/dedup.py).
"""
from collections import Counter

from mrjob.job import MRJob

from mrcrawl.frontier.crawldb import (
    batch_prefix,
    claim_prefix,
    digest_partition_number,
    merge_partition,
    partition_duplicates,
    partition_number,
    sorted_updates,
)
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update
from mrcrawl.frontier.dedup import resolve
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.mr.wholefile import WholeFileJob
from mrcrawl.store.protocols import LineChunkProtocol
from mrcrawl.store.records import FETCHED, GONE, NOT_MODIFIED


class MRDbMerge(OneWaveJob, WholeFileJob, CrawlJobOptions, DbJobOptions, MRJob):
    OUTPUT_PROTOCOL = LineChunkProtocol

    def mapper_raw(self, partition_path, partition_uri):
        digest_partition = digest_partition_number(partition_uri, self.partitions)
        counts = Counter()
        if digest_partition is None:
            partition = partition_number(partition_uri)
            updates = sorted_updates(self.batch_lines(batch_prefix(partition)))
            apply, records = self._url_update(partition, counts), "urls"
        else:
            updates = sorted_updates(self.batch_lines(claim_prefix(digest_partition)))
            apply, records = self._digest_claim(counts), "digests"
        with open(partition_path, "rb") as partition:
            for chunk in merge_partition(partition, updates, apply):
                counts[records] += chunk.count(b"\n") + 1
                yield None, chunk
        # Counted once per task: a counter update per line would cost a write each.
        for name, count in counts.items():
            self.increment_counter("dbupdate", name, count)

    def _url_update(self, partition: int, counts: Counter):
        """apply(record, url, update) for a URL partition: the revisit policy and the cycle filter."""
        duplicates = partition_duplicates(self.duplicate_lines(), partition, self.partitions)
        policy = RevisitPolicy.from_config(self.config.revisit)

        def apply(record, url, update):
            if url in duplicates:
                update = {**update, "duplicate": duplicates[url]}
            updated = apply_update(record, url, update, self.options.run, self.layer, policy)
            counts["urls added" if record is None else "urls updated"] += 1
            counts["urls queued"] += updated["queued"] is not None and updated["queued"] != (record or {}).get("queued")
            counts["duplicates"] += updated["duplicate_of"] is not None and "duplicate" in update
            fetch = update.get("fetch")
            if fetch and fetch["outcome"] in (FETCHED, NOT_MODIFIED):
                counts["urls fetched" if fetch["outcome"] == FETCHED else "urls not modified"] += 1
            counts["urls gone"] += updated["status"] == GONE and (record or {}).get("status") != GONE
            return updated
        return apply

    @staticmethod
    def _digest_claim(counts: Counter):
        """apply(original, digest, claim) for a digest partition: the digest's original after the claim."""
        def apply(original, digest, claim):
            resolved = resolve(original, claim)
            counts["digests added"] += original is None and resolved is not None
            return resolved
        return apply


if __name__ == "__main__":
    MRDbMerge.run()
