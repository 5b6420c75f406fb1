"""A synthetic web for throughput benchmarks, served by a separate process.

The functional test web (mrcrawl.testweb) models hard cases with a threaded
http.server; it spends more CPU per request than a fast crawler does, and in
the crawler's own process it would compete for the GIL.  This web is plain:
hosts of HTML pages with links and robots.txt that allows everything, served
by a minimal HTTP/1.1 keep-alive server on asyncio in a process of its own,
so that its CPU is not charged to the crawler being measured.

Host i is served on its own loopback address (127.0.1.1, 127.0.1.2, ...), all
hosts on one port.  Page k of a host is /p/k.html; page 0 is the host's seed.
Pages hold English-looking text, padded to the page size, and absolute
canonical links to existing pages of the same host and of other hosts.
Everything is a function of the spec (and the port), so the crawler's side
can list every URL without asking the server.

    with BenchWeb(BenchWebSpec(hosts=200, pages=10_000, latency=0.02)) as web:
        frontier.write_text("\\n".join(web.urls()) + "\\n")
        ...crawl...
        report = politeness_report(web.request_log(), delay=0.2)

The request log uses the test web's LogEntry; its monotonic times are
comparable with the crawler's (time.monotonic is system-wide on Linux).
"""
from __future__ import annotations

import asyncio
import importlib
import ipaddress
import itertools
import json
import multiprocessing.connection
import random
import socket
import subprocess
import sys
import time
from collections import defaultdict
from dataclasses import asdict, dataclass

from mrcrawl.testweb import LogEntry
from mrcrawl.testweb.server import bind_same_port

FIRST_ADDRESS = ipaddress.IPv4Address("127.0.1.1")
ROBOTS_TXT = b"User-agent: *\nAllow: /\n"

# A request's headers larger than this are refused, so that a client that
# never ends its headers cannot grow the server's memory without bound.
MAX_HEADER_BYTES = 64 * 1024
# Pipelined requests are read ahead up to this much.
MAX_BUFFERED_BYTES = 1024 * 1024

# How long BenchWeb waits for the server process to bind, answer, or exit.
START_TIMEOUT = 30.0
REPLY_TIMEOUT = 60.0
STOP_TIMEOUT = 5.0


@dataclass(frozen=True)
class BenchWebSpec:
    hosts: int = 200
    pages: int = 10_000  # in all, over every host; each host has at least one
    distribution: str = "uniform"  # or "zipf": host sizes skewed as rank ** -zipf_exponent
    zipf_exponent: float = 1.0
    page_bytes: int = 20_000  # a page's exact size, unless its links alone are larger
    links_per_page: int = 10
    cross_host_share: float = 0.3  # of a page's links, the share that point at other hosts
    latency: float = 0.02  # seconds each response waits before it is sent
    seed: int = 1

    def __post_init__(self) -> None:
        if self.hosts < 1 or self.pages < self.hosts:
            raise ValueError("need at least one host and one page per host")
        if self.distribution not in ("uniform", "zipf"):
            raise ValueError(f"distribution must be uniform or zipf, not {self.distribution!r}")
        if self.page_bytes < 0 or self.links_per_page < 0 or self.latency < 0:
            raise ValueError("page_bytes, links_per_page and latency cannot be negative")
        if not 0.0 <= self.cross_host_share <= 1.0:
            raise ValueError("cross_host_share must be between 0 and 1")
        host_address(self.hosts - 1)  # fails early when the hosts do not fit in 127.0.0.0/8

    # What the server process asks of a spec; another web (ordering.py's) is another spec with these two.
    def addresses(self) -> list[str]:
        """The loopback addresses its hosts are served on."""
        return [host_address(i) for i in range(self.hosts)]

    def model(self, port: int) -> "BenchWebModel":
        return BenchWebModel(self, port)


