"""The Optimizer's cycle filter: which outlinks of a layer make the next frontier.

The Optimizer is a sort-merge: every URL ever attempted is marked SEEN, every
newly found link is marked NEW, and after the shuffle a URL goes to the next
layer only if none of its marks is SEEN.  Nothing is held in memory but the
marks of one URL.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from mrcrawl.store.protocols import Utf8JsonProtocol

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
