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

    oracle = WeekOracle(web, depth=3, retries=1, revisit={"first_days": 2})
    for day in web.days:
        predicted = oracle.run(day)  # in order, each day once
        predicted.outcomes, predicted.answers, predicted.xml, predicted.db
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from mrcrawl.config import RevisitConfig

from .daily import DailyWeb

DAY = 86400.0  # seconds: the db keeps intervals in seconds
DUE_SLACK = timedelta(hours=1)

# Outcomes (of a doc record) and statuses (of a db record), as the crawler writes them.
FETCHED, NOT_MODIFIED, HTTP_ERROR = "fetched", "not_modified", "http_error"
UNFETCHED, GONE, FAILED, DUPLICATE = "unfetched", "gone", "failed", "duplicate"


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


@dataclass
class DayPrediction:
    """What run `day` does."""

    day: int
    layers: list[dict[str, str]]  # per layer: requested URL -> outcome
    answers: Counter  # (URL, HTTP status) -> how many page requests the server answers so
    xml: set[str]  # the pages new or changed: the run's XML
    db: dict[str, dict]  # URL -> its db record's predicted fields, after the run

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

    def __init__(self, web: DailyWeb, depth: int, *, retries: int = 1, revisit: dict | RevisitConfig | None = None):
        if depth < 1:
            raise ValueError("depth must be at least 1")
        self.web = web
        self.depth = depth
        self.retries = retries
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
        due = sorted(url for url, state in self.state.items()
                     if state.due is not None and state.due <= start + DUE_SLACK and url not in seeds)
        frontier = seeds + due
        for url in seeds:
            self._seen(url, day, 0, hops=0)
        layers, answers, xml = [], Counter(), set()
        for layer in range(self.depth):
            if not frontier:
                break
            outcomes: dict[str, str] = {}
            last_status: dict[str, int] = {}
            links: dict[str, int | None] = {}  # URL -> the fewest hops a link to it comes with
            for url in frontier:
                state = self.state[url]
                state.seed = url in seeds and layer == 0  # as the frontier entry says
                statuses, outcome = self._request(url, day, state)
                answers.update((url, status) for status in statuses)
                outcomes[url], last_status[url] = outcome, statuses[-1]
            duplicates = self._judge_duplicates(day, last_status)
            for url, outcome in outcomes.items():
                state = self.state[url]
                if self._take(state, day, last_status[url], outcome, duplicates.get(url)):
                    xml.add(url)
                if outcome == FETCHED:
                    hops = None if state.hops is None else state.hops + 1
                    for link in self.web.outlinks(url, day):
                        links[link] = _min(links.get(link, hops), hops)
            layers.append(outcomes)
            for link, hops in links.items():
                state = self._seen(link, day, layer + 1, hops)
                if state.status == UNFETCHED:
                    state.queued = (day, layer + 1)
            frontier = sorted(url for url in links if self.state[url].status == UNFETCHED)
        prediction = DayPrediction(day, layers, answers, xml, self.db())
        self.predictions[day] = prediction
        return prediction

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
            interval = policy.hub_days * DAY if hub else _bounded(policy, interval * policy.grow)
        elif outcome == FETCHED:
            state.hub = self.is_hub(state.url) or state.seed
            version = self.web.version(state.url, day)
            first = state.version is None
            changed = not first and self.text_changed(state.url, state.version, version)
            if state.hub:
                interval = policy.hub_days * DAY
            elif first:
                interval = policy.first_days * DAY
            else:
                interval = _bounded(policy, interval * (policy.shrink if changed else policy.grow))
            was_duplicate = state.duplicate_of is not None
            state.status = DUPLICATE if duplicate_of else FETCHED
            state.last_200 = None if duplicate_of else day
            state.version, state.content, state.duplicate_of = version, self.content(state.url, day), duplicate_of
            new_or_changed = (first or changed or was_duplicate) and duplicate_of is None
        else:  # 404
            state.status, interval = GONE, policy.max_days * DAY
            state.content = state.duplicate_of = None
        state.interval = interval
        state.due = start + timedelta(seconds=interval)
        return new_or_changed

    # -- the model's answers -------------------------------------------------------

    def is_hub(self, url: str) -> bool:
        """Home and section pages are hubs; articles are not."""
        return url in self._hubs

    def content(self, url: str, day: int) -> tuple[str, int] | None:
        """What a page answered 200 on `day` is compared by with other URLs'
        pages: an article's text, (its article's URL, its version); None for
        a hub, whose payload (and content) is its own."""
        if self.is_hub(url):
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
        }


def _etag(web: DailyWeb, url: str, day: int) -> str | None:
    return dict(web.page(url, day).headers).get("ETag")


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


# The db record fields record() predicts.
PREDICTED_FIELDS = (
    "status", "first_run", "first_layer", "hops", "seed", "hub", "fetch_count", "http_status",
    "failures", "interval", "due_at", "etag", "last_modified", "queued", "duplicate_of")
