"""The feeds scenario: our feed and sitemap parser against the libraries, for
correctness and speed.

The readers, each given a document's bytes and its URL:
- `ours`: mrcrawl.page.announce.read_announcement, what the crawler records;
- `feedparser` (BSD-2-Clause), `fastfeedparser` (MIT) and `feedparser-rs`
  (MIT or Apache-2.0, a Rust parser with feedparser's API), if installed
  (`pip install -e '.[bench]'`): feed parsers, none of which reads a sitemap;
- `lxml-plain`: sitemaps read with lxml and nothing more (each `<loc>`,
  `<lastmod>` and the news fields), the least a sitemap parser does.  No
  maintained sitemap library qualifies: ultimate-sitemap-parser is GPL,
  which an Apache-2.0 project cannot depend on, and trafilatura's sitemap
  module fetches sitemaps itself and keeps only the `<loc>` URLs.

A library's answer is taken as the crawler would have to take it: its link
resolved against the document URL and made canonical (page/urls.py), its
title read as HTML (tags stripped, entities decoded, whitespace collapsed),
its dates in UTC to the second.  An entry's date is its publication date,
else its modification date, as the crawler judges an entry's age.

Correctness, on documents with a known answer:
- `feeds cases`: built here (cases()): RSS 2.0, RSS 1.0, Atom with xml:base
  and relative links, entities and markup in titles, RFC 822 and ISO dates
  with zones, a news sitemap, a plain sitemap with date-only lastmod, a gzip
  sitemap and a sitemap index.  An entry is compared with the expected one
  at its position.
- `feeds real`: feedparser's own test suite (`--real-feeds DIR`, a clone of
  https://github.com/kurtmckee/feedparser).  Each of its test feeds states
  the expected value in its header comment (`Expect: ... entries[0]['link']
  == '...'`); the link, title and date expectations are checked, the
  others (content, authors, ...) are not what the crawler reads.  Its
  `sanitize` tests are left out: they test HTML sanitizing, which the
  crawler does not do.

Speed: entries per second on a sitemap of 50,000 entries, RSS 2.0 and Atom
feeds of 10,000 entries and a news sitemap of 1,000 (Google's limit), the
best of `repeat` parses each, all in this one process, one after the other;
each reader's speed is also given as a ratio to ours.
"""
from __future__ import annotations

import ast
import calendar
import gzip
import html
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

from mrcrawl.bench.extraction import available
from mrcrawl.bench.scenarios import row
from mrcrawl.page.urls import resolve_link

SITEMAPS_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"


@dataclass(frozen=True)
class FeedSizes:
    sitemap_entries: int = 50_000  # sitemaps.org's limit per file
    feed_entries: int = 10_000
    news_entries: int = 1_000  # Google's limit for a news sitemap
    repeat: int = 3


FULL_FEEDS = FeedSizes()
QUICK_FEEDS = FeedSizes(sitemap_entries=2_000, feed_entries=500, news_entries=200, repeat=1)


@dataclass(frozen=True)
class Item:
    """One entry as a reader gave it, made comparable (see the docstring)."""

    url: str | None
    published: str | None  # YYYY-MM-DDTHH:MM:SSZ
    modified: str | None
    title: str | None

    @property
    def date(self) -> str | None:
        return self.published or self.modified


# --------------------------------------------------------------------------
# Making answers comparable

_TAG = re.compile(r"<[^>]*>")
_SPACE = re.compile(r"\s+")


def collapse(text: str | None) -> str | None:
    if text is None:
        return None
    return _SPACE.sub(" ", text).strip() or None


def html_text(text: str | None) -> str | None:
    """A title given as HTML, as plain text."""
    return collapse(html.unescape(_TAG.sub("", text))) if text is not None else None


