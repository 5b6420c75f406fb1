"""Transport faults in a whole crawl: the fault matrix's transport cases.

Each case is served by a FaultServer of its own (mrcrawl/testweb/faults.py),
on a loopback address of its own, beside the generated test web; the real
driver crawls them all at once (inline runner, depth 2, WARC export) in a
process of its own, so that its peak RSS and wall time can be read.  The
test web is first crawled alone the same way: the baseline its pace, the
crawl's memory and its wall time are held against.  tests/test_fetch.py
checks each fault in one Fetcher alone; here the checks are those of the
crawl: one record per fault URL over all layers (a network_error retried
in its layer, `retries` times, and never again in the next), its outcome
and its error naming the fault, the XML line (parsed back by lxml's strict
parser) and the WARC records (read back by warcio with their digests
checked) of the ones fetched, no XML and no WARC record of the others, and
every request each server saw.

The config is the test web's with `timeout` 1 s and `retries` 1, so a
fault's URL takes at most two whole-response limits of 3 s and a backoff.
Each case has a host of its own; the test web's 8 threads serve its hosts
and the faults' 28 at once: a fault holds up its own host, and nothing else.
"""
from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field

import pytest
from lxml import etree

from crawl_support import assert_crawled_as_alone, crawl_alone_then_beside, read_records, warc_records_for
from mrcrawl.fetch.fetcher import BACKOFF_BASE, MAX_ERROR_CHARS, RESPONSE_TIME_LIMIT
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import FETCHED, NETWORK_ERROR, ROBOTS_DENIED, body_bytes, payload_digest
from mrcrawl.testweb import start_test_web
from mrcrawl.testweb.faults import (
    AFTER_LONG_BODY, AFTER_LONG_BODY_PAGE, BAD_CHUNK_SIZE, CHUNKED_CUT_OFF, CLOSED_BEFORE_STATUS, DEFLATE_BOMB,
    DRIP_BODY, DRIP_HEADERS, EARLY_HINTS, ENDLESS_BODY, ENDLESS_BURST, GZIP_BOMB, HEADERS_CUT_OFF, HTTP_10,
    HUGE_LENGTH, HUGE_LENGTH_BYTES, LINE_WITHOUT_COLON, LONG_BODY, LONG_BODY_LONG_STRAY, LONG_BODY_PAGE,
    LONG_HEADER, LYING_ENCODING, MANY_HEADERS, MANY_LINES_WITHOUT_COLON, NO_STATUS_LINE, NOT_HTTP, PLAIN_PAGE,
    RESET_BEFORE_STATUS, RESET_IN_BODY, RESET_IN_HEADERS, SHORT_BODY, SHORT_BODY_LENGTH, SHORT_BODY_SENT, SILENT,
    SPACE_BEFORE_COLON, FaultServer, large_answer,
)
from mrcrawl.testweb.markup import digits_in_words

DEPTH = 2  # a fault URL that failed on layer 0 must not be asked for again on layer 1
TIMEOUT, RETRIES = 1.0, 1
LIMIT = RESPONSE_TIME_LIMIT * TIMEOUT  # the whole-response limit: 3 s
MAX_PAGE_BYTES = 1024 * 1024
MARGIN = 1.0  # seconds: thread start and scheduling on a loaded machine
# One fault URL's requests end within this: each attempt within the
# whole-response limit, and the host's backoff between them.
PER_URL_SECONDS = (RETRIES + 1) * LIMIT + BACKOFF_BASE * (2 ** RETRIES - 1)
# What the crawl's other steps may take over the fetched faults' pages
# (3 MiB of them: the bombs and the endless body), on a loaded machine.
PAGES_SECONDS = 5.0
# Peak RSS the faults may add to the crawl's process, over the test web
# alone: a task holds a body of at most max_page_bytes a few times over
# (bytes, base64, the decoded text) while it fetches or parses it, a bomb is
# decoded 64 KiB at a time, and a header block is read to 100 lines or
# 64 KiB.  Measured: under 1 MiB more; a bomb decoded whole would be 1 GiB.
CRAWL_EXTRA_RSS = 8 * MAX_PAGE_BYTES + 16 * 1024 * 1024
STRICT_XML = etree.XMLParser(huge_tree=True)  # recover=False: any error raises

