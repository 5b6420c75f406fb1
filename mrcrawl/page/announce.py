"""What a site announces: its feeds (RSS 2.0, RSS 1.0, Atom) and sitemaps
(urlsets, Google News sitemaps, sitemap indexes), read from fetched bytes.

- sniff(): which kind of announcement a body is, from its first bytes.
- read_announcement(): its entries (URL, dates, title, language) and what
  was wrong with it.
- feed_links(): the feeds an HTML page names in its <link rel="alternate">.
- announced_date(): a feed's or sitemap's date as records.iso_utc text.

A document is recognised by its root element and namespaces, never by its
URL or Content-Type: servers label feeds text/html and sitemaps
application/octet-stream.  The bytes come from anyone, so the XML parser
expands no entity, loads no DTD and opens nothing (no file, no network):
an entity's replacement text appears in nothing returned.  The body is fed
to lxml's pull parser in chunks, gzip inflated as it goes, and each entry
is read when it closes and then dropped from the tree: a 50 MB sitemap never
becomes a 50 MB tree, the caps stop the work where they are reached, and a
truncated or broken document keeps the entries before the fault.
"""
from __future__ import annotations

import email.utils
import html
import re
import zlib
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import lru_cache
from typing import Callable, Iterator

from lxml import etree

from mrcrawl.page.links import MAX_URL_CHARS, base_url
from mrcrawl.page.metadata import collapse_whitespace
from mrcrawl.page.urls import resolve_relative_link
from mrcrawl.store.records import iso_utc

FEED = "feed"  # RSS 2.0, RSS 1.0 (RDF) or Atom
NEWS_SITEMAP = "news_sitemap"  # a urlset declaring the Google News namespace
SITEMAP = "sitemap"  # a plain urlset
SITEMAP_INDEX = "sitemap_index"
ANNOUNCEMENT_KINDS = (FEED, NEWS_SITEMAP, SITEMAP, SITEMAP_INDEX)

MAX_ENTRIES = 50_000  # sitemaps.org's limit per file
MAX_UNCOMPRESSED_BYTES = 50 * 1024 * 1024  # the same, uncompressed (gzip bodies are inflated at most this far)

ATOM = "http://www.w3.org/2005/Atom"
# Atom 0.3, the draft many blogs still serve: <issued>, <modified>, <created>
# for dates, and titles that say how they are encoded in `mode`.
ATOM_03 = "http://purl.org/atom/ns#"
RSS1 = "http://purl.org/rss/1.0/"
RSS_090 = "http://my.netscape.com/rdf/simple/0.9/"  # RSS 0.90: RSS 1.0's form, its own namespace
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
SITEMAPS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS = "http://www.google.com/schemas/sitemap-news/0.9"
# Sitemaps from before sitemaps.org, still served, and ones that forgot
# their namespace: a root named urlset or sitemapindex is unambiguous.
SITEMAP_NAMESPACES = (SITEMAPS, "http://www.google.com/schemas/sitemap/0.84",
                      "http://www.google.com/schemas/sitemap/0.9", None)
DC = "http://purl.org/dc/elements/1.1/"
DCTERMS = "http://purl.org/dc/terms/"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

# The media types of <link rel="alternate"> that name a feed.
FEED_TYPES = frozenset({"application/rss+xml", "application/atom+xml", "application/rdf+xml"})

GZIP_MAGIC = b"\x1f\x8b"
# A BOM, an XML declaration, comments and a DOCTYPE (its internal subset
# too) come before the root element: this much is read to find it.
SNIFF_BYTES = 64 * 1024
_SNIFF_CHUNK = 4096
_PARSE_CHUNK = 64 * 1024
_GZIP_BITE = 4096

# No entity expanded (billion laughs), none loaded from a file or the
# network (XXE), no DTD read, libxml2's size and depth limits kept.
_SAFE_PARSING = dict(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False,
                     dtd_validation=False, attribute_defaults=False, remove_comments=True,
                     remove_pis=True, collect_ids=False)


class _NothingOutside(etree.Resolver):
    """Every external DTD and parameter entity is empty.  load_dtd=False
    does not stop libxml2 from opening a local file that a DOCTYPE names
    (<!DOCTYPE urlset SYSTEM "file:///...">, or a parameter entity used in
    the internal subset); a resolver is asked first, and opens nothing."""

    def resolve(self, system_url, public_id, context):
        return self.resolve_string("", context)


