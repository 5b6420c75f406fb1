"""Which entries of a feed or sitemap the crawl follows, and what it keeps of each.

The fetcher read the document's entries into its doc record (announce.py);
the Parser offers to the next layer those that pass these rules, each with
what the document said of it (records.ANNOUNCED_FIELDS), as page links are
offered:
- within the crawl's url_allow and url_deny;
- for a sitemap, under the sitemap's own directory when `sitemap_strict`
  (sitemaps.org: a sitemap at /news/sitemap.xml may list /news/a.html, not
  /sport/b.html, nor another host's pages; Nutch's strict mode);
- for a sitemap index, only while the sitemaps it lists are reached through
  at most `max_sitemap_nesting` indexes: an index that lists itself or
  indexes without end cannot keep the crawl fetching indexes.
An entry dated longer ago than `announced_max_age_days` is offered all the
same: the crawl db keeps its date and does not queue it (db_update's
cycle filter), so that a page linking it later does not have it fetched
either: the site said it is old news.
"""
from __future__ import annotations

from dataclasses import dataclass

from mrcrawl.config import CrawlConfig
from mrcrawl.page.announce import FEED, SITEMAP_INDEX
from mrcrawl.page.urls import UrlFilter, resolve_absolute_link
from mrcrawl.store.records import announced_entry


@dataclass(frozen=True)
class EntryRules:
    """What an entry must be to be offered: the config's sitemap keys."""

    sitemap_strict: bool = CrawlConfig.sitemap_strict
    max_sitemap_nesting: int = CrawlConfig.max_sitemap_nesting

    @classmethod
    def of(cls, config: CrawlConfig) -> "EntryRules":
        return cls(config.sitemap_strict, config.max_sitemap_nesting)


def nesting_of(doc: dict) -> int:
    """How many sitemap indexes led to the document (0 for one named by robots.txt, a seed, a page or a feed)."""
    return (doc.get("announced") or {}).get("nesting") or 0


def followed_entries(doc: dict, scope: UrlFilter, rules: EntryRules) -> tuple[list[str], list[dict]]:
    """The entry URLs of announcement `doc` to follow, each once, in the
    document's order, and parallel to them what it said of each."""
    kind = doc["kind"]
    nesting = nesting_of(doc) + (kind == SITEMAP_INDEX)
    if kind == SITEMAP_INDEX and nesting > rules.max_sitemap_nesting:
        return [], []
    directory = None if kind == FEED or not rules.sitemap_strict else _directory(doc["url"])
    urls: list[str] = []
    announced: list[dict] = []
    seen: set[str] = set()
    for entry in doc.get("entries") or ():
        url = entry[0]
        if url in seen or not scope.allows(url):
            continue
        if directory is not None and not url.startswith(directory):
            continue
        seen.add(url)
        urls.append(url)
        announced.append(announced_entry(entry, nesting))
    return urls, announced


def announcers_of(doc: dict, feeds: list[str], scope: UrlFilter) -> list[str]:
    """The feeds a page names and its host's robots.txt sitemaps, in scope, each once."""
    sitemaps = (resolve_absolute_link(url.strip(), "utf-8") for url in doc.get("robots_sitemaps") or ())
    return [url for url in dict.fromkeys([*feeds, *sitemaps]) if url is not None and scope.allows(url)]


def _directory(url: str) -> str:
    """The sitemap's directory, with scheme, host and port: what every URL it lists must start with."""
    path = url.split("?", 1)[0]
    return path[:path.rindex("/") + 1]
