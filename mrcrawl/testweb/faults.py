"""Transport faults on loopback: answers that go wrong below HTTP.

TestWebServer's pages are well-formed HTTP, which is all http.server can
send.  A FaultServer answers from a raw socket instead, with the fault its
request's path names (FAULTS): an answer that drips a byte at a time, a
connection closed or reset before the status line or inside the header
block, a body shorter than its Content-Length or a chunked body without its
last chunk.  It serves one loopback address, one request per connection,
and logs every request.

    with FaultServer() as server:
        fetch(server.url(DRIP_BODY))
        server.wait_idle()
        entry, = server.log

A drip stops as soon as the client goes away, and in any case after
`drip_for` seconds, so a client that never gives up cannot hold the server.
"""

from __future__ import annotations

import select
import socket
import struct
import threading
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

# The faults, by request path.
DRIP_HEADERS = "/drip-headers"  # the status line, then one byte of an endless header line at a time
DRIP_BODY = "/drip-body"  # the whole header block, then one body byte at a time
HEADERS_CUT_OFF = "/headers-cut-off"  # a status line and a header, then the connection closes
CLOSED_BEFORE_STATUS = "/closed-before-status"  # the connection closes before a byte is sent
RESET_BEFORE_STATUS = "/reset-before-status"  # the connection is reset before a byte is sent
SHORT_BODY = "/short-body"  # Content-Length says more than is sent before the close
CHUNKED_CUT_OFF = "/chunked-cut-off"  # a chunk, then the close, without the last (empty) chunk

SHORT_BODY_LENGTH = 1000
SHORT_BODY_SENT = b"<html><body><p>only the start of the page</p>"

# How long a connection may take to send its request, and how much of it is read.
REQUEST_TIMEOUT = 5.0
MAX_REQUEST_BYTES = 64 * 1024

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

    def __init__(self, address: str = "127.0.0.1", *, drip_interval: float = 0.2, drip_for: float = 10.0):
        self.address = address
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
                    client_left = self._answer(connection, path)
        except OSError:
            client_left = True  # the client reset the connection under us
        finally:
            with self._lock:
                if path is not None:
                    self._log.append(FaultLogEntry(path, start, time.monotonic(), client_left))
                self._in_flight -= 1
                self._idle.notify_all()

    def _answer(self, connection: socket.socket, path: str) -> bool:
        """Send `path`'s fault; True if a drip ended because the client left."""
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
        elif path == RESET_BEFORE_STATUS:
            # Closing with a zero linger time sends RST instead of FIN.
            connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        elif path != CLOSED_BEFORE_STATUS:
            connection.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        return False

    def _drip(self, connection: socket.socket, byte: bytes) -> bool:
        """Send `byte` every drip_interval until the client leaves (True), the
        server stops or drip_for has passed."""
        give_up_at = time.monotonic() + self.drip_for
        while time.monotonic() < give_up_at and not self._stopping.is_set():
            if _client_left(connection, self.drip_interval):
                return True
            try:
                connection.sendall(byte)
            except OSError:
                return True
        return False


def _request_path(connection: socket.socket) -> str | None:
    """The path of the request on `connection` (origin or absolute form, as a
    proxy is sent), or None if no whole request head came in time."""
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