def second(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def iso_second(text: str | None) -> str | None:
    """An ISO 8601 text (a date alone is midnight UTC) to the second in UTC, or None."""
    if not text:
        return None
    try:
        return second(datetime.fromisoformat(text.strip().replace("Z", "+00:00")))
    except ValueError:
        return None


def struct_second(parsed) -> str | None:
    """A time.struct_time in UTC (feedparser's *_parsed) to the second."""
    if not parsed:
        return None
    return second(datetime.fromtimestamp(calendar.timegm(tuple(parsed)[:6] + (0, 0, 0)), timezone.utc))


def absolute(link: str | None, document_url: str) -> str | None:
    return resolve_link(link.strip(), document_url) if link and link.strip() else None


# --------------------------------------------------------------------------
# The readers


def _ours(body: bytes, url: str) -> list[Item]:
    from mrcrawl.page.announce import read_announcement

    announcement = read_announcement(body, url)
    return [Item(entry.url, iso_second(entry.published), iso_second(entry.modified), collapse(entry.title))
            for entry in announcement.entries]


def _feedparser(body: bytes, url: str) -> list[Item]:
    import feedparser

    parsed = feedparser.parse(body, response_headers={"content-location": url})
    # dict.get: FeedParserDict.get would give the publication date for a missing update date, with a warning
    return [Item(absolute(entry.get("link"), url), struct_second(dict.get(entry, "published_parsed")),
                 struct_second(dict.get(entry, "updated_parsed")), html_text(entry.get("title")))
            for entry in parsed.entries]


def _fastfeedparser(body: bytes, url: str) -> list[Item]:
    import fastfeedparser

    try:
        parsed = fastfeedparser.parse(body, include_content=False, include_tags=False, include_media=False,
                                      include_enclosures=False)
    except Exception:  # it raises on what it cannot read (a sitemap, broken XML): read nothing
        return []
    return [Item(absolute(entry.get("link"), url), iso_second(entry.get("published")),
                 iso_second(entry.get("updated")), html_text(entry.get("title")))
            for entry in parsed.get("entries", [])]


def _feedparser_rs(body: bytes, url: str) -> list[Item]:
    import feedparser_rs

    try:
        parsed = feedparser_rs.parse(body)
    except Exception:
        return []
    return [Item(absolute(entry.link, url), struct_second(entry.published_parsed),
                 struct_second(entry.updated_parsed), html_text(entry.title))
            for entry in parsed.entries]


def _lxml_plain(body: bytes, url: str) -> list[Item]:
    from lxml import etree

    if body[:2] == b"\x1f\x8b":
        body = gzip.decompress(body)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=True)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return []
    if root.tag not in (f"{{{SITEMAPS_NS}}}urlset", f"{{{SITEMAPS_NS}}}sitemapindex"):
        return []
    items = []
    for element in root:
        loc = element.findtext(f"{{{SITEMAPS_NS}}}loc")
        news = element.find(f"{{{NEWS_NS}}}news")
        published = news.findtext(f"{{{NEWS_NS}}}publication_date") if news is not None else None
        title = news.findtext(f"{{{NEWS_NS}}}title") if news is not None else None
        items.append(Item(absolute(loc, url), iso_second(published),
                          iso_second(element.findtext(f"{{{SITEMAPS_NS}}}lastmod")), collapse(title)))
    return items


@dataclass(frozen=True)
class Reader:
    name: str
    module: str  # what must import for it to run
    read: Callable[[bytes, str], list[Item]]
    note: str


OURS = "ours"
READERS = (
    Reader(OURS, "mrcrawl.page.announce", _ours, "mrcrawl.page.announce.read_announcement(body, url)"),
    Reader("feedparser", "feedparser", _feedparser, "feedparser.parse(body), the document URL as its base"),
    Reader("fastfeedparser", "fastfeedparser", _fastfeedparser, "fastfeedparser.parse(body), content left out"),
    Reader("feedparser-rs", "feedparser_rs", _feedparser_rs, "feedparser_rs.parse(body)"),
    Reader("lxml-plain", "lxml", _lxml_plain, "lxml.etree.fromstring, each <loc>, <lastmod> and news field"),
)


