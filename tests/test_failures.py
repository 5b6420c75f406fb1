"""The kinds of failure are one closed list: what the fetcher writes is in
it, what reads a record reads the kind and never the error's text, and a
record written before kinds were kept reads as `unknown`."""
from __future__ import annotations

import errno
import re

from crawl_support import fetch_urls
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.exception_kinds import exception_kind
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.frontier.db_update import fetch_part, is_transient
from mrcrawl.store.failures import NO_PAGE_ADVICE, FailureKind, error_label, failure_kind, no_page_advice
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import (
    DOC_FIELDS,
    HTTP_ERROR,
    NETWORK_ERROR,
    OUTCOMES,
    ROBOTS_DENIED,
    error_kind,
    new_doc,
)
from mrcrawl.testweb.faults import (
    BAD_CHUNK_SIZE,
    CHUNKED_CUT_OFF,
    CLOSED_BEFORE_STATUS,
    DRIP_BODY,
    DRIP_HEADERS,
    HEADERS_CUT_OFF,
    HTTP_10,
    HUGE_LENGTH,
    LONG_HEADER,
    LYING_ENCODING,
    MANY_HEADERS,
    MANY_LINES_WITHOUT_COLON,
    NO_STATUS_LINE,
    RESET_BEFORE_STATUS,
    RESET_IN_BODY,
    RESET_IN_HEADERS,
    SHORT_BODY,
    SILENT,
    FaultServer,
    unanswered_port,
)

# Hadoop's defaults: counters per job, characters per counter name.
HADOOP_MAX_COUNTERS, HADOOP_MAX_COUNTER_NAME = 120, 64
FAILING_FAULTS = (DRIP_HEADERS, DRIP_BODY, HEADERS_CUT_OFF, CLOSED_BEFORE_STATUS, RESET_BEFORE_STATUS,
                  RESET_IN_HEADERS, RESET_IN_BODY, SHORT_BODY, CHUNKED_CUT_OFF, SILENT, BAD_CHUNK_SIZE,
                  NO_STATUS_LINE, LYING_ENCODING, MANY_HEADERS, LONG_HEADER, MANY_LINES_WITHOUT_COLON, HUGE_LENGTH)


def test_every_kind_is_a_short_counter_name_with_a_label_of_its_own():
    assert all(re.fullmatch(r"[a-z][a-z0-9_]*", kind) and len(kind) <= HADOOP_MAX_COUNTER_NAME
               for kind in FailureKind)
    labels = [kind.label for kind in FailureKind]
    assert all(labels) and len(set(labels)) == len(labels)
    # The Crawler counts its outcomes, its error kinds, the fetcher's figures
    # and the URLs it was given, each a counter of its own.
    fetcher = Fetcher(CrawlConfig(language="en", user_agent="mrcrawl-test/1.0"), layer=0)
    list(fetcher.finish())
    assert len(OUTCOMES) + len(FailureKind) + len(fetcher.stats) + 1 <= HADOOP_MAX_COUNTERS


def test_the_kind_sits_beside_the_error_in_the_doc_record():
    assert DOC_FIELDS[DOC_FIELDS.index("error") + 1] == "error_kind"
    assert new_doc("http://127.0.0.1/", 0)["error_kind"] is None


def test_what_real_faults_make_the_fetcher_write_is_in_the_list():
    """Every failure a loopback server can cause, and the fetcher's own
    refusals: each record's kind is a value of the list (not `unknown`),
    carried by the stores' JSON as a plain string, beside an error."""
    timeout = 0.5
    refused = f"http://127.0.0.1:{unanswered_port('127.0.0.1')}/page.html"
    with FaultServer(drip_interval=timeout / 4, drip_for=4 * timeout + 2) as server:
        urls = [server.url(fault) for fault in FAILING_FAULTS]
        urls += [server.url(HTTP_10).replace("http://", "https://"), refused, "http://255.255.255.255:9/",
                 "http://127.0.0.9/private.html", server.url("/outside"), "http://no-such-host.invalid/"]
        docs, _ = fetch_urls(urls, timeout=timeout, threads=4, allow_private_networks=False,
                             allow_networks=["127.0.0.1/32", "255.255.255.255/32"], url_deny=["/outside$"])
    assert len(docs) == len(urls)
    protocol = Utf8JsonProtocol()
    kinds = set()
    for doc in docs:
        _, stored = protocol.read(protocol.write(doc["url"], doc))
        assert stored["error"] and type(stored["error_kind"]) is str, doc
        assert failure_kind(stored["error_kind"]) is not FailureKind.UNKNOWN, doc
        kinds.add(stored["error_kind"])
    assert kinds == {FailureKind.TIME_LIMIT, FailureKind.CLOSED, FailureKind.RESET, FailureKind.TIMEOUT,
                     FailureKind.PROTOCOL, FailureKind.BAD_ENCODING, FailureKind.TLS, FailureKind.REFUSED,
                     FailureKind.CONNECT, FailureKind.BLOCKED_PRIVATE, FailureKind.BLOCKED_SCOPE, FailureKind.DNS}


