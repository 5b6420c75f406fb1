"""What a layer tells the crawl db: updates from its frontier, doc and out
records, and how a db record takes one (the revisit policy).

An update is a dict with up to five parts:
- "seen": the URL was requested, or linked, on this run:
  {"layer", "hops", "seed"};
- "fetch": how its request ended: the doc record's fields the db keeps;
- "page": what the Parser judged of the fetched page: {"signature", "hub"};
- "duplicate": its content (or, without a content signature, its payload)
  is another URL's (a duplicate record, see dedup.py), added by DbUpdate
  from the Dedup job's store;
- "inject": the URL was injected (`mrcrawl inject`, injected()).
DbBatch's mapper makes the first three (updates_from_entry,
updates_from_doc, updates_from_out), its combiner and reducer fold a URL's
updates into one (fold), and DbUpdate's apply_update() writes the folded
update into the URL's db record.  apply_update() is also the cycle filter: a URL linked on
this layer that the db has never fetched is queued for the next layer.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from typing import Iterable, Iterator

from mrcrawl.config import RevisitConfig
from mrcrawl.page.announce import FEED, NEWS_SITEMAP, SITEMAP, SITEMAP_INDEX
from mrcrawl.page.urls import host_key
from mrcrawl.store.failures import FailureKind, failure_kind
from mrcrawl.frontier.scores import fold_sightings, is_node, sighting, take_sightings
from mrcrawl.store.records import (
    ANNOUNCED,
    BLOCKED,
    LINKS_FROM_PAGE,
    DEFERRED_BY_TIME_LIMIT,
    DUPLICATE,
    FAILED,
    FETCHED,
    GONE,
    HTTP_ERROR,
    NETWORK_ERROR,
    NOT_HTML,
    NOT_MODIFIED,
    REDIRECT,
    ROBOTS_DENIED,
    TRAPPED,
    UNFETCHED,
    error_kind,
    iso_utc,
    new_db_record,
    payload_digest,
    response_body,
)

# Seconds in a day: the db keeps intervals in seconds, a config gives them in days.
DAY = 86400.0


@dataclass(frozen=True)
class RevisitPolicy:
    """When a URL is due again; every interval counts from the start of the
    run that fetched it, so a daily run finds yesterday's pages due however
    long yesterday's run took.

    - A hub (a seed, or a page that is mostly links: home and section pages)
      is due again after `hub_interval`: it is where new URLs appear.
    - Any other page (an article) first after `first_interval`; then, as in
      Nutch's AdaptiveFetchSchedule, sooner (x `shrink`) when its signature
      changed since the last fetch and later (x `grow`) when it did not or
      the server said 304, within [min_interval, max_interval].  A
      duplicate (dedup.py) is revisited as the page it is, hub or article.
    - A feed or sitemap (page/announce.py) is due again after its kind's
      interval, changed or not: a feed changes often, a plain sitemap rarely.
    - A transient failure (network, 5xx, 429, robots.txt unreachable) is
      retried after `retry_interval`, on at most `retry_runs` runs in a row;
      then the URL is gone.  A 404 or 410 is gone at once.  A gone,
      blocked or redirecting URL is checked again after `max_interval`.

    Intervals are in seconds.  The values, and their defaults, are the crawl
    config's (RevisitConfig, in days): a policy is made by from_config.
    """

    hub_interval: float
    first_interval: float
    min_interval: float
    max_interval: float
    grow: float
    shrink: float
    retry_interval: float
    retry_runs: int
    # A feed's or sitemap's interval, by its kind (page/announce.py's ANNOUNCEMENT_KINDS).
    announcement_intervals: dict = field(default_factory=dict)
    # A URL never fetched that a feed or sitemap dated longer ago than this
    # is not queued when linked: the site said it is old (config
    # announced_max_age_days, in seconds; None: no limit).
    announced_max_age: float | None = None

    @classmethod
    def from_config(cls, revisit: RevisitConfig, announced_max_age_days: float | None = None) -> "RevisitPolicy":
        """The policy a crawl config's `revisit:` keys and its
        announced_max_age_days set; the default policy is
        `from_config(RevisitConfig())`."""
        return cls(
            hub_interval=revisit.hub_days * DAY, first_interval=revisit.first_days * DAY,
            min_interval=revisit.min_days * DAY, max_interval=revisit.max_days * DAY,
            grow=revisit.grow, shrink=revisit.shrink,
            retry_interval=revisit.retry_days * DAY, retry_runs=revisit.retry_runs,
            announcement_intervals={FEED: revisit.feed_days * DAY, NEWS_SITEMAP: revisit.news_sitemap_days * DAY,
                                    SITEMAP: revisit.sitemap_days * DAY,
                                    SITEMAP_INDEX: revisit.sitemap_index_days * DAY},
            announced_max_age=None if announced_max_age_days is None else announced_max_age_days * DAY,
        )


# A URL is due when its time comes before the run's start plus this: a daily
# run that cron starts a little earlier than yesterday's still finds it due.
DUE_SLACK = timedelta(hours=1)


def due_before(run: str) -> str:
    """The due_at (iso_utc) below which a URL is due on the run starting at `run`."""
    return iso_utc(parse_time(run) + DUE_SLACK)


def queue_mark(run: str, layer: int) -> str:
    """The db's `queued` value of a URL the cycle filter put in `layer`'s frontier of `run`."""
    return f"{run} {layer}"


def parse_time(text: str) -> datetime:
    """A record's time (iso_utc), or any ISO 8601 time, as an aware UTC datetime."""
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def _header(doc: dict, name: str) -> str | None:
    for header, value in doc.get("headers") or ():
        if header.lower() == name:
            return value
    return None