def _safe_parser(**events):
    parser = etree.XMLPullParser(**events, **_SAFE_PARSING)
    parser.resolvers.add(_NothingOutside())
    return parser


@dataclass(frozen=True)
class Entry:
    url: str  # absolute canonical http(s) URL (page/urls.py's resolution, as page links are)
    published: str | None  # records.iso_utc text: pubDate / dc:date / published / news:publication_date
    modified: str | None  # records.iso_utc text: lastmod / updated / dcterms:modified
    title: str | None  # plain text: entities decoded, markup stripped, whitespace collapsed
    language: str | None  # news:language, or the feed's language / xml:lang


@dataclass(frozen=True)
class Announcement:
    kind: str | None  # one of ANNOUNCEMENT_KINDS; None when the body is none of them
    entries: tuple[Entry, ...]  # a sitemap index's entries are the sitemaps it lists
    error: str | None  # what was wrong, for a person; entries before the fault are kept


class _Fault(Exception):
    """Why the bytes stopped being read: the text of Announcement.error."""


class _Cut(_Fault):
    """The document is longer than the bytes allowed to be read of it."""


def _inflated(body: bytes, chunk: int, limit: int) -> Iterator[bytes]:
    """The document's bytes, `chunk` at a time: a gzip body inflated (every
    member), at most `limit` bytes; past that, or on broken gzip, _Fault."""
    if body[:2] != GZIP_MAGIC:
        for start in range(0, min(len(body), limit), chunk):
            yield body[start:min(start + chunk, limit)]
        if len(body) > limit:
            raise _Cut(f"more than {_size(limit)} uncompressed: cut there")
        return
    source = memoryview(body)
    position, total = 0, 0
    pending = b""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    while True:
        if not pending:
            # Small bites: a fault (a wrong checksum at the end) loses the
            # output of the call that meets it, and no more.
            pending = source[position:position + _GZIP_BITE]
            position += len(pending)
        try:
            piece = inflater.decompress(pending, chunk)
        except zlib.error as error:
            raise _Fault(f"broken gzip data after {total} bytes: {error}") from None
        pending = inflater.unconsumed_tail
        if piece:
            if total + len(piece) > limit:
                yield piece[:limit - total]
                raise _Cut(f"more than {_size(limit)} uncompressed: cut there")
            total += len(piece)
            yield piece
        if inflater.eof:
            pending = inflater.unused_data
            if (bytes(pending[:2]) + bytes(source[position:position + 2]))[:2] != GZIP_MAGIC:
                return  # trailing bytes that are no gzip member are ignored, as gzip(1) does
            inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif not piece and not pending and position >= len(source):
            raise _Fault(f"gzip data cut short after {total} bytes")


def _size(limit: int) -> str:
    return f"{limit // (1024 * 1024)} MB" if limit >= 1024 * 1024 else f"{limit} bytes"


def _document(body: bytes, chunk: int, limit: int) -> Iterator[bytes]:
    """_inflated() without the whitespace some servers print before the XML
    declaration (a PHP file's blank line), which libxml2 refuses."""
    first = True
    for piece in _inflated(body, chunk, limit):
        if first and piece[:1] in (b" ", b"\t", b"\r", b"\n"):
            stripped = piece.lstrip()
            if stripped[:1] == b"<":  # not UTF-16, where the spaces are half characters
                piece = stripped
        first = False
        yield piece


def _syntax_fault(parser, error: Exception | None = None) -> _Fault:
    """The parser's first fatal error, as a person reads it."""
    # With entities left unexpanded, libxml2's push parser stops on some
    # errors (an undeclared &nbsp;) without raising: the feed log has them.
    fatal = parser.feed_error_log.filter_from_fatals()
    if fatal:
        line, message = fatal[0].line, fatal[0].message
    elif isinstance(error, etree.XMLSyntaxError):
        line = error.position[0]
        message = re.sub(r", line \d+, column \d+$", "", error.msg or "")
    else:
        return _Fault("not well-formed XML")
    return _Fault(f"not well-formed XML at line {line}: {message.strip()}")


@dataclass(frozen=True)
class _Format:
    kind: str
    read_entry: Callable  # (_Reader, element) -> None
    namespace: str | None  # the namespace of the format's own elements
    entry_name: str  # the element one entry is, in `namespace`

    @property
    def entry_tag(self) -> str:
        return _in(self.namespace, self.entry_name)


