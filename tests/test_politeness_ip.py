"""Politeness per address (`politeness: ip`): the hosts whose names resolve
to one address share one queue and one clock, in a reduce task's fetcher
and across the reduce tasks of a crawl.

A real DNS server on loopback (dnslib) answers several names with one
address and other names with others; real HTTP servers on those addresses,
all on one port, serve a small site per name and log every request's start
and end (time.monotonic()) and Host.  The server's log is the judge: the
gaps it saw between request starts, and whether two requests were in
flight at once."""
from __future__ import annotations

import http.server
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import yaml
from dnslib import QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver

from crawl_support import PageHandler, crawl, read_records
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.fetch.hostqueue import HostQueue, HostScheduler, MemoryBudget, SpillQueue
from mrcrawl.fetch.politeness import PolitenessKeys
from mrcrawl.store.failures import FailureKind
from test_dns import dns_server as serve_dns

SHARED, OTHER, THIRD = "127.0.0.2", "127.0.0.3", "127.0.0.4"
ZONE = {"a.test": SHARED, "b.test": SHARED, "c.test": SHARED, "d.test": OTHER, "e.test": THIRD}
ON_SHARED = ("a.test", "b.test", "c.test")
UNKNOWN = "nx.test"  # the DNS server answers NXDOMAIN
PAGES = 3  # pages each site's home links to
SERVE_SECONDS = 0.05  # each answer takes this long, so requests in flight together overlap in the log
DELAY = 0.3
AGENT = "mrcrawl-test/1.0"


class Zone(BaseResolver):
    """A records for ZONE's names, NXDOMAIN for any other; counts every question."""

    def __init__(self):
        self.questions: dict[str, int] = {}
        self._lock = threading.Lock()

    def resolve(self, request, handler):
        name = str(request.q.qname).rstrip(".")
        with self._lock:
            self.questions[name] = self.questions.get(name, 0) + 1
        reply = request.reply()
        if name not in ZONE:
            reply.header.rcode = RCODE.NXDOMAIN
        elif request.q.qtype == QTYPE.A:
            reply.add_answer(RR(name, QTYPE.A, rdata=A(ZONE[name]), ttl=0))
        return reply


def dns_server():
    return serve_dns(Zone())


@dataclass(frozen=True)
class Request:
    """One request as a server saw it."""

    address: str  # the address that served it
    name: str  # the Host header's name
    path: str
    start: float
    end: float


class SiteHandler(PageHandler):
    """A site per Host name: /robots.txt (with the name's Crawl-delay, if
    the server has one), a home page linking PAGES pages, and the pages."""

    protocol_version = "HTTP/1.1"

    def do_GET(self):
        start = time.monotonic()
        name = (self.headers["Host"] or "").rsplit(":", 1)[0]
        time.sleep(SERVE_SECONDS)
        if self.path == "/robots.txt":
            delay = self.server.crawl_delays.get(name)
            body = ("User-agent: *\nAllow: /\n" + (f"Crawl-delay: {delay}\n" if delay else "")).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        elif self.path == "/":
            links = "".join(f'<a href="/p{number}">page {number}</a>' for number in range(PAGES))
            self.send_html(f"<html><head><title>{name}</title></head><body>{links}</body></html>".encode())
        else:
            self.send_html(f"<html><head><title>{name}{self.path}</title></head><body>x</body></html>".encode())
        self.server.log.append(Request(self.server.server_address[0], name, self.path, start, time.monotonic()))


@contextmanager
def sites(crawl_delays: dict[str, float] | None = None):
    """A server on each address of ZONE, on one port: (the port, the shared log)."""
    log: list[Request] = []
    servers = []
    port = 0
    for address in (SHARED, OTHER, THIRD):
        server = http.server.ThreadingHTTPServer((address, port), SiteHandler)
        server.daemon_threads = True
        port = server.server_address[1]
        server.log, server.crawl_delays = log, crawl_delays or {}
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        servers.append(server)
    try:
        yield port, log
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def site_urls(name: str, port: int) -> list[str]:
    return [f"http://{name}:{port}/"] + [f"http://{name}:{port}/p{number}" for number in range(PAGES)]


def settings(resolver: str, politeness: str, **options) -> dict:
    return dict(language="en", user_agent=AGENT, threads=3, delay=DELAY, retries=0, timeout=2.0, obey_robots=True,
                allow_networks=[f"{address}/32" for address in (SHARED, OTHER, THIRD)], dns_server=resolver,
                politeness=politeness) | options


def fetch(urls: list[str], resolver: str, politeness: str, **options) -> list[dict]:
    """One task's fetch of `urls`: its doc records."""
    fetcher = Fetcher(CrawlConfig(**settings(resolver, politeness, **options)), layer=0)
    for url in urls:
        fetcher.add(url)
    return list(fetcher.finish())


