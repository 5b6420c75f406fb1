"""Transport faults on loopback: answers that go wrong below HTTP.

TestWebServer's pages are well-formed HTTP, which is all http.server can
send.  A FaultServer answers from a raw socket instead, with the fault its
request's path names (FAULTS): an answer that drips a byte at a time, a
connection closed or reset before the status line or inside the header
block, a connection reset inside the body, a body shorter or longer than its
Content-Length, a chunked body without its last chunk or with a chunk size
that is no number, a body that never ends, a server that never answers, an
answer without a status line, a Content-Encoding that lies or a
decompression bomb, too many headers or one too long, header lines a browser
mends (one with no colon, a space before the colon) and an interim 103
answer before the page.  It serves one loopback address, one request per
connection (but for LONG_BODY's, which stays open for a second request), and
logs every request.

    with FaultServer() as server:
        fetch(server.url(DRIP_BODY))
        server.wait_idle()
        entry, = server.log

A drip (and a silence, or an endless body) stops as soon as the client goes
away, and in any case after `drip_for` seconds, so a client that never
gives up cannot hold the server.
"""

from __future__ import annotations

import functools
import gzip
import select
import socket
import struct
import threading
import time
import zlib
from dataclasses import dataclass
from urllib.parse import urlsplit

# The faults, by request path.
DRIP_HEADERS = "/drip-headers"  # the status line, then one byte of an endless header line at a time
DRIP_BODY = "/drip-body"  # the whole header block, then one body byte at a time
HEADERS_CUT_OFF = "/headers-cut-off"  # a status line and a header, then the connection closes
CLOSED_BEFORE_STATUS = "/closed-before-status"  # the connection closes before a byte is sent
RESET_BEFORE_STATUS = "/reset-before-status"  # the connection is reset before a byte is sent
RESET_IN_HEADERS = "/reset-in-headers"  # a status line and a header, then the connection is reset
RESET_IN_BODY = "/reset-in-body"  # the header block and a part of the body, then the connection is reset
SHORT_BODY = "/short-body"  # Content-Length says more than is sent before the close
CHUNKED_CUT_OFF = "/chunked-cut-off"  # a chunk, then the close, without the last (empty) chunk
SILENT = "/silent"  # the request is read, and nothing is ever sent
ENDLESS_BODY = "/endless-body"  # no Content-Length, and body bytes keep coming, a burst every drip_interval
LONG_BODY = "/long-body"  # Content-Length says less than is sent: a short stray answer follows the body
LONG_BODY_LONG_STRAY = "/long-body-long-stray"  # the same, with a stray answer longer than a read's buffer
AFTER_LONG_BODY = "/after-long-body"  # a plain page, the request to make after LONG_BODY
BAD_CHUNK_SIZE = "/bad-chunk-size"  # a chunked body whose chunk size line is no hexadecimal number
HTTP_10 = "/http-1.0"  # a well-formed HTTP/1.0 answer, its body read to the close
NO_STATUS_LINE = "/no-status-line"  # ONE_LINE_PAGE straight away, as HTTP/0.9 answered
GZIP_BOMB = "/gzip-bomb"  # BOMB_BYTES of zeros, gzipped
DEFLATE_BOMB = "/deflate-bomb"  # BOMB_BYTES of zeros, in a zlib stream (HTTP's "deflate")
LYING_ENCODING = "/lying-encoding"  # says Content-Encoding: gzip, sends the page as it is
MANY_HEADERS = "/many-headers"  # MANY_HEADERS_COUNT header lines
LONG_HEADER = "/long-header"  # one header line of LONG_HEADER_BYTES
HUGE_LENGTH = "/huge-length"  # a Content-Length of HUGE_LENGTH_BYTES, a short body, then the close
# A header line with no colon before Transfer-Encoding: chunked and Content-Encoding: gzip.
LINE_WITHOUT_COLON = "/line-without-colon"
SPACE_BEFORE_COLON = "/space-before-colon"  # "Content-Type : text/html"
MANY_LINES_WITHOUT_COLON = "/many-lines-without-colon"  # MANY_HEADERS_COUNT header lines with no colon
EARLY_HINTS = "/early-hints"  # an interim 103 Early Hints answer, then the page
ROBOTS_TXT = "/robots.txt"  # a 404, or the fault FaultServer's robots_txt names
# Not a path: what the log shows for bytes that are no HTTP request (a TLS
# handshake, say), answered 400 at once, as most plain HTTP servers do, or
# not at all (FaultServer's answers_not_http).
NOT_HTTP = "(not an HTTP request)"