def available_readers() -> tuple[list[Reader], list[str]]:
    """The readers that can run, and the names of those that cannot."""
    ready = [reader for reader in READERS if available(reader)]
    return ready, [reader.name for reader in READERS if reader not in ready]


# --------------------------------------------------------------------------
# Documents with a known answer, built here


@dataclass(frozen=True)
class Case:
    name: str
    url: str
    body: bytes
    expected: tuple[Item, ...]


def _rss2() -> Case:
    url = "http://news.example/feeds/rss.xml"
    body = """<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel><title>News</title><link>http://news.example/</link><language>en</language>
<item><title>Tom &amp; Jerry&#8217;s caf&#xE9;</title><link>http://news.example/2026/03/01/tom.html</link>
<pubDate>Sun, 01 Mar 2026 10:00:00 +0200</pubDate></item>
<item><title><![CDATA[Rates  rise
 again]]></title><link>/2026/03/01/rates.html</link>
<pubDate>Sun, 01 Mar 2026 09:30:00 GMT</pubDate></item>
<item><title>Storm &lt;b&gt;warning&lt;/b&gt;</title><link> http://news.example/2026/02/28/storm.html </link>
<pubDate>Sat, 28 Feb 2026 23:15:00 EST</pubDate></item>
<item><title>No date</title><link>http://news.example/2026/02/27/undated.html</link></item>
</channel></rss>
""".encode()
    return Case("rss2", url, body, (
        Item("http://news.example/2026/03/01/tom.html", "2026-03-01T08:00:00Z", None, "Tom & Jerry\u2019s caf\u00e9"),
        Item("http://news.example/2026/03/01/rates.html", "2026-03-01T09:30:00Z", None, "Rates rise again"),
        Item("http://news.example/2026/02/28/storm.html", "2026-03-01T04:15:00Z", None, "Storm warning"),
        Item("http://news.example/2026/02/27/undated.html", None, None, "No date"),
    ))


def _rss1() -> Case:
    url = "http://news.example/feeds/rss1.rdf"
    body = """<?xml version="1.0" encoding="utf-8"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel rdf:about="http://news.example/"><title>News</title><link>http://news.example/</link></channel>
<item rdf:about="http://news.example/2026/03/01/budget.html"><title>Budget: &#8220;cuts&#8221; ahead</title>
<link>http://news.example/2026/03/01/budget.html</link><dc:date>2026-03-01T07:45:00+01:00</dc:date></item>
<item rdf:about="http://news.example/2026/03/01/match.html"><title>Match report</title>
<link>http://news.example/2026/03/01/match.html</link><dc:date>2026-03-01</dc:date></item>
</rdf:RDF>
""".encode()
    return Case("rss1", url, body, (
        Item("http://news.example/2026/03/01/budget.html", "2026-03-01T06:45:00Z", None, "Budget: \u201ccuts\u201d ahead"),
        Item("http://news.example/2026/03/01/match.html", "2026-03-01T00:00:00Z", None, "Match report"),
    ))


def _atom() -> Case:
    url = "http://news.example/feeds/atom.xml"
    body = f"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="{ATOM_NS}" xml:base="http://news.example/world/" xml:lang="en">
