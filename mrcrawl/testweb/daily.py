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
"""

from __future__ import annotations

import email.utils
import hashlib
import math
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import NamedTuple
from urllib.parse import urlsplit

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

    def __post_init__(self) -> None:
        if not 1 <= self.sites <= 253:  # 127.0.0.2 to 127.0.0.254
            raise ValueError(f"sites must be 1 to 253, got {self.sites}")
        if min(self.sections, self.articles, self.latest, self.days) < 1 or self.related < 0:
            raise ValueError("sections, articles, latest and days must be at least 1, related at least 0")
        shares = (self.new_share, self.updated_share, self.deleted_share, self.fail_once_share,
                  self.cross_posted_share)
        if not all(0.0 <= share <= 1.0 for share in shares):
            raise ValueError("the shares must be between 0 and 1")
        if self.cross_posted_share and self.sections < 2:
            raise ValueError("cross_posted_share needs at least 2 sections: a second one to publish in")

    @property
    def new_per_day(self) -> int:
        return round(self.articles * self.new_share)


BENCHMARK_SPEC = DailySpec(sites=50, sections=20, articles=2000, new_share=0.02, latest=25)


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
    kind: str  # "robots", "home", "section", "article", or "copy": a cross-posted article in its second section
    number: int  # the section's, or the article's (0 for the others)


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
        hosts = tuple(Host(f"127.0.0.{2 + site}", port, "daily", ROBOTS) for site in range(spec.sites))
        robots = {}
        for host in hosts:
            url = host.url("/robots.txt")
            robots[url] = self._page(url, "robots", ROBOTS.body, 1, content_type="text/plain")
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
        """Every URL that answers 200 on `day`, robots.txt files included."""
        urls = set(self.static.pages) | set(self.hub_urls())
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
        for changed in range(day, 1, -1):
            if self._outlinks(spot, changed) != self._outlinks(spot, changed - 1):
                return changed
        return 1

    def outlinks(self, url: str, day: int) -> tuple[str, ...]:
        """The canonical URLs the page at `url` links on `day`, in page order;
        none when it answers 404."""
        spot = self._locate(url)
        return self._outlinks(spot, day) if spot and self._answers(spot, day) else ()

    def reachable(self, day: int, depth: int) -> dict[str, int]:
        """The URLs a crawl of `depth` layers from the seeds requests on `day`,
        each with the layer that first finds it (0: the seeds).  Dead links
        count: an article keeps linking an older one after it is deleted."""
        layer_of = dict.fromkeys(self.seed_urls, 0)
        frontier = list(self.seed_urls)
        for layer in range(1, depth):
            found = [link for url in frontier for link in self.outlinks(url, day) if link not in layer_of]
            frontier = list(dict.fromkeys(found))
            layer_of.update(dict.fromkeys(frontier, layer))
        return layer_of

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
        picked = chooser.sample(range(older), min(self.spec.related, older))
        return [n % sections + i * sections for i in picked]

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
            if not self._deleted_by(site, n, day):
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
        if parts.scheme != "http" or parts.query or parts.fragment:
            return None
        try:
            port = parts.port
        except ValueError:
            return None
        site = self._site_at.get(parts.hostname) if port == self.port else None
        return None if site is None else self._locate_path(site, parts.path)

    def _locate_path(self, site: int, path: str) -> _Spot | None:
        if path == "/robots.txt":
            return _Spot(site, "robots", 0)
        if path == "/":
            return _Spot(site, "home", 0)
        if path in self._section_at:
            return _Spot(site, "section", self._section_at[path])
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
        name = site_name(site)
        title = name if kind == "home" else f"{section_name(number).capitalize()} - {name}"
        # The edition's date makes a hub's bytes differ every day.
        paragraphs = (f"Edition of {edition(self.date(day))}.", f"The latest news from {name}.")
        path = "/" if kind == "home" else section_path(number)
        return self._html(self._url(site, path), kind, title, paragraphs, self._links(spot, day), day)

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

