"""One URL of a finished crawl, as Nutch's `readseg -get` and Scrapy's `fetch` show a page.

    python -m mrcrawl.show DIR URL [--text] [--links]

Prints the URL's doc record, its response headers and its page decoded
with the record's `encoding`; with --text the page's main text as the XML
for the index holds it, with --links its outlinks from its out record.  The
URL is put in canonical form first, as the crawl put every URL it stored.

A URL can have several doc records: one per request that ended on it (a
same-host redirect ends on its target).  They are all listed, and one is
shown: the one Merge kept in doc/merged, or before Merge has run the one
its rule would keep; a URL that was requested and redirected elsewhere
shows the record of that request.  The stores are read one part file at a
time, and only the lines that name the URL are decoded.

The parts that print a record are also parsechecker.py's.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Iterator, NamedTuple

from lxml import etree

from mrcrawl.cli import CommandParser, run_command
from mrcrawl.frontier.merge import best_stored_record
from mrcrawl.output.pagexml import page_to_xml
from mrcrawl.page.charset import decode_page
from mrcrawl.page.urls import normalize_url
from mrcrawl.store.crawl_reader import CrawlReader, NoCrawl
from mrcrawl.store.protocols import Utf8JsonProtocol, decode_value, encode_value
from mrcrawl.store.records import ANNOUNCED, DOC_FIELDS, FETCHED, REDIRECT_TARGET, is_fetched_page, response_body

EXIT_OK = 0
EXIT_NOT_HELD = 1  # the crawl holds no record of the URL
EXIT_USAGE = 2  # a bad command line (CommandParser's status), URL or crawl directory

# What the record's lines leave to sections of their own (`page`: the title
# and main text sections, through the XML).
BULKY_FIELDS = ("body", "archive_body", "headers", "page")
MERGED = "doc/merged"

_store_lines = Utf8JsonProtocol()


def canonical_url(text: str) -> str:
    """`text` in canonical form, as the crawl stores URLs; ValueError when it is no http(s) URL."""
    url = normalize_url(text)
    if url is None:
        raise ValueError(f"{text}: not an absolute http(s) URL")
    return url


class Found(NamedTuple):
    """A doc record of the URL, and the store it is in (`doc/<L>` or doc/merged)."""

    store: str
    doc: dict

    def same_fetch(self, other: "Found") -> bool:
        """Whether both are the record of one request: doc/merged holds a copy of a layer's record."""
        return all(self.doc[name] == other.doc[name] for name in ("layer", "requested_url", "fetched_at"))


def lines_naming(part: Path, url: str) -> Iterator[tuple[str, dict]]:
    """(key, record) of the lines of a store's part file that hold `url` as
    a whole JSON string; the other lines are not decoded."""
    needle = encode_value(url)
    with open(part, "rb") as lines:
        for line in lines:
            if needle in line:
                yield _store_lines.read(line.rstrip(b"\r\n"))


def records_of(crawl: CrawlReader, url: str) -> tuple[list[Found], Found | None]:
    """The layers' doc records that ended on `url` or were requested as
    `url`, and doc/merged's record among them (None when Merge has not run,
    or kept a record of another request)."""
    def matching(store: str, parts: list[Path]) -> list[Found]:
        return [Found(store, doc) for part in parts for key, doc in lines_naming(part, url)
                if url in (key, doc["requested_url"])]

    found = [record for layer in crawl.layers for record in matching(f"doc/{layer}", crawl.doc_parts(layer))]
    merged = matching(MERGED, crawl.store.parts(crawl.store.merged()))
    return found, merged[0] if merged else None


def chosen(found: list[Found], merged: Found | None) -> Found:
    """The record shown: doc/merged's, else the one Merge's rule keeps."""
    if merged is not None:
        return merged
    kept = decode_value(best_stored_record(encode_value(record.doc) for record in found))
    return next(record for record in found if record.doc == kept)


def listing(url: str, found: list[Found], shown: Found, merge_ran: bool) -> list[str]:
    """Which records the crawl holds of `url`, and which is shown."""
    if shown.store == MERGED:
        why = "the one Merge kept, in doc/merged"
    elif merge_ran:
        why = "the record of this request; Merge kept another request's record of its page"
    else:
        why = "the one Merge would keep (the crawl has not run Merge: there is no doc/merged)"
    lines = [f"{url}: {len(found)} record(s) in the crawl; shown: {why}"]
    for record in found:
        doc = record.doc
        how = f"requested as {doc['requested_url']}"
        if doc["url"] != url:
            how += f", ended on {doc['url']}"
        elif doc["requested_url"] != url:
            how += " and redirected here"
        mark = "  <- shown" if record.same_fetch(shown) else ""
        lines.append(f"  {record.store:<8} {doc['outcome']:<14} {how}{mark}")
    if len(found) > 1:
        lines.append("  (show another with its requested URL)")
    return lines


# ---- the sections of one record, for show and parsechecker ---------------------------------

def section(title: str) -> str:
    return f"== {title} =="


def record_lines(doc: dict) -> list[str]:
    """The record's fields, but the body and headers, one a line."""
    width = max(map(len, DOC_FIELDS))
    return [f"{name:<{width}}  {value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)}"
            for name, value in ((name, doc.get(name)) for name in DOC_FIELDS if name not in BULKY_FIELDS)]


