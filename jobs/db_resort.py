"""The crawl db's update done Apache Nutch's way: the benchmark's baseline.

Not a step of the crawl.  `python -m mrcrawl.bench --scenarios db-update`
runs it beside DbBatch + Dedup + DbUpdate on the same db and the same
layer, to measure what sorting only the batch saves.  Nutch's updatedb is
one job over the old CrawlDb and the new segments, and so is this one:

Map: every record of the old db, URL records keyed by their URL and the
digest index's by their digest; and every update and claim a layer's doc
and out records make, exactly as DbBatch's mapper makes them, keyed by URL
or digest instead of by partition.  The shuffle sorts all of them, the whole
db included, at every update.  Reduce: a URL's updates folded into one and
applied to its record (fold + apply_update, as DbUpdate applies them); a
digest's claims folded and its original decided (fold_claims + resolve); a
record nothing touches is written as it was.  The output is the db in key
order, one sorted file per reduce task, as Nutch's CrawlDb is.

It finds no duplicates: those need the digests' originals before the URLs'
records are written, a second job (Nutch's dedup sorts the CrawlDb again by
signature).  The benchmark's layer has none, so both ways leave the same
records; the baseline is the cheaper for it.
"""
from functools import cached_property

from jobs.db_batch import MRDbBatch
from mrcrawl.frontier.crawldb import is_claim_key, url_of_batch_key
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update, fold
from mrcrawl.frontier.dedup import fold_claims, resolve
from mrcrawl.frontier.links import is_link_key
from mrcrawl.mr.job import CrawlJob
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import DIGEST_FIELDS

# What a db record carries and a doc, out or frontier record never does.
DB_ONLY_FIELD = "first_run"


class MRDbResort(CrawlJob):
    STEP = "dbresort"
    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    # No combiner, as Nutch's updatedb has none: on the local runner one
    # would also sort every map task's share of the db before the shuffle.

    def mapper(self, key, record):
        if DB_ONLY_FIELD in record:
            yield key, {"stored": record}
            return
        if set(record) == set(DIGEST_FIELDS):  # a digest's original, from the db's digest index
            yield key, {"original": record}
            return
        # DbBatch's own mapper, so both ways of updating read a layer alike.
        for batch_key, update in MRDbBatch.mapper(self, key, record):
            if is_link_key(batch_key):
                continue  # no link store: Nutch inverts links in a job of its own (invertlinks)
            target = url_of_batch_key(batch_key)
            yield target, {"claim": update} if is_claim_key(batch_key) else update

    def reducer(self, key, values):
        record, updates, original, claims = None, [], None, []
        for value in values:
            if "stored" in value:
                record = value["stored"]
            elif "original" in value:
                original = value["original"]
            elif "claim" in value:
                claims.append(value["claim"])
            else:
                updates.append(value)
        if original is not None or claims:
            if claims:
                original = resolve(original, fold_claims(claims))
            if original is not None:
                yield key, original
            return
        if updates:
            record = apply_update(record, key, fold(updates), self.options.run, self.layer, self.policy)
        if record is not None:
            yield key, record

    @cached_property
    def policy(self) -> RevisitPolicy:
        return RevisitPolicy.from_config(self.config.revisit, self.config.announced_max_age_days)


if __name__ == "__main__":
    MRDbResort.run()
