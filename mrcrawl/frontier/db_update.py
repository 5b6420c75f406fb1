"""What a layer tells the crawl db: updates from doc and out records, and how
a db record takes one.

An update is a dict with up to two parts:
- "seen": the URL was a seed, requested, or linked on this run:
  {"layer", "hops", "seed"};
- "fetch": how its request ended: the doc record's fields the db keeps.
DbBatch's mapper makes them (updates_from_doc, updates_from_out), its
combiner and reducer fold a URL's updates into one (fold), and DbMerge's
apply_update() writes the folded update into the URL's db record.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Iterable, Iterator

from mrcrawl.page.urls import host_key
from mrcrawl.store.records import (
    BLOCKED,
    FAILED,
    FETCHED,
    GONE,
    HTTP_ERROR,
    NETWORK_ERROR,
    NOT_HTML,
    NOT_MODIFIED,
    REDIRECT,
    ROBOTS_DENIED,
    iso_utc,
    new_db_record,
    payload_digest,
    response_body,
)

DAY = 86400.0


@dataclass(frozen=True)
class RevisitPolicy:
    """When a URL is due again (Nutch's AdaptiveFetchSchedule, bounded).

    A page that changed since its last fetch is revisited sooner (interval x
    `shrink`), one that did not, later (x `grow`), within [min_interval,
    max_interval].  A transient failure is retried after `retry_interval`,
    on at most `retry_runs` runs in a row; then the URL is gone.  A gone URL
    is checked again after max_interval.
    """

    first_interval: float = 7 * DAY
    min_interval: float = 1 * DAY
    max_interval: float = 30 * DAY
    grow: float = 1.5
    shrink: float = 0.5
    retry_interval: float = 1 * DAY
    retry_runs: int = 3


def parse_time(text: str) -> datetime:
    """A record's time (iso_utc), or any ISO 8601 time, as an aware UTC datetime."""
    return datetime.fromisoformat(text).astimezone(timezone.utc)


def _header(doc: dict, name: str) -> str | None:
    for header, value in doc.get("headers") or ():
        if header.lower() == name:
            return value
    return None


def _fetch_part(doc: dict) -> dict:
    body = response_body(doc) if doc["outcome"] in (FETCHED, NOT_HTML) else None
    return {
        "outcome": doc["outcome"],
        "status": doc["status"],
        "fetched_at": doc["fetched_at"],
        "error": doc["error"],
        "redirect_to": doc["redirect_to"],
        "last_modified": _header(doc, "last-modified"),
        "etag": _header(doc, "etag"),
        "digest": payload_digest(body) if body is not None else None,
    }


def updates_from_doc(doc: dict, hops: int | None = None) -> Iterator[tuple[str, dict]]:
    """(URL, update) for the URLs one doc record attempted: the requested URL,
    and the final URL when a same-host redirect was followed to it."""
    seen = {"layer": doc["layer"], "hops": hops, "seed": False}
    if doc["url"] != doc["requested_url"]:
        hop = {"outcome": REDIRECT, "status": None, "fetched_at": doc["fetched_at"], "error": None,
               "redirect_to": doc["url"], "last_modified": None, "etag": None, "digest": None}
        yield doc["requested_url"], {"seen": seen, "fetch": hop}
    yield doc["url"], {"seen": seen, "fetch": _fetch_part(doc)}


def updates_from_out(out: dict, hops: int | None = None) -> Iterator[tuple[str, dict]]:
    """(URL, update) for each link of an out record: seen on the next layer."""
    seen = {"layer": out["layer"] + 1, "hops": None if hops is None else hops + 1, "seed": False}
    for link in out["outlinks"]:
        yield link, {"seen": seen}


def seed_update() -> dict:
    return {"seen": {"layer": 0, "hops": 0, "seed": True}}


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
    return folded


def _transient(fetch: dict) -> bool:
    status = fetch["status"]
    if fetch["outcome"] == NETWORK_ERROR:
        return True
    if fetch["outcome"] == HTTP_ERROR and status is not None:
        return status >= 500 or status == 429
    return fetch["outcome"] == ROBOTS_DENIED and "unreachable" in (fetch["error"] or "")


def apply_update(record: dict | None, url: str, update: dict, run: str, policy: RevisitPolicy) -> dict:
    """The URL's db record after this update.  `run` is the start of the run
    (ISO 8601 UTC) that made it."""
    if record is None:
        record = new_db_record(url, host_key(url))
        record["first_run"] = run
        record["first_layer"] = (update.get("seen") or {}).get("layer")
    else:
        record = dict(record)
    seen = update.get("seen")
    if seen:
        record["hops"] = _min(record["hops"], seen["hops"])
        record["seed"] = record["seed"] or seen["seed"]
    fetch = update.get("fetch")
    if fetch:
        _take_fetch(record, fetch, policy)
    return record


def _take_fetch(record: dict, fetch: dict, policy: RevisitPolicy) -> None:
    fetched_at = parse_time(fetch["fetched_at"])
    record["fetched_at"] = fetch["fetched_at"]
    if fetch["status"] is not None:
        record["fetch_count"] += 1
        record["http_status"] = fetch["status"]
    interval = record["interval"] or policy.first_interval
    if _transient(fetch):
        record["failures"] += 1
        if record["failures"] > policy.retry_runs:
            record["status"], interval = GONE, policy.max_interval
        else:
            record["status"], interval = FAILED, policy.retry_interval
        record["interval"] = record["interval"] or policy.first_interval  # kept for when it answers again
        record["due_at"] = iso_utc(fetched_at + timedelta(seconds=interval))
        return
    record["failures"] = 0
    if fetch["status"] == 304:
        record["status"] = NOT_MODIFIED
        interval = min(interval * policy.grow, policy.max_interval)
    elif fetch["outcome"] in (FETCHED, NOT_HTML):
        changed = record["digest"] is not None and fetch["digest"] != record["digest"]
        first = record["digest"] is None
        record.update(status=FETCHED, last_modified=fetch["last_modified"], etag=fetch["etag"], digest=fetch["digest"],
                      signature=fetch["digest"])
        if first or changed:
            record["changed_at"] = fetch["fetched_at"]
        if not first:
            interval = interval * (policy.shrink if changed else policy.grow)
        interval = max(policy.min_interval, min(interval, policy.max_interval))
    elif fetch["outcome"] == REDIRECT:
        record.update(status=REDIRECT, redirect_to=fetch["redirect_to"])
    elif fetch["outcome"] == ROBOTS_DENIED:
        record["status"] = ROBOTS_DENIED
    elif fetch["outcome"] == BLOCKED:
        record["status"], interval = BLOCKED, policy.max_interval
    else:  # 404, 410 and the other final HTTP errors
        record["status"], interval = GONE, policy.max_interval
    record["interval"] = interval
    record["due_at"] = iso_utc(fetched_at + timedelta(seconds=interval))