def fetch_part(doc: dict) -> dict:
    """What the db keeps of how a doc record's request ended: its update's "fetch" part."""
    body = response_body(doc) if doc["outcome"] in (FETCHED, NOT_HTML) else None
    return {
        "outcome": doc["outcome"],
        "status": doc["status"],
        "fetched_at": doc["fetched_at"],
        "error": doc["error"],
        "error_kind": error_kind(doc),
        "redirect_to": doc["redirect_to"],
        "last_modified": _header(doc, "last-modified"),
        "etag": _header(doc, "etag"),
        "digest": payload_digest(body) if body is not None else None,
        "kind": doc.get("kind"),
    }


def updates_from_entry(url: str, entry: dict, layer: int) -> Iterator[tuple[str, dict]]:
    """The frontier entry of a URL requested on `layer`: seen there; or, for
    an entry a cap held back from the layer, deferred."""
    if entry.get("deferred"):
        yield url, {"deferred": entry["deferred"]}
    else:
        yield url, {"seen": {"layer": layer, "hops": entry["hops"], "seed": entry["seed"]}}


def updates_from_doc(doc: dict, fetch: dict) -> Iterator[tuple[str, dict]]:
    """(URL, update) for the URLs one doc record attempted: the requested URL,
    and the final URL when a same-host redirect was followed to it.  `fetch`
    is fetch_part(doc), made once for these updates and the doc's claims
    (dedup.claims_from_doc)."""
    seen = {"layer": doc["layer"], "hops": doc.get("hops"), "seed": False}
    if doc["url"] != doc["requested_url"]:
        hop = {"outcome": REDIRECT, "status": None, "fetched_at": doc["fetched_at"], "error": None, "error_kind": None,
               "redirect_to": doc["url"], "last_modified": None, "etag": None, "digest": None}
        yield doc["requested_url"], {"fetch": hop}
        yield doc["url"], {"seen": seen, "fetch": fetch}
    else:
        yield doc["url"], {"fetch": fetch}


