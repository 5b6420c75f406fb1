"""The record schema: what the stores hold, defined once.

Stores hold lines of `JSON key TAB JSON value` (see protocols.py).  The doc
store's key is the record's `url`; its value is a doc record.  The out
store's key is the same `url`; its value is an out record.  The crawl db's
key is a URL too; its value is a db record, the URL's history across runs.
Records are plain dicts so that every mrjob runner can carry them as JSON
without a class of ours on the other side.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import pybase64

from mrcrawl.store.failures import FailureKind, failure_kind

# Outcomes of one attempted URL.
FETCHED = "fetched"  # a 2xx HTML page, body kept
NOT_HTML = "not_html"  # a 2xx response of another type, body not kept
REDIRECT = "redirect"  # redirected to another host: the target goes to the next layer
HTTP_ERROR = "http_error"  # 4xx, 5xx after retries, too many redirects, loop
NETWORK_ERROR = "network_error"  # DNS, connection or timeout failure after retries
ROBOTS_DENIED = "robots_denied"  # robots.txt forbids it, or robots.txt was unreachable
BLOCKED = "blocked"  # outside the crawl's filters or on a private network
NOT_MODIFIED = "not_modified"  # answered 304 to a conditional request: the crawl db's earlier fetch stands
OUTCOMES = (FETCHED, NOT_HTML, NOT_MODIFIED, REDIRECT, HTTP_ERROR, NETWORK_ERROR, ROBOTS_DENIED, BLOCKED)

# Out record types, as in the thesis's OutLinksWritable.
LINKS_FROM_PAGE = 0
REDIRECT_TARGET = 1
ANNOUNCED = 2  # the entries of a feed or sitemap (page/announce.py), with what it said of each

DOC_FIELDS = (
    "url",  # last URL requested in this fetch (after same-host redirects)
    "requested_url",  # the frontier URL this fetch started from
    "hops",  # links from the nearest seed, as the crawl db knew when it was queued; None if unknown
    "score",  # the crawl db's score of requested_url when it was queued (FRONTIER_FIELDS), or None
    "known",  # what the crawl db held of requested_url when it was queued (KNOWN_FIELDS), or None
    "redirect_from",  # requested_url when url differs from it, else None
    "redirect_to",  # the other-host target of a `redirect` outcome, else None
    "layer",
    "outcome",
    "status",  # HTTP status of the last response, or None
    "fetched_at",  # ISO 8601 UTC start of the last request (or of the decision)
    "content_type",  # media type of the last response, without parameters
    "encoding",  # Python codec that decodes `body` to the page's text
    "body",  # base64 of the exact body bytes (Content-Encoding undone); fetched only
    "archive_body",  # the same for the last response of any other record, for the WARC archive
    # The response's X-Robots-Tag, in the Crawler's records; in Merge's, its
    # page's <meta name="robots"> too, which the Parser reads (an out record's `page`).
    "meta_follow",  # False when X-Robots-Tag (or, merged, meta robots) says nofollow
    "meta_index",  # False when X-Robots-Tag (or, merged, meta robots) says noindex
    "truncated",  # True when the body was cut at max_page_bytes
    "error",  # what went wrong, for a person to read, or None
    "error_kind",  # the kind of what went wrong (failures.FailureKind), or None when nothing did
    "headers",  # response headers of the last response, [[name, value], ...]
    "http_version",  # e.g. "HTTP/1.1", for an exact status line in WARC export
    "reason",  # the status line's reason phrase
    "attempts",  # requests made for this URL, redirect hops and retries included
    "duplicate_of",  # set by Merge: the URL whose content this page repeats (the dup store), else None
    # Set by Merge on a fetched page: what the Parser read of it (an out
    # record's `page`, with its `signature`), so that HtmlToXml need not parse it again.
    "page",
    "kind",  # None for a page; for a feed or sitemap, its kind (announce.ANNOUNCEMENT_KINDS)
    "entries",  # a feed's or sitemap's entries, [[url, published, modified, title, language], ...], else None
    "robots_sitemaps",  # the Sitemap: URLs of the host's robots.txt, on the first doc of the host after it was read
    "announced",  # what feeds and sitemaps said of requested_url (ANNOUNCED_FIELDS), from the crawl db, or None
)

# What announcements said of a URL (a db record's, a frontier entry's, a doc
# record's and each type-2 out record entry's `announced`): the newest dates
# seen, one title and language (the smallest announced: the same in any
# order), and how many sitemap indexes led to it (0: named by robots.txt, a
# seed, a page or a feed).
ANNOUNCED_FIELDS = ("published", "modified", "title", "language", "nesting")


def announced_entry(entry: list, nesting: int) -> dict:
    """The `announced` of a doc record's entry [url, published, modified, title, language]."""
    return {"published": entry[1], "modified": entry[2], "title": entry[3], "language": entry[4], "nesting": nesting}


