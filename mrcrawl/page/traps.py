"""The trap guards: which linked URL looks like a crawler trap, by its shape.

A crawler trap is a site that makes new URLs without end: a calendar whose
next month links the month after, a relative link that adds a path segment
on every page (/cal/x/, /cal/x/x/, ...), faceted navigation that adds a
filter on every click, a state or session blob that grows in the URL.  Each
guard is named by its config key (records.TRAP_GUARDS) and is off when its
value is None:

- `max_url_length`: the URL, canonical, has more characters than this;
- `max_path_repeats`: one segment of the URL's path occurs in it more times
  than this.  Segments are the parts of the path between slashes, compared
  as the canonical URL spells them (case and percent-escapes included);
  empty ones (a trailing slash, `//`) are not segments, and the query is no
  part of the path.  They need not be adjacent: /a/b/a/b/a/b/a/ holds `a`
  four times, /x/x/x/x/ holds `x` four times; a date path /2019/11/11/
  holds `11` twice;
- `max_query_params`: the query holds more parameters than this: its
  non-empty `&`-separated fields, a name repeated counting each time
  (`?a=1&a=2&b` holds three; `?a=1&&b=2` two).

The guards are checked in that order and the first that catches a URL
names it.  The Parser asks them of every link in the crawl's scope (a
redirect's target too); a caught link is `trapped` in the crawl db,
recorded with its guard, and never fetched.  A seed, or a URL injected into
the db, is the operator's own and never asked.

This runs once per link of every page, so the common case stays on string
methods: a URL with no more slashes than max_path_repeats cannot repeat a
segment that often, nor one with no more `&` than max_query_params hold
that many parameters, and neither is split.
"""
from __future__ import annotations

from collections import Counter
from typing import NamedTuple

from mrcrawl.config import CrawlConfig
from mrcrawl.store.records import TRAPPED_BY_LENGTH, TRAPPED_BY_PATH_REPEATS, TRAPPED_BY_QUERY_PARAMS


class TrapGuards(NamedTuple):
    """The guards' values, from the crawl config; None turns a guard off."""

    max_url_length: int | None = None
    max_path_repeats: int | None = None
    max_query_params: int | None = None

    @classmethod
    def of(cls, config: CrawlConfig) -> TrapGuards:
        return cls(config.max_url_length, config.max_path_repeats, config.max_query_params)


NO_GUARDS = TrapGuards()


def trap_guard(url: str, guards: TrapGuards) -> str | None:
    """The guard (its config key) that catches the canonical http(s) `url`,
    or None when none does."""
    if guards.max_url_length is not None and len(url) > guards.max_url_length:
        return TRAPPED_BY_LENGTH
    path_start = url.find("/", url.index("//") + 2)
    if path_start < 0:  # no path: no segment and no query (a canonical URL always has one)
        return None
    query_start = url.find("?", path_start)
    path_end = query_start if query_start >= 0 else len(url)
    limit = guards.max_path_repeats
    if limit is not None and url.count("/", path_start, path_end) > limit:
        segments = Counter(url[path_start:path_end].split("/"))
        del segments[""]
        if segments and max(segments.values()) > limit:
            return TRAPPED_BY_PATH_REPEATS
    limit = guards.max_query_params
    if limit is not None and query_start >= 0 and url.count("&", query_start) >= limit:
        if sum(1 for field in url[query_start + 1:].split("&") if field) > limit:
            return TRAPPED_BY_QUERY_PARAMS
    return None
