"""Crawl db, step 3, DbUpdate (map only): each partition file, merged with its
share of the batch in one sequential pass.

Map (one task per partition file, read whole): take the partition's updates
from the batch, sort them, and write the partition back in key order, with
each update applied and every untouched record copied as it was, in slices
of many lines.
- A URL partition: the URL updates, with the layer's duplicates of its URLs
  (the revisit policy, and the cycle filter's queue mark for the next layer).
  A page is a duplicate by its content, or by its payload when it has no
  content signature (frontier/dedup.py).
- A digest partition: the digest and signature claims, each one's original
  decided as the Dedup job decided it (frontier/dedup.py).
- A link partition: the link updates, each target's sources unioned with
  those it holds (frontier/links.py).
"""
from collections import Counter

from mrcrawl.frontier.crawldb import (
    RUN_COUNTS,
    URLS_ADDED,
    URLS_FETCHED,
    URLS_GONE,
    URLS_NOT_MODIFIED,
    batch_prefix,
    claim_prefix,
    digest_partition_number,
    link_partition_number,
    is_signature_key,
    merge_partition,
    partition_duplicates,
    partition_number,
    sorted_updates,
)
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update
from mrcrawl.frontier.dedup import content_duplicate, resolve
from mrcrawl.frontier.links import fold_links, link_prefix
from mrcrawl.mr.job import DbFileJob, JobCounter
from mrcrawl.store.protocols import LineChunkProtocol
from mrcrawl.store.records import FETCHED, GONE, NOT_MODIFIED


class MRDbUpdate(DbFileJob):
    STEP = "dbupdate"
    URLS = JobCounter(STEP, "urls")  # URL records written
    URLS_ADDED = JobCounter(STEP, URLS_ADDED)  # the run counts db.json keeps (crawldb.RUN_COUNTS)
    URLS_FETCHED = JobCounter(STEP, URLS_FETCHED)
    URLS_NOT_MODIFIED = JobCounter(STEP, URLS_NOT_MODIFIED)
    URLS_GONE = JobCounter(STEP, URLS_GONE)
    URLS_UPDATED = JobCounter(STEP, "urls updated")
    URLS_QUEUED = JobCounter(STEP, "urls queued")  # for the next layer, by the cycle filter
    DUPLICATES = JobCounter(STEP, "duplicates")
    DIGESTS = JobCounter(STEP, "digests")  # digest index records written: payload digests and content signatures
    DIGESTS_ADDED = JobCounter(STEP, "digests added")
    SIGNATURES_ADDED = JobCounter(STEP, "signatures added")
    LINKS = JobCounter(STEP, "links")  # link store records written: one per URL linked
    LINKS_ADDED = JobCounter(STEP, "links added")  # link records of URLs the link store held none of
    SUMMARY = ("{URLS} URLs in the db: {URLS_ADDED} added, {URLS_UPDATED} updated ({DUPLICATES} duplicates), "
               "{URLS_QUEUED} queued for the next layer; {DIGESTS} payload digests and content signatures "
               "({DIGESTS_ADDED} and {SIGNATURES_ADDED} added); {LINKS} URLs with inlinks ({LINKS_ADDED} added)")

    OUTPUT_PROTOCOL = LineChunkProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--new-url-score", type=float, default=None,
                              help="the start score of a URL new to the db, from which the URLs first seen on this "
                                   "run get provisional scores (frontier/scores.py); none without it")

    def mapper_raw(self, partition_path, partition_uri):
        digest_partition = digest_partition_number(partition_uri, self.partitions)
        link_partition = link_partition_number(partition_uri, self.partitions)
        counts = Counter()
        if link_partition is not None:
            updates = sorted_updates(self.batch_lines(link_prefix(link_partition)))
            apply, records = self._link_update(counts), self.LINKS
        elif digest_partition is None:
            partition = partition_number(partition_uri)
            updates = sorted_updates(self.batch_lines(batch_prefix(partition)))
            apply, records = self._url_update(partition, counts), self.URLS
        else:
            updates = sorted_updates(self.batch_lines(claim_prefix(digest_partition)))
            apply, records = self._digest_claim(counts), self.DIGESTS
        with open(partition_path, "rb") as partition:
            for chunk in merge_partition(partition, updates, apply):
                counts[records] += chunk.count(b"\n") + 1
                yield None, chunk
        # Counted once per task: a counter update per line would cost a write each.
        for counter, count in counts.items():
            self.count(counter, count)

    def _url_update(self, partition: int, counts: Counter):
        """apply(record, url, update) for a URL partition: the revisit policy and the cycle filter."""
        duplicates = partition_duplicates(self.duplicate_lines(), partition, self.partitions)
        policy = RevisitPolicy.from_config(self.config.revisit, self.config.announced_max_age_days)

        def apply(record, url, update):
            duplicate = content_duplicate(duplicates.get(url, ()), update.get("page"))
            if duplicate is not None:
                update = {**update, "duplicate": duplicate}
            updated = apply_update(record, url, update, self.options.run, self.layer, policy,
                                   self.options.new_url_score)
            counts[self.URLS_ADDED if record is None else self.URLS_UPDATED] += 1
            counts[self.URLS_QUEUED] += updated["queued"] is not None and updated["queued"] != (record or {}).get("queued")
            counts[self.DUPLICATES] += updated["duplicate_of"] is not None and "duplicate" in update
            fetch = update.get("fetch")
            if fetch and fetch["outcome"] in (FETCHED, NOT_MODIFIED):
                counts[self.URLS_FETCHED if fetch["outcome"] == FETCHED else self.URLS_NOT_MODIFIED] += 1
            counts[self.URLS_GONE] += updated["status"] == GONE and (record or {}).get("status") != GONE
            return updated
        return apply

    def _digest_claim(self, counts: Counter):
        """apply(original, key, claim) for a digest partition: the digest's (signature's) original after the claim."""
        def apply(original, key, claim):
            resolved = resolve(original, claim)
            added = self.SIGNATURES_ADDED if is_signature_key(key) else self.DIGESTS_ADDED
            counts[added] += original is None and resolved is not None
            return resolved
        return apply

    def _link_update(self, counts: Counter):
        """apply(record, target, update) for a link partition: the target's sources after the update."""
        def apply(record, target, update):
            counts[self.LINKS_ADDED] += record is None
            return fold_links((record, update))
        return apply

    @classmethod
    def run_counts(cls, counters: dict) -> dict[str, int]:
        """What db.json keeps of the update for its run (crawldb.RUN_COUNTS)."""
        own = counters.get(cls.STEP, {})
        return {name: own.get(name, 0) for name in RUN_COUNTS}


if __name__ == "__main__":
    MRDbUpdate.run()