def updates_from_out(out: dict, url: str) -> Iterator[tuple[str, dict]]:
    """(URL, update) for the page of an out record (what the Parser judged of
    it, and its outlinks but itself, which the db keeps when the fetch got
    the page) and for each of its links: seen on the next layer, and linked
    from this page, with its share of the page's score (scores.sighting);
    for a feed or sitemap, each entry it follows, with what it said of it
    ("announced"); and the feeds and sitemaps a page names (its announcers),
    seen on the next layer as its links are."""
    if out["type"] == LINKS_FROM_PAGE:
        page = {"outlinks": [link for link in out["outlinks"] if link != url]}
        if out.get("signature") is not None:
            page["page"] = {"signature": out["signature"], "hub": out["hub"]}
        yield url, page
    hops = out.get("hops")
    seen = {"layer": out["layer"] + 1, "hops": None if hops is None else hops + 1, "seed": False}
    linked = sighting(url, out) if out["type"] == LINKS_FROM_PAGE else None
    if out["type"] == ANNOUNCED:
        for link, said in zip(out["outlinks"], out["announced"]):
            yield link, {"seen": seen, "announced": said}
    else:
        for link in out["outlinks"]:
            yield link, {"seen": seen, "linked": linked} if linked and link != url else {"seen": seen}
    for announcer in out.get("announcers") or ():  # (an out record written before announcements has none)
        yield announcer, {"seen": seen}
    for link, guard in out.get("trapped") or ():
        yield link, {"seen": seen, "trapped": guard}


def injected() -> dict:
    """The update of an injected URL.  Applied, it makes a URL the db has
    never fetched due at the inject's time (the `run` it is applied with),
    and a root of the crawl, as a seed is; a URL fetched before keeps its
    record and its revisit time."""
    return {"inject": True}


def _min(a, b):
    return b if a is None else a if b is None else min(a, b)


def fold(updates: Iterable[dict]) -> dict:
    """One update from several of a URL: the earliest sighting, the latest fetch."""
    folded: dict = {}
    for update in updates:
        seen = update.get("seen")
        if seen:
            before = folded.get("seen")
            folded["seen"] = seen if before is None else {
                "layer": _min(before["layer"], seen["layer"]),
                "hops": _min(before["hops"], seen["hops"]),
                "seed": before["seed"] or seen["seed"],
            }
        fetch = update.get("fetch")
        if fetch and (folded.get("fetch") is None or fetch["fetched_at"] > folded["fetch"]["fetched_at"]):
            folded["fetch"] = fetch
        if update.get("page"):
            folded["page"] = update["page"]
        if update.get("outlinks") is not None:
            folded["outlinks"] = update["outlinks"]
        if update.get("linked"):
            folded["linked"] = fold_sightings(folded.get("linked"), update["linked"])
        if update.get("announced"):
            folded["announced"] = fold_announced(folded.get("announced"), update["announced"])
        for verdict in ("deferred", "trapped"):  # the same on every runner, whatever the order
            if update.get(verdict):
                folded[verdict] = max(folded.get(verdict) or "", update[verdict])
    return folded


def fold_announced(before: dict | None, said: dict) -> dict:
    """What announcements said of a URL, from what was known (`before`) and
    one more announcement (`said`): the newest dates, the smallest title and
    language announced, the fewest indexes that led to it: the same
    whatever the order the announcements come in (combiners fold in any)."""
    if before is None:
        return dict(said)
    return {"published": _max(before["published"], said["published"]),
            "modified": _max(before["modified"], said["modified"]),
            "title": min((t for t in (before["title"], said["title"]) if t), default=None),
            "language": min((lang for lang in (before["language"], said["language"]) if lang), default=None),
            "nesting": _min(before["nesting"], said["nesting"])}


def _max(a, b):
    return b if a is None else a if b is None else max(a, b)


def announced_too_old(record: dict, run: str, policy: RevisitPolicy) -> bool:
    """Whether a feed or sitemap dated the URL (published, else modified)
    announced_max_age or longer before the run's start."""
    announced = record.get("announced") or {}
    dated = announced.get("published") or announced.get("modified")
    if dated is None or policy.announced_max_age is None:
        return False
    return dated <= iso_utc(parse_time(run) - timedelta(seconds=policy.announced_max_age))


def announced_since_fetch(record: dict) -> bool:
    """Whether a feed or sitemap says the URL changed after its last fetch (its `modified`, a sitemap's lastmod)."""
    modified = (record.get("announced") or {}).get("modified")
    return modified is not None and record["fetched_at"] is not None and modified > record["fetched_at"]


