"""The fetcher on its own: a real Fetcher fed many URLs, without mrjob."""
import base64
import socket
import time
from collections import Counter

import pytest

from crawl_support import fetch_urls, fetch_urls_measured
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.connection import whole_answer_arrived
from mrcrawl.fetch.fetcher import MAX_ERROR_CHARS, MAX_REDIRECTS, RESPONSE_TIME_LIMIT, URLS_IN_MEMORY, Fetcher
from mrcrawl.fetch.hostqueue import SPILL_BATCH
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import new_frontier_entry
from mrcrawl.testweb import Host, Page, Robots, Web
from mrcrawl.testweb.faults import (
    AFTER_LONG_BODY,
    AFTER_LONG_BODY_PAGE,
    BAD_CHUNK_SIZE,
    BOMB_BYTES,
    CHUNKED_CUT_OFF,
    CLOSED_BEFORE_STATUS,
    DEFLATE_BOMB,
    DRIP_BODY,
    DRIP_HEADERS,
    EARLY_HINTS,
    ENDLESS_BODY,
    GZIP_BOMB,
    HEADERS_CUT_OFF,
    HTTP_10,
    HUGE_LENGTH,
    HUGE_LENGTH_BYTES,
    LONG_BODY,
    LONG_BODY_LONG_STRAY,
    LONG_BODY_PAGE,
    LINE_WITHOUT_COLON,
    LONG_HEADER,
    LYING_ENCODING,
    MANY_HEADERS,
    MANY_LINES_WITHOUT_COLON,
    NO_STATUS_LINE,
    PLAIN_PAGE,
    RESET_BEFORE_STATUS,
    RESET_IN_BODY,
    RESET_IN_HEADERS,
    SHORT_BODY,
    SPACE_BEFORE_COLON,
    SHORT_BODY_LENGTH,
    SHORT_BODY_SENT,
    SILENT,
    FaultServer,
    large_answer,
    unanswered_port,
)
from mrcrawl.testweb.server import TestWebServer


