"""The oracle of a series of daily crawls of a DailyWeb that share one crawl db.

Run d starts at web.date(d) (a crawl's --now), crawls `depth` layers, and
reads and writes the same db as the runs before it.  WeekOracle predicts, day
by day, what such a series does, from the model alone: the page requests and
their outcomes, layer by layer; what the server answers them; which pages are
new or changed (the run's XML); and each URL's record in the db.  It keeps its
own small state per URL and never reads the crawler's db or stores.

The policy, as this oracle states it (intervals in days, `revisit:` keys):
- Layer 0 of run d: the seeds (the home pages) and every URL whose due time is
  at most the run's start + 1 hour.  Layer L > 0: the URLs linked from pages
  answered 200 on layer L-1 that no run has requested yet, this one included.
  A 304 or an error has no links to follow.  Links of the last layer are
  discovered (they get a db record, `unfetched`), not requested.
- A request answers 404 when the model does not serve the URL that day (a
  deleted article, still linked from newer ones); 503 when it is the day's
  first request of a fail-once article, which is asked again at once when
  `retries` >= 1 (and ends `http_error` when 0); 304 when the db holds the
  validators of an earlier 200 (its ETag) and the page's ETag is still that
  one (an article's body changes only with its version; a hub's prints the
  day's date, so a hub is never 304 on a later day); else 200.
- Duplicates: an article's content is its text (its copy in a second
  section shows the same, Page.same_text_as); a hub's is its own, never
  another's.  After each layer, each content answered 200 on it has an
  original: the URL that held it before, unless that URL showed other
  content on this layer (or answered 404) without showing it again; else the
  shortest of the URLs that showed it on this layer, then the smallest.
  Every other URL that showed it is a `duplicate` of it.  The db keeps no
  validators (ETag, Last-Modified) of a duplicate, so a duplicate is never
  answered 304, and a 503 leaves what it duplicates as it was.
- After the request, the URL's interval and due time (run start + interval):
  a 200 or 304 of a hub (home, section page) -> hub_days; the first 200 of an
  article -> first_days; a later 200 -> x shrink if its text changed (its
  model version differs from its last 200's), x grow if not; a 304 -> x grow;
  articles kept within [min_days, max_days].  404 -> gone, max_days.  A 503
  that ends the fetch -> failed, retry_days, one more failure in a row (the
  interval kept for later); past retry_runs in a row -> gone, max_days.  A
  200 or 304 resets the failures.
- A page is new or changed (it gets XML) when answered 200 and never answered
  200 before, or an article whose version differs from its last 200's, or a
  page that was a duplicate at its last 200; and it is no duplicate now.  A
  hub's text outside links is fixed (its date's digits do not count), so a
  hub is new only at its first 200, whatever its links do.

What the sites announce (DailyWeb with `announcing_share`; docs/announcements.md),
with the crawler's rules (the keywords announced_max_age_days, sitemap_strict
and max_sitemap_nesting are its settings):
- Offers to layer L+1: a page answered 200 on layer L offers its links and the
  feeds it names; each host with a request on layer L offers its robots.txt's
  `Sitemap:` URLs (the fetcher puts them on the first doc of the host it
  settles on the layer, whatever it answers); a feed or sitemap answered 200
  offers its entries, each once: for a sitemap with `sitemap_strict`, only those
  under its own directory; for a sitemap index, none when its nesting (the
  indexes that led to it, itself included) passes `max_sitemap_nesting`.  An
  offer's hops are its offerer's + 1 (robots.txt's: the host's fewest hops of
  the layer + 1; the crawler takes its first settled doc's, which only matters
  where no other sighting is fewer).
- What an entry says (its published and modified dates, title, language, and
  nesting: the document's, + 1 for an index's) joins what the db knew of the
  URL: the newest dates, the smallest title and language known, the fewest
  indexes.  A page requested on layer L carries what the db knew of it when
  the layer began.
- The cycle filter, for each URL offered to L+1 and not requested on L: queued
  when never fetched, unless the db's announced date (published, else
  modified) is announced_max_age_days or more before the run's start (whoever
  offers it, a link included); or queued when an announcement offers it and
  the db's announced modified is after its last fetch (the run's fetches
  happen within hours of its start, and the model dates at 06:00 or
  midnight: modified > date(last fetch day) tells it).
- A feed or sitemap is no page: no hub judgement (its db `hub` stays None),
  no content to compare (never a duplicate), no XML; after a 200 or a 304 it
  is due after its kind's interval (revisit feed_days, news_sitemap_days,
  sitemap_days, sitemap_index_days).  A 200 sets the db's `kind`, a 304
  keeps it, any other end clears it.
- With revisit `announcing_hub_days`, a due hub (not a seed) of a host whose
  feed or news sitemap the db holds as fetched or not_modified at the run's
  start waits until announcing_hub_days after its last fetch.
- The XML of a page: its headline is its title (every page of the model has
  one), its published the announced published, else modified, it carried
  (the model's pages state no date).

    oracle = WeekOracle(web, depth=3, retries=1, revisit={"first_days": 2})
    for day in web.days:
        predicted = oracle.run(day)  # in order, each day once
        predicted.outcomes, predicted.answers, predicted.xml, predicted.xml_fields, predicted.db
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from urllib.parse import urlsplit

from mrcrawl.config import RevisitConfig

from .daily import ANNOUNCED_MAX_AGE_DAYS, MAX_SITEMAP_NESTING, DailyWeb

DAY = 86400.0  # seconds: the db keeps intervals in seconds
DUE_SLACK = timedelta(hours=1)

# Outcomes (of a doc record) and statuses (of a db record), as the crawler writes them.
FETCHED, NOT_MODIFIED, HTTP_ERROR = "fetched", "not_modified", "http_error"
UNFETCHED, GONE, FAILED, DUPLICATE = "unfetched", "gone", "failed", "duplicate"
# The kinds of feeds and sitemaps, as the crawler names them; those that make a host "announcing".
FEED, NEWS_SITEMAP, SITEMAP, SITEMAP_INDEX = "feed", "news_sitemap", "sitemap", "sitemap_index"
ANNOUNCING_KINDS = (FEED, NEWS_SITEMAP)


def _bounded(policy: RevisitConfig, seconds: float) -> float:
    return max(policy.min_days * DAY, min(seconds, policy.max_days * DAY))


@dataclass
class UrlState:
    """What the db should hold of one URL: the fields this oracle predicts."""

    url: str
    first_day: int
    first_layer: int
    status: str = UNFETCHED
    hops: int | None = None
    seed: bool = False
    hub: bool | None = None  # None until a 200 shows what the page is
    fetch_count: int = 0
    http_status: int | None = None
    failures: int = 0
    interval: float | None = None  # seconds
    due: datetime | None = None
    queued: tuple[int, int] | None = None  # (day, layer) the cycle filter last queued it for
    last_200: int | None = None  # the day of its last 200, whose validators the db keeps (None: none kept)
    version: int | None = None  # the model's version of the page at its last 200
    content: tuple[str, int] | None = None  # an article's content at its last 200: (its article's URL, version)
    duplicate_of: str | None = None  # the URL whose content it showed at its last 200
    fetched_day: int | None = None  # the day of its last request
    kind: str | None = None  # a feed's or sitemap's kind, as its last 200 showed
    announced: dict | None = None  # what announcements said of it (the db's `announced`)


@dataclass
class DayPrediction:
    """What run `day` does."""

    day: int
    layers: list[dict[str, str]]  # per layer: requested URL -> outcome
    answers: Counter  # (URL, HTTP status) -> how many page requests the server answers so
    xml: set[str]  # the pages new or changed: the run's XML
    db: dict[str, dict]  # URL -> its db record's predicted fields, after the run
    xml_fields: dict[str, dict]  # URL of an XML page -> its "headline" and "published" (None: no element)

    @property
    def outcomes(self) -> set[tuple[str, str]]:
        """(requested URL, outcome) of every page request of the run."""
        return {(url, outcome) for layer in self.layers for url, outcome in layer.items()}

    @property
    def requested(self) -> set[str]:
        return {url for layer in self.layers for url in layer}


def iso_utc(moment: datetime) -> str:
    """A time as the crawler's records write one: 2026-01-05T06:00:00.000Z."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class WeekOracle:
    """The db's state and each run's prediction; run(day) days in increasing order."""

    def __init__(self, web: DailyWeb, depth: int, *, retries: int = 1, revisit: dict | RevisitConfig | None = None,
                 announced_max_age_days: float | None = ANNOUNCED_MAX_AGE_DAYS, sitemap_strict: bool = True,
                 max_sitemap_nesting: int = MAX_SITEMAP_NESTING):
        if depth < 1:
            raise ValueError("depth must be at least 1")
        self.web = web
        self.depth = depth
        self.retries = retries
        self.announced_max_age_days = announced_max_age_days
        self.sitemap_strict = sitemap_strict
        self.max_sitemap_nesting = max_sitemap_nesting
        # The settings only: what they mean is stated again below, independently of the crawler.
        self.policy = revisit if isinstance(revisit, RevisitConfig) else RevisitConfig(**(revisit or {}))
        self.state: dict[str, UrlState] = {}
        self.last_day = 0
        self.predictions: dict[int, DayPrediction] = {}
        self.originals: dict[tuple[str, int], str] = {}  # each article content's original URL
        self._hubs = frozenset(web.hub_urls())

    # -- one run -----------------------------------------------------------------

    def run(self, day: int) -> DayPrediction:
        if day <= self.last_day:
            raise ValueError(f"day {day} comes after day {self.last_day}: runs go forward")
        self.last_day = day
        start = self.web.date(day)
        seeds = list(self.web.seed_urls)
        announcing = self._announcing_hosts()
        due = sorted(url for url, state in self.state.items()
                     if state.due is not None and state.due <= start + DUE_SLACK and url not in seeds
                     and not self._hub_waits(state, announcing, start))
        frontier = seeds + due
        for url in seeds:
            self._seen(url, day, 0, hops=0)
        layers, answers, xml, xml_fields = [], Counter(), set(), {}
        for layer in range(self.depth):
            if not frontier:
                break
            outcomes: dict[str, str] = {}
            last_status: dict[str, int] = {}
            carried: dict[str, dict | None] = {}  # what the db knew of each URL when the layer began
            for url in frontier:
                state = self.state[url]
                state.seed = url in seeds and layer == 0  # as the frontier entry says
                carried[url] = state.announced
                statuses, outcome = self._request(url, day, state)
                answers.update((url, status) for status in statuses)
                outcomes[url], last_status[url] = outcome, statuses[-1]
            duplicates = self._judge_duplicates(day, last_status)
            offers = Offers()
            for url, outcome in outcomes.items():
                state = self.state[url]
                if self._take(state, day, last_status[url], outcome, duplicates.get(url)):
                    xml.add(url)
                    xml_fields[url] = self.xml_fields(url, day, carried[url])
            for url, outcome in outcomes.items():
                self._offer(offers, url, day, outcome, carried[url], outcomes)
            layers.append(outcomes)
            for link, hops in offers.hops.items():
                state = self._seen(link, day, layer + 1, hops)
                said = offers.announced.get(link)
                if said is not None:
                    state.announced = fold_announced(state.announced, said)
                if link not in outcomes and self._queues(state, said is not None, start):
                    state.queued = (day, layer + 1)
            frontier = sorted(url for url in offers.hops if self.state[url].queued == (day, layer + 1))
        prediction = DayPrediction(day, layers, answers, xml, self.db(), xml_fields)
        self.predictions[day] = prediction
        return prediction

    def _offer(self, offers: Offers, url: str, day: int, outcome: str, carried: dict | None,
               layer: dict[str, str]) -> None:
        """What requesting `url` (ending in `outcome`) offers to the next layer."""
        web, state = self.web, self.state[url]
        hops = None if state.hops is None else state.hops + 1
        host = urlsplit(url).netloc
        if host not in offers.hosts:  # robots.txt's Sitemap: lines, once per host and layer
            offers.hosts.add(host)
            fewest = min((self.state[other].hops for other in layer if urlsplit(other).netloc == host
                          and self.state[other].hops is not None), default=None)
            for sitemap in web.robots_sitemaps(url):
                offers.add(sitemap, None if fewest is None else fewest + 1)
        if outcome != FETCHED:
            return
        kind = web.announcement_kind(url)
        if kind is None:
            for link in (*web.outlinks(url, day), *web.feeds(url, day)):
                offers.add(link, hops)
            return
        nesting = ((carried or {}).get("nesting") or 0) + (kind == SITEMAP_INDEX)
        if kind == SITEMAP_INDEX and nesting > self.max_sitemap_nesting:
            return
        directory = url[:url.rindex("/") + 1] if self.sitemap_strict and kind != FEED else ""
        said_of: dict[str, dict] = {}
        for entry in web.entries(url, day):
            if entry.url.startswith(directory) and entry.url not in said_of:
                said_of[entry.url] = {"published": entry.published, "modified": entry.modified,
                                      "title": entry.title, "language": entry.language, "nesting": nesting}
        for entry_url, said in said_of.items():
            offers.add(entry_url, hops, said)

    def _queues(self, state: UrlState, announced: bool, start: datetime) -> bool:
        """The cycle filter: whether a URL offered to the next layer (and not
        requested on this one) is queued for it; `announced`: an announcement offers it."""
        said = state.announced or {}
        if state.status == UNFETCHED:
            dated = said.get("published") or said.get("modified")
            age = self.announced_max_age_days
            return dated is None or age is None or dated > iso_utc(start - timedelta(days=age))
        modified = said.get("modified")
        return (announced and modified is not None and state.fetched_day is not None
                and modified > iso_utc(self.web.date(state.fetched_day)))

    def _announcing_hosts(self) -> set[str]:
        """The hosts whose feed or news sitemap the db holds as read."""
        return {urlsplit(url).netloc for url, state in self.state.items()
                if state.kind in ANNOUNCING_KINDS and state.status in (FETCHED, NOT_MODIFIED)}

    def _hub_waits(self, state: UrlState, announcing: set[str], start: datetime) -> bool:
        """Whether a due hub of an announcing host waits for revisit.announcing_hub_days."""
        days = self.policy.announcing_hub_days
        return bool(days and state.hub and urlsplit(state.url).netloc in announcing
                    and self.web.date(state.fetched_day) + timedelta(days=days) > start + DUE_SLACK)

    def _seen(self, url: str, day: int, layer: int, hops: int | None) -> UrlState:
        state = self.state.get(url)
        if state is None:
            state = self.state[url] = UrlState(url, first_day=day, first_layer=layer)
        state.hops = _min(state.hops, hops)
        return state

    def _request(self, url: str, day: int, state: UrlState) -> tuple[list[int], str]:
        """What the server answers the requests for `url` on `day`, and the fetch's outcome."""
        web = self.web
        if not web.exists(url, day):
            return [404], HTTP_ERROR
        statuses = []
        if web.fails_once(url, day):
            statuses.append(503)
            if self.retries < 1:
                return statuses, HTTP_ERROR
        if state.last_200 is not None and _etag(web, url, day) == _etag(web, url, state.last_200):
            statuses.append(304)
            return statuses, NOT_MODIFIED
        statuses.append(200)
        return statuses, FETCHED

    def _judge_duplicates(self, day: int, last_status: dict[str, int]) -> dict[str, str | None]:
        """The originals after a layer whose requests ended with `last_status`
        (by URL), and each article answered 200 with the URL whose content it
        repeats (None: its content's original)."""
        shown: dict[tuple[str, int], set[str]] = {}
        left: dict[tuple[str, int], set[str]] = {}
        for url, status in last_status.items():
            content = self.content(url, day) if status == 200 else None
            if content is not None:
                shown.setdefault(content, set()).add(url)
            before = self.state[url].content
            if before is not None and status in (200, 404) and content != before:
                left.setdefault(before, set()).add(url)
        judged: dict[str, str | None] = {}
        for content in shown.keys() | left.keys():
            urls = shown.get(content, set())
            original = self.originals.pop(content, None)
            if original in left.get(content, ()) and original not in urls:
                original = None
            if original is None and urls:
                original = min(urls, key=lambda url: (len(url), url))
            if original is not None:
                self.originals[content] = original
            judged.update((url, None if url == original else original) for url in urls)
        return judged

    def _take(self, state: UrlState, day: int, status: int, outcome: str, duplicate_of: str | None) -> bool:
        """The db record after a fetch (`duplicate_of`: for a 200, the URL
        whose content it repeats); whether the page is new or changed."""
        policy, start = self.policy, self.web.date(day)
        state.fetch_count += 1
        state.http_status = status
        state.queued = None
        state.fetched_day = day
        if outcome != NOT_MODIFIED:  # a 304 keeps what the last 200 was
            state.kind = self.web.announcement_kind(state.url) if outcome == FETCHED else None
        announcement_interval = self._announcement_days(state.kind) * DAY if state.kind else None
        if status == 503:
            state.failures += 1
            if state.failures > policy.retry_runs:
                state.status, interval = GONE, policy.max_days * DAY
            else:
                state.status, interval = FAILED, policy.retry_days * DAY
            state.interval = state.interval or policy.first_days * DAY
            state.due = start + timedelta(seconds=interval)
            return False
        state.failures = 0
        interval = state.interval or policy.first_days * DAY
        new_or_changed = False
        if outcome == NOT_MODIFIED:
            state.status = DUPLICATE if state.duplicate_of else NOT_MODIFIED
            hub = bool(state.hub or state.seed)
            interval = announcement_interval or (policy.hub_days * DAY if hub else _bounded(policy, interval * policy.grow))
        elif outcome == FETCHED:
            if state.kind is None:  # a feed or sitemap gets no hub judgement
                state.hub = self.is_hub(state.url) or state.seed
            version = self.web.version(state.url, day)
            first = state.version is None
            changed = not first and self.text_changed(state.url, state.version, version)
            if announcement_interval:
                interval = announcement_interval
            elif state.hub:
                interval = policy.hub_days * DAY
            elif first:
                interval = policy.first_days * DAY
            else:
                interval = _bounded(policy, interval * (policy.shrink if changed else policy.grow))
            was_duplicate = state.duplicate_of is not None
            state.status = DUPLICATE if duplicate_of else FETCHED
            state.last_200 = None if duplicate_of else day
            state.version, state.content, state.duplicate_of = version, self.content(state.url, day), duplicate_of
            new_or_changed = (first or changed or was_duplicate) and duplicate_of is None and state.kind is None
        else:  # 404
            state.status, interval = GONE, policy.max_days * DAY
            state.content = state.duplicate_of = None
        state.interval = interval
        state.due = start + timedelta(seconds=interval)
        return new_or_changed

    # -- the model's answers -------------------------------------------------------

    def _announcement_days(self, kind: str) -> float:
        """A feed's or sitemap's revisit interval, by its kind."""
        policy = self.policy
        return {FEED: policy.feed_days, NEWS_SITEMAP: policy.news_sitemap_days, SITEMAP: policy.sitemap_days,
                SITEMAP_INDEX: policy.sitemap_index_days}[kind]

    def xml_fields(self, url: str, day: int, carried: dict | None) -> dict:
        """The headline and published of a page's XML on `day`: its own title,
        and the date announced of it (`carried`: what its doc carried), as
        the model's pages state none."""
        said = carried or {}
        return {"headline": self.web.page(url, day).title, "published": said.get("published") or said.get("modified")}

    def is_hub(self, url: str) -> bool:
        """Home and section pages are hubs; articles are not."""
        return url in self._hubs

    def content(self, url: str, day: int) -> tuple[str, int] | None:
        """What a page answered 200 on `day` is compared by with other URLs'
        pages: an article's text, (its article's URL, its version); None for
        a hub, or a feed or sitemap, whose payload (and content) is its own."""
        if self.is_hub(url) or self.web.announcement_kind(url):
            return None
        return self.web.page(url, day).same_text_as or url, self.web.version(url, day)

    def text_changed(self, url: str, before: int, now: int) -> bool:
        """Whether the page's text outside links changed between two versions:
        an article's does with every version, a hub's never."""
        return before != now and not self.is_hub(url)

    # -- the db ----------------------------------------------------------------------

    def db(self) -> dict[str, dict]:
        """Each URL's predicted db record fields, as the crawler writes them."""
        return {url: self.record(state) for url, state in self.state.items()}

    def record(self, state: UrlState) -> dict:
        web = self.web
        validators = dict(web.page(state.url, state.last_200).headers) if state.last_200 else {}
        return {
            "status": state.status,
            "first_run": iso_utc(web.date(state.first_day)),
            "first_layer": state.first_layer,
            "hops": state.hops,
            "seed": state.seed,
            "hub": state.hub,
            "fetch_count": state.fetch_count,
            "http_status": state.http_status,
            "failures": state.failures,
            "interval": state.interval,
            "due_at": None if state.due is None else iso_utc(state.due),
            "etag": validators.get("ETag"),
            "last_modified": validators.get("Last-Modified"),
            "queued": None if state.queued is None else f"{iso_utc(web.date(state.queued[0]))} {state.queued[1]}",
            "duplicate_of": state.duplicate_of,
            "kind": state.kind,
            "announced": state.announced,
        }


