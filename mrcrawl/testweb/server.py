"""Serve a test web over real HTTP on loopback, and log every request.

Each host of the web gets its own loopback address (127.0.0.2, .3, ...), all
on one port, served by a ThreadingHTTPServer speaking HTTP/1.1 with
keep-alive. The log records, per request, when it started and ended, so
tests can check politeness (no overlap per host, gaps between starts).

    with TestWebServer(seed=1) as server:
        crawl(server.seeds, server.web.crawl_config())
        entries = server.log

It serves a web with days (daily.py) one day at a time, switched by
set_day() on the same addresses and port, and answers conditional requests
for pages that carry validators (ETag, Last-Modified) with 304 Not Modified.
"""

from __future__ import annotations

import email.utils
import errno
import itertools
import re
import select
import socket
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from .model import Page, Web
from .web import generate_web, seeds

# How often a stalling handler checks whether the client hung up: the log's
# end time of an abandoned request is at most this late.
STALL_STEP = 0.01

# Idle keep-alive connections are closed after this long, as real servers do.
IDLE_TIMEOUT = 60.0

# One entity tag of an If-None-Match list: an opaque quoted string, maybe weak.
ENTITY_TAG = re.compile(r'(?:W/)?"[^"]*"')


@dataclass(frozen=True)
class LogEntry:
    """One request as the server saw it."""

    address: str  # the host's loopback address
    port: int
    method: str
    path: str  # the request target as received, query included
    status: int | None  # None when the client left before a status line was sent
    start: float  # time.monotonic() when the request line was read
    end: float  # time.monotonic() when the response was sent or the client left
    start_wall: float  # time.time() at the same moments
    end_wall: float
    connection: int  # one id per TCP connection: keep-alive reuse repeats it
    user_agent: str | None
    completed: bool  # the whole response was sent


class _HostServer(ThreadingHTTPServer):
    """The server of one loopback address."""

    daemon_threads = True

    def __init__(self, bound: socket.socket, owner: TestWebServer):
        self.owner = owner
        super().__init__(bound.getsockname(), _Handler, bind_and_activate=False)
        # Serve the socket bind_same_port bound.  (HTTPServer.server_bind is
        # skipped too: it would look the address's host name up, which may
        # ask a DNS server; the name is never needed.)
        self.socket.close()
        self.socket = bound
        self.server_address = bound.getsockname()
        self.server_name, self.server_port = self.server_address[:2]
        self.server_activate()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive; every response has a Content-Length
    timeout = IDLE_TIMEOUT
    # Headers and body go out in separate writes; with Nagle's algorithm the
    # body would wait for the client's delayed ACK, ~40 ms per request.
    disable_nagle_algorithm = True
    server: _HostServer

    def setup(self) -> None:
        super().setup()
        self.connection_id = self.server.owner._connection_opened(self.connection)

    def finish(self) -> None:
        self.server.owner._connection_closed(self.connection)
        super().finish()

    def handle(self) -> None:
        try:
            super().handle()
        except ConnectionError:
            pass  # a client reset its connection between requests: normal, not worth a traceback

    def parse_request(self) -> bool:
        self.started = (time.monotonic(), time.time())
        return super().parse_request()

    def log_message(self, format: str, *args) -> None:
        pass  # the request log replaces stderr noise

    def do_GET(self) -> None:
        self._serve(send_body=True)

    def do_HEAD(self) -> None:
        self._serve(send_body=False)

    def _serve(self, send_body: bool) -> None:
        owner = self.server.owner
        owner._request_started()
        sent_status, completed = None, False
        try:
            # One read: a request is answered from one day, whatever set_day() does meanwhile.
            day, served = owner._serving
            page = served.respond(self.server.server_name, self.path)
            status, headers, body = owner._response(page, self.headers, day)
            if page.stall and not page.stall_after_headers and self._client_left_during(page.stall):
                return
            self.send_response(status)
            sent_status = status
            for name, value in headers:
                self.send_header(name, value)
            if status != 304:  # a 304's Content-Length would have to be the 200's (RFC 9110 §8.6)
                self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if send_body:
                if page.stall and page.stall_after_headers:
                    half = len(body) // 2
                    self.wfile.write(body[:half])
                    self.wfile.flush()
                    if self._client_left_during(page.stall):
                        return
                    body = body[half:]
                self.wfile.write(body)
            self.wfile.flush()
            completed = True
        except OSError:  # the client closed the connection under us
            pass
        finally:
            if not completed:
                self.close_connection = True
            owner._record(self, sent_status, completed)

    def _client_left_during(self, seconds: float) -> bool:
        """Wait up to `seconds`, in small steps, returning early (True) as soon
        as the client closes the connection, so the log's end time shows when
        the client gave up."""
        deadline = time.monotonic() + seconds
        while (left := deadline - time.monotonic()) > 0:
            readable, _, _ = select.select([self.connection], [], [], min(STALL_STEP, left))
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return True  # orderly close
                except OSError:
                    return True  # reset
                time.sleep(STALL_STEP)  # the client sent more; keep stalling
        return False


