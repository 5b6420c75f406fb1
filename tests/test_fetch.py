"""The fetcher on its own: a real Fetcher fed many URLs, without mrjob."""
import socket
import time
from collections import Counter

import pytest

from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.connection import whole_answer_arrived
from mrcrawl.fetch.fetcher import RESPONSE_TIME_LIMIT, URLS_IN_MEMORY, Fetcher
from mrcrawl.fetch.hostqueue import SPILL_BATCH
from mrcrawl.store.records import new_frontier_entry
from mrcrawl.testweb import Host, Page, Robots, Web
from mrcrawl.testweb.faults import (
    CHUNKED_CUT_OFF,
    CLOSED_BEFORE_STATUS,
    DRIP_BODY,
    DRIP_HEADERS,
    HEADERS_CUT_OFF,
    RESET_BEFORE_STATUS,
    SHORT_BODY,
    SHORT_BODY_LENGTH,
    SHORT_BODY_SENT,
    FaultServer,
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

THROUGH_PROXY = pytest.mark.parametrize("through_proxy", [False, True], ids=["direct", "through a proxy"])


def fetch_alone(url: str, **options) -> tuple[dict, float]:
    """Fetch `url` with one thread, no robots.txt and no retries: its one doc
    record, and the seconds the fetch took."""
    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=1, delay=0.0, retries=0,
                         obey_robots=False, allow_private_networks=True, **options)
    fetcher = Fetcher(config, layer=0)
    started = time.monotonic()
    fetcher.add(url)
    [doc] = fetcher.finish()
    return doc, time.monotonic() - started


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
    assert limit <= seconds <= limit + margin
    # The server saw the client go, and stopped dripping, within the bound too.
    assert entry.client_left and entry.end - entry.start <= limit + margin


@THROUGH_PROXY
@pytest.mark.parametrize("fault, names_the_fault", [
    pytest.param(HEADERS_CUT_OFF, "HeadersCutOffError: the connection closed inside the header block: "
                                  "the headers are incomplete", id="headers cut off"),
    pytest.param(CLOSED_BEFORE_STATUS, "RemoteDisconnected('Remote end closed connection without response')",
                 id="closed before the status line"),
    pytest.param(RESET_BEFORE_STATUS, "ConnectionResetError(", id="reset before the status line"),
    pytest.param(SHORT_BODY, f"IncompleteRead({len(SHORT_BODY_SENT)} bytes read, "
                             f"{SHORT_BODY_LENGTH - len(SHORT_BODY_SENT)} more expected)", id="body short of its length"),
    pytest.param(CHUNKED_CUT_OFF, "ProtocolError while reading the body: Response ended prematurely",
                 id="chunked body without its last chunk"),
])
def test_an_answer_cut_off_is_a_network_error_that_names_the_fault(fault, names_the_fault, through_proxy):
    with FaultServer() as server:
        doc, _ = fetch_alone(server.url(fault), proxy=server.origin if through_proxy else None)
    assert (doc["outcome"], doc["status"], doc["body"], doc["archive_body"]) == ("network_error", None, None, None)
    assert names_the_fault in doc["error"]
