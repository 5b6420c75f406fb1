"""Merge's rule: which of a final URL's records, one per layer that reached it, is kept.

Records arrive as stored and are decoded only when there is a choice, when
the URL's page may be a duplicate, or when it is a fetched page: that one
gets what the Parser read of it (its out record's `page`, page_record), so
that HtmlToXml writes its XML without parsing it again.  Any other record
passes as it was stored.
"""
from __future__ import annotations

from typing import Iterable

from mrcrawl.frontier.dedup import content_duplicate
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import decode_value, encode_value
from mrcrawl.store.records import (DUPLICATE_VALUE_START, FETCHED, NOT_HTML, OUT_VALUE_START, is_content_duplicate,
                                   is_fetched_page)

# A page whose out record is missing (a crawl merged by an older version
# never handed Merge its out records) is judged again here, without its
# links' scope: only the page is judged.
_ANY_LINK = UrlFilter([], [])


def _merge_rank(doc: dict) -> tuple[int, int, str]:
    # A fetched page beats any other outcome; then the earliest layer wins,
    # as the thesis's Merge keeps the first document per URL.  Two requests
    # redirected to one page on one layer tie; the requested URL breaks the
    # tie, so that every runner keeps the same record whatever order its
    # shuffle hands them over in.
    return (0 if doc["outcome"] == FETCHED else 1, doc["layer"], doc["requested_url"])


def best_stored_record(stored: Iterable[bytes]) -> bytes:
    """The one record Merge keeps for a final URL, from the records as stored.

    Nearly every final URL has one record, passed on as it is; only when
    there is a choice are the candidates decoded, one at a time.
    """
    best, best_rank = None, None
    for value in stored:
        if best is None:
            best = value
            continue
        if best_rank is None:
            best_rank = _merge_rank(decode_value(best))
        rank = _merge_rank(decode_value(value))
        if rank < best_rank:
            best, best_rank = value, rank
    return best


def merged_record(stored: Iterable[bytes], hub_link_density: float) -> bytes:
    """What Merge writes for a final URL, from its doc records, their out
    records (the Parser's, one per doc record) and, when its page repeats
    another URL's payload or content, its duplicate records (the dup
    store): the best doc record; a fetched page's with what the Parser
    read of it (page_record), and `duplicate_of` set if it is a duplicate
    (frontier/dedup.py).  `hub_link_density` is the crawl's, with which the
    Parser judged pages."""
    docs, outs, duplicates = [], [], []
    for value in stored:
        if value.startswith(DUPLICATE_VALUE_START):
            duplicates.append(value)
        elif value.startswith(OUT_VALUE_START):
            outs.append(value)
        else:
            docs.append(value)
    best = best_stored_record(docs)
    if not outs and not duplicates:
        return best
    doc = decode_value(best)
    page, fetched = is_fetched_page(doc), doc["outcome"] in (FETCHED, NOT_HTML)
    if not page and not (duplicates and fetched):
        return best
    # The out record of the layer whose doc record was kept: a URL reached
    # on two layers has one of each per layer.
    out = next((out for out in map(decode_value, outs) if out["layer"] == doc["layer"]), None)
    if page and out is not None:
        doc = page_record(doc, out)
    if duplicates and fetched:
        found = [decode_value(value) for value in duplicates]
        duplicate = next((record for record in found if is_content_duplicate(record)), None)
        if duplicate is None:
            # Only its payload is another URL's: that makes the page a
            # duplicate when it has no content signature, as the Parser judged it.
            duplicate = content_duplicate(found, out if out is not None else out_record(doc, _ANY_LINK, hub_link_density))
        if duplicate is not None:
            doc["duplicate_of"] = duplicate["duplicate_of"]
    return encode_value(doc)


def page_record(doc: dict, out: dict) -> dict:
    """A fetched page's doc record with what the Parser read of it (`out`,
    its out record): whether the page may be followed and indexed, its meta
    robots now joined to its X-Robots-Tag, and in `page` the index's
    fields and the page's change signature (records.DOC_FIELDS)."""
    page = out.get("page")
    if page is None:  # the Parser could not read the page, or an older version parsed it
        return doc
    return {**doc, "meta_follow": page["follow"], "meta_index": page["index"],
            "page": {**page, "signature": out["signature"]}}
