"""What the crawler sends: one host's HTTP connection, and its request line and headers.

The fetcher talks to hosts through urllib3, the HTTP engine under requests.
requests adds a session layer (cookie jar, hooks, environment settings,
re-preparing every request) that costs about 0.3 ms of CPU per page, as much
as urllib3's whole exchange; the crawler needs none of it.  Cookies are not
kept, as in Nutch: a crawler's requests then do not depend on the order in
which a host's pages were fetched, and the WARC export can rebuild each
request exactly from this module (warc.request_message).
"""
from __future__ import annotations

import base64
import http.client
import io
import re
import socket
import ssl
import time
from dataclasses import dataclass
from typing import Callable

import certifi
import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.exceptions import ProtocolError, TimeoutError as Urllib3TimeoutError
from urllib3.util import make_headers, parse_url
from urllib3.util.wait import wait_for_read

from mrcrawl.config import CrawlConfig, proxy_address

# The codings urllib3 can undo here (gzip and deflate, and br or zstd when
# their packages are installed), as requests would advertise them.
ACCEPT_ENCODING = make_headers(accept_encoding=True)["accept-encoding"]
HTTP_DEFAULT_PORTS = {"http": 80, "https": 443}
# How many header lines an answer may have, as http.client counts them.
MAX_HEADER_LINES = http.client._MAXHEADERS


def request_target(url: str, proxy: str | None) -> str:
    """The request line's target: the path and query, or through a proxy the
    absolute URL of a plain-http request (https is tunnelled with CONNECT)."""
    parts = parse_url(url)
    if proxy and parts.scheme == "http":
        return parts.url
    return parts.request_uri


def host_header(url: str) -> str:
    parts = parse_url(url)
    if parts.port is None or parts.port == HTTP_DEFAULT_PORTS.get(parts.scheme):
        return parts.host
    return f"{parts.host}:{parts.port}"


# The validators an earlier fetch left in the crawl db (records.KNOWN_FIELDS)
# and the headers that send them back (RFC 9110 §13.1): a server that finds
# the page unchanged answers 304 Not Modified instead of sending it again.
CONDITIONAL_HEADERS = (("etag", "If-None-Match"), ("last_modified", "If-Modified-Since"))


def conditional_headers(known: dict | None) -> dict[str, str]:
    """The headers that send back the validators in `known` (a doc record's `known`)."""
    if not known:
        return {}
    return {header: known[field] for field, header in CONDITIONAL_HEADERS if known.get(field)}


def known_for_request(doc: dict | None, url: str) -> dict | None:
    """What of the crawl db's record a request for `url`, made for `doc`,
    sends back.  The record is of the URL the fetch started from (a retry
    asks for it again); a redirect hop asks for another URL, whose page the
    record says nothing of, and robots.txt has no doc."""
    if doc is None or url != doc["requested_url"]:
        return None
    return doc["known"]


def request_headers(config: CrawlConfig, url: str, known: dict | None = None) -> dict[str, str]:
    """Every header of the GET for `url`, in the order they are sent; with
    `known` (known_for_request), the conditional headers last."""
    headers = {
        "Host": host_header(url),
        "User-Agent": config.user_agent,
        "Accept-Encoding": ACCEPT_ENCODING,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        "Accept-Language": f"{config.language},*;q=0.5",
        "Connection": "keep-alive",
    }
    if known:
        headers.update(conditional_headers(known))
    return headers


# The most of an answer we look at to see whether all of it has arrived:
# larger answers are read as they come.
PEEK_BYTES = 256 * 1024
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r\n", re.IGNORECASE)
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding[ \t]*:", re.IGNORECASE)