def test_memory_stays_bounded_however_many_urls_are_fed():
    # Loopback hosts with the private-network guard on: every URL is settled
    # as `blocked` without a request, so this measures the queues alone.
    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=4, delay=0.0)
    fetcher = Fetcher(config, layer=0)
    total = 3 * URLS_IN_MEMORY
    hosts = 50
    outcomes = Counter()
    docs_with_their_entry = 0
    peak = 0

    def settled(docs):
        nonlocal docs_with_their_entry
        for doc in docs:
            outcomes[doc["outcome"]] += 1
            number = int(doc["url"].rpartition("/")[2])
            docs_with_their_entry += (doc["hops"], doc["known"]) == (number, {"etag": f'"{number}"'})

    for host in range(hosts):
        for n in range(total // hosts):
            # Each URL's frontier entry travels with it, through the spill files too.
            fetcher.add(f"http://127.0.1.{host}:8000/page/{n}", new_frontier_entry(n, False, n, {"etag": f'"{n}"'}))
            peak = max(peak, fetcher._memory.used)
            settled(fetcher.completed())
    settled(fetcher.finish())
    assert outcomes == {"blocked": total}
    assert docs_with_their_entry == total
    assert peak <= URLS_IN_MEMORY + config.threads * SPILL_BATCH
    assert fetcher.stats["requests"] == 0


# -- the processing permit: only answers that have wholly arrived take it ------

ANSWER = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 10\r\n\r\n", b"0123456789")


def peek_after_sending(*pieces: bytes) -> bool:
    ours, theirs = socket.socketpair()
    with ours, theirs:
        for piece in pieces:
            theirs.sendall(piece)
        arrived = whole_answer_arrived(ours)
        sent = b"".join(pieces)
        ours.setblocking(False)
        assert (ours.recv(65536) if sent else b"") == sent  # peeking consumed nothing
        return arrived


def test_an_answer_counts_as_arrived_only_when_all_of_it_is_here():
    head, body = ANSWER
    assert peek_after_sending(head, body)
    assert peek_after_sending(head, body, b"HTTP/1.1 200 OK\r\n")  # more than one answer's worth
    assert not peek_after_sending()  # nothing yet: answers at once instead of waiting
    assert not peek_after_sending(head[:30])  # the header block is not complete
    assert not peek_after_sending(head, body[:9])  # one body byte short
    assert peek_after_sending(head.replace(b"Content-Length: 10", b"content-length:  0"))
    assert not peek_after_sending(head.replace(b"Content-Length: 10", b"X-Length: 10"), body)  # read to close
    chunked = head.replace(b"Content-Length: 10", b"Transfer-Encoding: chunked\r\nContent-Length: 10")
    assert not peek_after_sending(chunked, body)  # chunked wins over a length (RFC 9112)


def test_a_body_still_arriving_holds_up_no_other_host(tmp_path):
    # One thread reads a body that stalls halfway for STALL seconds while
    # the other fetches a fast host's pages: those must all be done long
    # before the stalled page, so nothing the stalled thread holds (the
    # permit above all) can make the others wait for it.
    stall, fast_pages = 3.0, 40

    def build(port: int) -> Web:
        slow, fast = Host("127.0.0.2", port, "slow", Robots(404)), Host("127.0.0.3", port, "fast", Robots(404))
        body = b"<html><body>" + b"<p>stalled text</p>" * 2000 + b"</body></html>"
        pages = [Page(url=slow.url("/stalls"), kind="test", body=body, stall=stall, stall_after_headers=True)]
        pages += [Page(url=fast.url(f"/{n}"), kind="test", body=b"<html><p>fast</p></html>") for n in range(fast_pages)]
        return Web(seed=0, port=port, hosts=(slow, fast), pages={page.url: page for page in pages},
                   seed_urls=(pages[0].url,), seed_spellings={})

    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=2, delay=0.0,
                         timeout=stall + 5, allow_private_networks=True)
    with TestWebServer(hosts=2, web_factory=build) as server:
        web = server.web
        started = time.monotonic()
        fetcher = Fetcher(config, layer=0)
        for url in web.pages:
            fetcher.add(url)
        finished = {doc["url"]: (time.monotonic() - started, doc["outcome"]) for doc in fetcher.finish()}
    slow_url = web.seed_urls[0]
    assert {outcome for _, outcome in finished.values()} == {"fetched"}
    assert finished[slow_url][0] >= stall
    fast_done = max(seconds for url, (seconds, _) in finished.items() if url != slow_url)
    assert fast_done < stall / 2, f"the fast host's pages waited for the stalled body ({fast_done:.1f} s)"


# -- transport faults: an answer ends within its bounds, and a broken one is an error --

# Well within the default timeout of 10 s: what a fault that ends "at once" takes.
AT_ONCE = 2.0
THROUGH_PROXY = pytest.mark.parametrize("through_proxy", [False, True], ids=["direct", "through a proxy"])


def fetch_alone(url: str, **options) -> tuple[dict, float]:
    """Fetch `url` with one thread, no robots.txt and no retries: its one doc
    record, and the seconds the fetch took."""
    [doc], seconds = fetch_urls([url], **options)
    return doc, seconds


def fetch_measured(url: str, **options) -> tuple[dict, float, int]:
    """fetch_alone, and the peak of the memory Python allocated meanwhile
    (the server's allocations too: a test builds a large answer first)."""
    [doc], seconds, peak = fetch_urls_measured([url], **options)
    return doc, seconds, peak


def assert_network_error(doc: dict, names_the_fault: str, kind: FailureKind) -> None:
    assert (doc["outcome"], doc["status"], doc["body"], doc["archive_body"]) == ("network_error", None, None, None)
    assert names_the_fault in doc["error"]
    assert doc["error_kind"] == kind, doc["error"]
    # An error may quote the server's bytes (the 60 KB line of a page sent
    # without a status line): the record keeps only their start.
    assert len(doc["error"]) <= MAX_ERROR_CHARS


def page_of(doc: dict) -> bytes:
    return base64.b64decode(doc["body"])


