"""Layer 0's frontier, Generator (map only): the run's seeds and the db's due URLs.

Map (one task per db partition file, read whole): the partition's seeds,
and every URL of the partition whose revisit is due at the run's start,
each with a frontier entry (its rank, and the validators and signature of
its last fetch).  See mrcrawl/frontier/generate.py.
"""
from mrjob.job import MRJob

from mrcrawl.frontier.crawldb import partition_number, partition_of
from mrcrawl.frontier.generate import layer_zero
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.mr.wholefile import WholeFileJob
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRGenerator(OneWaveJob, WholeFileJob, CrawlJobOptions, DbJobOptions, MRJob):
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_raw(self, partition_path, partition_uri):
        partition = partition_number(partition_uri)
        seeds = [url for url in self.seed_urls() if partition_of(url, self.partitions) == partition]
        with open(partition_path, "rb") as stored:
            for url, entry in layer_zero(stored, seeds, self.options.run):
                self.increment_counter("generate", "seeds" if entry["seed"] else "due urls")
                yield url, entry


if __name__ == "__main__":
    MRGenerator.run()
