"""The outlinks of a parsed page, resolved as a browser resolves them.

This runs on every fetched page, so it stays on lxml's C iterators: one
pass over the link-bearing elements, each href joined by the WHATWG URL
parser (urls.resolve_link) and kept once, in document order.
"""
from __future__ import annotations

import ada_url

from mrcrawl.page.urls import ABSOLUTE_PREFIXES, resolve_absolute_link, resolve_link, resolve_relative_link

# Element -> the attribute holding its link target.
LINK_ATTRIBUTES = {"a": "href", "area": "href", "frame": "src", "iframe": "src"}
_LINK_TAGS = tuple(LINK_ATTRIBUTES)


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
        resolved = resolve_link(href, page_url, encoding)
        if resolved is not None:
            return resolved
        try:
            return ada_url.URL(href, base=page_url).href
        except ValueError:
            return page_url
    return page_url


def extract_links(root, page_url: str, encoding: str) -> list[str]:
    """Canonical http(s) URLs of a[href], area[href], frame[src] and
    iframe[src], rel=nofollow skipped, de-duplicated, in document order.

    `encoding` is the page's codec: non-ASCII query characters are
    percent-encoded in it, as the URL Standard says.
    """
    base = base_url(root, page_url, encoding)
    # The Parser's innermost loop, once per link of every page: calls are
    # inlined, and repeats are dropped at the end by a dict, in C.
    urls = []
    for element in root.iter(_LINK_TAGS):
        target = element.get(LINK_ATTRIBUTES[element.tag])
        if target is None:
            continue
        rel = element.get("rel")
        if rel is not None and "nofollow" in rel.lower().split():
            continue
        if target.startswith(ABSOLUTE_PREFIXES):
            urls.append(resolve_absolute_link(target, encoding))
        else:
            urls.append(resolve_relative_link(target, base, encoding))
    unique = dict.fromkeys(urls)
    unique.pop(None, None)  # hrefs that resolve to no http(s) URL
    return list(unique)