<title>World</title><id>urn:world</id><updated>2026-03-01T12:00:00Z</updated>
<entry><title type="html">&lt;em&gt;Summit&lt;/em&gt; opens &amp;amp; closes</title>
<link rel="alternate" type="text/html" href="2026/03/01/summit.html"/><id>urn:1</id>
<published>2026-03-01T11:00:00+05:30</published><updated>2026-03-01T12:00:00Z</updated></entry>
<entry xml:base="http://other.example/"><title>Elsewhere</title><link href="/a/b.html"/><id>urn:2</id>
<updated>2026-02-28T20:00:00-08:00</updated></entry>
<entry><title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Rain <b>and</b> wind</div></title>
<link rel="alternate" href="http://news.example/2026/03/01/rain.html"/><id>urn:3</id>
<published>2026-03-01T06:00:00.250Z</published></entry>
</feed>
""".encode()
    return Case("atom", url, body, (
        Item("http://news.example/world/2026/03/01/summit.html", "2026-03-01T05:30:00Z", "2026-03-01T12:00:00Z",
             "Summit opens & closes"),
        Item("http://other.example/a/b.html", None, "2026-03-01T04:00:00Z", "Elsewhere"),
        Item("http://news.example/2026/03/01/rain.html", "2026-03-01T06:00:00Z", None, "Rain and wind"),
    ))


def _news_sitemap() -> Case:
    url = "http://news.example/sitemaps/news.xml"
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="{SITEMAPS_NS}" xmlns:news="{NEWS_NS}">
<url><loc>http://news.example/2026/03/01/vote.html</loc>
<news:news><news:publication><news:name>News</news:name><news:language>en</news:language></news:publication>
<news:publication_date>2026-03-01T08:00:00+01:00</news:publication_date>
<news:title>Vote &amp; count</news:title></news:news></url>
<url><loc>http://news.example/2026/03/01/train.html</loc><lastmod>2026-03-01T09:00:00Z</lastmod>
<news:news><news:publication><news:name>News</news:name><news:language>en</news:language></news:publication>
<news:publication_date>2026-03-01</news:publication_date><news:title>Trains late</news:title></news:news></url>
</urlset>
""".encode()
    return Case("news sitemap", url, body, (
        Item("http://news.example/2026/03/01/vote.html", "2026-03-01T07:00:00Z", None, "Vote & count"),
        Item("http://news.example/2026/03/01/train.html", "2026-03-01T00:00:00Z", "2026-03-01T09:00:00Z",
             "Trains late"),
    ))


def _sitemap_body(entries: list[tuple[str, str | None]]) -> bytes:
    urls = "".join(f"<url><loc>{loc}</loc>" + (f"<lastmod>{lastmod}</lastmod>" if lastmod else "") + "</url>\n"
                   for loc, lastmod in entries)
    return f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAPS_NS}">\n{urls}</urlset>\n'.encode()


_PLAIN = [("http://news.example/2026/01/05/old.html", "2026-01-05"),
          ("http://news.example/about.html?a=1&amp;b=2", "2025-12-31T23:00:00-02:00"),
          ("http://news.example/contact.html", None)]
_PLAIN_EXPECTED = (Item("http://news.example/2026/01/05/old.html", None, "2026-01-05T00:00:00Z", None),
                   Item("http://news.example/about.html?a=1&b=2", None, "2026-01-01T01:00:00Z", None),
                   Item("http://news.example/contact.html", None, None, None))


def _sitemap() -> Case:
    return Case("sitemap", "http://news.example/sitemaps/all.xml", _sitemap_body(_PLAIN), _PLAIN_EXPECTED)


def _gzip_sitemap() -> Case:
    return Case("gzip sitemap", "http://news.example/sitemaps/all.xml.gz", gzip.compress(_sitemap_body(_PLAIN)),
                _PLAIN_EXPECTED)


def _sitemap_index() -> Case:
    body = f"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="{SITEMAPS_NS}">