def test_an_exception_no_kind_describes_is_other():
    assert exception_kind(OSError(errno.EIO, "Input/output error")) is FailureKind.OTHER


def test_a_record_from_before_kinds_reads_as_unknown_whatever_its_error_says():
    old = {"outcome": "blocked", "status": None, "error": "127.0.0.1 is a non-public address"}
    assert error_kind(old) is FailureKind.UNKNOWN
    assert error_kind({"outcome": "fetched", "error": None}) is None
    assert error_kind({"outcome": "http_error", "error": "HTTP 404", "error_kind": "a_kind_of_later"}) is \
        FailureKind.UNKNOWN
    assert error_label(None) == error_label("a_kind_of_later") == FailureKind.UNKNOWN.label


def failed_doc(outcome: str, status: int | None, error: str, kind: str | None) -> dict:
    doc = new_doc("http://127.0.0.1/page.html", 0)
    doc.update(outcome=outcome, status=status, error=error, error_kind=kind)
    if kind is None:
        del doc["error_kind"]  # as a record written before kinds were kept
    return doc


def test_the_crawl_db_retries_a_robots_txt_that_could_not_be_read_by_its_kind():
    unreachable = "http://127.0.0.1/page.html: robots.txt unreachable (HTTP 503)"
    assert is_transient(fetch_part(failed_doc(ROBOTS_DENIED, None, unreachable, FailureKind.HTTP_5XX)))
    assert is_transient(fetch_part(failed_doc(ROBOTS_DENIED, None, "worded anyhow", FailureKind.REFUSED)))
    assert not is_transient(fetch_part(failed_doc(ROBOTS_DENIED, None, unreachable, FailureKind.ROBOTS_DENIED)))
    # Without a kind the text is not read: the denial stands, as the rules' would.
    assert not is_transient(fetch_part(failed_doc(ROBOTS_DENIED, None, unreachable, None)))
    assert is_transient(fetch_part(failed_doc(NETWORK_ERROR, None, "worded anyhow", FailureKind.TIMEOUT)))
    assert is_transient(fetch_part(failed_doc(HTTP_ERROR, 503, "HTTP 503", FailureKind.HTTP_5XX)))
    assert not is_transient(fetch_part(failed_doc(HTTP_ERROR, 404, "HTTP 404", FailureKind.HTTP_4XX)))
    assert fetch_part(failed_doc(HTTP_ERROR, 404, "HTTP 404", None))["error_kind"] is FailureKind.UNKNOWN


def test_the_advice_for_a_crawl_that_fetched_nothing_is_keyed_by_kind():
    conf = "conf/news.yaml"
    assert set(NO_PAGE_ADVICE) == {FailureKind.BLOCKED_PRIVATE, FailureKind.DNS, FailureKind.PROXY_DNS,
                                   FailureKind.PROXY_REFUSED, FailureKind.REFUSED, FailureKind.BLOCKED_SCOPE}
    assert f"allow_private_networks: true in {conf}" in no_page_advice("blocked_private", conf)
    assert f"dns_server in {conf}" in no_page_advice("dns", conf)
    assert f"url_allow/url_deny in {conf}" in no_page_advice("blocked_scope", conf)
    assert f"the proxy in {conf}" in no_page_advice("proxy_refused", conf)
    assert all(no_page_advice(kind, conf) is None for kind in FailureKind if kind not in NO_PAGE_ADVICE)
    assert no_page_advice("fetched", conf) is None  # an outcome, where no error was counted
