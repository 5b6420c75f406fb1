"""Job 2, Parser (map only): each doc record -> its out record: its outlinks
within the crawl's scope, what the revisit policy reads of the page, and
what the index needs of it.

A fetched page yields its links (type 0), each with its anchor text in
`anchors`, unless it says nofollow, its change signature and whether it is
a hub, in `announcers` the feeds it names and its host's robots.txt
sitemaps, and in `page` its robots directives, headline, metadata and main
text (the one parse of the page in a crawl: page/outlinks.py; no text for a
page that repeats the content of another of the task's pages, which gets
no XML: frontier/dedup.py's ContentSeen); a feed or sitemap yields the
entries the crawl follows (type 2, announced, page/entries.py), each with
what it said of it in `announced`; a redirect yields its target (type 1);
every other record yields an empty list.  A link, or a target, that one of
the config's trap guards catches is kept apart, in the out record's
`trapped`, with the guard (page/traps.py).
"""
from mrcrawl.frontier.dedup import ContentSeen
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.page.entries import EntryRules
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.robots_directives import agent_token
from mrcrawl.page.traps import TrapGuards
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import ANNOUNCED, is_fetched_page


class MRParser(CrawlJob):
    STEP = "parse"
    RECORDS_IN = JobCounter(STEP, "records in")
    OUTLINKS = JobCounter(STEP, "outlinks")  # outlinks in the crawl's scope, to follow
    TRAPPED = JobCounter(STEP, "links trapped")  # links in scope a trap guard caught
    ENTRIES = JobCounter(STEP, "entries followed")  # feed and sitemap entries among the outlinks
    ENTRIES_LEFT = JobCounter(STEP, "entries left")  # entries out of scope, outside a sitemap's directory or nested too deep
    ANNOUNCERS = JobCounter(STEP, "feeds and sitemaps named")  # by pages and robots.txt
    PAGES_PARSED = JobCounter(STEP, "pages parsed")  # fetched HTML pages: each parsed here, and only here
    TEXTS_READ = JobCounter(STEP, "texts read")  # pages whose main text was read, for the XML
    SUMMARY = ("{RECORDS_IN} records in, {PAGES_PARSED} pages parsed ({TEXTS_READ} texts read), "
               "{OUTLINKS} outlinks in scope, "
               "{TRAPPED} links trapped, "
               "{ENTRIES} feed and sitemap entries followed, {ENTRIES_LEFT} left, {ANNOUNCERS} feeds and sitemaps named")

    INPUT_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_init(self):
        self.scope = UrlFilter(self.config.url_allow, self.config.url_deny)
        self.guards = TrapGuards.of(self.config)
        self.rules = EntryRules.of(self.config)
        self.agent = agent_token(self.config.user_agent)
        self.content_seen = ContentSeen()

    def mapper(self, url, doc):
        out = out_record(doc, self.scope, self.config.revisit.hub_link_density, self.guards, self.rules, self.agent,
                         self.content_seen.needs_text)
        self.count(self.RECORDS_IN)
        if is_fetched_page(doc):
            self.count(self.PAGES_PARSED)
            self.count(self.TEXTS_READ, int("content" in (out["page"] or {})))
        self.count(self.OUTLINKS, len(out["outlinks"]))
        self.count(self.TRAPPED, len(out["trapped"]))
        self.count(self.ANNOUNCERS, len(out["announcers"]))
        if out["type"] == ANNOUNCED:
            self.count(self.ENTRIES, len(out["outlinks"]))
            self.count(self.ENTRIES_LEFT, len(doc["entries"]) - len(out["outlinks"]) - len(out["trapped"]))
        yield url, out


if __name__ == "__main__":
    MRParser.run()
