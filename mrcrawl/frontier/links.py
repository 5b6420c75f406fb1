"""The crawl db's link store (Nutch's linkdb): which pages link to each URL.

The link partitions are a third kind of db partition file (crawldb.py):
files 2P .. 3P-1 of a generation hold the link partitions 0 .. P-1.  A
target URL's links live in the link partition of the same number as its URL
partition (crawldb.partition_of), sorted by key bytes as every partition is.
A line's key is the target URL, its value a link record:

    {"inlinks": [[source URL, anchor text, run first seen], ...]}

one entry per source, sorted by source URL.  An entry stays once seen: a
source that stops linking to the target stays listed (the pages' current
outlinks, in the db's URL records, say what links now).

A link update is a link record of one target, made by DbBatch from each page
it fetched (an out record of type LINKS_FROM_PAGE): one per outlink, keyed
`"@<partition> <target>"` in the batch, so that a partition's link updates
sort together, after its URL updates.  Updates fold, and merge into a stored
record, by union over the sources: the earliest run, the latest anchor.
"""
from __future__ import annotations

from pathlib import Path
from typing import Iterable, Iterator

from mrcrawl.frontier.crawldb import PARTITION_DIGITS, CrawlDb, find_sorted, key_bytes, partition_of
from mrcrawl.store.crawl_reader import read_part
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import LINKS_FROM_PAGE, out_anchors

LINK_KEY = "@"  # how a link update's batch key starts (a claim's starts with "#")

SOURCE, ANCHOR, RUN = range(3)  # the fields of an inlink entry


def link_key(target: str, partitions: int) -> str:
    """The batch key of a link update of `target`: `@`, its partition, then the URL."""
    return f"{LINK_KEY}{partition_of(target, partitions):0{PARTITION_DIGITS}d} {target}"


def is_link_key(key: str) -> bool:
    return key.startswith(LINK_KEY)


def link_prefix(partition: int) -> bytes:
    """How every batch line of a link partition's updates starts (see crawldb.batch_prefix)."""
    return f'"{LINK_KEY}{partition:0{PARTITION_DIGITS}d} '.encode("ascii")


def link_updates_from_out(out: dict, source: str, run: str) -> Iterator[tuple[str, dict]]:
    """(target, link update) for each outlink of the page `source` whose out
    record this is, seen on the run starting at `run`; none for a redirect's
    out record, whose target is no link of a page."""
    if out.get("type") != LINKS_FROM_PAGE:
        return
    for target, anchor in zip(out["outlinks"], out_anchors(out)):
        if target != source:
            yield target, {"inlinks": [[source, anchor, run]]}


def fold_links(records: Iterable[dict | None]) -> dict:
    """One link record from several of a target (stored or updates): each
    source once, with the earliest run it was seen on and the anchor of the
    latest, sorted by source URL."""
    by_source: dict[str, list] = {}
    for record in records:
        for source, anchor, run in (record or {}).get("inlinks", ()):
            before = by_source.get(source)
            if before is None:
                by_source[source] = [source, anchor, run]
            elif run > before[RUN]:
                before[ANCHOR] = anchor
            elif run < before[RUN]:
                by_source[source] = [source, before[ANCHOR], run]
            else:  # the same run: any order of the folds gives the same anchor
                before[ANCHOR] = max(before[ANCHOR], anchor)
    return {"inlinks": [by_source[source] for source in sorted(by_source)]}


def find_inlinks(directory: Path, target: str) -> dict | None:
    """The link record of `target` in the db at `directory`, read from its
    link partition only, or None (a format-2 db holds no links)."""
    db = CrawlDb(CrawlStore(directory))
    files = db.link_files()
    if not files:
        return None
    with open(files[partition_of(target, db.partitions)], "rb") as stored:
        for _, record in find_sorted(stored, [(key_bytes(target),)]):
            return record
    return None


def read_links(directory: Path) -> Iterator[tuple[str, dict]]:
    """Every (target URL, link record) of the db's link store, partition by partition, in key order."""
    for part in CrawlDb(CrawlStore(directory)).link_files():
        yield from read_part(Path(part))
