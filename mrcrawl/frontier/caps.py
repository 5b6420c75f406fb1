"""A layer's frontier within its caps: `max_urls_per_host` and
`max_urls_per_layer` (Nutch's generate.max.count and topN).

When the config sets either cap, the Generator and the Optimizer
(generate.py) write a layer's candidates instead of its frontier: the same
frontier entries, each with its place in the crawl's order (`order`, its
order key).  Then up to three steps choose the frontier (plan.py):

1. The per-host cap, a reduce by host (jobs/host_cap.py): a host's
   candidates meet in one reducer call, as the Crawler's do, sorted by
   their order keys; the first `max_urls_per_host` stay, the rest are held
   back.  This is the only sort, and it is per host.
2. The topN's first pass (jobs/layer_histogram.py): the candidates left are
   counted by cell, a prefix of the order key (below), into a small store:
   one line per cell that holds any, so never more lines than candidates.
3. Its second pass, map only (jobs/layer_cap.py): each task reads the
   histogram and finds the same threshold, the first cell, in order, at
   which the running count passes `max_urls_per_layer`; every candidate in
   a cell before it stays, every one in it or after it is held back.

No process holds a list of the layer's URLs: only a host's in the reduce
(which the Crawler holds as well), and the histogram's counts.  A held-back
URL stays in the frontier store, its entry's `deferred` naming the cap, so
that DbBatch records why it waits (db_update.updates_from_entry); the
Crawler passes it over.  Seeds are never held back and count against
neither cap.

The crawl's order is the config's `order`.  Its `bfs` is fewest hops from
a seed first, then discovery order.  A record's order value (order_value)
says both, and its order key adds a hash of the URL to break ties:

    <hops - deferrals + 100000, 6 digits>.<found, 3 digits>.<hash, 16 hex digits>

- hops - deferrals: the URL's hops from the nearest seed (1,000 when no
  record knows them), less one for every time it was deferred in a row:
  a deferred URL ages.  Held back once, it comes before the URLs of its
  own depth found since; held back hops + 1 times, before every URL never
  deferred.  So a URL held back again and again is chosen once the URLs
  still ahead of it, which only grow fewer, have had their turn (BEAST's
  later queues: deferred, never dropped).
- found: 0 for a URL found on an earlier run, 1 + the layer that first
  found it for one found on this run: earlier runs' URLs first, then this
  run's by the layer that found them.
- hash: the first 8 bytes of the BLAKE2b hash of the URL, in hex.  Ties
  then fall in an order that is fixed but spreads over hosts and paths,
  where the URLs' own order would take one host's before any other's.

Keys compare as strings, so the reduce's sort of its values (SORT_VALUES)
is the crawl's order.  A cell is an order value and the hash's first
CELL_DIGITS digits: 4,096 cells per order value.  Cells before the threshold
are kept whole, and so is nothing of the threshold cell, so a layer holds
at most `max_urls_per_layer` URLs besides its seeds, and at least that
many less one cell's share of an order value (1/4,096 of it).  Which URLs
stay depends on their keys alone: the same on every runner, however the
candidates were split into tasks.

The link-based orders (frontier/scores.py's scores) are other order values
before the hash, each of a fixed width, with bfs's value last, to break
their ties: the steps above do not change.

    pagerank: <0 scored, 1 not><-ln(score) - deferrals * ln 2 + 100, in millionths, 9 digits>.<bfs>
    indegree: <9999999 - (inlinks + deferrals), 7 digits>.<99999 - inlink_hosts, 5 digits>.<bfs>

A deferral ages a URL there too: it counts as a score twice as high, or as
one linking page more.  A URL with no score (a seed or an injected URL
that no run has scored yet) comes after every scored one.
"""
from __future__ import annotations

import hashlib
import math
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Iterator

from mrcrawl.config import ORDERS, CrawlConfig, PldBudget
from mrcrawl.store.records import DEFERRED_BY_HOST_CAP, DEFERRED_BY_LAYER_CAP

HOPS_OFFSET = 100_000  # the order value's hops are written plus this, so that they are never negative
HOPS_WIDTH = 6
UNKNOWN_HOPS = 1_000  # a URL no record knows the hops of comes after every URL a crawl reaches
FOUND_ON_EARLIER_RUN = 0
FOUND_WIDTH = 3
HASH_DIGITS = 16
CELL_DIGITS = 3  # of the hash, in a cell: 4,096 cells per order value
PAGERANK, INDEGREE, BFS = ORDERS
SCORED, UNSCORED = "0", "1"  # pagerank's first digit: a URL with a score comes before one without
SCORE_WIDTH = 9  # digits of -ln(score), with SCORE_SCALE's in a unit
SCORE_SCALE = 10 ** 6  # scores within a millionth of each other's ratio tie, and bfs's value decides
LOG_OFFSET = 100  # added to -ln(score), so that an aged one is never negative
DEFERRAL_LOG = math.log(2)  # a deferral counts as a score twice as high
INLINKS_WIDTH, HOSTS_WIDTH = 7, 5