SHORT_BODY_LENGTH = 1000
SHORT_BODY_SENT = b"<html><body><p>only the start of the page</p>"
LONG_BODY_PAGE = b"<html><body><p>the page its Content-Length gives</p></body></html>"
# What follows LONG_BODY's page on its connection: an answer to no request,
# which a client reusing the connection could take for its next answer.
STRAY_ANSWER_PAGE = b"<html><body><p>an answer to no request</p></body></html>"
LONG_STRAY_ANSWER_PAGE = STRAY_ANSWER_PAGE.replace(b"</p>", b"</p>" + b"<p>stray</p>" * 10_000)
AFTER_LONG_BODY_PAGE = b"<html><body><p>the answer to the second request</p></body></html>"
PLAIN_PAGE = b"<html><head><title>plain</title></head><body><p>a plain page</p></body></html>"
ONE_LINE_PAGE = b"<html><body><p>" + b"a page on one line, " * 3000 + b"</p></body></html>"  # 60 KB, minified
ENDLESS_BURST = b"<p>more</p>" * 6000  # what ENDLESS_BODY sends every drip_interval: 66 KB
BOMB_BYTES = 1024 ** 3
MANY_HEADERS_COUNT = 100_000
LONG_HEADER_BYTES = 1024 * 1024
HUGE_LENGTH_BYTES = 10 * 1024 ** 3

# How long a connection may take to send its request, and how much of it is read.
REQUEST_TIMEOUT = 5.0
MAX_REQUEST_BYTES = 64 * 1024

# How long a reset inside an answer waits after the bytes before it.
RESET_AFTER = 0.2

# How often the accept loop looks whether the server is stopping.
POLL_INTERVAL = 0.05


@dataclass(frozen=True)
class FaultLogEntry:
    """One request as the fault server saw it."""

    path: str
    start: float  # time.monotonic() when the request had been read
    end: float  # time.monotonic() when the server closed the connection
    client_left: bool  # a drip ended because the client closed or reset the connection


