"""A news web that changes day by day, for crawls that come back.

Each site is a newspaper on its own loopback address (127.0.0.2 and up, one
port for all): a home page, section pages and articles, and a robots.txt that
allows everything.  Day 1 holds `articles` articles per site (dated over the
days before it); every later day publishes new ones, updates the text of some
and deletes some (404 from then on), and some articles fail the first request
of a day with a 503.  The home page links every section and the newest
articles, a section page the newest of its section, newest first: a new
article pushes the oldest off, so an old article may be reached only through
the "related" links of newer ones, or not at all.  Hub pages (home and
sections) print the edition's date, so their bytes change every day even when
their links do not; telling the two apart is the crawler's job.

With `cross_posted_share`, some articles are also published in a second
section, under that section's URL, as news sites publish one article in
two: the second section's page links the copy.  The two answers differ only
in what every answer changes (the time the page was rendered, a rotating
advert, a script's nonce), so their bytes differ and their text does not:
the copy's Page names its article in `same_text_as`, and the crawler is to
take the later of the two for a duplicate of the first.

With `announcing_share`, some sites also announce their articles, as news
sites do for aggregators: robots.txt names a sitemap index (`Sitemap:`),
which lists a Google News sitemap of the last two days' articles, a plain
sitemap of the week's live articles and a gzip one of the older ones; the
home page's <head> names an RSS 2.0, an Atom and an RSS 1.0 feed of the
newest articles (ANNOUNCEMENTS has their paths).  With
`announced_only_share`, some articles of those sites are linked by no page
(no hub lists them, no article relates to them): only the feeds and
sitemaps lead to them.  A feed or sitemap is no article: it is not among the
day's events, never fails nor goes, has no outlinks (its entries are
entries(), not links), and its version is the day its entries last changed.
The other sites announce nothing: no `Sitemap:` line, no feed named, 404 for
those paths.

Every 200 carries an ETag (a hash of the body: a strong validator) and a
Last-Modified (when the article last changed; for a hub, the day served), and
the server answers conditional requests with 304 (server.not_modified).

Nothing is stored per page: every page, and every answer about one, is
computed from the seed, the site, the article's number and the day, so the
benchmark's 50 sites of 2,000 articles cost no memory, and a page is rendered
only when it is asked for.

    with start_daily_web(DailySpec()) as server:  # serves day 1
        web = server.web
        web.seed_urls, web.crawl_config()  # what a crawl of it starts from
        web.date_iso(1)              # the moment day 1 stands for
        server.set_day(2)
        web.events(2).deleted        # what a recrawl on day 2 must notice
        web.reachable(2, depth=3)    # what a crawl of 3 layers requests on day 2
        web.entries(web.robots_sitemaps(web.seed_urls[0])[0], 2)  # what a sitemap index lists on day 2
        web.discovery(2, depth=4)    # how that crawl finds each new article: linked, announced, both
"""

from __future__ import annotations

import email.utils
import gzip
import html
import hashlib
import itertools
import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import NamedTuple
from urllib.parse import urlsplit
from xml.sax.saxutils import escape

from mrcrawl.store.records import iso_utc

from .markup import Link, document
from .model import Host, Page, Robots, RobotsGroup, Web, missing_page, path_of, request_key
from .server import TestWebServer
from .sites import OBJECTS, SECTIONS, SUBJECTS, VERBS, article_paragraphs

# The moment day 1 stands for (a Monday, when the morning edition is out);
# day d is d - 1 days later.  A crawl of day d passes date_iso(d) as its clock.
FIRST_DAY = datetime(2026, 1, 5, 6, 0, tzinfo=timezone.utc)

ROBOTS = Robots(200, (RobotsGroup(("*",), allow=("/",)),))

SECTION_NAMES = SECTIONS + (
    "world", "politics", "health", "travel", "food", "music", "film", "books", "technology",
    "education", "environment", "weather", "motoring", "property", "opinion", "letters",
    "puzzles", "obituaries")
TOWNS = ("Harbourtown", "Millbrook", "Eastcliff", "Riverside", "Oakfield", "Stonebridge",
         "Westmere", "Kingsport", "Ashford", "Lakeview")
PAPERS = ("Herald", "Courier", "Gazette", "Post", "Chronicle")

# How many other sites' home pages a home page links, so that a crawl also
# meets the other sites through links.
PARTNER_SITES = 2

# An announcing site's feeds and sitemaps: path -> (kind, as the crawler names
# it; Content-Type).  All sit at the site's root, so that no sitemap lists
# URLs outside its own directory (the crawler's `sitemap_strict`).
SITEMAP_INDEX = "/sitemap_index.xml"
NEWS_SITEMAP = "/sitemap_news.xml"
RECENT_SITEMAP = "/sitemap_articles.xml"
ARCHIVE_SITEMAP = "/sitemap_archive.xml.gz"  # gzip-compressed, sent as is: no Content-Encoding
RSS_FEED, ATOM_FEED, RDF_FEED = "/feed.rss", "/feed.atom", "/feed.rdf"
ANNOUNCEMENTS = {
    SITEMAP_INDEX: ("sitemap_index", "application/xml"),
    NEWS_SITEMAP: ("news_sitemap", "application/xml"),
    RECENT_SITEMAP: ("sitemap", "application/xml"),
    ARCHIVE_SITEMAP: ("sitemap", "application/gzip"),
    RSS_FEED: ("feed", "application/rss+xml"),
    ATOM_FEED: ("feed", "application/atom+xml"),
    RDF_FEED: ("feed", "application/rdf+xml"),
}
ANNOUNCEMENT_PATHS = tuple(ANNOUNCEMENTS)
INDEXED_SITEMAPS = (NEWS_SITEMAP, RECENT_SITEMAP, ARCHIVE_SITEMAP)  # what the sitemap index lists
FEEDS = (RSS_FEED, ATOM_FEED, RDF_FEED)
# How the home page's <head> names each feed: root-relative, absolute (None) and path-relative.
FEED_HREFS = {RSS_FEED: "/feed.rss", ATOM_FEED: None, RDF_FEED: "feed.rdf"}
FEED_NAMES = {RSS_FEED: "RSS 2.0", ATOM_FEED: "Atom", RDF_FEED: "RSS 1.0"}
NEWS_DAYS = 2  # the news sitemap lists the articles published on the day and the day before
ARCHIVE_AFTER_DAYS = 7  # an article published this many days before the day moves to the archive sitemap
LANGUAGE = "en"
FEED_ZONE = timezone(timedelta(hours=1))  # the zone some feed dates are written in (the others: UTC)
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'
SITEMAPS_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
NEWS_NS = "http://www.google.com/schemas/sitemap-news/0.9"
ATOM_NS = "http://www.w3.org/2005/Atom"
RDF_NS = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RSS1_NS = "http://purl.org/rss/1.0/"
DC_NS = "http://purl.org/dc/elements/1.1/"

