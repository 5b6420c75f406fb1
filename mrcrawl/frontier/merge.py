"""Merge's rule: which of a final URL's records, one per layer that reached it, is kept.

Records arrive as stored and are decoded only when there is a choice, or
when the URL's page is a duplicate, so the merge of a crawl costs little
more than copying it.
"""
from __future__ import annotations

from typing import Iterable

from mrcrawl.store.protocols import decode_value, encode_value
from mrcrawl.store.records import DUPLICATE_VALUE_START, FETCHED, NOT_HTML


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


def merged_record(stored: Iterable[bytes]) -> bytes:
    """What Merge writes for a final URL, from its doc records and, when its
    page repeats another URL's payload, its duplicate record (the dup
    store): the best doc record, with `duplicate_of` set if its page was
    fetched."""
    docs, duplicate = [], None
    for value in stored:
        if value.startswith(DUPLICATE_VALUE_START):
            duplicate = value
        else:
            docs.append(value)
    best = best_stored_record(docs)
    if duplicate is None:
        return best
    doc = decode_value(best)
    if doc["outcome"] in (FETCHED, NOT_HTML):
        doc["duplicate_of"] = decode_value(duplicate)["duplicate_of"]
    return encode_value(doc)