class FaultServer:
    """Answers each request on `address` with the fault its path names.
    Use as a context manager, or start()/stop()."""

    def __init__(self, address: str = "127.0.0.1", *, drip_interval: float = 0.2, drip_for: float = 10.0,
                 answers_not_http: bool = True, robots_txt: str | None = None, plain_page: bytes = PLAIN_PAGE):
        self.address = address
        # The page the faults that are answered whole send (HTTP/1.0, the mended
        # header lines, Early Hints): servers beside each other in one crawl
        # give each a page of its own, so that none is another's duplicate.
        self.plain_page = plain_page
        # The fault /robots.txt answers with (one of the paths above), so that a
        # crawler that reads robots.txt meets it first; by default a 404.
        self.robots_txt = robots_txt
        # Whether bytes that are no HTTP request get a 400 at once, as most
        # servers answer them, or nothing, as a server that waits for the end
        # of a request line answers a TLS handshake (for drip_for seconds).
        self.answers_not_http = answers_not_http
        self.drip_interval = drip_interval  # seconds between two dripped bytes
        self.drip_for = drip_for  # a drip gives up after this long, whoever is still reading
        self.port: int | None = None
        self._listener: socket.socket | None = None
        self._stopping = threading.Event()
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._log: list[FaultLogEntry] = []

    # -- lifecycle ---------------------------------------------------------------

    def start(self) -> FaultServer:
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind((self.address, 0))
        listener.listen()
        listener.settimeout(POLL_INTERVAL)
        self._listener, self.port = listener, listener.getsockname()[1]
        self._start_thread(self._accept, "fault server")
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._threads:
            self._threads[0].join()  # the accept loop: no connection starts after it
        for thread in self._threads[1:]:
            thread.join(timeout=self.drip_for + REQUEST_TIMEOUT)
        self._threads = []
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- for tests ---------------------------------------------------------------

    @property
    def origin(self) -> str:
        return f"http://{self.address}:{self.port}"

    def url(self, fault: str) -> str:
        return self.origin + fault

    @property
    def log(self) -> list[FaultLogEntry]:
        with self._lock:
            return sorted(self._log, key=lambda entry: entry.start)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no connection is being answered. False if that took over `timeout`."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    # -- serving -------------------------------------------------------------------

    def _start_thread(self, target, name: str, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            with self._lock:
                self._in_flight += 1
            self._start_thread(self._serve, "fault connection", connection)

    def _serve(self, connection: socket.socket) -> None:
        path, start, client_left = None, time.monotonic(), False
        try:
            with connection:
                connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                path = _request_path(connection)
                start = time.monotonic()
                if path is not None:
                    fault = self.robots_txt if path == ROBOTS_TXT and self.robots_txt else path
                    client_left = self._answer(connection, fault)
                if path in (LONG_BODY, LONG_BODY_LONG_STRAY):
                    self._answer_next_request(connection)
        except OSError:
            client_left = True  # the client reset the connection under us
        finally:
            with self._lock:
                if path is not None:
                    self._log.append(FaultLogEntry(path, start, time.monotonic(), client_left))
                self._in_flight -= 1
                self._idle.notify_all()

    def _answer_next_request(self, connection: socket.socket) -> None:
        """Answer a second request on `connection`, as a kept-alive connection
        would (unless the client closes it first)."""
        path = _request_path(connection)
        if path is not None:
            start = time.monotonic()
            client_left = self._answer(connection, path)
            with self._lock:
                self._log.append(FaultLogEntry(path, start, time.monotonic(), client_left))

    def _answer(self, connection: socket.socket, path: str) -> bool:
        """Send `path`'s fault; True if a drip ended because the client left."""
        if path == SILENT:
            return self._drip(connection, b"")
        if path == ENDLESS_BODY:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<html><body>")
            return self._drip(connection, ENDLESS_BURST)
        if path == DRIP_HEADERS:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Drip: ")
            return self._drip(connection, b"z")
        if path == DRIP_BODY:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 1000000\r\n\r\n<html>")
            return self._drip(connection, b" ")
        if path == HEADERS_CUT_OFF:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n")
        elif path == SHORT_BODY:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               b"Content-Length: %d\r\n\r\n%s" % (SHORT_BODY_LENGTH, SHORT_BODY_SENT))
        elif path == CHUNKED_CUT_OFF:
            chunk = b"<html><body><p>the first chunk</p>"
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                               b"%x\r\n%s\r\n" % (len(chunk), chunk))
        elif path in (LONG_BODY, LONG_BODY_LONG_STRAY):
            stray = STRAY_ANSWER_PAGE if path == LONG_BODY else LONG_STRAY_ANSWER_PAGE
            connection.sendall(_ok(LONG_BODY_PAGE) + _ok(stray))
        elif path == AFTER_LONG_BODY:
            connection.sendall(_ok(AFTER_LONG_BODY_PAGE))
        elif path == BAD_CHUNK_SIZE:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nTransfer-Encoding: chunked\r\n\r\n"
                               b"zz\r\n<html><body><p>after a chunk size that is no number</p>\r\n0\r\n\r\n")
        elif path == HTTP_10:
            connection.sendall(b"HTTP/1.0 200 OK\r\nContent-Type: text/html\r\n\r\n" + self.plain_page)
        elif path == NO_STATUS_LINE:
            connection.sendall(ONE_LINE_PAGE)
        elif path in (GZIP_BOMB, DEFLATE_BOMB, MANY_HEADERS, MANY_LINES_WITHOUT_COLON, LONG_HEADER):
            connection.sendall(large_answer(path))
        elif path == LYING_ENCODING:
            connection.sendall(_ok(PLAIN_PAGE, b"Content-Encoding: gzip\r\n"))
        elif path == LINE_WITHOUT_COLON:
            body = gzip.compress(self.plain_page)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nthis line has no colon\r\n"
                               b"Transfer-Encoding: chunked\r\nContent-Encoding: gzip\r\n\r\n"
                               b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body))
        elif path == SPACE_BEFORE_COLON:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type : text/html\r\n"
                               b"Content-Length: %d\r\n\r\n%s" % (len(self.plain_page), self.plain_page))
        elif path == EARLY_HINTS:
            connection.sendall(b"HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
                               + _ok(self.plain_page))
        elif path == HUGE_LENGTH:
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                               b"Content-Length: %d\r\n\r\n%s" % (HUGE_LENGTH_BYTES, PLAIN_PAGE))
        elif path == NOT_HTTP:
            if not self.answers_not_http:
                return self._drip(connection, b"")
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        elif path == RESET_BEFORE_STATUS:
            _reset_on_close(connection)
        elif path in (RESET_IN_HEADERS, RESET_IN_BODY):
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n" if path == RESET_IN_HEADERS else
                               b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                               % (SHORT_BODY_LENGTH, SHORT_BODY_SENT))
            # A reset makes the client's system drop what the client has not
            # read yet: the bytes sent are given time to be read first.
            _client_left(connection, RESET_AFTER)
            _reset_on_close(connection)
        elif path != CLOSED_BEFORE_STATUS:
            connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return False

    def _drip(self, connection: socket.socket, byte: bytes) -> bool:
        """Send `byte` (or nothing, if it is empty) every drip_interval until
        the client leaves (True), the server stops or drip_for has passed."""
        give_up_at = time.monotonic() + self.drip_for
        while time.monotonic() < give_up_at and not self._stopping.is_set():
            if _client_left(connection, self.drip_interval):
                return True
            try:
                connection.sendall(byte)
            except OSError:
                return True
        return False