# FaultServer options.  A drip sends a byte every quarter timeout, so no
# read times out and only the whole-response limit ends the answer; the
# server gives up well after that limit, so that the crawler must end it.
SLOW = dict(drip_interval=TIMEOUT / 4, drip_for=LIMIT + 4 * MARGIN)
FAST = dict(drip_interval=0.0, drip_for=LIMIT + 2 * MARGIN)  # as fast as the socket takes it
WAITS_FOR_A_REQUEST_LINE = dict(answers_not_http=False, drip_for=TIMEOUT + 2 * MARGIN)


@dataclass(frozen=True)
class Case:
    path: str
    outcome: str
    names_the_fault: str | None  # a part of the error that names the fault; None for a page fetched
    kind: FailureKind | None = None  # the error's kind; None for a page fetched
    server: dict = field(default_factory=dict)  # FaultServer options
    scheme: str = "http"
    also: tuple[str, ...] = ()  # paths requested after it on its host
    listens: bool = True  # False: its server's port refuses connections


def whole_response_limit(while_reading: str) -> str:
    return f"ResponseTimeLimitError{while_reading}: the whole response took longer than its time limit of {LIMIT:g}s"


CASES = {
    "drip in the headers": Case(DRIP_HEADERS, NETWORK_ERROR, whole_response_limit(""), FailureKind.TIME_LIMIT,
                                SLOW),
    "drip in the body": Case(DRIP_BODY, NETWORK_ERROR, whole_response_limit(" while reading the body"),
                             FailureKind.TIME_LIMIT, SLOW),
    "headers cut off": Case(HEADERS_CUT_OFF, NETWORK_ERROR, "HeadersCutOffError: the connection closed inside "
                                                            "the header block: the headers are incomplete",
                            FailureKind.CLOSED),
    "closed before the status line": Case(CLOSED_BEFORE_STATUS, NETWORK_ERROR,
                                          "RemoteDisconnected('Remote end closed connection without response')",
                                          FailureKind.CLOSED),
    "reset before the status line": Case(RESET_BEFORE_STATUS, NETWORK_ERROR, "ConnectionResetError(",
                                         FailureKind.RESET),
    "reset inside the header block": Case(RESET_IN_HEADERS, NETWORK_ERROR, "ConnectionResetError(", FailureKind.RESET),
    "reset inside the body": Case(RESET_IN_BODY, NETWORK_ERROR, "ProtocolError while reading the body: "
                                  "(\"Connection broken: ConnectionResetError(", FailureKind.RESET),
    "connection refused": Case("/any-page.html", ROBOTS_DENIED, "robots.txt unreachable (NewConnectionError: ",
                               FailureKind.REFUSED, listens=False),
    "body short of its length": Case(SHORT_BODY, NETWORK_ERROR, f"IncompleteRead({len(SHORT_BODY_SENT)} bytes read, "
                                     f"{SHORT_BODY_LENGTH - len(SHORT_BODY_SENT)} more expected)", FailureKind.CLOSED),
    "chunked without its last chunk": Case(CHUNKED_CUT_OFF, NETWORK_ERROR,
                                           "ProtocolError while reading the body: Response ended prematurely",
                                           FailureKind.CLOSED),
    "silent server": Case(SILENT, NETWORK_ERROR, f"Read timed out. (read timeout={TIMEOUT})", FailureKind.TIMEOUT,
                          SLOW),
    "endless body, fast": Case(ENDLESS_BODY, FETCHED, None, server=FAST),
    "endless body, slow": Case(ENDLESS_BODY, NETWORK_ERROR, whole_response_limit(" while reading the body"),
                               FailureKind.TIME_LIMIT, SLOW),
    "body longer than its length": Case(LONG_BODY, FETCHED, None, also=(AFTER_LONG_BODY,)),
    "body longer than its length, long stray": Case(LONG_BODY_LONG_STRAY, FETCHED, None),
    "chunk size no number": Case(BAD_CHUNK_SIZE, NETWORK_ERROR, "ProtocolError while reading the body: "
                                 "(\"Connection broken: InvalidChunkLength(got length b'zz\\\\r\\\\n', 0 bytes read)",
                                 FailureKind.PROTOCOL),
    "HTTP/1.0": Case(HTTP_10, FETCHED, None),
    "HTTP/0.9: no status line": Case(NO_STATUS_LINE, NETWORK_ERROR,
                                     "ProtocolError: ('Connection aborted.', BadStatusLine('<html><body><p>a page on",
                                     FailureKind.PROTOCOL),
    "TLS to a plain port answering 400": Case(
        HTTP_10, ROBOTS_DENIED, "robots.txt unreachable (SSLError: [SSL: WRONG_VERSION_NUMBER] wrong version number",
        FailureKind.TLS, scheme="https"),
    "TLS to a plain port waiting for a request line": Case(
        HTTP_10, ROBOTS_DENIED, f"robots.txt unreachable (SSLError: the TLS handshake got no answer within the "
                                f"timeout of {TIMEOUT:g}s (is the port serving TLS?))",
        FailureKind.TLS, WAITS_FOR_A_REQUEST_LINE, scheme="https"),
    "gzip bomb": Case(GZIP_BOMB, FETCHED, None),
    "deflate bomb": Case(DEFLATE_BOMB, FETCHED, None),
    "Content-Encoding that lies": Case(LYING_ENCODING, NETWORK_ERROR, "DecodeError while reading the body: ('Received "
                                       "response with content-encoding: gzip, but failed to decode it.'",
                                       FailureKind.BAD_ENCODING),
    "100,000 headers": Case(MANY_HEADERS, NETWORK_ERROR,
                            "ProtocolError: ('Connection aborted.', HTTPException('got more than 100 headers'))",
                            FailureKind.PROTOCOL),
    "a header line of 1 MB": Case(LONG_HEADER, NETWORK_ERROR, "ProtocolError: ('Connection aborted.', "
                                  "LineTooLong('got more than 65536 bytes when reading header line'))",
                                  FailureKind.PROTOCOL),
    "100,000 header lines without a colon": Case(
        MANY_LINES_WITHOUT_COLON, NETWORK_ERROR,
        "ProtocolError: ('Connection aborted.', HTTPException('got more than 100 header lines without a colon'))",
        FailureKind.PROTOCOL),
    "10 GB Content-Length": Case(HUGE_LENGTH, NETWORK_ERROR, f"IncompleteRead({len(PLAIN_PAGE)} bytes read, "
                                 f"{HUGE_LENGTH_BYTES - len(PLAIN_PAGE)} more expected)", FailureKind.CLOSED),
    "a header line without a colon": Case(LINE_WITHOUT_COLON, FETCHED, None),
    "a space before the colon": Case(SPACE_BEFORE_COLON, FETCHED, None),
    "103 Early Hints": Case(EARLY_HINTS, FETCHED, None),
}
FIRST_ADDRESS = 60  # 127.0.0.60 upwards: past the test web's 127.0.0.2-9 and the page faults' .40