def is_transient(fetch: dict) -> bool:
    """Whether a fetch part ended in a failure that a later run retries."""
    status = fetch["status"]
    if fetch["outcome"] == NETWORK_ERROR:
        return True
    if fetch["outcome"] == HTTP_ERROR and status is not None:
        return status >= 500 or status == 429
    # A URL denied because robots.txt could not be read has the kind of
    # what kept it from being read; a fetch part made before kinds were
    # kept (UNKNOWN) counts as denied by the rules, as it may have been.
    return fetch["outcome"] == ROBOTS_DENIED and failure_kind(fetch.get("error_kind")) not in (
        FailureKind.ROBOTS_DENIED, FailureKind.UNKNOWN)


def apply_update(record: dict | None, url: str, update: dict, run: str, layer: int, policy: RevisitPolicy,
                 new_score: float | None = None) -> dict:
    """The URL's db record after this update of `layer`'s batch.  `run` is the
    start of the run (ISO 8601 UTC) that made it; `new_score` the start score
    of a URL new to the db (scores.new_url_score), None when the run gives
    no provisional scores."""
    seen = update.get("seen")
    if record is None:
        record = new_db_record(url, host_key(url))
        record["first_run"] = run
        record["first_layer"] = seen["layer"] if seen else layer
    else:
        record = dict(record)
    if update.get("announced"):
        record["announced"] = fold_announced(record.get("announced"), update["announced"])
    if update.get("linked") and record["first_run"] == run:
        take_sightings(record, update["linked"], new_score)  # its provisional score, until the next run's scoring
    if seen:
        record["hops"] = _min(record["hops"], seen["hops"])
        if seen["layer"] == layer:  # requested on this layer: a seed of this run, or not
            record["seed"] = seen["seed"]
    if update.get("inject") and record["status"] in (UNFETCHED, TRAPPED):
        # An operator's URL is crawled, whatever a trap guard made of it.
        record.update(status=UNFETCHED, hops=0, due_at=_min(record["due_at"], run), deferred=None)
    fetch = update.get("fetch")
    deferred = update.get("deferred")
    if fetch:
        _take_fetch(record, fetch, update.get("page"), update.get("duplicate"), parse_time(run), policy)
        record["outlinks"] = kept_outlinks(record, fetch["outcome"], update.get("outlinks"))
        record.update(deferred=None, deferrals=0)  # it no longer waits
    elif seen and seen["layer"] == layer:
        # In this layer's frontier and never attempted: the layer's time ran out first.
        deferred = DEFERRED_BY_TIME_LIMIT
    elif update.get("trapped") and record["status"] == UNFETCHED and not record["seed"]:
        record.update(status=TRAPPED, deferred=update["trapped"], queued=None)
    elif seen and seen["layer"] == layer + 1 and (
            (record["status"] == UNFETCHED and not announced_too_old(record, run, policy))
            or (update.get("announced") and announced_since_fetch(record) and record["status"] != TRAPPED)):
        # The cycle filter: linked or announced on this layer, and never
        # fetched on any run (unless a feed or sitemap dated it as old
        # news); or announced as changed since its last fetch.
        record["queued"] = queue_mark(run, layer + 1)
    if deferred and not fetch:
        _defer(record, deferred, run, layer)
    if not is_node(record):
        record["score"] = None  # no scoring ranks it: a provisional score would stay for good
    return record


def kept_outlinks(record: dict, outcome: str, outlinks: list[str] | None) -> list[str] | None:
    """A db record's `outlinks` after a fetch that ended in `outcome`: the
    page's (`outlinks`, from its out record) when it was fetched; the earlier
    fetch's when the server said 304 or the failure is transient (the
    earlier page stands); none for any other end (gone, a redirect, denied)."""
    if outcome == FETCHED:
        return outlinks or []
    if outcome == NOT_MODIFIED or record["status"] == FAILED:
        return record["outlinks"]
    return []