# The crawler's defaults that decide what it follows of an announcement
# (what the model's reachable() obeys unless told otherwise).
ANNOUNCED_MAX_AGE_DAYS = 30
MAX_SITEMAP_NESTING = 2

# How a crawl's walk finds an article (discovery()).
LINKED, ANNOUNCED, BOTH, UNREACHED = "linked", "announced", "both", "unreached"


@dataclass(frozen=True)
class DailySpec:
    """The shape of a daily web. The defaults make a small one for tests;
    BENCHMARK_SPEC is the benchmark's."""

    seed: int = 1
    sites: int = 3
    sections: int = 3  # section pages per site
    articles: int = 40  # articles per site on day 1
    new_share: float = 0.1  # articles published each later day, as a share of `articles`
    # Chances per live article and day, from day 2 on (fail_once_share: from day 1):
    updated_share: float = 0.05  # its text changes
    deleted_share: float = 0.02  # it answers 404 from that day on
    fail_once_share: float = 0.05  # its first request of the day answers 503
    # Chance per article, when it is published: it is also in a second section, under that section's URL.
    cross_posted_share: float = 0.0
    latest: int = 10  # articles a hub page lists, newest first
    related: int = 2  # older articles of its section an article links to
    days: int = 7
    # Share of the sites that announce their articles (robots.txt's Sitemap:, sitemaps, feeds);
    # the others announce nothing.  0: none does, and not a byte differs from a web without them.
    announcing_share: float = 0.0
    # Chance per article of an announcing site, when it is published: no page links it, only the
    # feeds and sitemaps list it.
    announced_only_share: float = 0.0

    def __post_init__(self) -> None:
        if not 1 <= self.sites <= 253:  # 127.0.0.2 to 127.0.0.254
            raise ValueError(f"sites must be 1 to 253, got {self.sites}")
        if min(self.sections, self.articles, self.latest, self.days) < 1 or self.related < 0:
            raise ValueError("sections, articles, latest and days must be at least 1, related at least 0")
        shares = (self.new_share, self.updated_share, self.deleted_share, self.fail_once_share,
                  self.cross_posted_share, self.announcing_share, self.announced_only_share)
        if not all(0.0 <= share <= 1.0 for share in shares):
            raise ValueError("the shares must be between 0 and 1")
        if self.cross_posted_share and self.sections < 2:
            raise ValueError("cross_posted_share needs at least 2 sections: a second one to publish in")
        if self.announced_only_share and not self.announcing_sites:
            raise ValueError("announced_only_share needs an announcing site: raise announcing_share")

    @property
    def new_per_day(self) -> int:
        return round(self.articles * self.new_share)

    @property
    def announcing_sites(self) -> int:
        """How many sites announce: `announcing_share` of them, rounded half up."""
        return math.floor(self.sites * self.announcing_share + 0.5)


BENCHMARK_SPEC = DailySpec(sites=50, sections=20, articles=2000, new_share=0.02, latest=25)
# The benchmark's web with 80% of the sites announcing, a few articles on them announced only.
ANNOUNCING_BENCHMARK_SPEC = DailySpec(sites=50, sections=20, articles=2000, new_share=0.02, latest=25,
                                      announcing_share=0.8, announced_only_share=0.05)


class AnnouncedEntry(NamedTuple):
    """One entry of a feed or sitemap, as a correct parser reads it: an
    absolute URL; dates as the crawler's records write them (records.iso_utc),
    None when the document gives none; the title as plain text."""

    url: str
    published: str | None  # pubDate, dc:date, Atom's published, news:publication_date
    modified: str | None  # lastmod, Atom's updated
    title: str | None
    language: str | None  # news:language, or the feed's language


@dataclass(frozen=True)
class DayEvents:
    """What happens to the articles on one day: URLs in site and article order,
    a cross-posted article's copy right after it."""

    published: tuple[str, ...]  # answer 200 from this day on (day 1: every article of day 1)
    updated: tuple[str, ...]  # new text; Last-Modified moves to this day
    deleted: tuple[str, ...]  # answer 404 from this day on
    failing: tuple[str, ...]  # the day's first request answers 503, the next ones 200


class _Spot(NamedTuple):
    """Where a URL of the web is: its site, what it is, and which one."""

    site: int
    # "robots", "home", "section", "article", "copy": a cross-posted article in
    # its second section, or "announcement": a feed or sitemap
    kind: str
    number: int  # the section's, the article's, the announcement's in ANNOUNCEMENT_PATHS (0 for the others)


ARTICLE_KINDS = ("article", "copy")


