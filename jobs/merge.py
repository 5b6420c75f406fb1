"""Job 4, Merge: one doc record per final URL across all layers.

Identity map; combine and reduce keep the best record of a URL (a fetched
page over any other outcome, then the earliest layer), so the layers' part
files become one store and cross-layer duplicates disappear.
"""
from mrjob.job import MRJob

from mrcrawl.frontier import best_record
from mrcrawl.onewave import OneWaveJob
from mrcrawl.protocols import Utf8JsonProtocol


class MRMerge(OneWaveJob, MRJob):
    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper(self, url, doc):
        self.increment_counter("merge", "records in")
        yield url, doc

    def combiner(self, url, docs):
        yield url, best_record(docs)

    def reducer(self, url, docs):
        self.increment_counter("merge", "records out")
        yield url, best_record(docs)


if __name__ == "__main__":
    MRMerge.run()