<sitemap><loc>http://news.example/sitemaps/news.xml</loc><lastmod>2026-03-01T10:00:00+00:00</lastmod></sitemap>
<sitemap><loc>http://news.example/sitemaps/all.xml.gz</loc></sitemap>
</sitemapindex>
""".encode()
    return Case("sitemap index", "http://news.example/sitemap.xml", body, (
        Item("http://news.example/sitemaps/news.xml", None, "2026-03-01T10:00:00Z", None),
        Item("http://news.example/sitemaps/all.xml.gz", None, None, None),
    ))


def cases() -> list[Case]:
    return [_rss2(), _rss1(), _atom(), _news_sitemap(), _sitemap(), _gzip_sitemap(), _sitemap_index()]


# --------------------------------------------------------------------------
# feedparser's test suite


# The fields compared, by the key path an expectation names: link, title or date.
_CHECKED = {("link",): "link", ("links", 0, "href"): "link", ("title",): "title",
            ("title_detail", "value"): "title", ("published_parsed",): "date", ("updated_parsed",): "date"}
_EXPECT = re.compile(r"Expect:\s*(.*?)\s*-->", re.DOTALL)
_HEADER = re.compile(r"^Header:\s+([^:]+):(.*)$", re.MULTILINE)
SUITE_URL = "http://127.0.0.1:8097/"  # where feedparser's own harness serves its test files
SUITE_SKIPPED = ("sanitize",)


@dataclass(frozen=True)
class Check:
    entry: int
    field: str  # link, title or date
    expected: str | None


@dataclass(frozen=True)
class SuiteFeed:
    name: str
    url: str
    body: bytes
    checks: tuple[Check, ...]


def _key_path(node) -> tuple[int, tuple] | None:
    """(entry, key path) of `entries[i][k]...`, else None."""
    keys = []
    while isinstance(node, ast.Subscript):
        if not isinstance(node.slice, ast.Constant):
            return None
        keys.append(node.slice.value)
        node = node.value
    if not (isinstance(node, ast.Name) and node.id == "entries" and keys and isinstance(keys[-1], int)):
        return None
    keys.reverse()
    return keys[0], tuple(keys[1:])


def checks_of(expectation: str, document_url: str) -> list[Check]:
    """The link, title and date checks an `Expect:` line makes of the entries."""
    try:
        tree = ast.parse(expectation, mode="eval")
    except SyntaxError:
        return []
    # links[0] is the entry's link unless the expectation says it is another kind (a licence, an enclosure)
    other_rel = re.search(r"\['rel'\] == '(?!alternate')", expectation) is not None
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Compare) and all(isinstance(op, ast.Eq) for op in node.ops)):
            continue
        operands = [node.left, *node.comparators]
        constants = []
        for operand in operands:
            try:
                constants.append(ast.literal_eval(operand))
            except ValueError:
                pass
        if len(constants) != 1:
            continue
        for operand in operands:
            path = _key_path(operand)
            if path is None or path[1] not in _CHECKED or (path[1][0] == "links" and other_rel):
                continue
            what = _CHECKED[path[1]]
            value = constants[0]
            if what == "link":
                value = absolute(value, document_url) if isinstance(value, str) else None
            elif what == "title":
                value = html_text(value) if isinstance(value, str) else None
            else:
                value = struct_second(value) if isinstance(value, tuple) else None
            found.append(Check(path[0], what, value))
    return found


def suite_tests(root: Path) -> Path | None:
    """The directory of feedparser's test feeds in `root` (a clone, or its tests/), or None."""
    for tests in (root / "tests", root):
        if (tests / "wellformed").is_dir():
            return tests
    return None


def suite_feeds(root: Path) -> list[SuiteFeed]:
    """feedparser's test feeds that state an expected link, title or date.
    `root` is a clone of feedparser (its tests/ is read) or its tests/."""
    tests = suite_tests(root)
    if tests is None:
        raise ValueError(f"{root} holds no tests/wellformed/: not a clone of feedparser")
    feeds = []
    for path in sorted(tests.rglob("*.xml")):
        relative = path.relative_to(tests)
        if any(part in SUITE_SKIPPED for part in relative.parts):
            continue
        body = path.read_bytes()
        text = body.decode("utf-8", errors="ignore")
        expect = _EXPECT.search(text)
        if expect is None:
            continue
        url = f"{SUITE_URL}tests/{relative.as_posix()}"
        headers = {name.strip().lower(): value.strip() for name, value in _HEADER.findall(text)}
        if "content-location" in headers:
            url = absolute(headers["content-location"], url) or url
        linked = linked_entries(body)
        checks = [check for check in checks_of(expect.group(1), url) if check.entry in linked]
        if checks:
            feeds.append(SuiteFeed(relative.as_posix(), url, body, tuple(checks)))
    return feeds


