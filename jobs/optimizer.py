"""Job 3, Optimizer (map only): the cycle filter's next frontier, read from the crawl db.

The cycle filter itself ran in DbMerge: a URL linked on this layer that the
db had never fetched, on this run or any other, was queued there for the
next layer.  Map (one task per db partition file, read whole): every URL
queued for the next layer, with its frontier entry.
"""
from mrjob.job import MRJob

from mrcrawl.frontier.generate import queued_for
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.mr.wholefile import WholeFileJob
from mrcrawl.store.protocols import Utf8JsonProtocol


class MROptimizer(OneWaveJob, WholeFileJob, CrawlJobOptions, DbJobOptions, MRJob):
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_raw(self, partition_path, partition_uri):
        with open(partition_path, "rb") as stored:
            for url, entry in queued_for(stored, self.options.run, self.layer + 1):
                self.increment_counter("optimize", "new urls")
                yield url, entry


if __name__ == "__main__":
    MROptimizer.run()
