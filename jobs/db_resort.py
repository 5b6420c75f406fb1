"""The crawl db's update done Apache Nutch's way: the benchmark's baseline.

Not a step of the crawl.  `python -m mrcrawl.bench --scenarios db-update`
runs it beside DbBatch + DbMerge on the same db and the same layer, to
measure what sorting only the batch saves.  Nutch's updatedb is one job over
the old CrawlDb and the new segments, and so is this one:

Map: every record of the old db, keyed by its URL; and every update a
layer's doc and out records make, exactly as DbBatch's mapper makes them,
keyed by URL instead of by partition.  The shuffle sorts all of them, the
whole db included, at every update.  Reduce: a URL's updates folded into one
and applied to its record (fold + apply_update, as DbMerge applies them); a
record no update touches is written as it was.  The output is the db in URL
order, one sorted file per reduce task, as Nutch's CrawlDb is.
"""
from functools import cached_property

from mrjob.job import MRJob

from jobs.db_batch import MRDbBatch
from mrcrawl.frontier.crawldb import is_claim_key, url_of_batch_key
from mrcrawl.frontier.db_update import RevisitPolicy, apply_update, fold
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import Utf8JsonProtocol

# What a db record carries and a doc, out or frontier record never does.
DB_ONLY_FIELD = "first_run"


class MRDbResort(OneWaveJob, CrawlJobOptions, DbJobOptions, MRJob):
    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    # No combiner, as Nutch's updatedb has none: on the local runner one
    # would also sort every map task's share of the db before the shuffle.

    def mapper(self, url, record):
        if DB_ONLY_FIELD in record:
            yield url, {"stored": record}
            return
        # DbBatch's own mapper, so both ways of updating read a layer alike.
        # Its digest claims are dropped: Nutch's updatedb finds no duplicates.
        for key, update in MRDbBatch.mapper(self, url, record):
            if not is_claim_key(key):
                yield url_of_batch_key(key), update

    def reducer(self, url, values):
        record, updates = None, []
        for value in values:
            if "stored" in value:
                record = value["stored"]
            else:
                updates.append(value)
        if updates:
            record = apply_update(record, url, fold(updates), self.options.run, self.layer, self.policy)
        if record is not None:
            yield url, record

    @cached_property
    def policy(self) -> RevisitPolicy:
        return RevisitPolicy.from_config(self.config.revisit)


if __name__ == "__main__":
    MRDbResort.run()