def linked_entries(body: bytes) -> set[int]:
    """The positions of the entries that name a link.  Most of the suite's
    feeds test one field of an entry that has nothing else; an entry without
    a link is of no use to a crawler, and our parser leaves it out, so only
    the checks on linked entries are counted."""
    from lxml import etree

    parser = etree.XMLParser(recover=True, resolve_entities=False, no_network=True, load_dtd=False)
    try:
        root = etree.fromstring(body, parser)
    except etree.XMLSyntaxError:
        return set()
    if root is None:
        return set()
    entries = [element for element in root.iter() if _local_name(element) in ("item", "entry")]
    return {index for index, entry in enumerate(entries)
            if any(_local_name(child) == "link" and (child.get("href") or (child.text or "").strip())
                   for child in entry)}


def _local_name(element) -> str | None:
    """The tag without its namespace, or None for a comment (recovery keeps undeclared prefixes)."""
    return element.tag.rpartition("}")[2].rpartition(":")[2] if isinstance(element.tag, str) else None


# --------------------------------------------------------------------------
# Scoring


@dataclass
class Score:
    documents: int = 0
    documents_read: int = 0  # documents the reader found at least one entry in
    entries: int = 0  # entries expected
    entries_found: int = 0
    links: int = 0  # checks of each field, and how many came out right
    links_right: int = 0
    dates: int = 0
    dates_right: int = 0
    titles: int = 0
    titles_right: int = 0
    failed: list[str] = field(default_factory=list)  # documents with a wrong or missing answer

    def check(self, what: str, right: bool) -> None:
        setattr(self, what, getattr(self, what) + 1)
        setattr(self, f"{what}_right", getattr(self, f"{what}_right") + int(right))

    def figures(self) -> dict:
        return {key: value for key, value in vars(self).items() if key != "failed"}


def _read(reader: Reader, body: bytes, url: str) -> list[Item]:
    try:
        return reader.read(body, url)
    except Exception:  # a reader that raises has read nothing; ours must never raise, which the tests hold
        if reader.name == OURS:
            raise
        return []


def score_cases(reader: Reader, documents: list[Case]) -> Score:
    score = Score()
    for case in documents:
        found = _read(reader, case.body, case.url)
        score.documents += 1
        score.documents_read += bool(found)
        score.entries += len(case.expected)
        score.entries_found += len(found)
        wrong = False
        for index, expected in enumerate(case.expected):
            got = found[index] if index < len(found) else None
            checks = [("links", got is not None and got.url == expected.url)]
            if expected.date is not None:
                checks.append(("dates", got is not None and got.date == expected.date))
            if expected.title is not None:
                checks.append(("titles", got is not None and got.title == expected.title))
            for what, right in checks:
                score.check(what, right)
                wrong = wrong or not right
        if wrong:
            score.failed.append(case.name)
    return score


def score_suite(reader: Reader, feeds: list[SuiteFeed]) -> Score:
    score = Score()
    for feed in feeds:
        found = _read(reader, feed.body, feed.url)
        score.documents += 1
        score.documents_read += bool(found)
        score.entries_found += len(found)
        wrong = False
        for check in feed.checks:
            got = found[check.entry] if check.entry < len(found) else None
            if check.field == "link":
                right = got is not None and got.url == check.expected
            elif check.field == "title":
                right = got is not None and got.title == check.expected
            else:  # feedparser maps some dates to published and some to updated: either will do
                right = got is not None and check.expected in (got.published, got.modified)
            score.check(f"{check.field}s", right)
            wrong = wrong or not right
        if wrong:
            score.failed.append(feed.name)
    return score


