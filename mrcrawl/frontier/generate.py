"""Which URLs a layer's frontier holds, asked of the crawl db partition by
partition (Nutch's generate step, without its full sort).

- Layer 0 (`layer_zero`): the run's seeds, and every db URL that is due
  (a hub of a host that announces its pages, when `revisit.announcing_hub_days`
  says so, less often).
- A later layer (`queued_for`): the URLs the cycle filter queued for it while
  merging the layer before (db_update.apply_update): linked on this run,
  never fetched on any run.

Both read one partition file in one pass.  Each record's due time and queue
mark are found in its line's bytes, so only the lines that enter the
frontier are decoded: the db can be far larger than a frontier.  When the
config caps a layer (caps.py), both write the layer's candidates instead,
`ordered`: each entry with its order key in the crawl's `order`, which
only a record can give.

A frontier entry's rank orders a host's URLs in the Crawler (lowest first):
seeds, then hubs, then retries of transient failures, then the rest.
"""
from __future__ import annotations

from datetime import timedelta
from typing import Iterable, Iterator

import orjson

from mrcrawl.frontier.caps import BFS, candidate, order_key
from mrcrawl.frontier.crawldb import join_sorted, key_bytes
from mrcrawl.frontier.db_update import due_before, parse_time, queue_mark
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import FAILED, FETCHED, KNOWN_FIELDS, NOT_MODIFIED, iso_utc, new_frontier_entry

SEED_RANK, HUB_RANK, RETRY_RANK, OTHER_RANK = 0, 1, 2, 3

_lines = Utf8JsonProtocol()
_DUE_AT = b'"due_at":"'  # as the store's compact JSON writes the field
_DUE_AT_WIDTH = len("2026-01-05T06:00:00.000Z")  # iso_utc's times all have this width


def unique_adjacent(values: Iterable) -> Iterator:
    """Drop repeats from sorted values, holding only the previous one."""
    previous = None
    for value in values:
        if value != previous:
            yield value
            previous = value


def _rank(record: dict) -> int:
    if record["hub"]:
        return HUB_RANK
    return RETRY_RANK if record["status"] == FAILED else OTHER_RANK


def _due_at(line: bytes) -> bytes | None:
    start = line.find(_DUE_AT)
    if start < 0:
        return None  # "due_at": null: never fetched, or never to be
    start += len(_DUE_AT)
    return line[start:start + _DUE_AT_WIDTH]


def _entry(url: str, record: dict, seed: bool, run: str, ordered: bool, order: str) -> dict:
    known = {field: record[field] for field in KNOWN_FIELDS} if record["fetch_count"] else None
    rank = SEED_RANK if seed else _rank(record)
    entry = new_frontier_entry(rank, seed, 0 if seed else record["hops"], known, score=record["score"],
                               announced=record.get("announced"))
    return candidate(entry, None if seed else order_key(url, record, run, order)) if ordered else entry


# How a stored record of a feed or news sitemap spells its kind: the hosts
# that announce their new pages (page/announce.py's kinds, as compact JSON).
_ANNOUNCING_KINDS = (b'"kind":"feed"', b'"kind":"news_sitemap"')


def announcing_hosts(stored_lines: Iterable[bytes]) -> set[str]:
    """The hosts of one partition (the db partitions by host) with a feed or
    news sitemap that was read on its last fetch."""
    hosts = set()
    for line in stored_lines:
        if any(kind in line for kind in _ANNOUNCING_KINDS):
            _, record = _lines.read(line.rstrip(b"\r\n"))
            if record["status"] in (FETCHED, NOT_MODIFIED):
                hosts.add(record["host"])
    return hosts


def layer_zero(stored_lines: Iterable[bytes], seeds: list[str], run: str,
               ordered: bool = False, order: str = BFS, announcing: set[str] = frozenset(),
               announcing_hub_days: float | None = None) -> Iterator[tuple[str, dict]]:
    """Layer 0's frontier entries of one partition: its seeds (`seeds` holds
    only this partition's) and its due URLs, in the partition's key order.
    With `announcing_hub_days`, a hub of an `announcing` host (not a seed)
    is due that long after its last fetch instead: the host's feeds and
    news sitemaps bring its new pages."""
    due = due_before(run).encode("ascii")
    for line, seed in join_sorted(stored_lines, sorted((key_bytes(url), url) for url in seeds)):
        if line is None:
            entry = new_frontier_entry(SEED_RANK, True, 0, None)
            yield seed[1], candidate(entry, None) if ordered else entry
            continue
        due_at = _due_at(line)
        if seed is not None or (due_at is not None and due_at <= due):
            url, record = _lines.read(line)
            if seed is None and announcing_hub_days and record["hub"] and record["host"] in announcing and (
                    _later(record["fetched_at"], announcing_hub_days) > due.decode("ascii")):
                continue
            yield url, _entry(url, record, seed is not None, run, ordered, order)


def _later(moment: str, days: float) -> str:
    return iso_utc(parse_time(moment) + timedelta(days=days))


def queued_for(stored_lines: Iterable[bytes], run: str, layer: int,
               ordered: bool = False, order: str = BFS) -> Iterator[tuple[str, dict]]:
    """The frontier entries of one partition that the cycle filter queued for `layer` of `run`."""
    mark = queue_mark(run, layer)
    marked = b'"queued":' + orjson.dumps(mark)  # as the store's compact JSON writes the field
    for line in stored_lines:
        if marked in line:
            url, record = _lines.read(line.rstrip(b"\r\n"))
            if record["queued"] == mark:
                yield url, _entry(url, record, False, run, ordered, order)