def host_address(index: int) -> str:
    """The loopback address of host `index`: 127.0.1.1 and up, skipping the
    .0 and .255 of each /24, which some tools take for network and broadcast."""
    address = FIRST_ADDRESS + (index // 254) * 256 + index % 254
    if address not in ipaddress.IPv4Network("127.0.0.0/8"):
        raise ValueError(f"host {index} would lie outside 127.0.0.0/8")
    return str(address)


def pages_per_host(spec: BenchWebSpec) -> list[int]:
    """How many pages each host has: `spec.pages` in all, at least one each.
    Zipf sizes are handed to hosts in a shuffled order (from the seed), so the
    biggest host is not always the first address."""
    if spec.distribution == "uniform":
        weights = [1.0] * spec.hosts
    else:
        weights = [rank ** -spec.zipf_exponent for rank in range(1, spec.hosts + 1)]
        random.Random(spec.seed).shuffle(weights)
    # One page each, then the rest by largest remainder: exact total, no randomness.
    spare = spec.pages - spec.hosts
    total_weight = sum(weights)
    shares = [spare * weight / total_weight for weight in weights]
    counts = [1 + int(share) for share in shares]
    by_remainder = sorted(range(spec.hosts), key=lambda i: (int(shares[i]) - shares[i], i))
    for i in by_remainder[: spec.pages - sum(counts)]:
        counts[i] += 1
    return counts


_WORDS = (
    "the city council said on monday that a new plan for public transport would be presented next month "
    "after residents complained about delays and crowded buses during the winter while officials "
    "argued the budget could not cover every route several local businesses welcomed the proposal "
    "because customers often arrive late and the market near the river has lost trade since the bridge "
    "closed for repairs engineers expect the work to finish before summer if the weather allows "
    "teachers parents and students asked for safer crossings outside schools and the mayor promised "
    "to review the speed limits in older districts where streets are narrow a report published by the "
    "university found that cycling has doubled in five years and that most trips are shorter than "
    "three kilometres the regional government will share the cost with the city and a consultation "
    "opens online this week with meetings in libraries and community centres across every district"
).split()


def _paragraphs(seed: int, count: int = 64) -> list[str]:
    """Prose-like paragraphs (ASCII, so characters are bytes) to fill pages with."""
    rng = random.Random(f"paragraphs:{seed}")
    paragraphs = []
    for _ in range(count):
        sentences = []
        for _ in range(rng.randint(3, 7)):
            words = rng.choices(_WORDS, k=rng.randint(8, 22))
            sentences.append(" ".join(words).capitalize() + ".")
        paragraphs.append(" ".join(sentences))
    return paragraphs


class BenchWebModel:
    """The web's content for one port: URLs, links and page bodies."""

    def __init__(self, spec: BenchWebSpec, port: int):
        self.spec = spec
        self.port = port
        self.page_counts = pages_per_host(spec)
        self.addresses = [host_address(i) for i in range(spec.hosts)]
        self._host_index = {address: i for i, address in enumerate(self.addresses)}
        self._paragraphs = [f"<p>{text}</p>\n".encode() for text in _paragraphs(spec.seed)]

    def url(self, host: int, page: int) -> str:
        return f"http://{self.addresses[host]}:{self.port}/p/{page}.html"

    def urls(self) -> list[str]:
        return [self.url(host, page) for host, count in enumerate(self.page_counts) for page in range(count)]

    def seeds(self) -> list[str]:
        return [self.url(host, 0) for host in range(self.spec.hosts)]

    def links(self, host: int, page: int) -> list[str]:
        rng = random.Random(f"links:{self.spec.seed}:{host}:{page}")
        cross = round(self.spec.links_per_page * self.spec.cross_host_share) if self.spec.hosts > 1 else 0
        links = []
        for number in range(self.spec.links_per_page):
            target = host
            if number < cross:
                target = rng.randrange(self.spec.hosts - 1)
                target += target >= host  # any host but this one
            links.append(self.url(target, rng.randrange(self.page_counts[target])))
        return links

    def body(self, host: int, page: int) -> bytes:
        head = (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>Host {host} page {page}</title></head>\n<body>\n"
                f"<h1>Host {host} page {page}</h1>\n<ul>\n").encode()
        links = "".join(f"<li><a href=\"{url}\">{url}</a></li>\n" for url in self.links(host, page)).encode()
        tail = b"</body></html>\n"
        parts = [head, links, b"</ul>\n"]
        room = self.spec.page_bytes - sum(map(len, parts)) - len(tail)
        start = (host * 7919 + page) % len(self._paragraphs)
        for paragraph in itertools.islice(itertools.cycle(self._paragraphs), start, None):
            if len(paragraph) > room:
                break
            parts.append(paragraph)
            room -= len(paragraph)
        if room > 0:
            parts.append(b" " * room)  # whitespace pads the page to its exact size
        parts.append(tail)
        return b"".join(parts)

    def respond(self, address: str, path: str) -> tuple[int, bytes, bytes]:
        """(status, content type, body) for a request to `address`."""
        return respond_to(self._host_index.get(address), path, self.page_counts.__getitem__, self.body)


def respond_to(host: int | None, path: str, pages_of, body_of) -> tuple[int, bytes, bytes]:
    """(status, content type, body) of a bench web's host `host` (None: not
    one of the web's) for `path`: robots.txt, page k (/p/k.html) when
    k < pages_of(host), as body_of(host, k), or a 404."""
    if host is None:
        return 404, b"text/plain", b"not a host of this web\n"
    if path == "/robots.txt":
        return 200, b"text/plain", ROBOTS_TXT
    number = page_number(path, pages_of(host))
    if number is None:
        return 404, b"text/plain", b"no such page\n"
    return 200, b"text/html; charset=utf-8", body_of(host, number)


def page_number(path: str, pages: int) -> int | None:
    """The page k a path /p/k.html names, when the host has more than k `pages`; else None."""
    if path.startswith("/p/") and path.endswith(".html"):
        number = path[3:-5]
        if number.isdigit() and str(int(number)) == number and int(number) < pages:
            return int(number)
    return None


# -- the server process ------------------------------------------------------------

_REASONS = {200: b"OK", 400: b"Bad Request", 404: b"Not Found", 405: b"Method Not Allowed",
            431: b"Request Header Fields Too Large"}


class _Server:
    """State shared by every connection of the server process."""

    def __init__(self, model: BenchWebModel):
        self.model = model
        self.log: list[tuple] = []  # LogEntry fields, as a tuple: cheap to build and to pickle
        self.in_flight = 0
        self.connection_ids = itertools.count(1)
        self.connections: set[_Connection] = set()


class _Connection(asyncio.Protocol):
    """One keep-alive connection: requests are answered one at a time, in order."""

    def __init__(self, server: _Server):
        self.server = server
        self.buffer = b""
        self.request: tuple | None = None  # the one being answered
        self.closing = False  # the response being sent is the connection's last
        self.unsent = False  # part of the response being sent is still buffered

    def connection_made(self, transport) -> None:
        self.transport = transport
        self.address, self.port = transport.get_extra_info("sockname")[:2]
        self.id = next(self.server.connection_ids)
        self.server.connections.add(self)
        sock = transport.get_extra_info("socket")
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # Pause as soon as anything is left unsent, so resume_writing says
        # when the last byte of a large response left: the log's end time.
        transport.set_write_buffer_limits(high=0)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > MAX_BUFFERED_BYTES:
            self.transport.abort()  # a client that sends without reading: not one worth serving
            return
        if self.request is None:
            self._next_request()

    def _next_request(self) -> None:
        end = self.buffer.find(b"\r\n\r\n")
        if end < 0:
            if len(self.buffer) > MAX_HEADER_BYTES:
                self._start(("", "", None, False), time.monotonic(), time.time())
                self._finish(431, b"")
            return
        start, start_wall = time.monotonic(), time.time()
        head, self.buffer = self.buffer[:end].decode("latin-1"), self.buffer[end + 4:]
        lines = head.split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
            self._start(("", lines[0][:200], None, False), start, start_wall)
            self._finish(400, b"")
            return
        method, path, version = parts
        headers = {}
        for line in lines[1:]:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
        connection = headers.get("connection", "").lower()
        keep_alive = "close" not in connection and (version == "HTTP/1.1" or "keep-alive" in connection)
        self._start((method, path, headers.get("user-agent"), keep_alive), start, start_wall)
        # Answered from the event loop, never from here: a client's pipelined
        # requests would otherwise answer each other recursively.
        loop = asyncio.get_running_loop()
        if self.server.model.spec.latency:
            loop.call_later(self.server.model.spec.latency, self._answer)
        else:
            loop.call_soon(self._answer)

    def _start(self, request: tuple, start: float, start_wall: float) -> None:
        self.request = (*request, start, start_wall)
        self.server.in_flight += 1

    def _answer(self) -> None:
        if self.transport.is_closing():
            self._record(None, False)
            return
        method, path = self.request[:2]
        if method not in ("GET", "HEAD"):
            self._finish(405, b"")
            return
        status, content_type, body = self.server.model.respond(self.address, path)
        self._finish(status, body if method == "GET" else b"", content_type, len(body))

    def _finish(self, status: int, body: bytes, content_type: bytes = b"text/plain", length: int | None = None) -> None:
        keep_alive = self.request[3] and status not in (400, 431)
        self.status = status
        self.transport.write(b"HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n" % (
            status, _REASONS[status], content_type, len(body) if length is None else length,
            b"" if keep_alive else b"Connection: close\r\n") + body)
        if not keep_alive:
            self.closing = True
        if self.transport.get_write_buffer_size():
            self.unsent = True  # resume_writing ends the request
        else:
            self._sent()

    def pause_writing(self) -> None:
        pass  # _finish has seen the unsent bytes

    def resume_writing(self) -> None:
        if self.unsent:
            self.unsent = False
            self._sent()

    def _sent(self) -> None:
        self._record(self.status, True)
        if self.closing:
            self.transport.close()
        elif self.buffer:
            self._next_request()

    def _record(self, status: int | None, completed: bool) -> None:
        method, path, user_agent, _, start, start_wall = self.request
        self.server.log.append((self.address, self.port, method, path, status, start, time.monotonic(),
                                start_wall, time.time(), self.id, user_agent, completed))
        self.server.in_flight -= 1
        self.request = None

    def connection_lost(self, exc) -> None:
        self.server.connections.discard(self)
        if self.unsent:  # the client left before the whole response was sent
            self.unsent = False
            self._record(self.status, False)
        # A request still waiting out its latency is recorded when _answer runs.


async def _serve(spec, pipe) -> None:
    loop = asyncio.get_running_loop()
    port, sockets = bind_same_port(spec.addresses())
    server = _Server(spec.model(port))
    listeners = [await loop.create_server(lambda: _Connection(server), sock=sock, backlog=1024)
                 for sock in sockets]
    stopped = loop.create_future()

    async def log_when_idle(timeout: float) -> None:
        # Requests still being answered would be missing from the log: wait
        # for them a while, as TestWebServer.wait_idle does.
        deadline = time.monotonic() + timeout
        while server.in_flight and time.monotonic() < deadline:
            await asyncio.sleep(0.005)
        pipe.send(("log", server.log, server.in_flight))

    def on_command() -> None:
        try:
            command, argument = pipe.recv()
        except (EOFError, OSError):  # the parent is gone: so is the reason to serve
            command = "stop"
        if command == "log":
            loop.create_task(log_when_idle(argument))
        elif command == "clear":
            server.log.clear()
            pipe.send(("cleared", None))
        elif not stopped.done():
            stopped.set_result(None)

    loop.add_reader(pipe.fileno(), on_command)
    pipe.send(("ready", port))
    await stopped
    loop.remove_reader(pipe.fileno())
    for listener in listeners:
        listener.close()
    for connection in list(server.connections):
        connection.transport.abort()


def _server_main(argv: list[str]) -> None:
    """The server process: `python -m mrcrawl.bench.web SPEC_CLASS SPEC_JSON PIPE_FD`,
    SPEC_CLASS as module:name."""
    spec_class, spec_json, pipe_fd = argv
    module, name = spec_class.split(":")
    pipe = multiprocessing.connection.Connection(int(pipe_fd))
    try:
        spec = getattr(importlib.import_module(module), name)(**json.loads(spec_json))
        asyncio.run(_serve(spec, pipe))
    except BaseException as error:
        try:
            pipe.send(("error", f"{type(error).__name__}: {error}"))
        except OSError:
            pass
        raise


# -- the crawler's side --------------------------------------------------------------

class BenchWeb:
    """Starts the server process for `spec` and talks to it. Use as a context
    manager, or start()/stop()."""

    def __init__(self, spec=None):
        """`spec`: a BenchWebSpec, or another web's spec with its addresses() and model(port)."""
        self.spec = spec or BenchWebSpec()
        self.model: BenchWebModel | None = None
        self.process = None
        self._pipe = None

    @property
    def port(self) -> int:
        return self._started().port

    @property
    def host_addresses(self) -> list[str]:
        return self._started().addresses

    def urls(self) -> list[str]:
        """Every page's URL, host by host: a frontier of the whole web."""
        return self._started().urls()

    def seeds(self) -> list[str]:
        """Each host's page 0."""
        return self._started().seeds()

    def start(self) -> BenchWeb:
        if self.process is not None:
            raise RuntimeError("already started")
        # A fresh interpreter, not a fork: the parent may be a crawler with
        # threads running, and multiprocessing's spawn would re-run the
        # caller's main module.  A socket pair carries commands and the log.
        parent_end, child_end = socket.socketpair()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mrcrawl.bench.web", f"{type(self.spec).__module__}:{type(self.spec).__qualname__}",
             json.dumps(asdict(self.spec)), str(child_end.fileno())],
            pass_fds=[child_end.fileno()], stdin=subprocess.DEVNULL)
        child_end.close()
        self._pipe = multiprocessing.connection.Connection(parent_end.detach())
        kind, value = self._reply(START_TIMEOUT)
        if kind != "ready":
            self.stop()
            raise RuntimeError(f"the bench web did not start: {value}")
        self.model = self.spec.model(value)
        return self

    def request_log(self, idle_timeout: float = 5.0) -> list[LogEntry]:
        """Every request the server has answered, in order of start. Requests
        being answered are waited for up to `idle_timeout` seconds first."""
        self._started()
        self._pipe.send(("log", idle_timeout))
        kind, rows, _in_flight = self._reply(REPLY_TIMEOUT + idle_timeout)
        if kind != "log":
            raise RuntimeError(f"the bench web answered {kind!r} to a log request")
        return sorted((LogEntry(*row) for row in rows), key=lambda entry: entry.start)

    def clear_log(self) -> None:
        self._started()
        self._pipe.send(("clear", None))
        self._reply(REPLY_TIMEOUT)

    def stop(self) -> None:
        if self.process is None:
            return
        try:
            self._pipe.send(("stop", None))
        except OSError:
            pass  # it has exited already
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(STOP_TIMEOUT)
        self._pipe.close()
        self.process = self._pipe = None

    def __enter__(self) -> BenchWeb:
        return self if self.process is not None else self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _started(self) -> BenchWebModel:
        if self.model is None or self.process is None:
            raise RuntimeError("the bench web is not running")
        return self.model

    def _reply(self, timeout: float):
        if not self._pipe.poll(timeout):
            raise TimeoutError(f"the bench web did not answer within {timeout:.0f}s")
        try:
            return self._pipe.recv()
        except EOFError:
            return ("exited", f"exit code {self.process.poll()}")