@THROUGH_PROXY
@pytest.mark.parametrize("fault, error_before_reason", [
    pytest.param(DRIP_HEADERS, "ResponseTimeLimitError: ", id="in the headers"),
    pytest.param(DRIP_BODY, "ResponseTimeLimitError while reading the body: ", id="in the body"),
])
def test_an_answer_that_drips_ends_at_the_whole_response_time_limit(fault, error_before_reason, through_proxy):
    # A byte comes every quarter of the read timeout, so no read ever waits
    # long enough to time out: only the whole response's limit can end the
    # answer.  Without it the server would drip for `drip_for`, well past
    # the bound asserted.
    timeout = 0.8
    limit = RESPONSE_TIME_LIMIT * timeout
    margin = 1.0  # thread start, scheduling on a loaded machine
    with FaultServer(drip_interval=timeout / 4, drip_for=limit + 4 * margin) as server:
        proxy = server.origin if through_proxy else None
        doc, seconds = fetch_alone(server.url(fault), timeout=timeout, proxy=proxy)
        assert server.wait_idle(timeout=margin)
        [entry] = server.log
    assert (doc["outcome"], doc["status"], doc["attempts"]) == ("network_error", None, 1)
    assert doc["error"] == f"{error_before_reason}the whole response took longer than its time limit of {limit:g}s"
    assert doc["error_kind"] == FailureKind.TIME_LIMIT
    assert limit <= seconds <= limit + margin
    # The server saw the client go, and stopped dripping, within the bound too.
    assert entry.client_left and entry.end - entry.start <= limit + margin


# Cut off before the status line was read whole, through a proxy, is the
# proxy's failure to urllib3: the connection it had is the proxy's.
THE_PROXY_HANGS_UP = {CLOSED_BEFORE_STATUS, RESET_BEFORE_STATUS, RESET_IN_HEADERS}


@THROUGH_PROXY
@pytest.mark.parametrize("fault, names_the_fault, kind", [
    pytest.param(HEADERS_CUT_OFF, "HeadersCutOffError: the connection closed inside the header block: "
                                  "the headers are incomplete", FailureKind.CLOSED, id="headers cut off"),
    pytest.param(CLOSED_BEFORE_STATUS, "RemoteDisconnected('Remote end closed connection without response')",
                 FailureKind.CLOSED, id="closed before the status line"),
    pytest.param(RESET_BEFORE_STATUS, "ConnectionResetError(", FailureKind.RESET, id="reset before the status line"),
    pytest.param(RESET_IN_HEADERS, "ConnectionResetError(", FailureKind.RESET, id="reset inside the header block"),
    pytest.param(RESET_IN_BODY, "ProtocolError while reading the body: (\"Connection broken: ConnectionResetError(",
                 FailureKind.RESET, id="reset inside the body"),
    pytest.param(SHORT_BODY, f"IncompleteRead({len(SHORT_BODY_SENT)} bytes read, "
                             f"{SHORT_BODY_LENGTH - len(SHORT_BODY_SENT)} more expected)", FailureKind.CLOSED,
                 id="body short of its length"),
    pytest.param(CHUNKED_CUT_OFF, "ProtocolError while reading the body: Response ended prematurely",
                 FailureKind.CLOSED, id="chunked body without its last chunk"),
])
def test_an_answer_cut_off_is_a_network_error_that_names_the_fault(fault, names_the_fault, kind, through_proxy):
    with FaultServer() as server:
        doc, seconds = fetch_alone(server.url(fault), proxy=server.origin if through_proxy else None)
    assert_network_error(doc, names_the_fault, FailureKind.PROXY if through_proxy and fault in THE_PROXY_HANGS_UP
                         else kind)
    assert seconds < AT_ONCE


def test_a_refused_connection_is_a_network_error_at_once():
    address = "127.0.0.1"
    doc, seconds = fetch_alone(f"http://{address}:{unanswered_port(address)}/page.html")
    assert_network_error(doc, "NewConnectionError: ", FailureKind.REFUSED)
    assert doc["error"].endswith("Failed to establish a new connection: [Errno 111] Connection refused")
    assert seconds < AT_ONCE


def test_a_connection_the_system_will_not_make_is_a_connect_error_at_once():
    # The system opens no TCP connection to the broadcast address (Network
    # is unreachable): no packet leaves the machine, and no server refused.
    doc, seconds = fetch_alone("http://255.255.255.255:9/page.html")
    assert_network_error(doc, "NewConnectionError: ", FailureKind.CONNECT)
    assert seconds < AT_ONCE


