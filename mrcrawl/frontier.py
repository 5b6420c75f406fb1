"""What the frontier jobs decide, apart from mrjob: dedupe, cycle filter, merge.

The Optimizer is a sort-merge: every URL ever attempted is marked SEEN, every
newly found link is marked NEW, and after the shuffle a URL goes to the next
layer only if none of its marks is SEEN.  Nothing is held in memory but the
marks of one URL.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from .protocols import Utf8JsonProtocol, decode_value
from .records import FETCHED

SEEN = True  # the URL was requested, or was the final URL, on some layer
NEW = False  # the URL is an outlink of the current layer

_records = Utf8JsonProtocol()


def unique_adjacent(values: Iterable[str]) -> Iterator[str]:
    """Drop repeats from sorted values, holding only the previous one."""
    previous = None
    for value in values:
        if value != previous:
            yield value
            previous = value


def optimizer_marks(line: str, layer: int) -> Iterator[tuple[str, bool]]:
    """The marks one store line contributes to the cycle filter.

    A frontier line (`in/`) is a bare URL that was requested.  An out record
    (`out/`) is keyed by a page's final URL, which was attempted too; its
    outlinks are candidates only if the record belongs to the current layer.
    """
    if not line.startswith('"'):
        if line:
            yield line, SEEN
        return
    url, out = _records.read(line.encode("utf-8"))
    yield url, SEEN
    if out["layer"] == layer:
        for link in out["outlinks"]:
            yield link, NEW


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