def politeness_report(log: list[LogEntry], delay: float) -> dict:
    """What the request log says about politeness, per host and overall.

    A gap is the time from one request's start to the next one's start on the
    same host; an overlap is a request that started before the previous one to
    its host ended. Every request counts, robots.txt included."""
    by_host = defaultdict(list)
    for entry in log:
        by_host[entry.address].append(entry)
    worst_gap_by_host, overlaps_by_host, short_gaps = {}, {}, 0
    for address, entries in by_host.items():
        entries.sort(key=lambda entry: entry.start)
        pairs = list(zip(entries, entries[1:]))
        gaps = [after.start - before.start for before, after in pairs]
        worst_gap_by_host[address] = min(gaps, default=None)
        overlaps_by_host[address] = sum(after.start < before.end for before, after in pairs)
        short_gaps += sum(gap < delay for gap in gaps)
    gaps = [gap for gap in worst_gap_by_host.values() if gap is not None]
    overlaps = sum(overlaps_by_host.values())
    return {
        "delay": delay,
        "requests": len(log),
        "requests_per_host": {address: len(entries) for address, entries in by_host.items()},
        "worst_gap_s": min(gaps, default=None),
        "worst_gap_by_host": worst_gap_by_host,
        "gaps_below_delay": short_gaps,
        "overlaps": overlaps,
        "overlaps_by_host": overlaps_by_host,
        "polite": overlaps == 0 and short_gaps == 0,
    }


if __name__ == "__main__":
    _server_main(sys.argv[1:])