@THROUGH_PROXY
def test_a_server_that_never_answers_is_a_read_timeout(through_proxy):
    timeout = 0.8
    margin = 1.0
    with FaultServer(drip_for=RESPONSE_TIME_LIMIT * timeout + 2 * margin) as server:
        doc, seconds = fetch_alone(server.url(SILENT), timeout=timeout, proxy=server.origin if through_proxy else None)
        assert server.wait_idle(timeout=margin)  # and the server saw the client go
    assert_network_error(doc, f"Read timed out. (read timeout={timeout})", FailureKind.TIMEOUT)
    assert doc["error"].startswith("ReadTimeoutError: ")
    assert timeout <= seconds <= timeout + margin


def test_a_body_that_never_ends_is_cut_at_max_page_bytes_when_it_comes_fast():
    # The server sends as fast as the socket takes it, for longer than the
    # whole-response limit: max_page_bytes comes first.
    timeout, max_page_bytes = 2.0, 1024 * 1024
    with FaultServer(drip_interval=0.0, drip_for=RESPONSE_TIME_LIMIT * timeout + 2) as server:
        doc, seconds, peak = fetch_measured(server.url(ENDLESS_BODY), timeout=timeout, max_page_bytes=max_page_bytes)
    assert (doc["outcome"], doc["status"], doc["truncated"], doc["error"]) == ("fetched", 200, True, None)
    assert len(page_of(doc)) == max_page_bytes
    assert seconds < timeout
    assert peak <= 4 * max_page_bytes + 4 * 1024 * 1024


def test_a_body_that_never_ends_ends_at_the_whole_response_time_limit_when_it_comes_slowly():
    # 64 KB every tenth of a second: max_page_bytes (2 MB) is not reached
    # before the whole-response limit, which ends the answer as an error.
    timeout, margin = 0.8, 1.0
    limit = RESPONSE_TIME_LIMIT * timeout
    with FaultServer(drip_interval=0.1, drip_for=limit + 4 * margin) as server:
        doc, seconds = fetch_alone(server.url(ENDLESS_BODY), timeout=timeout)
    assert_network_error(doc, "ResponseTimeLimitError while reading the body: "
                              f"the whole response took longer than its time limit of {limit:g}s",
                         FailureKind.TIME_LIMIT)
    assert limit <= seconds <= limit + margin


@pytest.mark.parametrize("fault", [
    pytest.param(LONG_BODY, id="stray answer within the read buffer"),
    pytest.param(LONG_BODY_LONG_STRAY, id="stray answer beyond the read buffer"),
])
def test_bytes_past_the_content_length_are_never_read_as_the_next_answer(fault):
    # The server sends a whole stray answer after the page its
    # Content-Length gives, keeps the connection open and answers the next
    # request on it: the host's next page must be that answer, not the stray.
    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=1, delay=0.0, retries=0,
                         obey_robots=False, allow_private_networks=True, timeout=2.0)
    with FaultServer() as server:
        fetcher = Fetcher(config, layer=0)
        fetcher.add(server.url(fault))
        fetcher.add(server.url(AFTER_LONG_BODY))
        docs = {doc["url"]: doc for doc in fetcher.finish()}
    assert len(docs) == 2
    first, second = docs[server.url(fault)], docs[server.url(AFTER_LONG_BODY)]
    assert (first["outcome"], first["truncated"], page_of(first)) == ("fetched", False, LONG_BODY_PAGE)
    assert (second["outcome"], page_of(second)) == ("fetched", AFTER_LONG_BODY_PAGE)


