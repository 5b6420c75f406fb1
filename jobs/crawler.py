"""Job 1, Crawler: fetch one layer's frontier.

Map: frontier entry -> (host key, [rank, URL, entry]); the host key is the
partitioner, so all of a host's URLs reach one reducer call on one machine
and politeness can be kept there, in the order of their ranks.  Combine:
drop duplicate URLs.  Reduce: the threaded fetcher, fed host by host,
yields one doc record per URL.
"""
from mrjob.job import MRJob

from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.frontier.generate import unique_adjacent
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.page.urls import host_key
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import error_kind


# All of a task's hosts are fetched at once, so the reduce must not run in
# waves (see mrcrawl/mr/onewave.py).
class MRCrawler(OneWaveJob, CrawlJobOptions, MRJob):
    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    SORT_VALUES = True  # a host's URLs arrive by rank, then URL, so duplicates are adjacent
    JOBCONF = {
        # A second attempt of a fetch task would hit the same hosts at once.
        "mapreduce.reduce.speculative": "false",
    }

    def mapper(self, url, entry):
        self.increment_counter("crawl", "urls in")
        yield host_key(url), [entry["rank"], url, entry]

    def combiner(self, host, ranked):
        yield from ((host, value) for value in unique_adjacent(ranked))

    def reducer_init(self):
        self.fetcher = Fetcher(self.config, self.layer, on_progress=self.report_progress)

    def reducer(self, host, ranked):
        for _, url, entry in unique_adjacent(ranked):
            self.fetcher.add(url, entry)
            yield from self.emit(self.fetcher.completed())

    def reducer_final(self):
        yield from self.emit(self.fetcher.finish())
        for name, amount in self.fetcher.stats.items():
            self.increment_counter("fetch", name, amount)

    def emit(self, docs):
        for doc in docs:
            self.increment_counter("outcome", doc["outcome"])
            kind = error_kind(doc)
            if kind:
                self.increment_counter("error", kind)
            yield doc["url"], doc

    def report_progress(self, progress):
        # Hadoop kills a task that reports nothing for mapreduce.task.timeout.
        self.set_status(" ".join(f"{key}={value}" for key, value in progress.items()))


if __name__ == "__main__":
    MRCrawler.run()
