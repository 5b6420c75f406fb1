"""Job 3, Optimizer: the cycle filter that makes the next layer's frontier.

Map: every URL attempted on any layer so far (the in/ stores, and the keys
of the out/ stores) -> (url, SEEN); every outlink of this layer -> (url, NEW).
Reduce: a URL none of whose marks is SEEN enters the next frontier, once.
"""
from mrjob.job import MRJob

from mrcrawl.frontier.cycle_filter import optimizer_marks
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import UrlLineProtocol, Utf8JsonProtocol


class MROptimizer(OneWaveJob, CrawlJobOptions, MRJob):
    INPUT_PROTOCOL = UrlLineProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = UrlLineProtocol

    def mapper(self, _, line):
        yield from optimizer_marks(line, self.layer)

    def combiner(self, url, marks):
        yield url, any(marks)

    def reducer(self, url, marks):
        if not any(marks):
            self.increment_counter("optimize", "new urls")
            yield None, url


if __name__ == "__main__":
    MROptimizer.run()
