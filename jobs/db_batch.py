"""Crawl db, step 1, DbBatch: what a layer tells the db, one update per URL.

Map: each frontier entry -> the URL was requested on this layer; each doc
record -> how its request ended (for the final URL of a same-host redirect
too); each out record -> what the Parser judged of the page, and a sighting
of each outlink on the next layer.  The key is "<partition> <url>", so the
batch sorts by the db's partitions.  Combine and reduce: fold a URL's
updates into one (the earliest sighting, the latest fetch).
"""
from mrjob.job import MRJob

from mrcrawl.frontier.crawldb import batch_key
from mrcrawl.frontier.db_update import fold, updates_from_doc, updates_from_entry, updates_from_out
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRDbBatch(OneWaveJob, CrawlJobOptions, DbJobOptions, MRJob):
    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper(self, url, record):
        if "rank" in record:
            updates = updates_from_entry(url, record, self.layer)
        elif "outlinks" in record:
            updates = updates_from_out(record, url)
        else:
            updates = updates_from_doc(record)
        for target, update in updates:
            yield batch_key(target, self.partitions), update

    def combiner(self, key, updates):
        yield key, fold(updates)

    def reducer(self, key, updates):
        self.increment_counter("dbbatch", "urls")
        yield key, fold(updates)


if __name__ == "__main__":
    MRDbBatch.run()