def _in(namespace: str | None, name: str) -> str:
    """lxml's tag of `name` in `namespace`."""
    return f"{{{namespace}}}{name}" if namespace else name


def _format_of(tag: str, namespaces: dict) -> _Format | None:
    namespace, _, name = tag[1:].partition("}") if tag.startswith("{") else (None, "", tag)
    # <rss> is RSS 0.91 to 2.0 in whatever namespace it is put: none, or
    # one of those Userland and Harvard published (http://backend.userland.com/rss2).
    if name == "rss":
        return _Format(FEED, _Reader.read_rss_item, namespace, "item")
    if tag == f"{{{RDF}}}RDF":
        for rss in (RSS1, RSS_090):
            if rss in namespaces.values():
                return _Format(FEED, _Reader.read_rss1_item, rss, "item")
    if name == "feed" and namespace in (ATOM, ATOM_03):
        return _Format(FEED, _Reader.read_atom_entry, namespace, "entry")
    if namespace in SITEMAP_NAMESPACES:
        if name == "urlset":
            kind = NEWS_SITEMAP if NEWS in namespaces.values() else SITEMAP
            return _Format(kind, _Reader.read_sitemap_url, namespace, "url")
        if name == "sitemapindex":
            return _Format(SITEMAP_INDEX, _Reader.read_sitemap_url, namespace, "sitemap")
    return None


def _root_element(body: bytes) -> tuple[str, dict]:
    """The tag and namespace declarations of the document's root element,
    from its first SNIFF_BYTES; _Fault when there is none."""
    parser = _safe_parser(events=("start",))
    try:
        for piece in _document(body, _SNIFF_CHUNK, SNIFF_BYTES):
            try:
                parser.feed(piece)
                error = None
            except etree.XMLSyntaxError as raised:
                error = raised
            # A fault after the root's start tag is the parse's business.
            for _, element in parser.read_events():
                return element.tag, dict(element.nsmap)
            if error is not None or parser.feed_error_log.filter_from_fatals():
                raise _syntax_fault(parser, error)
    except _Cut:
        pass
    if not body.strip():
        raise _Fault("empty document")
    raise _Fault(f"no XML element in the first {_size(SNIFF_BYTES)}")


# The local names of the root elements sniff() knows.
_ROOT_NAMES = frozenset((b"rss", b"RDF", b"feed", b"urlset", b"sitemapindex"))
_SKIPPED = ((b"<?", b"?>"), (b"<!--", b"-->"))  # a declaration, a processing instruction, a comment
_NAME_END = re.compile(rb"[\s/>]")


def _may_be_announcement(body: bytes, at: int = 0) -> bool:
    """False when the first start tag of a plain ASCII-compatible body is
    none of the roots sniff() knows (an HTML page, nearly always): found by
    skipping the prolog as bytes, in microseconds, where the parser takes
    tens.  True for what this cannot tell (gzip, UTF-16, a DOCTYPE with an
    internal subset): the parser then decides."""
    if at == 0 and body.startswith(b"\xef\xbb\xbf"):
        at = 3
    while True:
        while at < len(body) and body[at] in b" \t\r\n":
            at += 1
        for start, end in _SKIPPED:
            if body.startswith(start, at):
                found = body.find(end, at + len(start))
                if found < 0:
                    return True
                at = found + len(end)
                break
        else:
            break
    if body.startswith(b"<!", at):  # a DOCTYPE: skipped when it has no internal subset
        end = body.find(b">", at)
        if end < 0 or b"[" in body[at:end]:
            return True
        return _may_be_announcement(body, end + 1)
    if not body.startswith(b"<", at):
        return True  # gzip, UTF-16, or no markup: the parser says
    name = _NAME_END.split(body[at + 1:at + 200], 1)[0]
    return name.rpartition(b":")[2] in _ROOT_NAMES


