"""Job 5, HtmlToXml (map only): each indexable page of the run's increment -> `url TAB <page>...</page>`.

The increment is what the index has not seen: pages fetched for the first
time, pages whose change signature differs from their last fetch's
(mrcrawl/page/change.py), and pages that were a duplicate at their last
fetch and are none now.  A refetched page that did not change, that the
server said was not modified, or whose content repeats another URL's (Merge
marked it `duplicate_of`, frontier/dedup.py), gets no XML.

The page is not parsed here: its headline, metadata, main text and change
signature are those the Parser read, which Merge put in the record
(output/pagexml.py).
"""
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.output.pagexml import indexable, needs_parse, page_to_xml
from mrcrawl.store.protocols import TextLineProtocol, Utf8JsonProtocol


class MRHtmlToXml(CrawlJob):
    STEP = "xml"
    RECORDS_IN = JobCounter(STEP, "records in")
    DUPLICATES = JobCounter(STEP, "duplicates")
    UNCHANGED = JobCounter(STEP, "unchanged")
    PAGES = JobCounter(STEP, "pages")
    # Pages whose record holds no reading by the Parser (merged by an older
    # version, or text the Parser could not read): parsed again here.
    PARSED_AGAIN = JobCounter(STEP, "pages parsed again")
    SUMMARY = "{RECORDS_IN} records in, {PAGES} XML pages, {PARSED_AGAIN} pages parsed again"

    INPUT_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = TextLineProtocol

    def mapper(self, url, doc):
        self.count(self.RECORDS_IN)
        if not indexable(doc):
            return
        if doc.get("duplicate_of"):  # records written before duplicates were found have no such field
            self.count(self.DUPLICATES)
            return
        if needs_parse(doc):
            self.count(self.PARSED_AGAIN)
        page = page_to_xml(doc, self.config.language)
        if page is None:
            self.count(self.UNCHANGED)
            return
        self.count(self.PAGES)
        yield url, page


if __name__ == "__main__":
    MRHtmlToXml.run()