# What a frontier entry and a doc record carry of the crawl db's record: the
# validators a conditional request sends back, the signature that tells a
# changed page from an unchanged one, the earlier fetch's payload digest
# and time, which a WARC revisit record refers to, and the original that
# fetch repeated (a duplicate has had no XML: its page is new to the index
# once it is no duplicate).
KNOWN_FIELDS = ("etag", "last_modified", "signature", "digest", "fetched_at", "duplicate_of")

# The frontier store `in/<L>`: key the URL, value a frontier entry.
FRONTIER_FIELDS = (
    "rank",  # the fetch order within a host, lowest first ("000" for seeds), as a fixed-width string
    "seed",  # True when the URL is one of this run's seeds
    "hops",  # links from the nearest seed, or None when unknown
    "known",  # the db record's KNOWN_FIELDS, or None for a URL the db has not fetched
    "deferred",  # None for a URL to fetch; for one a cap held back from the layer, the cap (DEFERRALS)
    "score",  # the db record's score: a fetched page passes a share of it to the URLs it links first seen on the run
    "announced",  # the db record's `announced` (ANNOUNCED_FIELDS), or None
)


def new_frontier_entry(rank: int, seed: bool, hops: int | None, known: dict | None,
                       deferred: str | None = None, score: float | None = None,
                       announced: dict | None = None) -> dict:
    return {"rank": f"{rank:03d}", "seed": seed, "hops": hops, "known": known, "deferred": deferred, "score": score,
            "announced": announced}


# A URL's status in the crawl db, as Nutch's CrawlDatum keeps one.  Where a
# status and a fetch outcome mean the same, they are the same string
# (NOT_MODIFIED: the last request was answered 304, the earlier fetch stands).
UNFETCHED = "unfetched"  # discovered, never attempted
GONE = "gone"  # 404 or 410, or failed on too many runs in a row: checked again rarely
DUPLICATE = "duplicate"  # fetched, and its content is another URL's (`duplicate_of`)
FAILED = "failed"  # a transient failure (network, 5xx, 429): retried on a later run
TRAPPED = "trapped"  # linked, and caught by a trap guard (`deferred` names it): never fetched
DB_STATUSES = (UNFETCHED, FETCHED, NOT_MODIFIED, REDIRECT, GONE, DUPLICATE, ROBOTS_DENIED, BLOCKED, FAILED, TRAPPED)

# Why a URL waits (a db record's `deferred`): the cap or the budget that kept
# it out of a layer's frontier, or the layer's time limit, each named by its config key.
# A deferred URL stays as it was (unfetched, or due again) and is offered
# again on the next run; a seed is never deferred.
DEFERRED_BY_LAYER_CAP = "max_urls_per_layer"
DEFERRED_BY_HOST_CAP = "max_urls_per_host"
DEFERRED_BY_TIME_LIMIT = "max_layer_seconds"
DEFERRED_BY_PLD_BUDGET = "pld_budget"  # its pay-level domain had spent this run's fetches
DEFERRALS = (DEFERRED_BY_LAYER_CAP, DEFERRED_BY_HOST_CAP, DEFERRED_BY_TIME_LIMIT, DEFERRED_BY_PLD_BUDGET)
# The trap guards, each named by its config key: a linked URL one catches is
# `trapped`, with the guard in its `deferred`.
TRAPPED_BY_LENGTH = "max_url_length"
TRAPPED_BY_PATH_REPEATS = "max_path_repeats"
TRAPPED_BY_QUERY_PARAMS = "max_query_params"
TRAP_GUARDS = (TRAPPED_BY_LENGTH, TRAPPED_BY_PATH_REPEATS, TRAPPED_BY_QUERY_PARAMS)