def whole_answer_arrived(sock: socket.socket) -> bool:
    """Whether the socket already holds an entire HTTP answer: the header
    block and a Content-Length body, so reading it cannot wait on the
    network.  Looks without consuming (MSG_PEEK); anything unusual (TLS,
    chunked, no length, a large answer) counts as not arrived.  A reset
    connection raises ConnectionResetError: the peek takes the reset's
    error, and the read that follows would only find the connection closed.
    """
    try:
        data = sock.recv(PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (BlockingIOError, ValueError):  # nothing there yet, or a TLS socket (no peeking)
        return False
    header_end = data.find(b"\r\n\r\n")
    if header_end < 0 or _TRANSFER_ENCODING.search(data, 0, header_end):
        return False
    length = _CONTENT_LENGTH.search(data, 0, header_end + 2)
    return length is not None and header_end + 4 + int(length.group(1)) <= len(data)


# -- the answer's bounds ----------------------------------------------------------
#
# A read timeout bounds each socket read, not the answer: a server that drips
# a byte a second never lets one read wait long, and would hold the fetch
# thread for as long as it kept dripping.  So every answer also has a
# deadline, and no read of it, from the status line to the body's last byte,
# waits past it.  And http.client takes a connection closed inside the header
# block for the end of the headers (and a read-to-close body of nothing): the
# answer is read through a file that notices the close, and such an answer is
# an error.
#
# http.client hands the header block to the email parser, which takes a line
# with no colon for the start of a message body: every header after it is
# lost, a Transfer-Encoding or Content-Encoding among them, and the body is
# then stored still chunked or gzipped, as a page.  Browsers skip such a line
# and read the rest, and so does the crawler: the answer's header lines are
# mended as they are read.  And an interim answer (103 Early Hints) comes
# before the final one, which http.client would never read.


class ResponseTimeLimitError(Urllib3TimeoutError):
    """The whole response (connect, headers and body) was not complete within
    its time limit, however steadily its bytes came."""


class HeadersCutOffError(ProtocolError):
    """The connection closed inside the header block: the headers are incomplete."""


@dataclass(frozen=True)
class ResponseDeadline:
    """When the answer to one request must be complete."""

    limit: float  # seconds from the request's start
    at: float  # time.monotonic() by which the last byte must have come

    @classmethod
    def starting_now(cls, limit: float) -> "ResponseDeadline":
        return cls(limit, time.monotonic() + limit)

    def read_wait(self, read_timeout: float | None) -> tuple[float, bool]:
        """How long the next read may wait, and whether the deadline, not the
        read timeout, set it.  Raises ResponseTimeLimitError past the deadline."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise self.passed()
        if read_timeout is None or left < read_timeout:
            return left, True
        return read_timeout, False

    def passed(self) -> ResponseTimeLimitError:
        return ResponseTimeLimitError(f"the whole response took longer than its time limit of {self.limit:g}s")


class DeadlineReader(io.RawIOBase):
    """A connection's bytes, for http.client: each read waits at most the
    read timeout, and never past the answer's deadline."""

    def __init__(self, sock: socket.socket, deadline: ResponseDeadline):
        # A socket file, not the socket itself: it counts as a user of the
        # socket, which http.client closes under a response it hands over
        # (an answer read to the close) and which must stay open for it.
        self._file = sock.makefile("rb", buffering=0)
        self._sock = sock
        self._read_timeout = sock.gettimeout()
        self.deadline = deadline
        self.closed_by_peer = False  # a read found the connection closed

    def readable(self) -> bool:
        return True

    def readinto(self, buffer) -> int | None:
        wait, deadline_first = self.deadline.read_wait(self._read_timeout)
        if self._sock.gettimeout() != wait:  # setting it is a system call, and most reads keep the read timeout
            self._sock.settimeout(wait)
        try:
            count = self._file.readinto(buffer)
        except TimeoutError:
            if deadline_first:
                raise self.deadline.passed() from None
            raise
        if count == 0:
            self.closed_by_peer = True
        return count

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()


class MendedHeaderLines(io.BufferedReader):
    """An answer's bytes whose header lines read as a browser reads them: a
    line with no colon is skipped, and a name's trailing whitespace dropped
    ("Content-Type : text/html").  The status line and the body pass as
    they came; `expect_status_line` marks where a status line comes next."""

    def __init__(self, raw: io.RawIOBase):
        super().__init__(raw)
        self._status_line_next = False
        self._in_header_block = False

    def expect_status_line(self) -> None:
        self._status_line_next = True

    def readline(self, size: int = -1) -> bytes:
        if self._status_line_next:
            self._status_line_next = False
            self._in_header_block = True
            return super().readline(size)
        if not self._in_header_block:
            return super().readline(size)
        # http.client caps the lines it is given; the lines skipped here
        # count against the same cap, so that they cannot go on forever.
        for _ in range(MAX_HEADER_LINES):
            line = super().readline(size)
            if line.strip() == b"":  # the blank line that ends the block, or the close
                self._in_header_block = False
                return line
            if line[:1] in b" \t":  # a continuation belongs to the header line before it
                return line
            name, colon, value = line.partition(b":")
            if colon:
                return name.rstrip() + colon + value if name != name.rstrip() else line
        raise http.client.HTTPException(f"got more than {MAX_HEADER_LINES} header lines without a colon")


class _ReaderAsSocket:
    """What http.client's response asks of its socket: a file of its bytes."""

    def __init__(self, reader: DeadlineReader):
        self._reader = reader

    def makefile(self, mode: str) -> MendedHeaderLines:
        return MendedHeaderLines(self._reader)


class StrictResponse(http.client.HTTPResponse):
    """http.client's response, read within the answer's deadline, with its
    header lines mended, past any interim answer, and that takes a header
    block the connection cut off for the error it is."""

    fp: MendedHeaderLines

    def __init__(self, sock: socket.socket, *args, deadline: ResponseDeadline, **kwargs):
        self.reader = DeadlineReader(sock, deadline)
        super().__init__(_ReaderAsSocket(self.reader), *args, **kwargs)

    def _read_status(self) -> tuple[str, int, str]:
        # http.client reads past a 100 Continue itself, but takes any other
        # 1xx for the final answer.  101 is final: it switches protocols.
        while True:
            self.fp.expect_status_line()
            version, status, reason = super()._read_status()
            if not (100 < status < 200 and status != 101):
                return version, status, reason
            http.client.parse_headers(self.fp)  # an interim answer's headers: the final answer follows

    def begin(self) -> None:
        super().begin()
        # The status line and headers are read line by line, and a line is
        # read past its end only when no newline ends it: a close seen by now
        # cut off the last line, or came where the blank line should be.
        if self.reader.closed_by_peer:
            raise HeadersCutOffError("the connection closed inside the header block: the headers are incomplete")


class StrictConnection:
    """Mixed into a urllib3 connection: its answers are StrictResponses,
    bound by the deadline its pool gives it before each request.  With a
    `connect_address` its socket connects there, the address the
    private-network guard checked, while the Host header and TLS (SNI and
    the certificate's name) still carry the host's name: looking the name
    up again could answer another address (DNS rebinding)."""

    deadline: ResponseDeadline

    def __init__(self, *args, connect_address: str | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.connect_address = connect_address

    def _new_conn(self) -> socket.socket:
        if self.connect_address is None:
            return super()._new_conn()
        # urllib3 connects to _dns_host, which is also `host`, the name TLS
        # checks: it becomes the address for the connect only.
        name, self._dns_host = self._dns_host, self.connect_address
        try:
            return super()._new_conn()
        finally:
            self._dns_host = name

    def response_class(self, sock: socket.socket, *args, **kwargs) -> StrictResponse:
        return StrictResponse(sock, *args, deadline=self.deadline, **kwargs)


class StrictHTTPConnection(StrictConnection, HTTPConnection):
    pass


class TLSHandshakeTimeoutError(ssl.SSLError):
    """The server took the TCP connection but did not answer the TLS
    handshake in time: as a plain-HTTP server that waits for a request line
    does when sent a TLS ClientHello."""

    def __str__(self) -> str:
        return self.args[0]  # ssl.SSLError shows its args as a tuple


class StrictHTTPSConnection(StrictConnection, HTTPSConnection):
    def _tunnel(self) -> None:
        super()._tunnel()
        self._tunnel_answered = True  # the proxy answered our CONNECT

    def connect(self) -> None:
        # urllib3 takes a socket timeout in the handshake for a read timeout,
        # an error that names no TLS; its own TCP connect timeout is its
        # ConnectTimeoutError, not a socket timeout, and so is not caught here.
        self._tunnel_answered = False
        try:
            super().connect()
        except TimeoutError as error:
            if self.proxy_is_tunneling and not self._tunnel_answered:
                raise  # the proxy's answer to CONNECT was what timed out
            raise TLSHandshakeTimeoutError(f"the TLS handshake got no answer within the timeout of {self.timeout:g}s "
                                           "(is the port serving TLS?)") from error


class StrictPool:
    """Mixed into a urllib3 connection pool: urlopen takes `time_limit`, the
    seconds in which the whole answer (connect, headers and body) must be
    complete, and hands the connection that makes the request its deadline."""

    def urlopen(self, method: str, url: str, *, time_limit: float, **kwargs):
        # (urllib3's own retries and redirects would call urlopen again
        # without a limit: the fetcher turns them off and does its own.)
        self._deadline = ResponseDeadline.starting_now(time_limit)
        return super().urlopen(method, url, **kwargs)

    def _get_conn(self, timeout: float | None = None):
        connection = super()._get_conn(timeout)
        connection.deadline = self._deadline
        return connection


class StrictHTTPConnectionPool(StrictPool, urllib3.HTTPConnectionPool):
    ConnectionCls = StrictHTTPConnection


class StrictHTTPSConnectionPool(StrictPool, urllib3.HTTPSConnectionPool):
    ConnectionCls = StrictHTTPSConnection


class AnsweredConnection(StrictHTTPConnection):
    """A plain-HTTP connection that calls `on_answer(sock)` when the first
    bytes of each answer arrive, before http.client reads them.

    The fetcher uses the moment to time its politeness gap and to see
    whether the whole answer is already here (whole_answer_arrived).
    """

    def __init__(self, *args, on_answer: Callable[[socket.socket], None], **kwargs):
        super().__init__(*args, **kwargs)
        self.on_answer = on_answer

    def getresponse(self):
        if self.sock is not None:  # urllib3 asks only after sending a request
            wait, deadline_first = self.deadline.read_wait(self.timeout)
            if not wait_for_read(self.sock, timeout=wait):
                # urllib3 makes a TimeoutError a ReadTimeoutError
                raise self.deadline.passed() if deadline_first else TimeoutError("timed out")
            self.on_answer(self.sock)
        return super().getresponse()


class AnsweredConnectionPool(StrictHTTPConnectionPool):
    ConnectionCls = AnsweredConnection


def basic_credentials(credentials: str) -> str:
    """`user:password` as the Basic scheme's credentials (RFC 7617, in UTF-8)."""
    return "Basic " + base64.b64encode(credentials.encode("utf-8")).decode("ascii")


def open_connection(config: CrawlConfig, url: str, on_answer: Callable[[socket.socket], None],
                    address: str | None = None) -> StrictPool:
    """A pool of one kept-alive connection to `url`'s host at `address` (or
    to the proxy, which looks the host up itself), whose urlopen takes the
    whole answer's time limit (StrictPool).

    A direct plain-HTTP connection calls `on_answer` as each answer arrives
    (see AnsweredConnection).  Through TLS or a proxy the bytes on the
    socket are not simply the answer's, and the fetcher times the answer
    when its headers have been read.
    """
    options = dict(maxsize=1, block=False, retries=False)
    parts = parse_url(url)
    if parts.scheme == "https":
        # The same certificate bundle requests would use.
        options.update(cert_reqs="CERT_REQUIRED", ca_certs=certifi.where())
    if config.proxy:
        # urllib3 sends no credentials from a proxy URL's user information,
        # and its errors may quote the URL it was given: it is given the
        # proxy's address alone, and the credentials as a header, which goes
        # to the proxy only (with each plain-http request, and with CONNECT).
        address, credentials = proxy_address(config.proxy)
        headers = {"Proxy-Authorization": basic_credentials(credentials)} if credentials else None
        proxies = urllib3.ProxyManager(address, num_pools=1, proxy_headers=headers, **options)
        proxies.pool_classes_by_scheme = {"http": StrictHTTPConnectionPool, "https": StrictHTTPSConnectionPool}
        return proxies.connection_from_url(url)
    if parts.scheme == "https":
        return StrictHTTPSConnectionPool(parts.host, port=parts.port or 443, connect_address=address, **options)
    return AnsweredConnectionPool(parts.host, port=parts.port or 80, on_answer=on_answer, connect_address=address,
                                  **options)
