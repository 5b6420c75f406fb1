"""The record schema: what the stores hold, defined once.

Stores hold lines of `JSON key TAB JSON value` (see protocols.py).  The doc
store's key is the record's `url`; its value is a doc record.  The out
store's key is the same `url`; its value is an out record.  Records are plain
dicts so that every mrjob runner can carry them as JSON without a class of
ours on the other side.
"""
from __future__ import annotations

import base64
import binascii
import hashlib
import re
from datetime import datetime, timezone

import pybase64

# Outcomes of one attempted URL.
FETCHED = "fetched"  # a 2xx HTML page, body kept
NOT_HTML = "not_html"  # a 2xx response of another type, body not kept
REDIRECT = "redirect"  # redirected to another host: the target goes to the next layer
HTTP_ERROR = "http_error"  # 4xx, 5xx after retries, too many redirects, loop
NETWORK_ERROR = "network_error"  # DNS, connection or timeout failure after retries
ROBOTS_DENIED = "robots_denied"  # robots.txt forbids it, or robots.txt was unreachable
BLOCKED = "blocked"  # outside the crawl's filters or on a private network
OUTCOMES = (FETCHED, NOT_HTML, REDIRECT, HTTP_ERROR, NETWORK_ERROR, ROBOTS_DENIED, BLOCKED)

# Out record types, as in the thesis's OutLinksWritable.
LINKS_FROM_PAGE = 0
REDIRECT_TARGET = 1

DOC_FIELDS = (
    "url",  # last URL requested in this fetch (after same-host redirects)
    "requested_url",  # the frontier URL this fetch started from
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
    "meta_follow",  # False when meta robots or X-Robots-Tag says nofollow
    "meta_index",  # False when meta robots or X-Robots-Tag says noindex
    "truncated",  # True when the body was cut at max_page_bytes
    "error",  # what went wrong, or None
    "headers",  # response headers of the last response, [[name, value], ...]
    "http_version",  # e.g. "HTTP/1.1", for an exact status line in WARC export
    "reason",  # the status line's reason phrase
    "attempts",  # requests made for this URL, redirect hops and retries included
)


def utc_now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_doc(requested_url: str, layer: int) -> dict:
    """A doc record for a URL about to be attempted; the fetcher fills it in."""
    doc = dict.fromkeys(DOC_FIELDS)
    doc.update(
        url=requested_url,
        requested_url=requested_url,
        layer=layer,
        fetched_at=utc_now_iso(),
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


def new_out(outlinks: list[str], link_type: int, layer: int, timestamp: str) -> dict:
    """An out record: the links a doc record yields for the next layer."""
    return {"outlinks": outlinks, "type": link_type, "layer": layer, "timestamp": timestamp}


# An error's kind drops what varies from URL to URL (the URL, the host, the
# address) so that a layer's failures can be counted by kind.  Hadoop caps a
# job's counters (120 by default) and a counter name's length (64), so the
# kinds form a small set: an exception's class and errno text, an HTTP status.
_ERRNO_TEXT = re.compile(r"\[Errno -?\d+\] ([^)\]'\"]+)")
_EXCEPTION_NAME = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?::| while)")
_HTTP_STATUS = re.compile(r"^HTTP (\d{3})\b")
ERROR_KIND_MAX = 64


def _cause_kind(error: str) -> str:
    """`NewConnectionError: HTTPConnection(...): ... [Errno 111] Connection refused`
    -> `NewConnectionError (Connection refused)`."""
    status = _HTTP_STATUS.match(error)
    if status:
        return f"HTTP {status.group(1)}"
    name = _EXCEPTION_NAME.match(error)
    kind = name.group(1) if name else error.split(":", 1)[0]
    errno_text = _ERRNO_TEXT.search(error)
    if errno_text:
        kind += f" ({errno_text.group(1).strip()})"
    return kind


def error_kind(doc: dict) -> str | None:
    """What kind of failure a doc record holds, for counting; None when it holds none."""
    error = doc.get("error")
    if not error:
        return None
    outcome = doc.get("outcome")
    if outcome == BLOCKED:
        kind = "blocked: non-public address" if "non-public address" in error else "blocked: outside url_allow/url_deny"
    elif outcome == ROBOTS_DENIED:
        cause = error.partition("robots.txt unreachable (")[2]
        if cause:
            kind = f"robots.txt unreachable: {_cause_kind(cause.rstrip(')'))}"
        elif "unexpected error" in error:
            kind = "robots.txt: unexpected error"
        else:
            kind = "disallowed by robots.txt"
    elif outcome == HTTP_ERROR and not _HTTP_STATUS.match(error):
        kind = _redirect_problem(error)
    else:
        kind = _cause_kind(error)
    return kind[:ERROR_KIND_MAX]


def _redirect_problem(error: str) -> str:
    if "redirect loop" in error:
        return "redirect loop"
    if "more than" in error and "redirects" in error:
        return "too many redirects"
    if "Location" in error:
        return "redirect without a usable Location"
    return error.split(":", 1)[0]
