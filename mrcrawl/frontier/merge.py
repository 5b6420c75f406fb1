"""Merge's rule: which of a final URL's records, one per layer that reached it, is kept.

Records arrive as stored and are decoded only when there is a choice, or
when the URL's page may be a duplicate, so the merge of a crawl costs little
more than copying it.
"""
from __future__ import annotations

from typing import Iterable

from mrcrawl.frontier.dedup import content_duplicate
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import decode_value, encode_value
from mrcrawl.store.records import DUPLICATE_VALUE_START, FETCHED, NOT_HTML, is_content_duplicate

# The Parser's judgement of a page is made again here without its links' scope: only the page is judged.
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
    """What Merge writes for a final URL, from its doc records and, when its
    page repeats another URL's payload or content, its duplicate records
    (the dup store): the best doc record, with `duplicate_of` set if its
    page was fetched and is a duplicate (frontier/dedup.py).
    `hub_link_density` is the crawl's, with which the Parser judged pages."""
    docs, duplicates = [], []
    for value in stored:
        (duplicates if value.startswith(DUPLICATE_VALUE_START) else docs).append(value)
    best = best_stored_record(docs)
    if not duplicates:
        return best
    doc = decode_value(best)
    if doc["outcome"] not in (FETCHED, NOT_HTML):
        return best
    found = [decode_value(value) for value in duplicates]
    duplicate = next((record for record in found if is_content_duplicate(record)), None)
    if duplicate is None:
        # Only its payload is another URL's: that makes the page a duplicate
        # when it has no content signature.  The Parser judged that; it is
        # judged again here, for the few pages whose payload another URL had first.
        duplicate = content_duplicate(found, out_record(doc, _ANY_LINK, hub_link_density))
    if duplicate is None:
        return best
    doc["duplicate_of"] = duplicate["duplicate_of"]
    return encode_value(doc)
