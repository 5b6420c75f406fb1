"""Job 5, HtmlToXml (map only): each indexable fetched page -> `url TAB <page>...</page>`."""
from mrjob.job import MRJob

from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.onewave import OneWaveJob
from mrcrawl.output.pagexml import page_to_xml
from mrcrawl.store.protocols import TextLineProtocol, Utf8JsonProtocol
from mrcrawl.store.records import FETCHED


class MRHtmlToXml(OneWaveJob, CrawlJobOptions, MRJob):
    INPUT_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = TextLineProtocol

    def mapper(self, url, doc):
        self.increment_counter("xml", "records in")
        if doc["outcome"] == FETCHED and doc["meta_index"]:
            self.increment_counter("xml", "pages")
            yield url, page_to_xml(doc, self.config.language)


if __name__ == "__main__":
    MRHtmlToXml.run()