class DailyWeb:
    """The daily web: every page on every day, and the ground truth an oracle
    needs.  It holds no state that changes: every question names its day.
    TestWebServer serves it one day at a time through on(day)."""

    def __init__(self, spec: DailySpec, port: int):
        if not 0 < port < 65536:
            raise ValueError(f"bad port {port}")
        self.spec = spec
        self.port = port
        ranked = sorted(range(spec.sites), key=lambda site: self._number("announces", site, 0))
        self._announcing = frozenset(ranked[:spec.announcing_sites])
        hosts = tuple(Host(f"127.0.0.{2 + site}", port, "daily", ROBOTS) for site in range(spec.sites))
        robots = {}
        for site, host in enumerate(hosts):
            url = host.url("/robots.txt")
            body = ROBOTS.body
            if site in self._announcing:
                body += f"\nSitemap: {host.url(SITEMAP_INDEX)}\n".encode()
            robots[url] = self._page(url, "robots", body, 1, content_type="text/plain")
        # What is the same every day, as a Web: hosts, robots.txt, seeds, crawl config.
        self.static = Web(seed=spec.seed, port=port, hosts=hosts, pages=robots,
                          seed_urls=tuple(host.url("/") for host in hosts), seed_spellings={})
        self._site_at = {host.address: site for site, host in enumerate(hosts)}
        self._section_at = {section_path(section): section for section in range(spec.sections)}
        # The dates in article paths, one per day of publication: formatting
        # them took most of the time a hub page takes to render.
        self._date_paths = {day: f"{self.date(day):%Y/%m/%d}"
                            for day in range(self._published_day(0), spec.days + 1)}

    # -- the web's frame -------------------------------------------------------

    @property
    def addresses(self) -> tuple[str, ...]:
        return self.static.addresses

    @property
    def seed_urls(self) -> tuple[str, ...]:
        """The home pages."""
        return self.static.seed_urls

    def crawl_config(self, **overrides) -> dict:
        """A crawl config (the YAML's keys) that keeps a crawl on this web."""
        return self.static.crawl_config(**overrides)

    def hub_urls(self) -> list[str]:
        """Every home and section page, site by site."""
        return [self._url(site, path) for site in range(self.spec.sites)
                for path in ["/", *self._section_at]]

    @property
    def days(self) -> range:
        return range(1, self.spec.days + 1)

    def date(self, day: int) -> datetime:
        """The moment `day` stands for (UTC); days before 1 date older articles."""
        return FIRST_DAY + timedelta(days=day - 1)

    def date_iso(self, day: int) -> str:
        """date(day) in ISO 8601, as a crawl's clock is given: 2026-01-05T06:00:00Z."""
        return f"{self.date(day):%Y-%m-%dT%H:%M:%SZ}"

    def on(self, day: int) -> WebDay:
        """The web as it is on `day`, read like a Web."""
        if day not in self.days:
            raise ValueError(f"day {day} is not one of days {self.days.start} to {self.days.stop - 1}")
        return WebDay(self, day)

    # -- what is served ---------------------------------------------------------

    def page(self, url: str, day: int) -> Page:
        """What the server sends for canonical `url` on `day`, and what a
        crawler should find in it. `flaky` marks an article that fails its
        first request of the day."""
        spot = self._locate(url)
        return self._render(spot, day) if spot else missing_page(url)

    def respond(self, address: str, target: str, day: int) -> Page:
        """The page sent for a request target on `address` on `day`."""
        if target.startswith(("http://", "https://")):  # absolute-form target
            target = path_of(target)
        site = self._site_at.get(address)
        spot = None if site is None else self._locate_path(site, request_key(target).decode("latin-1"))
        return self._render(spot, day) if spot else missing_page(f"http://{address}:{self.port}{target}")

    # -- ground truth --------------------------------------------------------------

    def exists(self, url: str, day: int) -> bool:
        """Whether `url` answers 200 on `day` (after its 503, if it fails once)."""
        spot = self._locate(url)
        return spot is not None and self._answers(spot, day)

    def existing(self, day: int) -> set[str]:
        """Every URL that answers 200 on `day`, robots.txt files, feeds and sitemaps included."""
        urls = set(self.static.pages) | set(self.hub_urls()) | set(self.announcement_urls())
        for site in range(self.spec.sites):
            urls.update(url for n in range(self._count(day)) if not self._deleted_by(site, n, day)
                        for url in self._urls_of(site, n))
        return urls

    def events(self, day: int) -> DayEvents:
        """The articles published, updated, deleted and failing once on `day`."""
        published, updated, deleted, failing = [], [], [], []
        first_new = 0 if day == 1 else self._count(day - 1)
        for site in range(self.spec.sites):
            for n in range(self._count(day)):
                gone = self._deleted_day(site, n)
                if gone is not None and gone <= day:
                    if gone == day:
                        deleted.append((site, n))
                    continue
                if n >= first_new:
                    published.append((site, n))
                elif self._updated(site, n, day):
                    updated.append((site, n))
                if self._fails_once(site, n, day):
                    failing.append((site, n))
        return DayEvents(*(tuple(url for site, n in articles for url in self._urls_of(site, n))
                           for articles in (published, updated, deleted, failing)))

    def fails_once(self, url: str, day: int) -> bool:
        """Whether the first request for `url` on `day` answers 503."""
        spot = self._locate(url)
        return (spot is not None and spot.kind in ARTICLE_KINDS and self._answers(spot, day)
                and self._fails_once(spot.site, spot.number, day))

    def deleted_on(self, url: str) -> int | None:
        """The day an article is deleted (404 from then on), None if it is not
        within the web's days (or `url` is no article)."""
        spot = self._locate(url)
        return self._deleted_day(spot.site, spot.number) if spot and spot.kind in ARTICLE_KINDS else None

    def version(self, url: str, day: int) -> int | None:
        """The day the content of `url` last changed, as of `day`; None when it
        does not answer 200 that day.  An article changes when published or
        updated (its Last-Modified says the same day); a hub page when its
        links change, not when only its edition date does (its Last-Modified
        is the day served).  `version(url, d) == d`: new or changed on day d."""
        spot = self._locate(url)
        if spot is None or not self._answers(spot, day):
            return None
        if spot.kind in ARTICLE_KINDS:
            return self._version(spot.site, spot.number, day)
        if spot.kind == "robots":
            return 1
        if spot.kind == "announcement":
            return self._announcement_version(spot.site, ANNOUNCEMENT_PATHS[spot.number], day)
        for changed in range(day, 1, -1):
            if self._outlinks(spot, changed) != self._outlinks(spot, changed - 1):
                return changed
        return 1

    def outlinks(self, url: str, day: int) -> tuple[str, ...]:
        """The canonical URLs the page at `url` links on `day`, in page order;
        none when it answers 404."""
        spot = self._locate(url)
        return self._outlinks(spot, day) if spot and self._answers(spot, day) else ()

    def reachable(self, day: int, depth: int, *, seeds=None, max_age_days: float = ANNOUNCED_MAX_AGE_DAYS,
                  max_sitemap_nesting: int = MAX_SITEMAP_NESTING, sitemap_strict: bool = True) -> dict[str, int]:
        """The URLs a crawl of `depth` layers from `seeds` (the home pages by
        default) requests on `day`, each with the layer that first finds it
        (0: the seeds).  Dead links count: an article keeps linking an older
        one after it is deleted.  On a web whose sites announce, the crawl
        also follows what they announce, with the crawler's rules (the
        keywords are its settings announced_max_age_days,
        max_sitemap_nesting and sitemap_strict):
        - a URL requested on layer L offers on layer L+1, when it answers 200,
          its links and the feeds it names; and, whatever it answers, the
          `Sitemap:` URLs of its host's robots.txt (the crawler offers them
          with the first page of the host settled on each layer);
        - a feed or sitemap requested on layer L offers its entries on layer
          L+1, but not those dated (published, else modified) `max_age_days`
          or more before date(day) (the crawl's clock has passed date(day)
          when it fetches: an entry exactly that old is already too old);
          with `sitemap_strict`, a sitemap's only when under the sitemap's
          directory; a sitemap index's only while the entries' nesting (the
          sitemap indexes that led to them; 0 for a seed, robots.txt's
          sitemaps, a page's feeds) is at most `max_sitemap_nesting`."""
        return self._walk(day, depth, seeds, max_age_days, max_sitemap_nesting, sitemap_strict)[0]

    def discovery(self, day: int, depth: int, **rules) -> dict[str, str]:
        """How the crawl reachable(day, depth, **rules) finds each of the
        day's new articles (events(day).published, copies included): LINKED
        when only links of the pages it fetches lead to it, ANNOUNCED when
        only entries of the feeds and sitemaps it fetches do, BOTH, or
        UNREACHED (no page nor announcement of its layers but the last)."""
        found_by = self._walk(day, depth, rules.pop("seeds", None), **rules)[1]
        paths = {}
        for url in self.events(day).published:
            ways = found_by.get(url, set())
            paths[url] = BOTH if len(ways) == 2 else next(iter(ways)) if ways else UNREACHED
        return paths

    def _walk(self, day: int, depth: int, seeds, max_age_days: float = ANNOUNCED_MAX_AGE_DAYS,
              max_sitemap_nesting: int = MAX_SITEMAP_NESTING,
              sitemap_strict: bool = True) -> tuple[dict[str, int], dict[str, set[str]]]:
        """reachable()'s walk: each URL's layer, and the ways (LINKED,
        ANNOUNCED) the URLs are offered by what the walk fetches."""
        seeds = self.seed_urls if seeds is None else tuple(seeds)
        layer_of = dict.fromkeys(seeds, 0)
        nesting_of = dict.fromkeys(seeds, 0)
        found_by: dict[str, set[str]] = {}
        too_old = self.date(day) - timedelta(days=max_age_days)
        frontier = list(layer_of)
        for layer in range(1, depth):
            offered: dict[str, int] = {}  # URL -> its nesting

            def offer(url: str, nesting: int, way: str | None = None) -> None:
                offered[url] = min(nesting, offered.get(url, nesting))
                if way:
                    found_by.setdefault(url, set()).add(way)

            hosts = set()
            for url in frontier:
                site = self._site_of(url)
                if site is not None and site not in hosts:
                    hosts.add(site)
                    for sitemap in self.robots_sitemaps(url):
                        offer(sitemap, 0)
                spot = self._locate(url)
                if spot is None or not self._answers(spot, day):
                    continue
                for link in self._outlinks(spot, day):
                    offer(link, 0, LINKED)
                for feed in self._feeds(spot):
                    offer(feed, 0)
                if spot.kind != "announcement":
                    continue
                path = ANNOUNCEMENT_PATHS[spot.number]
                kind = ANNOUNCEMENTS[path][0]
                nesting = nesting_of[url] + (kind == "sitemap_index")
                if kind == "sitemap_index" and nesting > max_sitemap_nesting:
                    continue
                directory = url.rpartition("/")[0] + "/"
                for entry in self._entries(spot.site, path, day):
                    dated = entry.published or entry.modified
                    if dated and datetime.fromisoformat(dated) <= too_old:
                        continue
                    if sitemap_strict and kind != "feed" and not entry.url.startswith(directory):
                        continue
                    offer(entry.url, nesting, ANNOUNCED)
            frontier = [url for url in offered if url not in layer_of]
            layer_of.update(dict.fromkeys(frontier, layer))
            nesting_of.update((url, offered[url]) for url in frontier)
        return layer_of, found_by

    # -- what the sites announce ----------------------------------------------------------

    def announces(self, url: str) -> bool:
        """Whether the site of `url` announces its articles."""
        return self._site_of(url) in self._announcing

    def announcement_urls(self) -> list[str]:
        """Every feed and sitemap the web serves, site by site, in ANNOUNCEMENTS' order."""
        return [self._url(site, path) for site in sorted(self._announcing) for path in ANNOUNCEMENT_PATHS]

    def announcement_kind(self, url: str) -> str | None:
        """The kind of the feed or sitemap at `url` (the crawler's names: "feed",
        "news_sitemap", "sitemap", "sitemap_index"), None for any other URL."""
        spot = self._locate(url)
        return ANNOUNCEMENTS[ANNOUNCEMENT_PATHS[spot.number]][0] if spot and spot.kind == "announcement" else None

    def robots_sitemaps(self, url: str) -> tuple[str, ...]:
        """The `Sitemap:` URLs of the robots.txt of `url`'s host (every day the same)."""
        site = self._site_of(url)
        return (self._url(site, SITEMAP_INDEX),) if site in self._announcing else ()

    def feeds(self, url: str, day: int) -> tuple[str, ...]:
        """The feeds the page at `url` names on `day` (its <link rel="alternate">), canonical, in page order."""
        spot = self._locate(url)
        return self._feeds(spot) if spot and self._answers(spot, day) else ()

    def entries(self, url: str, day: int) -> tuple[AnnouncedEntry, ...]:
        """What the feed or sitemap at `url` lists on `day`, in document order
        (a sitemap index: its sitemaps, with their lastmod); () for any other URL.
        The sitemaps and feeds list an article's own URL, never its copy's."""
        spot = self._locate(url)
        if spot is None or spot.kind != "announcement":
            return ()
        return self._entries(spot.site, ANNOUNCEMENT_PATHS[spot.number], day)

    def announced_only(self, url: str) -> bool:
        """Whether `url` is an article (or its copy) that no page links: only
        feeds and sitemaps lead to it."""
        spot = self._locate(url)
        return spot is not None and spot.kind in ARTICLE_KINDS and self._announced_only(spot.site, spot.number)

    # -- articles: numbered per site in order of publication ----------------------------

    def _count(self, day: int) -> int:
        """How many articles a site has published by `day`, deleted ones included."""
        return self.spec.articles + (day - 1) * self.spec.new_per_day

    def _published_day(self, n: int) -> int:
        """Day 1 publishes the newest `new_per_day` of the first articles; the
        others are dated back, at the same pace, to days before it."""
        per_day = self.spec.new_per_day
        return 1 if per_day == 0 else 2 + (n - self.spec.articles) // per_day

    def _deleted_day(self, site: int, n: int) -> int | None:
        share = self.spec.deleted_share
        if share == 0:
            return None
        # One draw decides: days until deletion are geometric, the same as
        # a `share` chance on each day the article lives.
        draw = self._uniform("deleted", site, n)
        wait = 1 if share == 1 else 1 + int(math.log1p(-draw) / math.log1p(-share))
        day = max(self._published_day(n), 1) + wait
        return day if day <= self.spec.days else None

    def _deleted_by(self, site: int, n: int, day: int) -> bool:
        deleted = self._deleted_day(site, n)
        return deleted is not None and deleted <= day

    def _updated(self, site: int, n: int, day: int) -> bool:
        """Whether a live article gets a new text on `day` (never before day 2)."""
        return (day > max(self._published_day(n), 1)
                and self._uniform("updated", site, n, day) < self.spec.updated_share)

    def _version(self, site: int, n: int, day: int) -> int:
        for changed in range(day, max(self._published_day(n), 1), -1):
            if self._updated(site, n, changed):
                return changed
        return self._published_day(n)

    def _fails_once(self, site: int, n: int, day: int) -> bool:
        return self._uniform("fails", site, n, day) < self.spec.fail_once_share

    def _title(self, site: int, n: int) -> str:
        # One draw picks the words: a hub lists dozens of titles, and a
        # random.Random would take longer to seed than to render them.
        words, subject = divmod(self._number("title", site, n), len(SUBJECTS))
        obj, verb = divmod(words % (len(VERBS) * len(OBJECTS)), len(VERBS))
        return f"{SUBJECTS[subject]} {VERBS[verb]} {OBJECTS[obj]}"

    def _article_path(self, site: int, n: int, title: str | None = None) -> str:
        """The path of article `n`; `title` saves working its title out again."""
        slug = "-".join((title or self._title(site, n)).lower().split())
        published = self._date_paths[self._published_day(n)]
        return f"/{section_name(n % self.spec.sections)}/{published}/{slug}-{n}.html"

    def _article_url(self, site: int, n: int) -> str:
        return self._url(site, self._article_path(site, n))

    def _announced_only(self, site: int, n: int) -> bool:
        """Whether no page links article `n`: only its site's announcements list it."""
        share = self.spec.announced_only_share
        return share > 0 and site in self._announcing and self._uniform("announced only", site, n) < share

    def _cross_posted(self, site: int, n: int) -> bool:
        """Whether article `n` is also published in a second section, its copy's."""
        share = self.spec.cross_posted_share
        return share > 0 and self._uniform("cross-posted", site, n) < share

    def _second_section(self, n: int) -> int:
        return (n + 1) % self.spec.sections

    def _copy_path(self, site: int, n: int, title: str | None = None) -> str:
        """The path of a cross-posted article's copy: its path, in its second section."""
        path = self._article_path(site, n, title)
        return f"/{section_name(self._second_section(n))}/{path.split('/', 2)[2]}"

    def _urls_of(self, site: int, n: int) -> list[str]:
        """The URLs article `n` answers at: its own, and its copy's when it is cross-posted."""
        if not self._cross_posted(site, n):
            return [self._article_url(site, n)]
        return [self._article_url(site, n), self._url(site, self._copy_path(site, n))]

    def _related(self, site: int, n: int) -> list[int]:
        """Older articles of the same section, fixed when `n` is published."""
        sections = self.spec.sections
        older = n // sections  # the section's articles before n: n % sections + i * sections, i < older
        chooser = random.Random(self._number("related", site, n))
        if not (site in self._announcing and self.spec.announced_only_share):
            picked = chooser.sample(range(older), min(self.spec.related, older))
            return [n % sections + i * sections for i in picked]
        # The first in a random order that some page may link.
        shuffled = (n % sections + i * sections for i in chooser.sample(range(older), older))
        return list(itertools.islice((m for m in shuffled if not self._announced_only(site, m)), self.spec.related))

    def _listed(self, site: int, section: int | None, day: int) -> list[tuple[int, bool]]:
        """A hub's articles on `day`: the newest live ones of the section (of
        the whole site for the home page), newest first, at most `latest`,
        each with whether the hub links its copy (a section page, the
        articles cross-posted to it)."""
        newest = self._count(day) - 1
        sections = self.spec.sections
        if section is None or not self.spec.cross_posted_share:
            step = 1 if section is None else sections
            start = newest if section is None else newest - (newest - section) % step
            candidates = ((n, False) for n in range(start, -1, -step))
        else:
            candidates = ((n, n % sections != section) for n in range(newest, -1, -1)
                          if n % sections == section
                          or (self._second_section(n) == section and self._cross_posted(site, n)))
        listed: list[tuple[int, bool]] = []
        for n, copy in candidates:
            if not self._deleted_by(site, n, day) and not self._announced_only(site, n):
                listed.append((n, copy))
                if len(listed) == self.spec.latest:
                    break
        return listed

    # -- chance -----------------------------------------------------------------------

    def _number(self, what: str, site: int, n: int, day: int = 0) -> int:
        """A 64-bit number fixed by the seed and the key: the web's only source
        of chance, so that each page of each day is decided on its own, in any
        order, the same every time."""
        key = f"{self.spec.seed}/{what}/{site}/{n}/{day}".encode()
        return int.from_bytes(hashlib.blake2b(key, digest_size=8).digest(), "big")

    def _uniform(self, what: str, site: int, n: int, day: int = 0) -> float:
        return self._number(what, site, n, day) / 2 ** 64

    # -- URLs and pages ----------------------------------------------------------------

    def _url(self, site: int, path: str) -> str:
        return self.static.hosts[site].url(path)

    def _locate(self, url: str) -> _Spot | None:
        parts = urlsplit(url)
        if parts.query or parts.fragment:
            return None
        site = self._site_of(url)
        return None if site is None else self._locate_path(site, parts.path)

    def _site_of(self, url: str) -> int | None:
        """The site that serves `url`, None when none does."""
        parts = urlsplit(url)
        if parts.scheme != "http":
            return None
        try:
            port = parts.port
        except ValueError:
            return None
        return self._site_at.get(parts.hostname) if port == self.port else None

    def _locate_path(self, site: int, path: str) -> _Spot | None:
        if path == "/robots.txt":
            return _Spot(site, "robots", 0)
        if path == "/":
            return _Spot(site, "home", 0)
        if path in self._section_at:
            return _Spot(site, "section", self._section_at[path])
        if path in ANNOUNCEMENTS:
            return _Spot(site, "announcement", ANNOUNCEMENT_PATHS.index(path)) if site in self._announcing else None
        stem, _, number = path.removesuffix(".html").rpartition("-")
        # (A number of thousands of digits would be too long for int().)
        if not (path.endswith(".html") and stem and number.isascii() and number.isdigit() and len(number) < 10):
            return None
        n = int(number)
        if n >= self._count(self.spec.days):
            return None
        if self._article_path(site, n) == path:
            return _Spot(site, "article", n)
        if self._cross_posted(site, n) and self._copy_path(site, n) == path:
            return _Spot(site, "copy", n)
        return None

    def _answers(self, spot: _Spot, day: int) -> bool:
        """Whether the page at `spot` answers 200 on `day`."""
        if spot.kind not in ARTICLE_KINDS:
            return True
        return spot.number < self._count(day) and not self._deleted_by(spot.site, spot.number, day)

    def _links(self, spot: _Spot, day: int) -> list[Link]:
        """The links of a page that answers on `day`, as written."""
        site, kind, number = spot
        if kind == "home":
            sections = [self._section_link(site, section) for section in range(self.spec.sections)]
            articles = [self._article_link(site, n) for n, _ in self._listed(site, None, day)]
            partners = [(site + k) % self.spec.sites for k in range(1, min(PARTNER_SITES, self.spec.sites - 1) + 1)]
            return sections + articles + [Link(self._url(other, "/"), self._url(other, "/"), site_name(other))
                                          for other in partners]
        home = Link("/", self._url(site, "/"), "Home")
        if kind == "section":
            return [home] + [self._article_link(site, n, copy) for n, copy in self._listed(site, number, day)]
        if kind in ARTICLE_KINDS:  # a copy links what its article links
            related = [self._article_link(site, n) for n in self._related(site, number)]
            return [self._section_link(site, number % self.spec.sections), home] + related
        return []

    def _outlinks(self, spot: _Spot, day: int) -> tuple[str, ...]:
        return link_targets(self._links(spot, day))

    def _section_link(self, site: int, section: int) -> Link:
        path = section_path(section)
        return Link(path, self._url(site, path), section_name(section).capitalize())

    def _article_link(self, site: int, n: int, copy: bool = False) -> Link:
        title = self._title(site, n)
        path = self._copy_path(site, n, title) if copy else self._article_path(site, n, title)
        return Link(path, self._url(site, path), title)

    def _render(self, spot: _Spot, day: int) -> Page:
        site, kind, number = spot
        if kind == "robots":
            return self.static.pages[self._url(site, "/robots.txt")]
        if kind in ARTICLE_KINDS:
            return self._render_article(site, number, day, copy=kind == "copy")
        if kind == "announcement":
            return self._render_announcement(site, ANNOUNCEMENT_PATHS[number], day)
        name = site_name(site)
        title = name if kind == "home" else f"{section_name(number).capitalize()} - {name}"
        # The edition's date makes a hub's bytes differ every day.
        paragraphs = (f"Edition of {edition(self.date(day))}.", f"The latest news from {name}.")
        path = "/" if kind == "home" else section_path(number)
        feeds = self._feeds(spot)
        head = "".join(f'<link rel="alternate" type="{ANNOUNCEMENTS[feed][1]}" title="{html.escape(name)} '
                       f'({FEED_NAMES[feed]})" href="{FEED_HREFS[feed] or self._url(site, feed)}">\n'
                       for feed in FEEDS) if feeds else ""
        return self._html(self._url(site, path), kind, title, paragraphs, self._links(spot, day), day,
                          head=head, feeds=feeds)

    def _feeds(self, spot: _Spot) -> tuple[str, ...]:
        """The feeds a page names: an announcing site's home page names its three."""
        if spot.kind == "home" and spot.site in self._announcing:
            return tuple(self._url(spot.site, feed) for feed in FEEDS)
        return ()

    def _render_article(self, site: int, n: int, day: int, copy: bool = False) -> Page:
        spot = _Spot(site, "copy" if copy else "article", n)
        article_url = self._article_url(site, n)
        url = self._url(site, self._copy_path(site, n)) if copy else article_url
        if not self._answers(spot, day):
            return missing_page(url)
        published, version = self._published_day(n), self._version(site, n, day)
        dateline = f"Published {edition(self.date(published))}."
        if version != published:
            dateline += f" Updated {edition(self.date(version))}."
        # An update draws a new text; the title stays.
        text = article_paragraphs(random.Random(self._number("text", site, n, version)))
        changing = self._changing_parts(site, n, version, copy) if self._cross_posted(site, n) else {}
        return self._html(url, "article", self._title(site, n), (dateline, *text), self._links(spot, day),
                          version, flaky=self._fails_once(site, n, day), same_text_as=article_url if copy else None,
                          **changing)

    def _changing_parts(self, site: int, n: int, version: int, copy: bool) -> dict[str, str]:
        """What a cross-posted article's two answers differ in: the time the
        page was rendered (in a header), a rotating advert (an image) and a
        script's nonce.  Each URL has its own, fixed for a version of the
        article, so that a revisit of either may still be answered 304."""
        number = self._number("copy rendered" if copy else "rendered", site, n, version)
        seconds, advert = number % 86400, number // 86400 % 100
        clock = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        return {"head": f'<script nonce="{number:016x}">var pageNonce = "{number:016x}";</script>\n',
                "body_extra": f'<header>Rendered at {clock} UTC</header>\n<img src="/ads/{advert}.png" alt="">\n'}

    # -- feeds and sitemaps ----------------------------------------------------------

    def _announced_articles(self, site: int, path: str, day: int) -> list[int]:
        """The articles an announcement lists on `day`, newest first: a feed the
        newest `latest`; the news sitemap those published on the day and the day
        before; the plain sitemap the others of the last ARCHIVE_AFTER_DAYS days,
        and the archive the older ones."""
        live = (n for n in range(self._count(day) - 1, -1, -1) if not self._deleted_by(site, n, day))
        if path in FEEDS:
            return list(itertools.islice(live, self.spec.latest))
        if path == NEWS_SITEMAP:
            return list(itertools.takewhile(lambda n: self._published_day(n) > day - NEWS_DAYS, live))
        recent = day - ARCHIVE_AFTER_DAYS
        if path == RECENT_SITEMAP:
            return list(itertools.takewhile(lambda n: self._published_day(n) > recent, live))
        return [n for n in live if self._published_day(n) <= recent]

    def _entries(self, site: int, path: str, day: int) -> tuple[AnnouncedEntry, ...]:
        if path == SITEMAP_INDEX:
            return tuple(AnnouncedEntry(self._url(site, listed), None,
                                        iso_utc(self.date(self._announcement_version(site, listed, day))), None, None)
                         for listed in INDEXED_SITEMAPS)
        entries = []
        for n in self._announced_articles(site, path, day):
            url, published = self._article_url(site, n), iso_utc(self.date(self._published_day(n)))
            if path == RECENT_SITEMAP:
                entry = AnnouncedEntry(url, None, iso_utc(self.date(self._version(site, n, day))), None, None)
            elif path == ARCHIVE_SITEMAP:  # its lastmod is a date alone: midnight UTC
                changed = self.date(self._version(site, n, day)).replace(hour=0)
                entry = AnnouncedEntry(url, None, iso_utc(changed), None, None)
            else:
                modified = iso_utc(self.date(self._version(site, n, day))) if path == ATOM_FEED else None
                entry = AnnouncedEntry(url, published, modified, self._announced_title(site, n), LANGUAGE)
            entries.append(entry)
        return tuple(entries)

    def _announcement_version(self, site: int, path: str, day: int) -> int:
        """The day an announcement's entries last changed, as of `day` (1 at the earliest)."""
        return next((changed for changed in range(day, 1, -1) if self._announcement_changed(site, path, changed)), 1)

    def _announcement_changed(self, site: int, path: str, day: int) -> bool:
        """Whether the entries of an announcement on `day` differ from the day
        before's (what _entries() gives, told without making them: a hub's
        worth of entries each day, not a site's)."""
        if path == SITEMAP_INDEX:  # its entries are its sitemaps' versions
            return any(self._announcement_changed(site, listed, day) for listed in INDEXED_SITEMAPS)
        articles = self._announced_articles(site, path, day)
        if articles != self._announced_articles(site, path, day - 1):
            return True
        # An article's entry changes with its version only where it gives its modified date.
        return path in (ATOM_FEED, RECENT_SITEMAP, ARCHIVE_SITEMAP) and any(
            self._updated(site, n, day) for n in articles)

    def _title_parts(self, site: int, n: int) -> tuple[str, str]:
        """An announced title's two halves: the article's title, and its section and more."""
        return self._title(site, n), f"{section_name(n % self.spec.sections).capitalize()} & more"

    def _announced_title(self, site: int, n: int) -> str:
        """The title feeds and the news sitemap give an article, as plain text
        (its page's title is the first half)."""
        return " \u2013 ".join(self._title_parts(site, n))

    def _render_announcement(self, site: int, path: str, day: int) -> Page:
        kind, content_type = ANNOUNCEMENTS[path]
        url, version = self._url(site, path), self._announcement_version(site, path, day)
        writer = {SITEMAP_INDEX: self._sitemap_index, RSS_FEED: self._rss, ATOM_FEED: self._atom,
                  RDF_FEED: self._rdf}.get(path, self._urlset)
        text = writer(site, path, day, version)
        body = gzip.compress(text.encode(), mtime=0) if path == ARCHIVE_SITEMAP else text.encode()
        return self._page(url, kind, body, version, content_type=content_type, text=text,
                          charset="utf-8", declared="xml")

    def _sitemap_index(self, site: int, path: str, day: int, version: int) -> str:
        items = "".join(f"<sitemap><loc>{escape(entry.url)}</loc><lastmod>{entry.modified[:19]}Z</lastmod></sitemap>\n"
                        for entry in self._entries(site, path, day))
        return f'{XML_DECLARATION}<sitemapindex xmlns="{SITEMAPS_NS}">\n{items}</sitemapindex>\n'

    def _urlset(self, site: int, path: str, day: int, version: int) -> str:
        """The news sitemap, the plain one and the archive."""
        items = []
        for n in self._announced_articles(site, path, day):
            loc = f"<loc>{escape(self._article_url(site, n))}</loc>"
            changed = self.date(self._version(site, n, day))
            if path == NEWS_SITEMAP:
                title, more = self._title_parts(site, n)
                items.append(
                    f"<url>{loc}<news:news><news:publication><news:name>{escape(site_name(site))}</news:name>"
                    f"<news:language>{LANGUAGE}</news:language></news:publication>"
                    f"<news:publication_date>{self.date(self._published_day(n)):%Y-%m-%dT%H:%M:%SZ}"
                    f"</news:publication_date><news:title>{escape(title)} &#8211; {escape(more)}</news:title>"
                    "</news:news></url>\n")
            elif path == RECENT_SITEMAP:
                items.append(f"<url>{loc}<lastmod>{changed.isoformat()}</lastmod></url>\n")
            else:
                items.append(f"<url>{loc}<lastmod>{changed:%Y-%m-%d}</lastmod></url>\n")
        news = f' xmlns:news="{NEWS_NS}"' if path == NEWS_SITEMAP else ""
        return f'{XML_DECLARATION}<urlset xmlns="{SITEMAPS_NS}"{news}>\n{"".join(items)}</urlset>\n'

    def _rss(self, site: int, path: str, day: int, version: int) -> str:
        """RSS 2.0: titles with escaped markup; every other link root-relative;
        every other date in another zone."""
        items = []
        for i, n in enumerate(self._announced_articles(site, path, day)):
            title, more = self._title_parts(site, n)
            link = self._article_path(site, n) if i % 2 else self._article_url(site, n)
            published = self.date(self._published_day(n))
            date = (email.utils.format_datetime(published.astimezone(FEED_ZONE)) if i % 2
                    else email.utils.format_datetime(published, usegmt=True))
            items.append(f"<item><title>&lt;b&gt;{escape(title)}&lt;/b&gt; &#8211; {escape(more)}</title>"
                         f"<link>{escape(link)}</link><guid isPermaLink=\"false\">{site}-{n}</guid>"
                         f"<pubDate>{date}</pubDate></item>\n")
        return (f'{XML_DECLARATION}<rss version="2.0">\n<channel>\n<title>{escape(site_name(site))}</title>\n'
                f"<link>{self._url(site, '/')}</link>\n<description>The latest news from "
                f"{escape(site_name(site))}.</description>\n<language>{LANGUAGE}</language>\n"
                f"{''.join(items)}</channel>\n</rss>\n")

    def _atom(self, site: int, path: str, day: int, version: int) -> str:
        """Atom, with an xml:base: every other link relative to it; published
        dates in another zone than updated ones."""
        entries = []
        for i, n in enumerate(self._announced_articles(site, path, day)):
            title, more = self._title_parts(site, n)
            link = self._article_url(site, n) if i % 2 else self._article_path(site, n).lstrip("/")
            published = self.date(self._published_day(n)).astimezone(FEED_ZONE).isoformat()
            entries.append(
                f'<entry><title type="text">{escape(title)} &#x2013; {escape(more)}</title>'
                f'<link rel="alternate" type="text/html" href="{escape(link)}"/><id>urn:testweb:{site}:{n}</id>'
                f"<published>{published}</published>"
                f"<updated>{self.date(self._version(site, n, day)):%Y-%m-%dT%H:%M:%SZ}</updated></entry>\n")
        return (f'{XML_DECLARATION}<feed xmlns="{ATOM_NS}" xml:base="{self._url(site, "/")}" xml:lang="{LANGUAGE}">\n'
                f"<title>{escape(site_name(site))}</title>\n<id>urn:testweb:{site}</id>\n"
                f"<updated>{self.date(version):%Y-%m-%dT%H:%M:%SZ}</updated>\n{''.join(entries)}</feed>\n")

    def _rdf(self, site: int, path: str, day: int, version: int) -> str:
        """RSS 1.0: every other item's URL root-relative."""
        articles = self._announced_articles(site, path, day)
        urls = [self._article_path(site, n) if i % 2 else self._article_url(site, n) for i, n in enumerate(articles)]
        items = []
        for n, url in zip(articles, urls):
            title, more = self._title_parts(site, n)
            items.append(f'<item rdf:about="{escape(url)}"><title>{escape(title)} &#x2013; {escape(more)}</title>'
                         f"<link>{escape(url)}</link>"
                         f"<dc:date>{self.date(self._published_day(n)):%Y-%m-%dT%H:%M:%SZ}</dc:date></item>\n")
        sequence = "".join(f'<rdf:li rdf:resource="{escape(url)}"/>' for url in urls)
        return (f'{XML_DECLARATION}<rdf:RDF xmlns:rdf="{RDF_NS}" xmlns="{RSS1_NS}" xmlns:dc="{DC_NS}">\n'
                f'<channel rdf:about="{self._url(site, path)}"><title>{escape(site_name(site))}</title>'
                f"<link>{self._url(site, '/')}</link><description>The latest news from {escape(site_name(site))}."
                f"</description><dc:language>{LANGUAGE}</dc:language>"
                f"<items><rdf:Seq>{sequence}</rdf:Seq></items></channel>\n{''.join(items)}</rdf:RDF>\n")

    def _html(self, url: str, kind: str, title: str, paragraphs: tuple[str, ...], links: list[Link],
              modified: int, head: str = "", body_extra: str = "", **fields) -> Page:
        text = document(title, paragraphs, links, head=head, body_extra=body_extra)
        return self._page(url, kind, text.encode(), modified, links=link_targets(links), title=title,
                          paragraphs=paragraphs, text=text, charset="utf-8", declared="header", **fields)

    def _page(self, url: str, kind: str, body: bytes, modified: int, **fields) -> Page:
        """A 200 page with its validators: the body's hash and the day `modified`."""
        validators = (("ETag", f'"{hashlib.blake2b(body, digest_size=12).hexdigest()}"'),
                      ("Last-Modified", email.utils.format_datetime(self.date(modified), usegmt=True)))
        return Page(url=url, kind=kind, body=body, headers=validators, **fields)