class TestWebServer:
    """Serves a generated web on 127.0.0.2, .3, ... (one port for all) and
    logs every request. Use as a context manager, or start()/stop().

    `port` serves on that port, and start() raises OSError (EADDRINUSE) when
    it is taken on any address; by default the OS picks a free one.
    `web_factory(port)` may build a custom Web instead of generate_web(); its
    hosts must be the first `hosts` addresses from 127.0.0.2.  With `day`, it
    builds a web with days (daily.DailyWeb): the server serves that day of it,
    and set_day() moves to another (daily.start_daily_web() does all this)."""

    __test__ = False  # not a pytest test class, whatever its name says

    def __init__(self, seed: int = 1, hosts: int = 8, *, port: int = 0, stall_seconds: float = 5.0,
                 web_factory=None, day: int | None = None):
        self.seed = seed
        self.host_count = hosts
        self.requested_port = port  # 0: any port free on every address
        self.stall_seconds = stall_seconds
        self.web_factory = web_factory
        self.first_day = day
        self.web: Web | None = None  # or, with days, the DailyWeb
        # The day served (None for a web without days) and what answers the
        # requests: the web itself, or that day of it (daily.WebDay).
        self._serving: tuple[int | None, object] = (None, None)
        self.port: int | None = None
        self._servers: list[_HostServer] = []
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)
        self._in_flight = 0
        self._log: list[LogEntry] = []
        self._connection_ids = itertools.count(1)
        self._open_connections: set[socket.socket] = set()
        self._flaky_seen: set[tuple[int | None, str]] = set()

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> TestWebServer:
        if self._servers:
            raise RuntimeError("already started")
        addresses = [f"127.0.0.{2 + i}" for i in range(self.host_count)]
        self.port, sockets = bind_same_port(addresses, port=self.requested_port)
        self._servers = [_HostServer(sock, self) for sock in sockets]
        try:
            if self.web_factory:
                self.web = self.web_factory(self.port)
            else:
                self.web = generate_web(self.seed, self.host_count, port=self.port,
                                        stall_seconds=self.stall_seconds)
            if list(self.web.addresses) != addresses or self.web.port != self.port:
                raise ValueError("the web's hosts must be the served addresses and port")
            served = self.web if self.first_day is None else self.web.on(self.first_day)
            self._serving = (self.first_day, served)
        except BaseException:
            for server in self._servers:
                server.server_close()
            self._servers = []
            raise
        for server in self._servers:
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                                      name=f"testweb {server.server_name}", daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def stop(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        # Idle keep-alive connections would hold their threads until the idle
        # timeout; shutting the sockets ends them now.
        with self._lock:
            connections = list(self._open_connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        for thread in self._threads:
            thread.join(timeout=5)
        self._servers, self._threads = [], []

    def __enter__(self) -> TestWebServer:
        return self if self._servers else self.start()  # start_test_web() already started it

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- for tests ---------------------------------------------------------------

    @property
    def seeds(self) -> list[str]:
        return seeds(self.web)

    @property
    def day(self) -> int | None:
        """The day served, or None when the web has no days."""
        return self._serving[0]

    def set_day(self, day: int) -> None:
        """Serve `day` of the web from the next request on, on the same
        addresses and port. Pages that fail once fail their first request of
        the day again, even when `day` is the day already served."""
        if self.day is None:
            raise RuntimeError("this server's web has no days")
        served = self.web.on(day)  # raises ValueError for a day the web does not have
        with self._lock:
            self._serving = (day, served)
            self._flaky_seen.clear()

    @property
    def log(self) -> list[LogEntry]:
        """A copy of the request log, in order of request start. (Entries are
        appended when a request ends, and a client may already have sent its
        next request by then.)"""
        with self._lock:
            return sorted(self._log, key=lambda entry: entry.start)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait until no request is being answered, so that the log holds every
        request a client has seen answered. False if that took over `timeout`."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def clear_log(self) -> None:
        with self._lock:
            self._log.clear()

    def reset_flaky(self) -> None:
        """Make flaky pages fail their next request again, as on a new server."""
        with self._lock:
            self._flaky_seen.clear()

    # -- used by the handlers -----------------------------------------------------

    def _response(self, page: Page, request_headers: Message,
                  day: int | None) -> tuple[int, list[tuple[str, str]], bytes]:
        """Status, headers (no Content-Length) and body bytes for one request."""
        # Keyed by day too: a request still answered for the day before a
        # set_day() does not use up the new day's failure.
        if page.flaky and self._first_request((day, page.url)):
            return 503, [("Content-Type", "text/plain")], b"Temporarily unavailable; try again.\n"
        if not_modified(page, request_headers):
            return 304, list(page.headers), b""
        headers = [("Content-Type", page.content_type)] if page.content_type else []
        headers += list(page.headers)
        body = page.body
        if page.gzip_body is not None:
            headers.append(("Vary", "Accept-Encoding"))
            accept_encoding = request_headers.get("Accept-Encoding", "")
            accepted = {token.split(";")[0].strip().lower() for token in accept_encoding.split(",")}
            if "gzip" in accepted:
                headers.append(("Content-Encoding", "gzip"))
                body = page.gzip_body
        return page.status, headers, body

    def _request_started(self) -> None:
        with self._lock:
            self._in_flight += 1

    def _first_request(self, key: tuple[int | None, str]) -> bool:
        """Whether this is the first request for a (day, URL) since the last reset."""
        with self._lock:
            first = key not in self._flaky_seen
            self._flaky_seen.add(key)
            return first

    def _connection_opened(self, connection: socket.socket) -> int:
        with self._lock:
            self._open_connections.add(connection)
            return next(self._connection_ids)

    def _connection_closed(self, connection: socket.socket) -> None:
        with self._lock:
            self._open_connections.discard(connection)

    def _record(self, handler: _Handler, status: int | None, completed: bool) -> None:
        start, start_wall = handler.started
        entry = LogEntry(
            address=handler.server.server_name, port=handler.server.server_port,
            method=handler.command, path=handler.path, status=status,
            start=start, end=time.monotonic(), start_wall=start_wall, end_wall=time.time(),
            connection=handler.connection_id, user_agent=handler.headers.get("User-Agent"),
            completed=completed)
        with self._lock:
            self._log.append(entry)
            self._in_flight -= 1
            self._idle.notify_all()


def not_modified(page: Page, request_headers: Message) -> bool:
    """Whether a GET or HEAD of `page` answers 304 Not Modified (RFC 9110
    §13.2.2): If-None-Match decides when the request has it, else
    If-Modified-Since.  Only a 200 page with validators (ETag, Last-Modified
    among its headers) takes part: the others ignore conditional requests, as
    servers that keep no validators do."""
    validators = {name.lower(): value for name, value in page.headers}
    etag, last_modified = validators.get("etag"), validators.get("last-modified")
    if page.status != 200 or (etag is None and last_modified is None):
        return False
    if_none_match = request_headers.get_all("If-None-Match")
    if if_none_match:
        listed = ", ".join(if_none_match)
        if listed.strip() == "*":
            return True  # any current representation matches
        # The weak comparison: W/"x" and "x" match.
        tags = {tag.removeprefix("W/") for tag in ENTITY_TAG.findall(listed)}
        return etag is not None and etag.removeprefix("W/") in tags
    if_modified_since = request_headers.get_all("If-Modified-Since") or []
    if len(if_modified_since) != 1 or last_modified is None:
        return False  # absent, or more than one date: ignored
    since, modified = http_date(if_modified_since[0]), http_date(last_modified)
    return since is not None and modified is not None and modified <= since


def http_date(text: str) -> datetime | None:
    """An HTTP date as an aware UTC datetime; None when `text` is not one."""
    try:
        moment = email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    # A date in -0000 comes back naive; HTTP dates are UTC.
    return moment.replace(tzinfo=timezone.utc) if moment.tzinfo is None else moment


def bind_same_port(addresses: list[str], attempts: int = 50, port: int = 0) -> tuple[int, list[socket.socket]]:
    """Sockets bound to one port on every address: `port`, or when it is 0 a
    port the OS picks free for the first address, which the others try,
    starting over on a collision.  (The benchmark's web binds its hosts the
    same way.)  A given port that is taken raises OSError (EADDRINUSE)."""
    for _ in range(attempts if port == 0 else 1):
        sockets = []
        try:
            for address in addresses:
                sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                sockets.append(sock)
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                sock.bind((address, sockets[0].getsockname()[1] if len(sockets) > 1 else port))
            return sockets[0].getsockname()[1], sockets
        except OSError as error:
            for sock in sockets:
                sock.close()
            if error.errno != errno.EADDRINUSE or port:
                raise
    raise RuntimeError(f"found no port free on all of {addresses[0]}..{addresses[-1]}")


def start_test_web(seed: int = 1, hosts: int = 8, **options) -> TestWebServer:
    """Bind a port on every host address, generate the web for it, serve it.
    The caller stops it (or uses it as a context manager)."""
    return TestWebServer(seed, hosts, **options).start()