@THROUGH_PROXY
@pytest.mark.parametrize("fault, names_the_fault, kind", [
    pytest.param(BAD_CHUNK_SIZE, "ProtocolError while reading the body: (\"Connection broken: "
                                 "InvalidChunkLength(got length b'zz\\\\r\\\\n', 0 bytes read)",
                 FailureKind.PROTOCOL, id="chunk size no number"),
    pytest.param(NO_STATUS_LINE, "ProtocolError: ('Connection aborted.', BadStatusLine('<html><body><p>a page on",
                 FailureKind.PROTOCOL, id="no status line"),
    pytest.param(LYING_ENCODING, "DecodeError while reading the body: ('Received response with content-encoding: "
                                 "gzip, but failed to decode it.'", FailureKind.BAD_ENCODING,
                 id="Content-Encoding that lies"),
    pytest.param(HUGE_LENGTH, f"IncompleteRead({len(PLAIN_PAGE)} bytes read, "
                              f"{HUGE_LENGTH_BYTES - len(PLAIN_PAGE)} more expected)", FailureKind.CLOSED,
                 id="10 GB Content-Length"),
])
def test_a_malformed_answer_is_a_network_error_that_names_the_fault(fault, names_the_fault, kind, through_proxy):
    timeout = 2.0
    with FaultServer() as server:
        proxy = server.origin if through_proxy else None
        doc, seconds, peak = fetch_measured(server.url(fault), timeout=timeout, proxy=proxy)
    assert_network_error(doc, names_the_fault, kind)
    assert seconds < timeout
    assert peak <= 4 * 1024 * 1024  # nothing is allocated for the length an answer claims


@THROUGH_PROXY
@pytest.mark.parametrize("fault", [
    # http.client's email parser would take the line for the start of a
    # body and lose the headers after it: the chunked, gzipped body would
    # be stored as it came, as a page.
    pytest.param(LINE_WITHOUT_COLON, id="a header line without a colon"),
    pytest.param(SPACE_BEFORE_COLON, id="a space before the colon"),
    # http.client would take the interim answer for the final one.
    pytest.param(EARLY_HINTS, id="103 Early Hints before the page"),
])
def test_header_lines_are_read_as_browsers_read_them(fault, through_proxy):
    with FaultServer() as server:
        doc, _ = fetch_alone(server.url(fault), proxy=server.origin if through_proxy else None)
    assert (doc["outcome"], doc["status"], doc["content_type"], doc["error"]) == ("fetched", 200, "text/html", None)
    assert page_of(doc) == PLAIN_PAGE


def test_an_http_1_0_answer_is_a_page():
    with FaultServer() as server:
        doc, _ = fetch_alone(server.url(HTTP_10))
    assert (doc["outcome"], doc["status"], doc["http_version"], doc["error"]) == ("fetched", 200, "HTTP/1.0", None)
    assert page_of(doc) == PLAIN_PAGE


@pytest.mark.parametrize("answers_not_http, names_the_fault, least_seconds", [
    pytest.param(True, "SSLError: [SSL: WRONG_VERSION_NUMBER] wrong version number", 0.0,
                 id="the server answers the handshake with a 400"),
    pytest.param(False, "SSLError: the TLS handshake got no answer within the timeout of 0.8s "
                        "(is the port serving TLS?)", 0.8, id="the server waits for a request line"),
])
def test_tls_to_a_plain_http_port_is_an_ssl_error_within_the_timeout(answers_not_http, names_the_fault,
                                                                      least_seconds):
    timeout, margin = 0.8, 1.0
    with FaultServer(answers_not_http=answers_not_http, drip_for=timeout + 2 * margin) as server:
        doc, seconds = fetch_alone(server.url(HTTP_10).replace("http://", "https://"), timeout=timeout)
    assert_network_error(doc, names_the_fault, FailureKind.TLS)
    assert least_seconds <= seconds <= timeout + margin


@pytest.mark.parametrize("fault", [GZIP_BOMB, DEFLATE_BOMB], ids=["gzip", "deflate"])
def test_a_decompression_bomb_is_cut_at_max_page_bytes_without_decoding_it_all(fault):
    timeout, max_page_bytes = 2.0, 1024 * 1024
    answer = large_answer(fault)  # built before the measure: only the fetch's memory counts
    assert len(answer) < BOMB_BYTES / 500  # a gigabyte of zeros in about a megabyte
    with FaultServer() as server:
        doc, seconds, peak = fetch_measured(server.url(fault), timeout=timeout, max_page_bytes=max_page_bytes)
    assert (doc["outcome"], doc["status"], doc["truncated"], doc["error"]) == ("fetched", 200, True, None)
    assert page_of(doc) == bytes(max_page_bytes)
    assert seconds < timeout
    assert peak <= 4 * max_page_bytes + 4 * 1024 * 1024