DB_FIELDS = (
    "url",
    "host",  # scheme://host[:port], the unit of politeness and of the db's partitions
    "status",  # one of DB_STATUSES
    "first_run",  # the start (ISO 8601 UTC) of the run that discovered it
    "first_layer",  # the layer of that run it was first requested or linked on
    "hops",  # links from the nearest seed, over every run
    "seed",  # True while it is one of the seeds
    "fetched_at",  # the last request's time, or None
    "fetch_count",  # requests that got an answer, over every run
    "http_status",  # the last answer's HTTP status, or None
    "last_modified",  # the last 200's Last-Modified header, sent back as If-Modified-Since; None for a duplicate
    "etag",  # the last 200's ETag header, sent back as If-None-Match; None for a duplicate
    "digest",  # payload digest of the last 200's body (sha1, as WARC writes it)
    "signature",  # what counts as a change of the page (see the revisit policy)
    "changed_at",  # when the signature last changed
    "due_at",  # when it should be fetched next (ISO 8601 UTC), None when never
    "interval",  # the current revisit interval, in seconds
    "failures",  # consecutive runs that ended in a transient failure
    "deferred",  # why it waits, unfetched or due (DEFERRALS), or the guard that trapped it (TRAP_GUARDS); else None
    "deferrals",  # how many times in a row it was deferred
    "duplicate_of",  # for a duplicate: the URL that held its content when it was last fetched
    "redirect_to",  # for a redirect: the target
    "score",  # its PageRank (frontier/scores.py), None until first scored; provisional while first seen on this run
    "outlinks",  # a fetched page's distinct outlinks but itself, in page order; None when never fetched, [] for none or gone
    "inlinks",  # distinct pages linking to it (from scoring; provisional while first seen on this run), or None
    "inlink_hosts",  # distinct hosts linking to it, as inlinks
    "hub",  # True for a page that leads to new URLs (home, section): revisited on every run
    "queued",  # "<run> <layer>": the frontier this run's cycle filter last put it in, or None
    "kind",  # None for a page; for a feed or sitemap, its kind when last fetched (announce.ANNOUNCEMENT_KINDS)
    "announced",  # what feeds and sitemaps said of it (ANNOUNCED_FIELDS), or None when none named it
)


# The crawl db's digest index: key a payload digest, or a content signature
# (`sig:<signature>`, frontier/dedup.py), value the URL whose fetched page
# first had that payload or content (its original) and when it was fetched.
DIGEST_FIELDS = (
    "url",  # the original: every other URL fetched with this payload (content) repeats it
    "fetched_at",  # when the original's page with this payload (content) was fetched
)

# The duplicate store `dup/<L>`: key a URL fetched on layer L whose payload
# or content is another URL's, value what it repeats: a payload duplicate
# (identical bytes: a WARC revisit record), or a content duplicate (the same
# text: the crawl db's `duplicate`).  A URL may have one of each, with
# different originals.
DUPLICATE_FIELDS = (
    "duplicate_of",  # the original's URL (DIGEST_FIELDS' url)
    "original_fetched_at",  # the original's fetch time, which a WARC revisit record refers to
    "digest",  # a payload duplicate's: the payload digest both share
    "signature",  # a content duplicate's, instead of a digest: the content signature both share
)


# How a duplicate record's stored value starts (new_duplicate's first field,
# as the stores' compact JSON writes it): Merge tells one from a doc record
# without decoding either.
DUPLICATE_VALUE_START = b'{"duplicate_of":'


def new_duplicate(original: dict, digest: str) -> dict:
    """The duplicate record of a URL whose payload `digest` has the original `original` (DIGEST_FIELDS)."""
    return {"duplicate_of": original["url"], "original_fetched_at": original["fetched_at"], "digest": digest}


def new_content_duplicate(original: dict, signature: str) -> dict:
    """The duplicate record of a URL whose content, of signature `signature`, has the original `original`."""
    return {"duplicate_of": original["url"], "original_fetched_at": original["fetched_at"], "signature": signature}


def is_content_duplicate(duplicate: dict) -> bool:
    """Whether a duplicate record says the page repeats another's content (else: its payload)."""
    return "signature" in duplicate


def new_db_record(url: str, host: str) -> dict:
    """A db record for a URL the db has not seen; the update fills it in."""
    record = dict.fromkeys(DB_FIELDS)
    record.update(url=url, host=host, status=UNFETCHED, seed=False, fetch_count=0, failures=0, deferrals=0)
    return record