def on_address(log: list[Request], address: str) -> list[Request]:
    return sorted((request for request in log if request.address == address), key=lambda request: request.start)


def overlaps(requests: list[Request]) -> list[str]:
    """Each request (of a list by start) that started before the one before it ended."""
    return [f"{after.name}{after.path} started before {before.name}{before.path} ended"
            for before, after in zip(requests, requests[1:]) if after.start < before.end]


def short_gaps(requests: list[Request], delay: float) -> list[str]:
    """Each request (of a list by start) that started less than `delay` after the one before it."""
    return [f"{before.name}{before.path} -> {after.name}{after.path}: {after.start - before.start:.3f}s"
            for before, after in zip(requests, requests[1:]) if after.start - before.start < delay]


# ---- the queue keys --------------------------------------------------------------------


def test_the_queue_key_is_the_host_or_the_address_its_connection_goes_to():
    with dns_server() as (zone, resolver), sites() as (port, log):
        by_host = PolitenessKeys(CrawlConfig(**settings(resolver, "host")))
        assert by_host.of(f"http://a.test:{port}/x?y") == f"http://a.test:{port}"
        assert zone.questions == {}  # a host is its own queue: nothing is looked up

        by_address = PolitenessKeys(CrawlConfig(**settings(resolver, "ip")))
        names = [*ZONE, UNKNOWN]
        for _ in range(2):  # looked up once per host, however often asked
            keys = {name: by_address.of(f"http://{name}:{port}/p0") for name in names}
        assert keys == {**ZONE, UNKNOWN: f"http://{UNKNOWN}:{port}"}  # a name that does not resolve keeps its host key
        assert by_address.of(f"http://{SHARED}:{port}/") == SHARED  # an address literal is its own address
        assert zone.questions == {name: 1 for name in names}

        # The fetcher connects each host where its key says.
        fetch([url for name in ZONE for url in site_urls(name, port)[:1]], resolver, "ip")
    assert {(request.name, request.address) for request in log} == {
        (name, by_address.of(f"http://{name}:{port}/")) for name in ZONE}


# ---- the scheduler ---------------------------------------------------------------------


def test_hosts_on_one_clock_wait_their_turn_without_a_thread_and_go_round_robin(tmp_path):
    budget = MemoryBudget(100)
    scheduler = HostScheduler()
    hosts = {}
    for name, urls in (("big", 3), ("small", 1), ("tiny", 1)):
        hosts[name] = HostQueue(f"http://{name}.test", SpillQueue(str(tmp_path / name), budget), delay=0.0)
        for number in range(urls):
            hosts[name].urls.push(f"http://{name}.test/{number}")
        with scheduler.lock:
            scheduler.schedule(hosts[name])
    # Each host is taken once to be looked up, and finds its address's clock.
    assert scheduler.take() is hosts["big"] and scheduler.share_clock(hosts["big"], SHARED)
    for name in ("small", "tiny"):  # the clock has a request in flight: given back without one
        assert scheduler.take() is hosts[name] and not scheduler.share_clock(hosts[name], SHARED)
        scheduler.give_back(hosts[name])
    # They wait on the clock while big holds it, out of the scheduler's heaps: no thread waits for them.
    assert list(hosts["big"].clock.turns) == [hosts["small"], hosts["tiny"]]
    assert hosts["big"].clock.listed is None
    order, host = [], hosts["big"]  # big makes its first request
    for _ in range(5):  # big's 3 requests and the others' one each
        assert host.clock.holder is host
        order.append(host.key.removeprefix("http://").removesuffix(".test"))
        with scheduler.lock:
            host.urls.pop()
        host.hold_after(time.monotonic())
        scheduler.give_back(host)
        if len(order) < 5:
            host = scheduler.take()
    assert order == ["big", "small", "tiny", "big", "big"]
    scheduler.close()
    assert scheduler.take() is None


# ---- one task's fetcher ------------------------------------------------------------------