@pytest.mark.parametrize("fault, names_the_fault", [
    pytest.param(MANY_HEADERS, "HTTPException('got more than 100 headers')", id="100,000 headers"),
    pytest.param(LONG_HEADER, "LineTooLong('got more than 65536 bytes when reading header line')",
                 id="a header line of 1 MB"),
    pytest.param(MANY_LINES_WITHOUT_COLON, "HTTPException('got more than 100 header lines without a colon')",
                 id="100,000 header lines without a colon"),
])
def test_too_many_headers_or_too_long_a_header_is_a_network_error(fault, names_the_fault):
    timeout = 2.0
    large_answer(fault)  # built before the measure: only the fetch's memory counts
    with FaultServer() as server:
        doc, seconds, peak = fetch_measured(server.url(fault), timeout=timeout)
    assert_network_error(doc, "ProtocolError: ('Connection aborted.', " + names_the_fault, FailureKind.PROTOCOL)
    assert seconds < timeout
    assert peak <= 4 * 1024 * 1024


# -- answers that are no page, and URLs never requested: each failure's kind ---

SAME_HOST_CHAIN = MAX_REDIRECTS + 1  # redirects in a row on one host: one more than are followed


def no_page_web(port: int) -> Web:
    """One host whose pages are errors and redirects that go wrong on it."""
    host = Host("127.0.0.2", port, "no pages", Robots(404))
    pages = [Page(url=host.url(path), kind="error", status=status, body=f"<p>HTTP {status}</p>".encode())
             for path, status in (("/missing", 404), ("/busy", 429), ("/broken", 503))]
    pages.append(Page(url=host.url("/no-location"), kind="redirect", status=302, body=b"<p>moved</p>"))
    for here, there in (("/loop/a", "/loop/b"), ("/loop/b", "/loop/a")):
        pages.append(Page(url=host.url(here), kind="redirect", status=302, headers=(("Location", there),),
                          redirect_to=host.url(there)))
    for hop in range(SAME_HOST_CHAIN):
        there = f"/chain/{hop + 1}"
        pages.append(Page(url=host.url(f"/chain/{hop}"), kind="redirect", status=302,
                          headers=(("Location", there),), redirect_to=host.url(there)))
    pages.append(Page(url=host.url(f"/chain/{SAME_HOST_CHAIN}"), kind="leaf", body=b"<p>the end</p>"))
    pages.append(Page(url=host.url("/outside"), kind="leaf", body=b"<p>outside the crawl</p>"))
    return Web(seed=0, port=port, hosts=(host,), pages={page.url: page for page in pages}, seed_urls=(),
               seed_spellings={})


def test_an_answer_that_is_no_page_and_a_url_outside_the_filters_fail_each_with_its_kind():
    with TestWebServer(hosts=1, web_factory=no_page_web) as server:
        url = server.web.hosts[0].url
        paths = ["/missing", "/busy", "/broken", "/no-location", "/loop/a", "/chain/0", "/outside"]
        docs, _ = fetch_urls([url(path) for path in paths], url_deny=["/outside$"])
        assert server.wait_idle()
        requested = {entry.path for entry in server.log}
    failures = {doc["requested_url"]: (doc["outcome"], doc["error_kind"], doc["error"]) for doc in docs}
    assert failures == {
        url("/missing"): ("http_error", FailureKind.HTTP_4XX, "HTTP 404"),
        url("/busy"): ("http_error", FailureKind.HTTP_429, "HTTP 429 after 1 attempts"),
        url("/broken"): ("http_error", FailureKind.HTTP_5XX, "HTTP 503 after 1 attempts"),
        url("/no-location"): ("http_error", FailureKind.REDIRECT_LOCATION, "redirect (HTTP 302) without a Location"),
        url("/loop/a"): ("http_error", FailureKind.REDIRECT_LOOP, f"redirect loop back to {url('/loop/a')}"),
        url("/chain/0"): ("http_error", FailureKind.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects"),
        url("/outside"): ("blocked", FailureKind.BLOCKED_SCOPE, f"{url('/outside')} is outside url_allow/url_deny"),
    }
    assert "/outside" not in requested and f"/chain/{MAX_REDIRECTS + 1}" not in requested