@dataclass
class Offers:
    """What one layer offers to the next: each URL's fewest hops, and what the
    announcements offering it said (folded)."""

    hops: dict[str, int | None] = field(default_factory=dict)
    announced: dict[str, dict] = field(default_factory=dict)
    hosts: set[str] = field(default_factory=set)  # the hosts whose robots.txt has offered its sitemaps

    def add(self, url: str, hops: int | None, said: dict | None = None) -> None:
        self.hops[url] = _min(self.hops.get(url, hops), hops)
        if said is not None:
            self.announced[url] = fold_announced(self.announced.get(url), said)


def fold_announced(before: dict | None, said: dict) -> dict:
    """What the db keeps of what announcements said of a URL: the newest
    dates, the smallest title and language known, the fewest indexes."""
    if before is None:
        return dict(said)
    return {"published": _max(before["published"], said["published"]),
            "modified": _max(before["modified"], said["modified"]),
            "title": _min(before["title"], said["title"]),
            "language": _min(before["language"], said["language"]),
            "nesting": _min(before["nesting"], said["nesting"])}


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)


def _etag(web: DailyWeb, url: str, day: int) -> str | None:
    return dict(web.page(url, day).headers).get("ETag")


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


# The db record fields record() predicts.
PREDICTED_FIELDS = (
    "status", "first_run", "first_layer", "hops", "seed", "hub", "fetch_count", "http_status",
    "failures", "interval", "due_at", "etag", "last_modified", "queued", "duplicate_of", "kind", "announced")