def header_lines(doc: dict) -> list[str]:
    """The last response's status line and headers, as received."""
    if doc.get("status") is None:
        return [f"(no response: {doc.get('error') or doc['outcome']})"]
    status_line = " ".join(str(part) for part in (doc.get("http_version"), doc["status"], doc.get("reason")) if part)
    return [status_line, *(f"{name}: {value}" for name, value in doc.get("headers") or [])]


def page_section(doc: dict) -> list[str]:
    """The body of the last response, decoded as every job decodes it."""
    body = response_body(doc)
    if body is None:
        return [section("page"), "(no response)"]
    if doc["outcome"] != FETCHED and not (doc.get("content_type") or "").startswith("text/"):
        return [section("page"), f"({doc.get('content_type') or 'untyped'} body of {len(body)} bytes, not shown)"]
    text = decode_page(doc, body)
    cut = ", cut at max_page_bytes" if doc.get("truncated") else ""
    encoding = doc.get("encoding") or "detected now: the record names none"
    return [section(f"page ({encoding}, {len(body)} bytes{cut})"), text]


def page_xml(doc: dict, language: str) -> str | None:
    """The XML HtmlToXml makes of the record's page, whether or not the page
    changed since the crawl db's last fetch; None when the record holds no
    fetched page (a feed or sitemap is none)."""
    if not is_fetched_page(doc):
        return None
    return page_to_xml({**doc, "known": None}, language)  # without `known`, never None


def xml_text(xml: str, element: str) -> str:
    """An element's text of an XML page, as the index reads it."""
    return etree.fromstring(xml.encode("utf-8")).findtext(element) or ""


def outlink_lines(out: dict | None, store: str) -> list[str]:
    if out is None:
        return [section("outlinks"), f"(no out record: the crawl has not parsed {store})"]
    links = out["outlinks"]
    what = {REDIRECT_TARGET: "redirect target", ANNOUNCED: "feed or sitemap entries followed"}.get(
        out["type"], "links in the crawl's scope")
    trapped = [f"trapped ({guard}): {link}" for link, guard in out.get("trapped") or ()]  # none in older records
    return [section(f"outlinks ({len(links)} {what}, {store})"), *links, *trapped]


def out_record_of(crawl: CrawlReader, doc: dict) -> tuple[dict | None, str]:
    """The out record the Parser wrote for `doc`, and its store; None when the layer was not parsed."""
    layer = doc["layer"]
    store = f"out/{layer}"
    if not crawl.has_outlinks(layer):
        return None, store
    for part in crawl.store.parts(crawl.store.outlinks(layer)):
        for key, out in lines_naming(part, doc["url"]):
            if key == doc["url"] and out["timestamp"] == doc["fetched_at"]:
                return out, store
    return None, store


def show(crawl: CrawlReader, url: str, text: bool, links: bool) -> list[str] | None:
    """What `mrcrawl show` prints of `url`; None when the crawl holds no record of it."""
    found, merged = records_of(crawl, url)
    if not found and merged is None:
        return None
    shown = chosen(found, merged)
    doc = shown.doc
    lines = listing(url, found, shown, merge_ran=crawl.store.merged().is_dir())
    lines += [section(f"record ({shown.store})"), *record_lines(doc), section("headers"), *header_lines(doc)]
    lines += page_section(doc)
    if text:
        xml = page_xml(doc, crawl.config.language)
        lines += [section("main text"), xml_text(xml, "content") if xml else "(no main text: no page was fetched)"]
    if links:
        lines += outlink_lines(*out_record_of(crawl, doc))
    return lines


def parser() -> argparse.ArgumentParser:
    made = CommandParser(
        prog="mrcrawl show", allow_abbrev=False,
        description="Print one URL's doc record, response headers and page (decoded with the record's charset) "
                    "from a crawl directory, as Nutch's readseg -get does.",
        epilog="Exit status: 0 the URL's record was printed; 1 the crawl holds no record of it; 2 a bad command "
               "line or URL, or DIR holds no crawl (one line on stderr).",
    )
    made.add_argument("directory", metavar="DIR", help="the crawl directory (the crawl's --output)")
    made.add_argument("url", metavar="URL", help="the URL, as requested or as the page's final URL; put in canonical "
                                                 "form as the crawl puts URLs")
    made.add_argument("--text", action="store_true", help="also print the page's main text, as its XML holds it")
    made.add_argument("--links", action="store_true", help="also print its outlinks, from its out record")
    return made


def main(argv: list[str] | None = None) -> int:
    made = parser()
    args = made.parse_args(argv)
    try:
        url = canonical_url(args.url)
        crawl = CrawlReader(args.directory)
    except (ValueError, NoCrawl) as error:
        print(f"{made.prog}: {error}", file=sys.stderr)
        return EXIT_USAGE
    lines = show(crawl, url, args.text, args.links)
    if lines is None:
        layers = f"{crawl.layers[0]}-{crawl.layers[-1]}" if len(crawl.layers) > 1 else str(crawl.layers[0])
        print(f"{made.prog}: {url}: not in the crawl in {args.directory} (no doc record on layers {layers})",
              file=sys.stderr)
        return EXIT_NOT_HELD
    print("\n".join(lines))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_command(main))
