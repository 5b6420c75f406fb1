"""The outlinks of a parsed page, resolved as a browser resolves them.

This runs on every fetched page, so it stays on lxml's C iterators: one
pass over the link-bearing elements, each href joined by the WHATWG URL
parser (urls.resolve_link) and kept once, in document order.

A page's links are bounded, as Nutch's db.max.outlinks.per.page and
Heritrix's outlink cap bound them: the first MAX_OUTLINKS distinct links are
kept, and a link longer than MAX_URL_CHARS is dropped.  A page of links
(a sitemap-like list, a calendar, a trap) would otherwise put tens of
thousands of URLs into the next layer's frontier from one fetch, and long
URLs resolved against a long <base href> would multiply the page's size.
"""
from __future__ import annotations

import re

import ada_url

from mrcrawl.page.urls import ABSOLUTE_PREFIXES, resolve_absolute_link, resolve_relative_link

# Element -> the attribute holding its link target.
LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_LINK_TAGS = tuple(LINK_ATTRIBUTES)
# A news home page links a few hundred pages, a section a thousand or so.
MAX_OUTLINKS = 5000
# Browsers and servers agree on URLs of about 2,000 characters (the
# sitemaps protocol's limit is 2,048); longer ones are almost always
# session junk or a trap, and URL-keyed caches hold every URL they see.
MAX_URL_CHARS = 2048

# <meta http-equiv="refresh" content="5; url=next.html">, read as the HTML
# standard's declarative refresh reads it: a time, a ; or , and then the
# URL, maybe after "url=", maybe quoted.
_REFRESH = re.compile(r"[\t\n\f\r ]*[0-9.]+[\t\n\f\r ]*[;,]?[\t\n\f\r ]*(?:url[\t\n\f\r ]*=[\t\n\f\r ]*)?",
                      re.IGNORECASE)


def base_url(root, page_url: str, encoding: str) -> str:
    """The URL relative links resolve against: the first <base href>,
    itself resolved against the page URL, or the page URL.

    A base that does not parse is ignored, as browsers ignore it.  One that
    parses to another scheme (ftp:, data:) is kept: links relative to it
    then resolve outside http(s) and are dropped, as they would be clicked.
    """
    for base in root.iter("base"):
        href = base.get("href")
        if href is None:
            continue
        # Not resolve_link: its cache of absolute links would keep a long
        # base (a page's whole size) long after the page.
        resolved = resolve_relative_link(href, page_url, encoding)
        if resolved is not None:
            return resolved
        try:
            return ada_url.URL(href, base=page_url).href
        except ValueError:
            return page_url
    return page_url


def refresh_target(content: str | None) -> str | None:
    """The URL a <meta http-equiv="refresh"> content sends the reader to,
    unresolved; None when it names none (a reload of the page itself)."""
    match = _REFRESH.match(content or "")
    if match is None:
        return None
    target = content[match.end():]
    if target[:1] in ("'", '"'):
        quote = target[0]
        target = target[1:].split(quote, 1)[0]
    target = target.strip("\t\n\f\r ")
    return target or None


def _target(element) -> str | None:
    """The link target of a link-bearing element or a refresh <meta>;
    None for other elements and links not to be followed (rel=nofollow)."""
    tag = element.tag
    if tag == "meta":
        http_equiv = element.get("http-equiv")
        if http_equiv is None or http_equiv.strip().lower() != "refresh":
            return None
        return refresh_target(element.get("content"))
    rel = element.get("rel")
    if rel is not None and "nofollow" in rel.lower().split():
        return None
    return element.get(LINK_ATTRIBUTES[tag])


def extract_links(root, page_url: str, encoding: str) -> list[str]:
    """Canonical http(s) URLs of a[href], area[href], frame[src],
    iframe[src] and <meta http-equiv="refresh">'s target, rel=nofollow
    skipped, de-duplicated, in document order: the first MAX_OUTLINKS of
    them no longer than MAX_URL_CHARS.

    `encoding` is the page's codec: non-ASCII query characters are
    percent-encoded in it, as the URL Standard says.
    """
    return list(dict.fromkeys(url for url, _ in _link_elements(root, page_url, encoding)))


def extract_anchored_links(root, page_url: str, encoding: str) -> dict[str, str]:
    """extract_links()'s URLs, in the same order, each with the anchor text
    of its first link on the page (anchor_text)."""
    anchored: dict[str, str] = {}
    for url, element in _link_elements(root, page_url, encoding):
        if url not in anchored:
            anchored[url] = anchor_text(element)
    return anchored


# Nutch keeps the anchors of a page's links for the pages they point to; a
# longer text is a paragraph wrapped in a link, not a name for its target.
MAX_ANCHOR_CHARS = 200


def anchor_text(element) -> str:
    """What a link calls its target: the text of an <a>, whitespace collapsed,
    or the alt text of an image in it when it has none; an <area>'s alt text;
    "" for a frame, an iframe or a refresh.  At most MAX_ANCHOR_CHARS."""
    tag = element.tag
    if tag == "a":
        text = " ".join("".join(element.itertext()).split())
        if not text:
            text = " ".join(" ".join(image.get("alt") or "" for image in element.iter("img")).split())
    elif tag == "area":
        text = " ".join((element.get("alt") or "").split())
    else:
        text = ""
    return text[:MAX_ANCHOR_CHARS]


def _link_elements(root, page_url: str, encoding: str):
    """(canonical URL, element) of each link extract_links() reads, in
    document order, repeats included, until MAX_OUTLINKS distinct URLs."""
    base = base_url(root, page_url, encoding)
    # The Parser's innermost loop, once per link of every page: calls are
    # inlined for the common <a href>.
    seen: set[str] = set()
    for element in root.iter(_LINK_TAGS + ("meta",)):
        if element.tag == "a" and element.get("rel") is None:
            target = element.get("href")
        else:
            target = _target(element)
        if target is None or len(target) > MAX_URL_CHARS:
            continue
        if target.startswith(ABSOLUTE_PREFIXES):
            url = resolve_absolute_link(target, encoding)
        else:
            url = resolve_relative_link(target, base, encoding)
        if url is None or len(url) > MAX_URL_CHARS:
            continue  # no http(s) URL, or one too long
        yield url, element
        seen.add(url)
        if len(seen) == MAX_OUTLINKS:
            return