# --------------------------------------------------------------------------
# Speed: large documents


NEWS_DAY = datetime(2026, 3, 1, tzinfo=timezone.utc)


def minutes_back(entries: int) -> list[datetime]:
    """The large documents' dates: one entry a minute, back from NEWS_DAY."""
    return [NEWS_DAY - timedelta(minutes=index) for index in range(entries)]


def large_sitemap(entries: int) -> Case:
    """A plain sitemap of `entries` articles with lastmod, one a minute back from NEWS_DAY."""
    moments = minutes_back(entries)
    rows = [(f"http://news.example/{moment:%Y/%m/%d}/article-{index}.html", moment.isoformat())
            for index, moment in enumerate(moments)]
    expected = tuple(Item(loc, None, second(moment), None) for (loc, _), moment in zip(rows, moments))
    return Case(f"sitemap, {entries:,} entries", "http://news.example/sitemap-articles.xml", _sitemap_body(rows),
                expected)


def large_news_sitemap(entries: int) -> Case:
    moments = minutes_back(entries)
    urls = "".join(
        f"<url><loc>http://news.example/{moment:%Y/%m/%d}/story-{index}.html</loc><news:news><news:publication>"
        f"<news:name>News</news:name><news:language>en</news:language></news:publication>"
        f"<news:publication_date>{moment.isoformat()}</news:publication_date>"
        f"<news:title>Story {index} &amp; more</news:title></news:news></url>\n"
        for index, moment in enumerate(moments))
    body = f'<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="{SITEMAPS_NS}" xmlns:news="{NEWS_NS}">\n{urls}</urlset>\n'
    expected = tuple(Item(f"http://news.example/{moment:%Y/%m/%d}/story-{index}.html", second(moment), None,
                          f"Story {index} & more") for index, moment in enumerate(moments))
    return Case(f"news sitemap, {entries:,} entries", "http://news.example/sitemap-news.xml", body.encode(), expected)


_SUMMARY = "The council met on Tuesday to discuss the budget, the roads and the new library. " * 4


def large_rss(entries: int) -> Case:
    moments = minutes_back(entries)
    items = "".join(
        f"<item><title>Story {index} &amp; more</title><link>http://news.example/rss/{index}.html</link>"
        f"<guid>http://news.example/rss/{index}.html</guid>"
        f"<pubDate>{moment:%a, %d %b %Y %H:%M:%S} +0000</pubDate><description>{_SUMMARY}</description></item>\n"
        for index, moment in enumerate(moments))
    body = (f'<?xml version="1.0" encoding="utf-8"?>\n<rss version="2.0"><channel><title>News</title>'
            f"<link>http://news.example/</link>\n{items}</channel></rss>\n")
    expected = tuple(Item(f"http://news.example/rss/{index}.html", second(moment), None, f"Story {index} & more")
                     for index, moment in enumerate(moments))
    return Case(f"RSS 2.0, {entries:,} entries", "http://news.example/rss.xml", body.encode(), expected)


def large_atom(entries: int) -> Case:
    moments = minutes_back(entries)
    items = "".join(
        f'<entry><title>Story {index} &amp; more</title><link rel="alternate" href="atom/{index}.html"/>'
        f"<id>urn:story:{index}</id><published>{moment.isoformat()}</published><updated>{moment.isoformat()}"
        f"</updated><summary>{_SUMMARY}</summary></entry>\n"
        for index, moment in enumerate(moments))
    body = (f'<?xml version="1.0" encoding="utf-8"?>\n<feed xmlns="{ATOM_NS}"><title>News</title><id>urn:news</id>'
            f"<updated>{NEWS_DAY.isoformat()}</updated>\n{items}</feed>\n")
    expected = tuple(Item(f"http://news.example/atom/{index}.html", second(moment), second(moment),
                          f"Story {index} & more") for index, moment in enumerate(moments))
    return Case(f"Atom, {entries:,} entries", "http://news.example/atom.xml", body.encode(), expected)