def unanswered_port(address: str) -> int:
    """A port of `address` that refuses connections: one the system gave,
    closed again (nothing else on a loopback address of its own takes it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind((address, 0))
        return probe.getsockname()[1]


def _reset_on_close(connection: socket.socket) -> None:
    """Make closing `connection` send RST instead of FIN (a zero linger time)."""
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


def _ok(body: bytes, headers: bytes = b"") -> bytes:
    """A 200 text/html answer with `body`, its Content-Length and `headers` (whole lines)."""
    return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n%sContent-Length: %d\r\n\r\n%s"
            % (headers, len(body), body))


@functools.cache
def large_answer(path: str) -> bytes:
    """The whole answer of a fault whose bytes are many, built once: a test
    that measures a fetch's memory builds it first, so that only the fetch's
    own allocations count."""
    if path in (GZIP_BOMB, DEFLATE_BOMB):
        coding = "gzip" if path == GZIP_BOMB else "deflate"
        return _ok(zeros_compressed(coding), b"Content-Encoding: %s\r\n" % coding.encode())
    if path == MANY_HEADERS:
        return _ok(PLAIN_PAGE, b"".join(b"X-Header-%d: %d\r\n" % (n, n) for n in range(MANY_HEADERS_COUNT)))
    if path == MANY_LINES_WITHOUT_COLON:
        return _ok(PLAIN_PAGE, b"no colon here\r\n" * MANY_HEADERS_COUNT)
    if path == LONG_HEADER:
        return _ok(PLAIN_PAGE, b"X-Long: %s\r\n" % (b"z" * LONG_HEADER_BYTES))
    raise ValueError(f"{path} has no large answer")


def zeros_compressed(coding: str) -> bytes:
    """BOMB_BYTES of zeros in `coding` (gzip or deflate), about a thousandth
    of their size.

    Compressing a gigabyte takes seconds; a megabyte of zeros is compressed
    once instead, its deflate blocks ended by a full flush, which makes them
    stand alone (byte-aligned, referring to nothing before them), so the
    stream is those blocks again and again, then the last block."""
    zeros = bytes(1024 * 1024)
    count = BOMB_BYTES // len(zeros)
    compressor = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)  # raw deflate: the wrapper is ours
    blocks = compressor.compress(zeros) + compressor.flush(zlib.Z_FULL_FLUSH)
    deflated = blocks * count + compressor.flush()
    crc32, adler32 = zlib.crc32(b""), zlib.adler32(b"")  # the checksums' starting values
    for _ in range(count):
        crc32, adler32 = zlib.crc32(zeros, crc32), zlib.adler32(zeros, adler32)
    if coding == "gzip":  # RFC 1952: no name, no time, from an unknown system
        return b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff" + deflated + struct.pack("<II", crc32, BOMB_BYTES % 2**32)
    return b"\x78\xda" + deflated + struct.pack(">I", adler32)  # RFC 1950, as HTTP's "deflate" is


def _request_path(connection: socket.socket) -> str | None:
    """The path of the request on `connection` (origin or absolute form, as a
    proxy is sent), NOT_HTTP for bytes that are no HTTP request, or None if
    no whole request head came in time."""
    connection.settimeout(REQUEST_TIMEOUT)
    head = b""
    while b"\r\n\r\n" not in head and len(head) < MAX_REQUEST_BYTES:
        try:
            received = connection.recv(4096)
        except TimeoutError:
            return None
        if not received:
            return None
        head += received
        if not head[:1].isalpha():  # a request line starts with its method
            return NOT_HTTP
    parts = head.split(b"\r\n", 1)[0].split()
    return urlsplit(parts[1].decode("latin-1")).path if len(parts) == 3 else None


def _client_left(connection: socket.socket, seconds: float) -> bool:
    """Wait `seconds`, returning True at once if the client closes or resets
    the connection meanwhile."""
    readable, _, _ = select.select([connection], [], [], seconds)
    if not readable:
        return False
    try:
        if not connection.recv(1, socket.MSG_PEEK):
            return True  # orderly close
    except OSError:
        return True  # reset
    time.sleep(seconds)  # the client sent more; it is still there
    return False
