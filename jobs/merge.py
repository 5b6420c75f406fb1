"""Job 4, Merge: one doc record per final URL across all layers.

Identity map; the reduce keeps the best record of a URL (a fetched page over
any other outcome, then the earliest layer), so the layers' part files
become one store and cross-layer duplicates disappear.  Records pass through
undecoded: only a URL with several records has any of them read.  There is
no combiner: duplicates come only from redirects, so they seldom meet in one
map task, and a combiner costs a sort of the map output.
"""
from mrjob.job import MRJob

from mrcrawl.frontier.merge import best_stored_record
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.store.protocols import UndecodedRecordProtocol


class MRMerge(OneWaveJob, MRJob):
    INPUT_PROTOCOL = UndecodedRecordProtocol
    INTERNAL_PROTOCOL = UndecodedRecordProtocol
    OUTPUT_PROTOCOL = UndecodedRecordProtocol

    def mapper(self, url, doc):
        self.increment_counter("merge", "records in")
        yield url, doc

    def reducer(self, url, docs):
        self.increment_counter("merge", "records out")
        yield url, best_stored_record(docs)


if __name__ == "__main__":
    MRMerge.run()
