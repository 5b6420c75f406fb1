"""The kinds of failure a doc record can hold: a closed list, defined once.

A failed doc record carries two fields (records.DOC_FIELDS): `error`, the
human detail (the exception and its message, the status, the URL), and
`error_kind`, one of the kinds below, set by the fetcher where it knows
what happened: where it catches an exception, where the private-network
guard or the URL filters refuse a URL, where a redirect is refused, where
robots.txt cannot be read.  Everything that sorts failures reads the kind
and never the detail, so a message can be reworded without changing what
is counted, retried or advised: the Crawler's `error` counters (one counter
per kind: Hadoop caps a job at 120 counters, and a counter's name at 64
characters), the crawl report, the page index, the crawl db's retry rule
and the driver's advice when no page was fetched.

A URL whose robots.txt could not be read ends `robots_denied` with the kind
of what kept robots.txt from being read (`refused`, `timeout`, `http_5xx`,
...): a host that cannot be reached fails at robots.txt before any page is
asked for, and its pages' kind then says why, as it would have without
robots.txt.  Only `robots_denied` says that robots.txt's rules forbid the
URL.

Records written before error_kind existed have none: they read as
`unknown`, and so does a value this list does not hold.
"""
from __future__ import annotations

from enum import StrEnum


class FailureKind(StrEnum):
    """One kind of failure: its value is what a record and a counter hold,
    its `label` what a person reads."""

    label: str

    def __new__(cls, value: str, label: str) -> FailureKind:
        kind = str.__new__(cls, value)
        kind._value_ = value
        kind.label = label
        return kind

    # Refused before any request.
    BLOCKED_PRIVATE = "blocked_private", "blocked: non-public address"
    BLOCKED_SCOPE = "blocked_scope", "blocked: outside url_allow/url_deny"
    ROBOTS_DENIED = "robots_denied", "disallowed by robots.txt"
    # No connection.
    DNS = "dns", "host name does not resolve"
    REFUSED = "refused", "connection refused"
    CONNECT = "connect", "could not connect"
    TLS = "tls", "TLS handshake or certificate failed"
    PROXY_DNS = "proxy_dns", "the proxy's host name does not resolve"
    PROXY_REFUSED = "proxy_refused", "the proxy refuses connections"
    PROXY = "proxy", "the proxy failed the request"
    # No whole answer.
    TIMEOUT = "timeout", "no answer within the timeout"
    TIME_LIMIT = "time_limit", "answer slower than its time limit"
    RESET = "reset", "connection reset"
    CLOSED = "closed", "connection closed before the answer was complete"
    PROTOCOL = "protocol", "answer that breaks HTTP"
    BAD_ENCODING = "bad_encoding", "body its Content-Encoding does not decode"
    # An answer that is no page.
    HTTP_4XX = "http_4xx", "HTTP 4xx: client error"
    HTTP_407 = "http_407", "HTTP 407: the proxy wants a login"
    HTTP_429 = "http_429", "HTTP 429: too many requests"
    HTTP_5XX = "http_5xx", "HTTP 5xx: server error"
    HTTP_UNEXPECTED = "http_unexpected", "HTTP status that is neither page, redirect nor error"
    REDIRECT_LIMIT = "redirect_limit", "too many redirects"
    REDIRECT_LOOP = "redirect_loop", "redirect loop"
    REDIRECT_LOCATION = "redirect_location", "redirect without a usable Location"
    # An answer read, in part: a feed or sitemap that breaks its format (the
    # outcome stays `fetched`, and the entries before the fault are followed).
    MALFORMED = "malformed", "feed or sitemap that does not parse, or cut short"
    # None of the above.
    OTHER = "other", "other network failure"
    UNEXPECTED = "unexpected", "unexpected error in the crawler (its log has the traceback)"
    UNKNOWN = "unknown", "unknown kind (a record from before kinds were kept)"


def failure_kind(value: str | None) -> FailureKind:
    """The kind a record's `error_kind` value names; UNKNOWN for a record
    without one, or with a value this list does not hold."""
    try:
        return FailureKind(value)
    except ValueError:
        return FailureKind.UNKNOWN


def error_label(kind: str | None) -> str:
    """What a person reads for a kind's value (a record's `error_kind`, an `error` counter's name)."""
    return failure_kind(kind).label


def status_kind(status: int) -> FailureKind:
    """The kind of an HTTP status the fetcher does not take for an answer."""
    if status == 407:
        return FailureKind.HTTP_407
    if status == 429:
        return FailureKind.HTTP_429
    if 400 <= status < 500:
        return FailureKind.HTTP_4XX
    if status >= 500:
        return FailureKind.HTTP_5XX
    return FailureKind.HTTP_UNEXPECTED


# What to tell the operator when most URLs of a crawl that fetched no page
# failed one way; {conf} is the path of the crawl's config.
NO_PAGE_ADVICE = {
    FailureKind.BLOCKED_PRIVATE:
        "set allow_private_networks: true in {conf} to crawl hosts on loopback or private networks",
    FailureKind.DNS:
        "host names do not resolve: is this machine online, and is its DNS (or dns_server in {conf}) working?",
    FailureKind.PROXY_DNS: "the proxy's name does not resolve: is this machine online, and is its DNS working?",
    FailureKind.PROXY_REFUSED: "nothing listens at the address of the proxy in {conf}",
    FailureKind.REFUSED: "nothing listens at the seeds' addresses",
    FailureKind.BLOCKED_SCOPE: "the seeds' redirects lead outside url_allow/url_deny in {conf}",
}


def no_page_advice(kind: str, conf_path: str) -> str | None:
    """What the operator can do about a crawl that fetched no page, most of
    whose URLs failed with `kind` (an `error` counter's name); None when
    there is nothing to say beyond the kind."""
    advice = NO_PAGE_ADVICE.get(failure_kind(kind))
    return advice.format(conf=conf_path) if advice else None
