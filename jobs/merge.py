"""Job 4, Merge: one doc record per final URL across all layers.

Identity map over the layers' doc, out and duplicate stores; the reduce
keeps the best doc record of a URL (a fetched page over any other outcome,
then the earliest layer), so the layers' part files become one store and
cross-layer duplicates disappear; gives a fetched page what the Parser read
of it (the out record of its layer: its robots directives, headline,
metadata and main text), which HtmlToXml writes; and marks a page whose
content repeats another URL's with `duplicate_of` (frontier/dedup.py).
Other records pass through undecoded (frontier/merge.py).  There is no
combiner: a URL's records come from different stores, so they seldom meet
in one map task, and a combiner costs a sort of the map output.
"""
from mrcrawl.frontier.merge import merged_record
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.store.protocols import UndecodedRecordProtocol


class MRMerge(CrawlJob):
    STEP = "merge"
    RECORDS_IN = JobCounter(STEP, "records in")
    RECORDS_OUT = JobCounter(STEP, "records out")
    SUMMARY = "{RECORDS_IN} records in, {RECORDS_OUT} out"

    INPUT_PROTOCOL = UndecodedRecordProtocol
    INTERNAL_PROTOCOL = UndecodedRecordProtocol
    OUTPUT_PROTOCOL = UndecodedRecordProtocol

    def mapper(self, url, record):
        self.count(self.RECORDS_IN)
        yield url, record

    def reducer(self, url, records):
        self.count(self.RECORDS_OUT)
        yield url, merged_record(records, self.config.revisit.hub_link_density)


if __name__ == "__main__":
    MRMerge.run()