def test_hosts_on_one_address_take_turns_on_one_clock_while_other_addresses_go_alongside():
    with dns_server() as (zone, resolver), sites() as (port, log):
        urls = [url for name in (*ON_SHARED, "d.test") for url in site_urls(name, port)]
        docs = fetch([*urls, f"http://{UNKNOWN}:{port}/"], resolver, "ip")
    outcomes = {doc["url"]: (doc["outcome"], doc["error_kind"]) for doc in docs}
    assert outcomes == {**{url: ("fetched", None) for url in urls},
                        f"http://{UNKNOWN}:{port}/": ("network_error", FailureKind.DNS)}
    shared = on_address(log, SHARED)
    # Every host's robots.txt (its own, on the shared clock) and pages.
    assert sorted((request.name, request.path) for request in shared) == sorted(
        (name, path) for name in ON_SHARED for path in ("/robots.txt", "/", *(f"/p{n}" for n in range(PAGES))))
    assert overlaps(shared) == []
    assert short_gaps(shared, DELAY) == []
    # The other address keeps its own clock: polite too, and not held back
    # behind the shared one (3 threads, 4 hosts: a host waiting its turn
    # holds no thread).
    other = on_address(log, OTHER)
    assert len(other) == PAGES + 2
    assert overlaps(other) == [] and short_gaps(other, DELAY) == []
    assert other[-1].end < shared[-1].start
    assert zone.questions == {name: 1 for name in (*ON_SHARED, "d.test", UNKNOWN)}


def test_under_politeness_host_the_hosts_of_one_address_overlap_there():
    with dns_server() as (zone, resolver), sites() as (port, log):
        docs = fetch([url for name in ON_SHARED for url in site_urls(name, port)], resolver, "host")
    assert {doc["outcome"] for doc in docs} == {"fetched"}
    shared = on_address(log, SHARED)
    assert overlaps(shared) != []
    assert short_gaps(shared, DELAY) != []


def test_a_shared_clock_keeps_the_largest_crawl_delay_of_its_hosts():
    delay, crawl_delay = 0.15, 0.5
    with dns_server() as (zone, resolver), sites(crawl_delays={"c.test": crawl_delay}) as (port, log):
        docs = fetch([url for name in ON_SHARED for url in site_urls(name, port)], resolver, "ip", delay=delay)
    assert {doc["outcome"] for doc in docs} == {"fetched"}
    shared = on_address(log, SHARED)
    assert overlaps(shared) == []
    told = next(number for number, request in enumerate(shared) if (request.name, request.path) == ("c.test", "/robots.txt"))
    assert told < len(shared) - 1  # requests followed c.test's Crawl-delay
    # Before c.test's robots.txt was read, the config's delay; from its
    # answer on, c.test's Crawl-delay, whichever host's request is next.
    assert short_gaps(shared[:told + 1], delay) == []
    assert short_gaps(shared[told:], crawl_delay) == []


# ---- a whole crawl, several reduce tasks at once ------------------------------------------


REDUCE_TASKS = 3


def crawl_sites(tmp_path: Path, resolver: str, port: int, politeness: str, depth: int) -> Path:
    """The sites of ZONE crawled `depth` layers deep by the driver on the
    local runner, its fetching placed on REDUCE_TASKS reduce tasks that run
    at once: the crawl's directory."""
    directory = tmp_path / politeness
    directory.mkdir()
    seeds = directory / "seeds.txt"
    seeds.write_text("".join(f"http://{name}:{port}/\n" for name in ZONE), encoding="utf-8")
    config = settings(resolver, politeness, name="sites", threads=4, url_allow=[rf"^http://[a-e]\.test:{port}/"])
    conf = directory / "sites.yaml"
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    output = directory / "crawl"
    assert crawl(seeds, conf, output, depth, "local", "--reducers", str(REDUCE_TASKS)) == 0
    return output


def test_a_crawl_on_several_reduce_tasks_keeps_one_address_polite_across_them(tmp_path):
    with dns_server() as (zone, resolver), sites() as (port, log):
        output = crawl_sites(tmp_path, resolver, port, "ip", depth=2)
        shared = on_address(log, SHARED)
        # The same crawl per host: its hosts are queues of their own, spread
        # over the tasks, and their requests meet on the address.
        log.clear()
        crawl_sites(tmp_path, resolver, port, "host", depth=1)
        shared_by_host = on_address(log, SHARED)
    for layer, pages in enumerate((1, PAGES)):
        parts = {}
        for part in sorted((output / "doc" / str(layer)).glob("part-*")):
            for line in part.read_text(encoding="utf-8").splitlines():
                parts[line.split("\t", 1)[0].strip('"')] = part.name
        assert len(parts) == len(ZONE) * pages, f"layer {layer}"
        # Several tasks fetched the layer, and one of them all of the shared address's hosts.
        assert len(set(parts.values())) > 1, f"layer {layer}"
        assert len({part for url, part in parts.items() if url.split("/")[2].split(":")[0] in ON_SHARED}) == 1
        docs = [doc for _, doc in read_records(output / "doc" / str(layer))]
        assert {doc["outcome"] for doc in docs} == {"fetched"}, f"layer {layer}"
    assert len(shared) == len(ON_SHARED) * (2 + 1 + PAGES)  # robots.txt in each layer, the home, the pages
    assert overlaps(shared) == []
    assert short_gaps(shared, DELAY) == []
    assert overlaps(shared_by_host) != []
