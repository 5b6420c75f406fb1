"""Crawl db, step 2, Dedup (map only): which URLs fetched on this layer
repeat another URL's payload or content.

Map (one task per digest partition file of the db, read whole): take the
partition's claims from the batch (payload digests and content signatures),
sort them, and find each one's original in the partition in one pass; write
each claimant that is not the original, with what it repeats
(frontier/dedup.py).  The db is not written: DbUpdate merges the same
claims into the index, deciding the same originals.
"""
from mrcrawl.frontier.crawldb import claim_prefix, digest_partition_number, find_sorted, sorted_updates
from mrcrawl.frontier.dedup import duplicates_of, resolve
from mrcrawl.mr.job import DbFileJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import is_content_duplicate


class MRDedup(DbFileJob):
    STEP = "dedup"
    PAYLOAD_DUPLICATES = JobCounter(STEP, "payload duplicates")  # pages whose payload another URL had first
    CONTENT_DUPLICATES = JobCounter(STEP, "content duplicates")  # pages whose content another URL had first
    SUMMARY = ("{CONTENT_DUPLICATES} page(s) repeat another URL's content, "
               "{PAYLOAD_DUPLICATES} another URL's payload")

    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_raw(self, partition_path, partition_uri):
        digest_partition = digest_partition_number(partition_uri, self.partitions)
        claims = sorted_updates(self.batch_lines(claim_prefix(digest_partition)))
        with open(partition_path, "rb") as stored:
            for (_, key, claim), original in find_sorted(stored, claims):
                for url, duplicate in duplicates_of(key, resolve(original, claim), claim):
                    self.count(self.CONTENT_DUPLICATES if is_content_duplicate(duplicate) else self.PAYLOAD_DUPLICATES)
                    yield url, duplicate


if __name__ == "__main__":
    MRDedup.run()