def iso_utc(moment: datetime) -> str:
    """`moment` as every record writes a time: ISO 8601 in UTC, milliseconds, Z."""
    return moment.astimezone(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class RunClock:
    """The clock a run stamps its times with: the wall clock moved by
    `offset` seconds, which the run fixes when it begins (CrawlState's
    clock_offset): `--now` minus the real time then, so that a run as of
    another day records that day; 0 without `--now`, the wall clock.  It only
    stamps; waits and timeouts are measured on the monotonic clock."""

    offset: float = 0.0

    def now_iso(self) -> str:
        return iso_utc(datetime.now(timezone.utc) + timedelta(seconds=self.offset))


WALL_CLOCK = RunClock()


def utc_now_iso() -> str:
    return WALL_CLOCK.now_iso()


def new_doc(requested_url: str, layer: int, entry: dict | None = None, clock: RunClock = WALL_CLOCK) -> dict:
    """A doc record for a URL about to be attempted, from its frontier entry
    if it has one, stamped by the run's `clock`; the fetcher fills it in."""
    doc = dict.fromkeys(DOC_FIELDS)
    doc.update(
        url=requested_url,
        requested_url=requested_url,
        hops=(entry or {}).get("hops"),
        score=(entry or {}).get("score"),
        known=(entry or {}).get("known"),
        announced=(entry or {}).get("announced"),
        layer=layer,
        fetched_at=clock.now_iso(),
        meta_follow=True,
        meta_index=True,
        truncated=False,
        attempts=0,
    )
    return doc


def encode_body(body: bytes) -> str:
    return pybase64.b64encode(body).decode("ascii")


def decode_body_field(text: str) -> bytes:
    """The bytes of a `body` or `archive_body` field.

    Every job that reads pages starts here, so the base64 is decoded by
    pybase64 (SIMD; the standard library's decoder was a sixth of the
    Parser's time).  What we write is canonical base64 and takes the strict
    path; anything else is decoded as the standard library would, ignoring
    characters outside the alphabet.
    """
    try:
        return pybase64.b64decode(text, validate=True)
    except binascii.Error:
        return pybase64.b64decode(text)


def is_fetched_page(doc: dict) -> bool:
    """Whether a doc record holds a fetched HTML page: outcome `fetched`, and
    no feed or sitemap (its `kind`; a record older than kinds has none)."""
    return doc["outcome"] == FETCHED and doc.get("kind") is None


def body_bytes(doc: dict) -> bytes:
    body = doc.get("body")
    return decode_body_field(body) if body else b""


def response_body(doc: dict) -> bytes | None:
    """The last response's body, whatever the outcome; None when there was no response."""
    body = doc.get("body") or doc.get("archive_body")
    if body is None:
        return b"" if doc.get("status") is not None else None
    return decode_body_field(body)


def payload_digest(body: bytes) -> str:
    """`sha1:` + base32 of the body, as WARC-Payload-Digest and Common Crawl write it."""
    return "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")


def new_out(outlinks: list[str], link_type: int, layer: int, timestamp: str,
            hops: int | None = None, signature: str | None = None, hub: bool | None = None,
            trapped: list | None = None, anchors: list[str] | None = None, score: float | None = None,
            announced: list[dict] | None = None, announcers: list[str] | None = None,
            page: dict | None = None) -> dict:
    """An out record: the links a doc record yields for the next layer, and
    what the Parser judged of the page for the revisit policy (its hops, its
    change signature, whether it is a hub); None where there is no page.
    `trapped` holds the links a trap guard caught, [[url, guard], ...]
    (TRAP_GUARDS): recorded in the db, never fetched.  Records written
    before trap guards existed have no such field.  `anchors` is parallel
    to `outlinks`: each link's anchor text ("" when it has none; out_anchors
    reads a record written before anchors were kept).  `score` is the
    page's score as the crawl db knew it (the doc record's), which its
    links share (frontier/scores.py).  An ANNOUNCED record's `announced` is
    parallel to its outlinks, what the feed or sitemap said of each
    (ANNOUNCED_FIELDS); a page's `announcers` are the feeds and sitemaps it,
    or its host's robots.txt, names, offered to the next layer as links are.
    A fetched page's `page` is what the index needs of it (PAGE_FIELDS),
    read where the Parser parsed it; None for any other record, and in
    records written before the Parser kept it."""
    return {"outlinks": outlinks, "type": link_type, "layer": layer, "timestamp": timestamp,
            "hops": hops, "score": score, "signature": signature, "hub": hub, "trapped": trapped or [],
            "anchors": anchors if anchors is not None else [""] * len(outlinks),
            "announced": announced or [], "announcers": announcers or [], "page": page}


# An out record's `page`: what the page lets the crawler do with it (its
# X-Robots-Tag and its <meta name="robots"> together), its headline, and,
# when it may be indexed, the other fields the XML holds
# (page/index_fields.py), None when the page does not state them.  A page
# whose text could not be read has no content: HtmlToXml reads it again.
PAGE_FIELDS = ("follow", "index", "headline", "keywords", "description", "published", "content")
# How an out record's stored value starts (its first field), as Merge tells
# it from the doc and duplicate records of the same URL without decoding it.
OUT_VALUE_START = b'{"outlinks":'


def out_anchors(out: dict) -> list[str]:
    """An out record's anchors, parallel to its outlinks: "" for each link of
    a record written before anchors were kept."""
    anchors = out.get("anchors")
    return anchors if anchors is not None else [""] * len(out["outlinks"])


def error_kind(doc: dict) -> FailureKind | None:
    """The kind of failure a doc record holds (failures.py), None when it
    holds none; a failed record written before kinds were kept has UNKNOWN."""
    if doc.get("error") is None and doc.get("error_kind") is None:
        return None
    return failure_kind(doc.get("error_kind"))