def _defer(record: dict, deferred: str, run: str, layer: int) -> None:
    """A URL a cap or the layer's time limit kept from being fetched: it
    waits as it was (unfetched, or due again), and is offered again (BEAST's
    later queues: never dropped): to the next layer of this run, and, due
    from the run's start, to the next run."""
    record["deferred"] = deferred
    record["deferrals"] = (record.get("deferrals") or 0) + 1  # a record older than deferrals has none
    record["queued"] = queue_mark(run, layer + 1)
    if record["status"] == UNFETCHED:
        record["due_at"] = _min(record["due_at"], run)


def _take_fetch(record: dict, fetch: dict, page: dict | None, duplicate: dict | None, run_start: datetime,
                policy: RevisitPolicy) -> None:
    record["fetched_at"] = fetch["fetched_at"]
    record["queued"] = None
    if fetch["outcome"] != NOT_MODIFIED:  # a 304 keeps what the earlier fetch was
        record["kind"] = fetch.get("kind")  # (a fetch part made before announcements has none)
    announcement_interval = policy.announcement_intervals.get(record.get("kind"))
    if fetch["status"] is not None:
        record["fetch_count"] += 1
        record["http_status"] = fetch["status"]
    if page is not None:
        record["hub"] = page["hub"] or record["seed"]
    hub = bool(record["hub"] or record["seed"])
    if is_transient(fetch):
        record["failures"] += 1
        if record["failures"] > policy.retry_runs:
            record["status"], interval = GONE, policy.max_interval
        else:
            record["status"], interval = FAILED, policy.retry_interval
        record["interval"] = record["interval"] or policy.first_interval  # kept for when it answers again
        record["due_at"] = iso_utc(run_start + timedelta(seconds=interval))
        return
    record["failures"] = 0
    interval = record["interval"] or policy.first_interval
    if fetch["outcome"] == NOT_MODIFIED:
        # The earlier fetch stands, and so does what it was: a duplicate stays one.
        record["status"] = DUPLICATE if record["duplicate_of"] else NOT_MODIFIED
        interval = announcement_interval or (policy.hub_interval if hub else _bounded(interval * policy.grow, policy))
    elif fetch["outcome"] in (FETCHED, NOT_HTML):
        # A page the Parser judged has a signature of its text; any other body, its digest.
        signature = page["signature"] if page is not None else fetch["digest"]
        first = record["signature"] is None
        changed = not first and signature != record["signature"]
        # A duplicate keeps no validators: whether it still is one depends on
        # its original, which a 304 does not tell, so its revisit is a full fetch.
        record.update(status=DUPLICATE if duplicate else FETCHED,
                      last_modified=None if duplicate else fetch["last_modified"],
                      etag=None if duplicate else fetch["etag"], digest=fetch["digest"], signature=signature,
                      redirect_to=None, duplicate_of=duplicate["duplicate_of"] if duplicate else None)
        if first or changed:
            record["changed_at"] = fetch["fetched_at"]
        if announcement_interval:
            interval = announcement_interval
        elif hub:
            interval = policy.hub_interval
        elif first:
            interval = policy.first_interval
        else:
            interval = _bounded(interval * (policy.shrink if changed else policy.grow), policy)
    elif fetch["outcome"] == REDIRECT:
        record.update(status=REDIRECT, redirect_to=fetch["redirect_to"], duplicate_of=None)
        interval = policy.max_interval
    elif fetch["outcome"] == ROBOTS_DENIED:
        record.update(status=ROBOTS_DENIED, duplicate_of=None)
        interval = policy.max_interval
    elif fetch["outcome"] == BLOCKED:
        record.update(status=BLOCKED, duplicate_of=None)
        interval = policy.max_interval
    else:  # 404, 410 and the other final HTTP errors
        record.update(status=GONE, duplicate_of=None)
        interval = policy.max_interval
    record["interval"] = interval
    record["due_at"] = iso_utc(run_start + timedelta(seconds=interval))


def _bounded(interval: float, policy: RevisitPolicy) -> float:
    return max(policy.min_interval, min(interval, policy.max_interval))