def sniff(body: bytes) -> str | None:
    """The kind of announcement `body` is, from its first bytes (a gzip body is
    inflated a little, bounded, to see them), or None: a BOM, an XML
    declaration, comments, processing instructions, a DOCTYPE may come first.
    The root element decides: <rss>, <rdf:RDF> with the RSS 1.0 namespace,
    <feed> in the Atom namespace -> FEED; <urlset> in the sitemaps namespace
    -> NEWS_SITEMAP when the news namespace is declared, else SITEMAP;
    <sitemapindex> -> SITEMAP_INDEX.  Never by URL or Content-Type.

    Older forms are feeds too: <rss> in a namespace (RSS 2.0 in Userland's),
    <rdf:RDF> with RSS 0.90's namespace, <feed> in Atom 0.3's."""
    if not _may_be_announcement(body):
        return None  # every fetched page is asked: most are told at once, unparsed
    try:
        found = _format_of(*_root_element(body))
    except _Fault:
        return None
    return found.kind if found else None


def read_announcement(body: bytes, url: str) -> Announcement:
    """Never raises on bad input.  gzip bodies inflated up to MAX_UNCOMPRESSED_BYTES
    (beyond: error, entries so far kept).  At most MAX_ENTRIES entries (beyond:
    error, the rest ignored).  No entity expansion, no external entity, no DTD
    loaded, no network: an entity's replacement text appears in nothing returned.
    Relative links resolve against xml:base, then the document URL.

    Entries without an http(s) URL are left out, and a URL listed twice is
    kept once, with its first entry.  A body that is no feed or sitemap has
    kind None, no entries and an error saying what it is."""
    try:
        tag, namespaces = _root_element(body)
    except _Fault as fault:
        return Announcement(None, (), str(fault))
    found = _format_of(tag, namespaces)
    if found is None:
        return Announcement(None, (), f"not a feed or sitemap: the root element is <{_prefixed(tag, namespaces)}>")
    reader = _Reader(found, url)
    try:
        reader.read(body)
    except _Fault as fault:
        return Announcement(found.kind, tuple(reader.entries.values()), str(fault))
    return Announcement(found.kind, tuple(reader.entries.values()), None)


def _prefixed(tag: str, namespaces: dict) -> str:
    if not tag.startswith("{"):
        return tag
    namespace, _, name = tag[1:].partition("}")
    prefix = next((key for key, value in namespaces.items() if value == namespace and key), None)
    return f"{prefix}:{name}" if prefix else name


def _text(element) -> str:
    """The element's text, entity references left out (never expanded)."""
    if not len(element):
        return element.text or ""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str):  # not an unexpanded entity reference
            parts.append(_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


# HTML tags as feeds escape them into titles: "<" and a letter or "/".
_MARKUP = re.compile(r"</?[A-Za-z][^<>]*>")


def _plain_title(element, escaped_html: bool) -> str | None:
    """A title as plain text.  `escaped_html`: the text is HTML (RSS titles
    in practice, Atom's type="html"), whose tags go and entities decode."""
    text = _text(element)
    if escaped_html:
        if "<" in text:
            text = _MARKUP.sub("", text)
        if "&" in text:
            text = html.unescape(text)
    return collapse_whitespace(text) or None


def _stripped(element) -> str | None:
    """A URL's or a language's text; None when an entity reference stands
    in it: the text without it would name something else."""
    if len(element) and any(not isinstance(child.tag, str) for child in element):
        return None
    return _text(element).strip() or None


@lru_cache(maxsize=4096)
def announced_date(text: str) -> str | None:
    """A feed's or sitemap's date as records.iso_utc text, or None when it
    does not read as one.  W3C datetime / ISO 8601 (a date alone is midnight
    UTC; a year, or a year and month, their first day) and RFC 822 with its
    zone names; a time without a zone is taken as UTC.

    Cached: a sitemap repeats its lastmod values over thousands of URLs."""
    text = text.strip()
    moment = _iso_8601(text) if text[:1].isdigit() else None
    if moment is None:
        try:
            moment = email.utils.parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError, OverflowError):
            return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    try:
        return iso_utc(moment)
    except (OverflowError, ValueError):  # year 1 moved west, year 9999 east
        return None


def _iso_8601(text: str) -> datetime | None:
    if len(text) == 4:
        text += "-01-01"
    elif len(text) == 7:
        text += "-01"
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


_NEWS_TAG = f"{{{NEWS}}}news"


def _date(element) -> str | None:
    text = element.text
    return announced_date(text) if text else None