@dataclass(frozen=True)
class WebDay:
    """One day of a DailyWeb, with what TestWebServer and
    oracle.expected_layers() read from a Web."""

    web: DailyWeb
    day: int

    def respond(self, address: str, target: str) -> Page:
        return self.web.respond(address, target, self.day)

    def page(self, url: str) -> Page:
        return self.web.page(url, self.day)

    def host(self, url: str) -> Host | None:
        return self.web.static.host(url)

    @property
    def seed_urls(self) -> tuple[str, ...]:
        return self.web.seed_urls

    @property
    def seed_spellings(self) -> dict[str, str | None]:
        return self.web.static.seed_spellings


def start_daily_web(spec: DailySpec = DailySpec(), *, day: int = 1, port: int = 0) -> TestWebServer:
    """Serve a daily web on 127.0.0.2 and up, as on `day`; the caller stops
    it (or uses it as a context manager) and moves it with set_day()."""
    return TestWebServer(hosts=spec.sites, port=port, day=day,
                         web_factory=lambda bound_port: DailyWeb(spec, bound_port)).start()


def site_name(site: int) -> str:
    """A newspaper's name; the first len(TOWNS) * len(PAPERS) are all different."""
    town, round_ = site % len(TOWNS), site // len(TOWNS)
    return f"The {TOWNS[town]} {PAPERS[(town + round_) % len(PAPERS)]}"


def section_name(section: int) -> str:
    name = SECTION_NAMES[section % len(SECTION_NAMES)]
    return name if section < len(SECTION_NAMES) else f"{name}-{section // len(SECTION_NAMES) + 1}"


def section_path(section: int) -> str:
    return f"/section/{section_name(section)}/"


def edition(moment: datetime) -> str:
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def link_targets(links: list[Link]) -> tuple[str, ...]:
    """The canonical URLs of `links`, each once, in page order."""
    return tuple(dict.fromkeys(link.expected for link in links))