def large_documents(sizes: FeedSizes) -> list[Case]:
    return [large_sitemap(sizes.sitemap_entries), large_news_sitemap(sizes.news_entries),
            large_rss(sizes.feed_entries), large_atom(sizes.feed_entries)]


def best_time(reader: Reader, document: Case, repeat: int) -> tuple[float, list[Item]]:
    best, found = float("inf"), []
    for _ in range(repeat):
        started = time.perf_counter()
        found = _read(reader, document.body, document.url)
        best = min(best, time.perf_counter() - started)
    return best, found


# --------------------------------------------------------------------------
# The scenario


def feeds(sizes: FeedSizes, work: Path, say, real_feeds: Path | None = None) -> list[dict]:
    """The rows: per reader, correctness on the cases (and on feedparser's
    suite with `real_feeds`), then its speed on each large document."""
    readers, missing = available_readers()
    if missing:
        say(f"feeds: not installed, left out: {', '.join(missing)}")
    rows = []
    corpora = [("feeds cases", cases(), score_cases)]
    if real_feeds is not None:
        corpora.append(("feeds real", suite_feeds(real_feeds), score_suite))
    for name, documents, scorer in corpora:
        say(f"{name}: {len(documents)} documents, {len(readers)} readers")
        for reader in readers:
            started = time.perf_counter()
            score = scorer(reader, documents)
            wall = time.perf_counter() - started
            rows.append(row(name, reader.name, pages=score.entries_found, wall_s=wall, **score.figures(),
                            failed=score.failed))
    for document in large_documents(sizes):
        say(f"feeds speed: {document.name}")
        timed = {reader.name: best_time(reader, document, sizes.repeat) for reader in readers}
        ours = timed.get(OURS)
        ours_speed = len(ours[1]) / ours[0] if ours and ours[1] else None
        for reader in readers:
            seconds, found = timed[reader.name]
            if not found:
                continue  # a feed parser given a sitemap, or the reverse: it read nothing
            score = score_cases(reader, [document])
            speed = len(found) / seconds
            rows.append(row(f"feeds speed {document.name}", reader.name, pages=len(found), wall_s=seconds,
                            pages_per_s=speed, peer=OURS if ours_speed else None,
                            ratio_to_peer=speed / ours_speed if ours_speed else None,
                            entries=score.entries, links_right=score.links_right,
                            dates_right=score.dates_right, titles_right=score.titles_right,
                            document_bytes=len(document.body)))
    return rows


def feeds_note(row_: dict) -> str:
    """What a feeds row's columns cannot show: its correctness figures."""
    if row_["name"].startswith("feeds speed"):
        ratio = f", {row_['ratio_to_peer']:.2f}× ours" if row_.get("ratio_to_peer") else ""
        return (f"{row_['name']} {row_['runner']}: {row_['pages_per_s']:,.0f} entries/s{ratio}; "
                f"{row_['pages']:,} of {row_['entries']:,} entries, links right {row_['links_right']:,}, "
                f"dates right {row_['dates_right']:,}")
    failed = row_.get("failed") or []
    return (f"{row_['name']} {row_['runner']}: {row_['documents_read']} of {row_['documents']} documents read, "
            f"{row_['entries_found']} entries found"
            + (f" of {row_['entries']}" if row_["entries"] else "")
            + f"; links right {row_['links_right']}/{row_['links']}, dates {row_['dates_right']}/{row_['dates']}, "
            f"titles {row_['titles_right']}/{row_['titles']}"
            + (f"; wrong or missing in: {', '.join(failed[:8])}{' ...' if len(failed) > 8 else ''}" if failed else ""))