class _Reader:
    """The entries of one document, read as its entry elements close."""

    def __init__(self, found: _Format, url: str):
        self.format = found
        self.url = url
        self.entries: dict[str, Entry] = {}
        self.count = 0
        self.feed_language: str | None = None
        self.previous = None  # the last entry element read, removed once the next one is
        # The tags of the format's own elements, by name: <link>, <title>, <loc>, ...
        self.tag = {name: _in(found.namespace, name) for name in (
            "loc", "lastmod", "link", "guid", "title", "pubDate", "language", "published", "updated",
            "issued", "created", "modified", "channel")}

    def read(self, body: bytes) -> None:
        parser = _safe_parser(events=("end",), tag=self.format.entry_tag)
        try:
            for piece in _document(body, _PARSE_CHUNK, MAX_UNCOMPRESSED_BYTES):
                parser.feed(piece)
                self.take(parser)
            parser.close()
            self.take(parser)
        except etree.XMLSyntaxError as error:
            self.take(parser)  # the entries that closed before the fault
            raise _syntax_fault(parser, error) from None

    def take(self, parser) -> None:
        read_entry = self.format.read_entry
        for _, element in parser.read_events():
            self.count += 1
            if self.count > MAX_ENTRIES:
                raise _Fault(f"more than {MAX_ENTRIES} entries: the rest ignored")
            read_entry(self, element)
            # Read: its subtree goes, and the element itself once the parser
            # has moved past it (lxml allows removing earlier siblings only).
            element.clear()
            if self.previous is not None:
                parent = self.previous.getparent()
                if parent is not None:
                    parent.remove(self.previous)
            self.previous = element
        if parser.feed_error_log.filter_from_fatals():
            raise _syntax_fault(parser)

    def add(self, href: str | None, base: str, published, modified, title, language) -> None:
        if href is None or len(href) > MAX_URL_CHARS:
            return
        url = resolve_relative_link(href, base, "utf-8")
        if url is None or len(url) > MAX_URL_CHARS or url in self.entries:
            return
        self.entries[url] = Entry(url, published, modified, title, language)

    def base(self, element) -> str:
        """What a relative link of `element` resolves against: the xml:base
        values of it and its ancestors, each against the one outside it, on
        the document URL."""
        bases = []
        node = element
        while node is not None:
            value = node.get(XML_BASE)
            if value is not None:
                bases.append(value.strip())
            node = node.getparent()
        base = self.url
        for value in reversed(bases):
            base = resolve_relative_link(value, base, "utf-8") or base
        return base

    def language_in_scope(self, element) -> str | None:
        """The xml:lang of `element` or its nearest ancestor having one."""
        node = element
        while node is not None:
            value = node.get(XML_LANG)
            if value:
                return value.strip() or None
            node = node.getparent()
        return None

    def channel_language(self, channel) -> str | None:
        """An RSS channel's <language> (dc:language in RSS 1.0), once seen."""
        if self.feed_language is None and channel is not None:
            text = channel.findtext(self.tag["language"]) or channel.findtext(f"{{{DC}}}language")
            self.feed_language = text.strip() if text and text.strip() else None
        return self.feed_language

    def read_sitemap_url(self, element) -> None:
        loc, lastmod = self.tag["loc"], self.tag["lastmod"]
        href = published = modified = title = language = None
        for child in element:
            tag = child.tag
            if tag == loc:
                href = _stripped(child)
            elif tag == lastmod:
                modified = _date(child)
            elif tag == _NEWS_TAG:
                for field in child:
                    if field.tag == f"{{{NEWS}}}publication_date":
                        published = _date(field)
                    elif field.tag == f"{{{NEWS}}}title":
                        title = _plain_title(field, True)
                    elif field.tag == f"{{{NEWS}}}publication":
                        language = _stripped_child(field, f"{{{NEWS}}}language")
        # A sitemap's <loc> is absolute; one that is not resolves as a link would.
        self.add(href, self.url, published, modified, title, language)

    def read_rss_item(self, element) -> None:
        link = guid = published = dc_date = modified = title = language = None
        own = self.tag
        for child in element:
            tag = child.tag
            if tag == own["link"]:
                link = _stripped(child)
            elif tag == own["guid"]:
                if (child.get("isPermaLink") or "true").strip().lower() != "false":
                    guid = _stripped(child)
            elif tag == own["title"]:
                title = _plain_title(child, True)
            elif tag == own["pubDate"]:
                published = _date(child)
            elif tag == f"{{{DC}}}date":
                dc_date = _date(child)
            elif tag == f"{{{DCTERMS}}}modified" or tag == f"{{{ATOM}}}updated":
                modified = _date(child)
            elif tag == f"{{{DC}}}language":
                language = _stripped(child)
        parent = element.getparent()
        language = language or self.channel_language(parent) or self.language_in_scope(element)
        self.add(link or guid, self.base(element), published or dc_date, modified, title, language)

    def read_rss1_item(self, element) -> None:
        link = published = modified = title = language = None
        own = self.tag
        for child in element:
            tag = child.tag
            if tag == own["link"]:
                link = _stripped(child)
            elif tag == own["title"]:
                title = _plain_title(child, True)
            elif tag == f"{{{DC}}}date":
                published = _date(child)
            elif tag == f"{{{DCTERMS}}}modified":
                modified = _date(child)
            elif tag == f"{{{DC}}}language":
                language = _stripped(child)
        link = link or element.get(f"{{{RDF}}}about")
        root = element.getparent()
        channel = root.find(own["channel"]) if root is not None else None
        language = language or self.channel_language(channel) or self.language_in_scope(element)
        self.add(link, self.base(element), published, modified, title, language)

    def read_atom_entry(self, element) -> None:
        """Atom 1.0's entry, or Atom 0.3's: <issued> (else <created>) is its
        publication, <modified> its modification."""
        link = link_text = published = created = modified = title = None
        base_element = element
        own = self.tag
        for child in element:
            tag = child.tag
            if tag == own["link"]:
                if (child.get("rel") or "alternate").strip().lower() != "alternate":
                    continue
                href = child.get("href")
                if link is None and href is not None:
                    link, base_element = href.strip(), child
                elif link_text is None and href is None:
                    link_text = _absolute_link_text(child)
            elif tag == own["title"]:
                title = _plain_title(child, _atom_escapes_html(child, self.format.namespace))
            elif tag == own["published"] or tag == own["issued"]:
                published = _date(child)
            elif tag == own["created"]:
                created = _date(child)
            elif tag == own["updated"] or tag == own["modified"]:
                modified = _date(child)
        self.add(link or link_text, self.base(base_element), published or created, modified, title,
                 self.language_in_scope(element))