@dataclass(frozen=True)
class FrontierCaps:
    """A config's caps on a layer's frontier, and its budget per pay-level
    domain (None: none); false when it sets none."""

    per_layer: int | None = None  # max_urls_per_layer
    per_host: int | None = None  # max_urls_per_host
    pld_budget: PldBudget | None = None  # pld_budget (budgets.py)

    @classmethod
    def of(cls, config: CrawlConfig) -> "FrontierCaps":
        return cls(config.max_urls_per_layer, config.max_urls_per_host, config.pld_budget)

    def __bool__(self) -> bool:
        return self.per_layer is not None or self.per_host is not None or self.pld_budget is not None


def order_value(record: dict, run: str, order: str = BFS) -> str:
    """Where a db record's URL stands in the crawl's `order` on the run
    starting at `run`, lower first, as a fixed-width string (see above)."""
    deferrals = record.get("deferrals") or 0  # a record older than deferrals has none
    hops = UNKNOWN_HOPS if record["hops"] is None else record["hops"]
    aged = min(max(hops - deferrals, -HOPS_OFFSET), 10 ** HOPS_WIDTH - 1 - HOPS_OFFSET)
    found = FOUND_ON_EARLIER_RUN if record["first_run"] != run else 1 + (record["first_layer"] or 0)
    bfs = f"{aged + HOPS_OFFSET:0{HOPS_WIDTH}d}.{min(found, 10 ** FOUND_WIDTH - 1):0{FOUND_WIDTH}d}"
    if order == PAGERANK:
        score = record.get("score")
        if score is None or score <= 0:
            return f"{UNSCORED}{10 ** SCORE_WIDTH - 1}.{bfs}"
        aged_log = -math.log(score) - deferrals * DEFERRAL_LOG + LOG_OFFSET
        return f"{SCORED}{min(max(round(aged_log * SCORE_SCALE), 0), 10 ** SCORE_WIDTH - 1):0{SCORE_WIDTH}d}.{bfs}"
    if order == INDEGREE:
        inlinks = min((record.get("inlinks") or 0) + deferrals, 10 ** INLINKS_WIDTH - 1)
        hosts = min(record.get("inlink_hosts") or 0, 10 ** HOSTS_WIDTH - 1)
        return f"{10 ** INLINKS_WIDTH - 1 - inlinks:0{INLINKS_WIDTH}d}.{10 ** HOSTS_WIDTH - 1 - hosts:0{HOSTS_WIDTH}d}.{bfs}"
    return bfs


def url_hash(url: str) -> str:
    return hashlib.blake2b(url.encode("utf-8"), digest_size=HASH_DIGITS // 2).hexdigest()


def order_key(url: str, record: dict, run: str, order: str = BFS) -> str:
    """The URL's order key: its order value, then its hash."""
    return f"{order_value(record, run, order)}.{url_hash(url)}"


def cell_of(key: str) -> str:
    """The histogram cell of an order key: the key cut after CELL_DIGITS of its hash."""
    return key[:len(key) - HASH_DIGITS + CELL_DIGITS]


def candidate(entry: dict, key: str | None) -> dict:
    """A frontier entry as a candidate of a capped layer: with its order key (None for a seed)."""
    return {**entry, "order": key}


def counts(candidate: dict) -> bool:
    """Whether a candidate counts against the caps still to apply: no seed, and not held back already."""
    return not candidate["seed"] and not candidate["deferred"]


def held_back(candidate: dict, cap: str) -> dict:
    return {**candidate, "deferred": cap}


def within_host_cap(ranked: Iterable[tuple[str, str, dict]], cap: int | None) -> Iterator[tuple[str, dict]]:
    """One host's candidates, given as [order key, URL, candidate] in the
    crawl's order: (URL, candidate), the first `cap` that count as they
    were, the rest held back by max_urls_per_host."""
    taken = 0
    for _, url, entry in ranked:
        if counts(entry):
            if cap is not None and taken >= cap:
                entry = held_back(entry, DEFERRED_BY_HOST_CAP)
            taken += 1
        yield url, entry


def histogram_cell(entry: dict) -> str | None:
    """The cell a candidate is counted in for the topN, or None when it does not count."""
    return cell_of(entry["order"]) if counts(entry) else None


def threshold(cells: Iterable[tuple[str, int]], cap: int) -> str | None:
    """The first cell, in the crawl's order, at which the candidates counted
    (cell, how many; a cell may come more than once) pass `cap`; None when
    they all fit."""
    total_by_cell = Counter()
    for cell, count in cells:
        total_by_cell[cell] += count
    total = 0
    for cell in sorted(total_by_cell):
        total += total_by_cell[cell]
        if total > cap:
            return cell
    return None


def within_layer_cap(entry: dict, cut: str | None) -> dict:
    """A candidate, held back by max_urls_per_layer when it counts and its
    cell is not before the threshold `cut` (None: every candidate fits)."""
    if cut is None or not counts(entry) or cell_of(entry["order"]) < cut:
        return entry
    return held_back(entry, DEFERRED_BY_LAYER_CAP)


def capped_frontier(seeds: int, kept: int, held_back: int) -> tuple[int, str]:
    """A capped frontier's URLs to fetch, from its step's counters, and the
    same in words: how many of the candidates the caps let through, besides the seeds."""
    words = f"{kept} of {kept + held_back}"
    return seeds + kept, f"{seeds} seeds + {words}" if seeds else words