def plain_page(address: str) -> bytes:
    """Each server's page of its own, its address in words (a crawler reads
    no text by its digits): no fetched case is another's duplicate."""
    return PLAIN_PAGE.replace(b"a plain page", b"a plain page of " + digits_in_words(address).encode())


class FaultCrawl:
    """Each case's server, and its URLs."""

    def __init__(self):
        self.servers = {}
        for number, (name, case) in enumerate(CASES.items()):
            address = f"127.0.0.{FIRST_ADDRESS + number}"
            self.servers[name] = FaultServer(address, plain_page=plain_page(address), **case.server)

    def __enter__(self) -> FaultCrawl:
        for name, server in self.servers.items():
            server.start()
            if not CASES[name].listens:
                server.stop()  # its port now refuses connections
        return self

    def __exit__(self, *exc) -> None:
        for server in self.servers.values():
            server.stop()

    def origin(self, name: str) -> str:
        server = self.servers[name]
        return f"{CASES[name].scheme}://{server.address}:{server.port}"

    def url(self, name: str, path: str | None = None) -> str:
        return self.origin(name) + (path or CASES[name].path)

    def seeds(self) -> list[str]:
        return [self.url(name, path) for name, case in CASES.items() for path in (case.path, *case.also)]

    def url_allow(self) -> list[str]:
        return ["^" + re.escape(self.origin(name)) + "/" for name in CASES]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The test web crawled alone, then with every transport fault beside it."""
    directory = tmp_path_factory.mktemp("transportfaults")
    for name in ("gzip bomb", "deflate bomb", "100,000 headers", "a header line of 1 MB",
                 "100,000 header lines without a colon"):
        large_answer(CASES[name].path)  # built once, before the crawl asks for it
    with start_test_web(seed=1) as web_server, FaultCrawl() as faults:
        config = web_server.web.crawl_config(timeout=TIMEOUT, retries=RETRIES, max_page_bytes=MAX_PAGE_BYTES,
                                             url_allow=[web_server.web.url_allow, *faults.url_allow()])
        crawled = crawl_alone_then_beside(directory, web_server, config, faults.seeds(), DEPTH,
                                          list(faults.servers.values()))
        crawled.faults = faults
        crawled.fault_logs = {name: server.log for name, server in faults.servers.items()}
        crawled.duplicates = {url: dup for layer in range(DEPTH)
                              for url, dup in read_records(crawled.output / "dup" / str(layer))}
        return crawled


def records_of(crawled, url: str) -> list[dict]:
    return [doc for doc in crawled.docs if doc["requested_url"] == url]


def the_record(crawled, name: str, path: str | None = None) -> dict:
    """The one record of a case's URL over all layers, on layer 0, with the case's outcome."""
    case = CASES[name]
    docs = records_of(crawled, crawled.faults.url(name, path))
    assert len(docs) == 1, f"{name}: {len(docs)} records"
    doc, = docs
    assert (doc["layer"], doc["outcome"]) == (0, case.outcome), (name, doc["outcome"], doc["error"])
    return doc


def expected_body(name: str, path: str | None = None) -> bytes:
    """What the crawler stores of a page fetched: the page as its
    Content-Length or its encoding gives it, cut at max_page_bytes."""
    case = CASES[name]
    path = path or case.path
    if path in (GZIP_BOMB, DEFLATE_BOMB):
        return bytes(MAX_PAGE_BYTES)
    if path == ENDLESS_BODY:
        bursts = MAX_PAGE_BYTES // len(ENDLESS_BURST) + 1
        return (b"<html><body>" + ENDLESS_BURST * bursts)[:MAX_PAGE_BYTES]
    if path in (LONG_BODY, LONG_BODY_LONG_STRAY):
        return LONG_BODY_PAGE
    if path == AFTER_LONG_BODY:
        return AFTER_LONG_BODY_PAGE
    return crawled_plain_page(name)


def crawled_plain_page(name: str) -> bytes:
    return plain_page(f"127.0.0.{FIRST_ADDRESS + list(CASES).index(name)}")


FETCHED_URLS = [(name, path) for name, case in CASES.items() if case.outcome == FETCHED
                for path in (case.path, *case.also)]
FAILED = [name for name, case in CASES.items() if case.outcome != FETCHED]


# ---- every case -------------------------------------------------------------


@pytest.mark.parametrize("name, path", FETCHED_URLS, ids=[f"{name} {path}" for name, path in FETCHED_URLS])
def test_a_page_fetched_is_one_record_its_xml_and_its_warc_records(crawled, name, path):
    doc = the_record(crawled, name, path)
    url = crawled.faults.url(name, path)
    sent = expected_body(name, path)
    assert (doc["status"], doc["error"], doc["error_kind"], doc["attempts"]) == (200, None, None, 1)
    assert body_bytes(doc) == sent, name
    assert doc["truncated"] == (path in (GZIP_BOMB, DEFLATE_BOMB, ENDLESS_BODY)), name
    records = warc_records_for(crawled.warc, url)
    duplicate = crawled.duplicates.get(url)
    if duplicate is not None:
        # Another case's server sent the same payload (the two bombs' zeros,
        # the long bodies' page) and was fetched first: this one has no XML,
        # and a revisit record that names the other.
        original = duplicate["duplicate_of"]
        assert body_bytes(records_of(crawled, original)[0]) == sent and original in crawled.xml
        assert url not in crawled.xml
        assert {kind: len(found) for kind, found in records.items()} == {"request": 1, "revisit": 1, "metadata": 1}
        archived, = records["revisit"]
        assert archived.headers.get_header("WARC-Refers-To-Target-URI") == original
    else:
        document = crawled.xml[url]
        assert "\n" not in document and "\r" not in document
        page_xml = etree.fromstring(document.encode("utf-8"), STRICT_XML)
        assert (page_xml.get("url"), page_xml.get("digest")) == (url, payload_digest(sent))
        assert {kind: len(found) for kind, found in records.items()} == {"request": 1, "response": 1, "metadata": 1}
        archived, = records["response"]
        assert archived.digests_passed is True, name
        assert archived.payload.endswith(sent), name  # the HTTP header block, then the body as stored
    assert archived.headers.get_header("WARC-Payload-Digest") == payload_digest(sent)
    assert archived.headers.get_header("WARC-Truncated") == ("length" if doc["truncated"] else None), name
    # The server answered the URL once.
    assert Counter(entry.path for entry in crawled.fault_logs[name])[path] == 1


@pytest.mark.parametrize("name", FAILED)
def test_a_fault_that_fails_is_one_record_that_names_it_and_nothing_archived(crawled, name):
    case = CASES[name]
    doc = the_record(crawled, name)
    url = crawled.faults.url(name)
    assert (doc["status"], doc["body"], doc["archive_body"]) == (None, None, None)
    assert case.names_the_fault in doc["error"], (name, doc["error"])
    assert doc["error_kind"] == case.kind, (name, doc["error"])
    assert len(doc["error"]) <= MAX_ERROR_CHARS
    assert url not in crawled.xml
    assert not [record for records in crawled.warc.values() for record in records
                if record.headers.get_header("WARC-Target-URI", "").startswith(crawled.faults.origin(name))]
    requests = Counter(entry.path for entry in crawled.fault_logs[name])
    if case.outcome == NETWORK_ERROR:
        # Tried 1 + retries times in layer 0, then left to the crawl db's
        # retry days: the next layer does not ask for it again.
        assert doc["attempts"] == RETRIES + 1
        assert requests == Counter({case.path: RETRIES + 1, "/robots.txt": 1}), name
    else:
        # https:// to a plain port, or a port that refuses connections:
        # robots.txt's request meets the fault first, is retried like a
        # page's, and the page is never requested.
        assert doc["attempts"] == 0 and doc["error"].startswith(f"{url}: ")
        assert requests == (Counter({NOT_HTTP: RETRIES + 1}) if case.listens else Counter()), name


def test_every_request_to_a_fault_ends_within_the_config_s_bounds(crawled):
    for name, log in crawled.fault_logs.items():
        if not CASES[name].listens:
            assert not log, name
            continue
        assert log, name
        for entry in log:
            assert entry.end - entry.start <= LIMIT + MARGIN, (name, entry.path, entry.end - entry.start)
        pages = [entry for entry in log if entry.path != "/robots.txt"]
        assert max(entry.end for entry in pages) - min(entry.start for entry in pages) <= PER_URL_SECONDS + MARGIN


def test_the_crawl_ends_within_its_bound(crawled):
    # The faults are fetched beside the test web's hosts, all at once:
    # layer 0's fetch is longer by at most the slowest fault URL's time
    # (measured: 6.7 s, against 0.5 s alone).
    alone, beside = (json.loads((output / "stats.json").read_text())["crawl/0"]["seconds"]
                     for output in (crawled.baseline, crawled.output))
    assert PER_URL_SECONDS <= beside <= alone + PER_URL_SECONDS + MARGIN, (beside, alone)
    # And the whole crawl by that and the time its steps take over the
    # fetched faults' 3 MiB of pages (measured: 8.7 s longer in all).
    assert crawled.seconds <= crawled.baseline_seconds + PER_URL_SECONDS + PAGES_SECONDS, \
        (crawled.seconds, crawled.baseline_seconds)


def test_the_crawl_s_memory_is_bounded(crawled):
    assert crawled.rss - crawled.baseline_rss <= CRAWL_EXTRA_RSS, (crawled.rss, crawled.baseline_rss)


def test_the_ordinary_web_is_crawled_as_without_the_faults(crawled):
    assert_crawled_as_alone(crawled, tuple(crawled.faults.origin(name) for name in CASES))


def test_bytes_past_the_content_length_are_never_read_as_the_next_answer(crawled):
    name = "body longer than its length"
    assert [entry.path for entry in crawled.fault_logs[name] if entry.path != "/robots.txt"] == \
        sorted([LONG_BODY, AFTER_LONG_BODY], key=lambda path: the_record(crawled, name, path)["fetched_at"])
    assert body_bytes(the_record(crawled, name, AFTER_LONG_BODY)) == AFTER_LONG_BODY_PAGE



def test_only_identical_payloads_are_duplicates(crawled):
    # The bombs' zeros are one payload, and so is the long bodies' page: of
    # each pair, fetched on one layer, the shorter URL is the original.
    url = crawled.faults.url
    pairs = [(url("gzip bomb"), url("deflate bomb")),
             (url("body longer than its length"), url("body longer than its length, long stray"))]
    fault_duplicates = {duplicate: record["duplicate_of"] for duplicate, record in crawled.duplicates.items()
                        if duplicate.startswith(tuple(crawled.faults.origin(name) for name in CASES))}
    assert len(fault_duplicates) == len(pairs)
    for pair in pairs:
        original, duplicate = sorted(pair, key=lambda page: (len(page), page))
        assert fault_duplicates[duplicate] == original