def _atom_escapes_html(title, namespace: str) -> bool:
    """Whether an Atom title's text is escaped HTML: type="html" in Atom 1.0;
    in Atom 0.3 an HTML type with mode="escaped" (its default mode, "xml",
    puts the markup inline, as elements)."""
    kind = (title.get("type") or "text").strip().lower()
    if kind not in ("html", "text/html"):
        return False
    return namespace != ATOM_03 or (title.get("mode") or "xml").strip().lower() == "escaped"


_ABSOLUTE_HTTP = re.compile(r"https?://\S+\Z", re.IGNORECASE)


def _absolute_link_text(link) -> str | None:
    """The URL an Atom <link> without href gives as its text, as feeds that
    mistake it for RSS's <link> do; only an absolute http(s) URL is taken,
    never words that would resolve as a relative link."""
    text = _stripped(link)
    return text if text is not None and _ABSOLUTE_HTTP.match(text) else None


def _stripped_child(element, tag: str) -> str | None:
    child = element.find(tag)
    return _stripped(child) if child is not None else None


def feed_links(root, page_url: str, encoding: str) -> list[str]:
    """The feeds an HTML page names: <link rel="alternate" type="application/rss+xml"
    | "application/atom+xml" | "application/rdf+xml" href=...>, resolved, in order."""
    hrefs = [link.get("href") for link in root.iter("link") if _names_a_feed(link)]
    if not hrefs:
        return []  # most pages: the base need not be found (the Parser runs this on every page)
    base = base_url(root, page_url, encoding)
    found: dict[str, None] = {}
    for href in hrefs:
        url = resolve_relative_link(href, base, encoding)
        if url is not None and len(url) <= MAX_URL_CHARS:
            found.setdefault(url)
    return list(found)


def _names_a_feed(link) -> bool:
    """Whether a <link> element is rel=alternate to a feed type, with a usable href."""
    rel, href = link.get("rel"), link.get("href")
    if rel is None or href is None or len(href) > MAX_URL_CHARS or "alternate" not in rel.lower().split():
        return False
    return (link.get("type") or "").partition(";")[0].strip().lower() in FEED_TYPES
