"""Job 2, Parser (map only): each doc record -> its out record: its outlinks
within the crawl's scope, and what the revisit policy reads of the page.

A fetched page yields its links (type 0), each with its anchor text in
`anchors`, unless it says nofollow, its change signature and whether it is a hub; a redirect yields its target (type 1);
every other record yields an empty list.  A link, or a target, that one of
the config's trap guards catches is kept apart, in the out record's
`trapped`, with the guard (page/traps.py).
"""
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.traps import TrapGuards
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRParser(CrawlJob):
    STEP = "parse"
    RECORDS_IN = JobCounter(STEP, "records in")
    OUTLINKS = JobCounter(STEP, "outlinks")  # outlinks in the crawl's scope, to follow
    TRAPPED = JobCounter(STEP, "links trapped")  # links in scope a trap guard caught
    SUMMARY = "{RECORDS_IN} records in, {OUTLINKS} outlinks in scope, {TRAPPED} links trapped"

    INPUT_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_init(self):
        self.scope = UrlFilter(self.config.url_allow, self.config.url_deny)
        self.guards = TrapGuards.of(self.config)

    def mapper(self, url, doc):
        out = out_record(doc, self.scope, self.config.revisit.hub_link_density, self.guards)
        self.count(self.RECORDS_IN)
        self.count(self.OUTLINKS, len(out["outlinks"]))
        self.count(self.TRAPPED, len(out["trapped"]))
        yield url, out


if __name__ == "__main__":
    MRParser.run()
