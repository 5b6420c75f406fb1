"""The Crawler reducer's engine: fetch one task's URLs with many threads, politely.

Shaped like Nutch's Fetcher: the reducer's main thread is the feeder, handing
URLs to per-host queues (hostqueue.py) as mrjob reads them; `threads` fetch
threads take one host at a time from the scheduler, make at most one request
to it, and give it back with its politeness clock advanced.  A fetch that
needs several requests (redirect hops on the same host, retries) goes back to
its host's queue between requests, so no thread sleeps to be polite and no
host ever has two requests in flight; under `politeness: ip` the hosts on
one address share one clock, and so one request in flight (politeness.py).
Finished doc records go to a bounded queue that only the main thread
drains, because mrjob's output and counters are not thread-safe.  A thread whose answer has wholly arrived works on it
under a processing permit, one thread at a time, so that idle threads are
free while a CPU-bound task hands its interpreter lock over less often.

With a time limit (the crawl's `max_layer_seconds`, Nutch's
fetcher.timelimit.mins), no request starts once it has run out: the
requests in flight finish within their own time limits, and every URL not
done by then, not yet started or waiting for a retry or a redirect hop, is
left without a doc record (the crawl db defers it to the next layer).
"""
from __future__ import annotations

import logging
import queue
import shutil
import tempfile
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Callable, Iterator

import urllib3
from urllib3.exceptions import ConnectTimeoutError, HTTPError as Urllib3Error

from mrcrawl.config import CrawlConfig, allowed_networks
from mrcrawl.fetch.connection import (
    StrictPool,
    conditional_headers,
    known_for_request,
    open_connection,
    request_headers,
    request_target,
    whole_answer_arrived,
)
from mrcrawl.fetch.exception_kinds import exception_kind
from mrcrawl.fetch.hostqueue import HostQueue, HostScheduler, MemoryBudget, SpillQueue
from mrcrawl.fetch.netguard import blocked_reason
from mrcrawl.fetch.politeness import POLITENESS_BY_ADDRESS, connect_addresses
from mrcrawl.fetch.resolver import DNSLookupError, Resolver
from mrcrawl.fetch.robots import MAX_ROBOTS_BYTES, RobotsPolicy
from mrcrawl.page.charset import detect_encoding
from mrcrawl.page.announce import read_announcement, sniff
from mrcrawl.page.robots_directives import agent_token, header_directives
from mrcrawl.page.urls import UrlFilter, host_key, host_of, resolve_link
from mrcrawl.store.failures import FailureKind, status_kind
from mrcrawl.store.records import (
    BLOCKED,
    FETCHED,
    HTTP_ERROR,
    NETWORK_ERROR,
    NOT_HTML,
    NOT_MODIFIED,
    REDIRECT,
    ROBOTS_DENIED,
    WALL_CLOCK,
    RunClock,
    encode_body,
    new_doc,
)

log = logging.getLogger(__name__)

MAX_REDIRECTS = 5
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})
BACKOFF_BASE = 0.5  # seconds before the first retry; doubles with each attempt
RESPONSE_TIME_LIMIT = 3  # timeouts a whole response may take: connect, headers and body
CHUNK = 64 * 1024
# An error's text may quote what the server sent (a first line that is no
# status line, a chunk size that is no number), as much as a 64 KB line of
# it: the record keeps the start, which names the fault.
MAX_ERROR_CHARS = 500
URLS_IN_MEMORY = 20_000  # per reducer task; the rest of the frontier waits on local disk
# Seconds between progress reports (the task's status: see progress()).  Often
# enough for a live display, rare enough to cost nothing; on Hadoop the report
# also keeps a long reduce alive (mapreduce.task.timeout).
PROGRESS_EVERY = 1.0
_THREAD_DONE = object()  # what a fetch thread puts on the results queue as it exits


@dataclass(frozen=True)
class Failure:
    """Why a URL's fetch failed, as its doc record keeps it: the kind of
    failure, which counts and decides, and the detail a person reads."""

    kind: FailureKind
    error: str


@dataclass
class Exchange:
    """What one HTTP request brought back (or why it brought nothing)."""

    url: str
    started_at: str  # ISO 8601 UTC, on the run's clock
    status: int | None = None
    reason: str | None = None
    http_version: str | None = None
    headers: list = field(default_factory=list)
    content_type: str | None = None  # media type only, lower-case
    content_type_header: str | None = None
    body: bytes | None = None
    truncated: bool = False
    failure: Failure | None = None  # why no answer came (status None)

    @property
    def transient(self) -> bool:
        """Worth another attempt: no answer, too many requests, server error."""
        return self.status is None or self.status == 429 or self.status >= 500

    def header_values(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name]


@dataclass
class Task:
    """One frontier URL's fetch, or the host's robots.txt fetch, in progress."""

    url: str  # what to request next
    doc: dict | None = None  # None for robots.txt
    hops: int = 0  # redirects followed so far
    attempt: int = 0  # retries of the current hop so far
    visited: tuple = ()  # URLs requested so far, to catch loops

    def next_hop(self, target: str) -> "Task":
        return replace(self, url=target, hops=self.hops + 1, attempt=0, visited=self.visited + (self.url,))

    def retry(self) -> "Task":
        return replace(self, attempt=self.attempt + 1)


def _media_type(content_type: str | None) -> str | None:
    if not content_type:
        return None
    return content_type.split(";", 1)[0].strip().lower() or None


def _error_text(error: Exception, while_doing: str = "") -> str:
    """`error` as a record's error: its type, what failed (`while_doing`,
    if anything) and its message, cut at MAX_ERROR_CHARS."""
    text = f"{type(error).__name__}{while_doing}: {error}"
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS - 1] + "…"


@dataclass
class AddressCheck:
    """A host's name looked up and judged: the address to connect to, or
    why the host may not be requested."""

    address: str | None = None  # None: through a proxy, which looks the name up itself
    blocked_reason: str | None = None  # the private-network guard refused it
    unresolved: str | None = None  # the name could not be looked up


# How much of an unusable Location a record's error quotes.
LOCATION_QUOTED_CHARS = 200


def _redirect_target(task: Task, exchange: Exchange) -> tuple[str | None, Failure | None]:
    """A redirect's canonical target, or why it has none."""
    location = exchange.header_values("location")
    if not location:
        return None, Failure(FailureKind.REDIRECT_LOCATION, f"redirect (HTTP {exchange.status}) without a Location")
    target = resolve_link(location[0], task.url)
    if target is None:
        # ftp:, file:, javascript:, data: or no URL at all: nothing the crawler fetches.
        return None, Failure(FailureKind.REDIRECT_LOCATION,
                             f"redirect (HTTP {exchange.status}) to a Location that is no http(s) URL: "
                             f"{location[0][:LOCATION_QUOTED_CHARS]!r}")
    return target, None


def _hop_refusal(task: Task, target: str) -> Failure | None:
    """Why the redirect from `task` to `target` must not be followed, or None."""
    if task.hops >= MAX_REDIRECTS:
        return Failure(FailureKind.REDIRECT_LIMIT, f"more than {MAX_REDIRECTS} redirects")
    if target == task.url or target in task.visited:
        return Failure(FailureKind.REDIRECT_LOOP, f"redirect loop back to {target}")
    return None


class Fetcher:
    """Fetch URLs fed one by one; yield a doc record for each, in any order."""

    def __init__(self, config: CrawlConfig, layer: int, on_progress: Callable[[dict], None] | None = None,
                 clock: RunClock = WALL_CLOCK, time_limit: float | None = None):
        self.config = config
        self.layer = layer
        self.clock = clock  # stamps the records' times; politeness runs on time.monotonic()
        # No request starts `time_limit` seconds after the fetcher was made; None: no limit.
        self.deadline = None if time_limit is None else time.monotonic() + time_limit
        self.left = 0  # URLs given no doc record because the time ran out
        self.scope = UrlFilter(config.url_allow, config.url_deny)
        self.agent = agent_token(config.user_agent)
        self.scheduler = HostScheduler()
        self.hosts: dict[str, HostQueue] = {}
        self.results: queue.Queue = queue.Queue(maxsize=4 * config.threads)
        self.stats = {"requests": 0, "unconnected": 0, "retries": 0, "robots_requests": 0, "bytes": 0, "unexpected_errors": 0,
                      "dns_lookups": 0, "dns_milliseconds": 0}
        self._stats_lock = threading.Lock()
        # One resolver for the task: each host name is looked up once.
        self.resolver = Resolver(config.timeout, config.dns_server, on_lookup=self._count_lookup)
        self._allowed_networks = allowed_networks(config.allow_networks)
        self._spill_dir = tempfile.mkdtemp(prefix="mrcrawl-frontier-")
        self._memory = MemoryBudget(URLS_IN_MEMORY)
        self._threads: list[threading.Thread] = []
        self._feeding: HostQueue | None = None
        self._on_progress = on_progress
        self._next_report = time.monotonic() + PROGRESS_EVERY
        # One thread at a time works on an answer that has wholly arrived.
        # CPython hands its interpreter lock to a waiting thread at every
        # socket call; with many threads holding answers, each hand-over is
        # a context switch, and 120 threads spent 11% more CPU per page than
        # 30.  The permit turns that contest into one wait on one lock: its
        # holder reads, checks and records its answer without handing over.
        # An answer still arriving is read without it, so a slow server
        # never holds up the others.
        self._permit = threading.Lock()
        self._thread_state = threading.local()  # per fetch thread: answered_at, holds_permit

    # ---- the feeder side (main thread) -------------------------------------

    def add(self, url: str, entry: dict | None = None) -> None:
        """Queue one URL of this layer, with its frontier entry (records.FRONTIER_FIELDS)
        if it has one; never blocks on the network.  Once the time limit has
        run out, the URL is only counted as left."""
        key = host_key(url)
        if self._out_of_time():
            with self.scheduler.lock:
                self.left += 1
            self._report_when_due()
            return
        with self.scheduler.lock:
            host = self.hosts.get(key)
            if host is None:
                urls = SpillQueue(f"{self._spill_dir}/{len(self.hosts)}.urls", self._memory)
                host = self.hosts[key] = HostQueue(key, urls, self.config.delay)
            if self._feeding is not host:
                self._done_feeding()
                self._feeding = host
            host.urls.push(url, entry)
            self.scheduler.schedule(host)
        if not self._threads:
            self._start_threads()
        self._report_when_due()

    def completed(self) -> Iterator[dict]:
        """Doc records finished so far, without waiting."""
        while True:
            try:
                yield self.results.get_nowait()
            except queue.Empty:
                return

    def finish(self) -> Iterator[dict]:
        """Wait for every queued URL, yielding its record; then hold politeness.

        A host's last request of this layer must not be followed by the next
        layer's first request sooner than its delay, so we return only after
        every host's clock has run out: the next job cannot start earlier.
        """
        with self.scheduler.lock:
            self._done_feeding()
        self.scheduler.close()
        self._next_report = time.monotonic()  # report now: every URL of the task is known
        working = len(self._threads)
        while working:
            self._report_when_due()
            try:
                doc = self.results.get(timeout=max(0.0, self._next_report - time.monotonic()))
            except queue.Empty:
                continue
            if doc is _THREAD_DONE:
                working -= 1
            else:
                yield doc
        hold_until = max((host.next_start for host in self.hosts.values()), default=0.0)
        while (now := time.monotonic()) < hold_until:
            self._report_when_due()
            time.sleep(min(hold_until, self._next_report) - now)
        if self._on_progress:
            self._on_progress(self.progress())  # the last report: nothing left
        for host in self.hosts.values():
            self._close_connection(host)
        shutil.rmtree(self._spill_dir, ignore_errors=True)

    def progress(self) -> dict:
        """Where this task stands: its hosts, those with work left (`busy`),
        the URLs still to fetch, and `bound`: the seconds the task cannot end
        before, its busiest host's URLs left x that host's delay, or with a
        time limit at most the time left plus a delay; and with a time limit,
        `time_left`: the seconds before no request starts."""
        now = time.monotonic()
        with self.scheduler.lock:
            queued = sum(host.remaining() for host in self.hosts.values())
            busy = sum(1 for host in self.hosts.values() if host.remaining() or host.busy)
            # A clock's hosts wait for each other (`politeness: ip`): their work adds up.
            on_clock: dict = {}
            for host in self.hosts.values():
                remaining, in_flight = on_clock.get(host.clock, (0, False))
                on_clock[host.clock] = (remaining + host.remaining(), in_flight or host.busy)
            bound = max((clock.politeness_bound(remaining, in_flight, now, self.deadline)
                         for clock, (remaining, in_flight) in on_clock.items()), default=0.0)
        progress = {"hosts": len(self.hosts), "busy": busy, "queued": queued, "bound": round(bound, 1)}
        if self.deadline is not None:  # the seconds left before no request starts
            progress["time_left"] = round(max(0.0, self.deadline - now), 1)
        return {**progress, **self.stats}

    def _out_of_time(self) -> bool:
        return self.deadline is not None and time.monotonic() >= self.deadline

    def _report_when_due(self) -> None:
        """Report progress if PROGRESS_EVERY has passed since the last report (main thread)."""
        now = time.monotonic()
        if now >= self._next_report:
            self._next_report = now + PROGRESS_EVERY
            if self._on_progress:
                self._on_progress(self.progress())

    def _done_feeding(self) -> None:
        """The feeder moved on: the previous host's URLs are all queued (lock held)."""
        if self._feeding is not None:
            self._feeding.urls.flush()
            self._feeding.fed = True
            self._feeding = None

    def _start_threads(self) -> None:
        for number in range(self.config.threads):
            thread = threading.Thread(target=self._work, name=f"fetch-{number}", daemon=True)
            thread.start()
            self._threads.append(thread)

    # ---- the fetch threads -------------------------------------------------

    def _work(self) -> None:
        state = self._thread_state
        state.answered_at, state.holds_permit = None, False
        try:
            while (host := self.scheduler.take()) is not None:
                try:
                    self._serve(host)
                finally:
                    if state.holds_permit:
                        state.holds_permit = False
                        self._permit.release()
                    if host.fed and not host.has_work():
                        self._close_connection(host)
                    self.scheduler.give_back(host)
        finally:
            self.results.put(_THREAD_DONE)

    def _serve(self, host: HostQueue) -> None:
        """Advance the host's work by at most one request."""
        if self._out_of_time():  # checked before anything is asked of the network, a lookup included
            with self.scheduler.lock:
                self.left += host.drop_work()
            return
        if not host.guard_checked:
            host.guard_checked = True
            self._check_address(host)
            if not self._takes_address_turn(host):
                return  # another host of its address goes first; no request was made
        if self.config.obey_robots and host.robots is None and host.blocked_reason is None and host.unresolved is None:
            task = host.robots_task or Task(url=host.key + "/robots.txt")
            try:
                self._step_robots(host, task)
            except Exception as error:
                host.robots = RobotsPolicy.deny_all(self._unexpected(task, error), FailureKind.UNEXPECTED)
            return
        while (task := self._next_task(host)) is not None:
            try:
                if self._refused(host, task):
                    continue  # settled without a request: the host is still ours
                self._step_page(host, task)
            except Exception as error:
                self._finish(task.doc, NETWORK_ERROR, Failure(FailureKind.UNEXPECTED, self._unexpected(task, error)))
            return  # a request may have been made: the host's clock must run

    def _check_address(self, host: HostQueue) -> None:
        """Look the host up and judge its addresses, once for the layer: the
        address the guard passes is the one its connection will connect to."""
        check = self._checked_address(host.key)
        host.address, host.blocked_reason, host.unresolved = check.address, check.blocked_reason, check.unresolved

    def _takes_address_turn(self, host: HostQueue) -> bool:
        """Under `politeness: ip`, put a host that will be requested on the
        clock its address's hosts share: True if it may make its request
        now, False if it must wait its turn (politeness.py)."""
        if self.config.politeness != POLITENESS_BY_ADDRESS or host.address is None or host.blocked_reason is not None:
            return True
        return self.scheduler.share_clock(host, host.address)

    def _checked_address(self, key: str) -> AddressCheck:
        """What the lookup of host `key` (scheme://host:port) and the
        private-network guard made of it.  The resolver asks once a task."""
        name = host_of(key)
        try:
            addresses = connect_addresses(name, self.config, self.resolver)
        except DNSLookupError as error:
            # Through a proxy the proxy looks the name up itself, and may
            # well know names this machine cannot look up.
            return AddressCheck(unresolved=None if self.config.proxy else _error_text(error))
        if addresses is None:
            return AddressCheck()  # nothing to judge, and the proxy looks the name up itself
        check = AddressCheck(address=str(addresses[0]))
        if not self.config.allow_private_networks:
            check.blocked_reason = blocked_reason(name, addresses, self._allowed_networks)
        return check

    def _count(self, stat: str) -> None:
        with self._stats_lock:
            self.stats[stat] += 1

    def _count_lookup(self, seconds: float) -> None:
        with self._stats_lock:
            self.stats["dns_lookups"] += 1
            self.stats["dns_milliseconds"] += round(seconds * 1000)

    def _unexpected(self, task: Task, error: Exception) -> str:
        """Log a bug's traceback; one bad page must not end a month-long crawl."""
        log.exception("unexpected error fetching %s", task.url)
        self._count("unexpected_errors")
        return f"unexpected error: {type(error).__name__}: {error}"

    def _next_task(self, host: HostQueue) -> Task | None:
        if host.resumed:
            return host.resumed.popleft()
        with self.scheduler.lock:
            if not len(host.urls):
                return None
            url, entry = host.urls.pop()
        return Task(url=url, doc=new_doc(url, self.layer, entry, self.clock))

    def _refused(self, host: HostQueue, task: Task) -> bool:
        """Settle a URL that must not be requested; True if it was settled."""
        if host.blocked_reason is not None:
            self._finish(task.doc, BLOCKED, Failure(FailureKind.BLOCKED_PRIVATE, host.blocked_reason))
        elif not self.scope.allows(task.url):
            self._finish(task.doc, BLOCKED,
                         Failure(FailureKind.BLOCKED_SCOPE, f"{task.url} is outside url_allow/url_deny"))
        elif host.unresolved is not None:
            # The lookup's failure is kept for the layer: asking again
            # within it would only ask the DNS server the same question.
            self._finish(task.doc, NETWORK_ERROR, Failure(FailureKind.DNS, host.unresolved))
        elif self.config.obey_robots and not host.robots.allowed(task.url):
            robots = host.robots
            if robots.denial_reason is None:  # its rules forbid the URL
                failure = Failure(FailureKind.ROBOTS_DENIED, f"{task.url}: disallowed by robots.txt")
            else:  # it could not be read
                failure = Failure(robots.denial_kind, f"{task.url}: {robots.denial_reason}")
            self._finish(task.doc, ROBOTS_DENIED, failure)
        else:
            return False
        return True

    def _step_robots(self, host: HostQueue, task: Task) -> None:
        host.robots_task = None
        hop_address = None
        if host_key(task.url) != host.key:
            # robots.txt redirected to another host.  The hop is looked up
            # and judged as that host's own first request would be.
            check = self._checked_address(host_key(task.url))
            if check.unresolved is not None:  # as a connection failure would be: unreachable
                self._set_robots(host, RobotsPolicy.deny_all(f"robots.txt unreachable ({check.unresolved})",
                                                             FailureKind.DNS))
                return
            if check.blocked_reason is not None:  # never requested
                problem = f"redirect to {task.url}: {check.blocked_reason}"
                self._set_robots(host, self._robots_unavailable(host, problem))
                return
            hop_address = check.address
        # RFC 9309 asks that at least 500 KiB be parsed; reading more would
        # only cost memory and time (robots.py drops the cut-off line).
        exchange = self._request(host, task, limit=MAX_ROBOTS_BYTES, hop_address=hop_address)
        self._count("robots_requests")
        status = exchange.status
        if exchange.transient:
            if task.attempt < self.config.retries:
                host.robots_task = self._retry(host, task, exchange)
                return
            failure = Failure(status_kind(status), f"HTTP {status}") if status else exchange.failure
            policy = RobotsPolicy.deny_all(f"robots.txt unreachable ({failure.error})", failure.kind)
        elif status in REDIRECT_STATUSES:
            # RFC 9309 §2.3.1.2: five redirects are followed, to other hosts
            # too, and the rules found apply to this host.
            target, failure = _redirect_target(task, exchange)
            failure = failure or _hop_refusal(task, target)
            if failure is None:
                host.robots_task = task.next_hop(target)
                return
            policy = self._robots_unavailable(host, failure.error)
        elif 200 <= status < 300:
            policy = RobotsPolicy.from_response(status, exchange.body or b"", self.agent, exchange.truncated)
        else:
            policy = RobotsPolicy.allow_all()  # 4xx: no rules
        self._set_robots(host, policy)

    @staticmethod
    def _robots_unavailable(host: HostQueue, problem: str) -> RobotsPolicy:
        """A redirect that is not followed (a loop, a 6th, a target that is
        no http(s) URL or that the guard refuses) leaves robots.txt
        "unavailable", which RFC 9309 treats as a 4xx: no rules.  The server
        did answer, so nothing says it is overloaded, as a 5xx would."""
        log.warning("%s: robots.txt not followed (%s): everything is allowed", host.key, problem)
        return RobotsPolicy.allow_all()

    def _set_robots(self, host: HostQueue, policy: RobotsPolicy) -> None:
        host.robots = policy
        host.sitemaps_to_offer = policy.sitemaps
        crawl_delay = min(policy.crawl_delay or 0.0, self.config.max_crawl_delay)
        host.delay = max(self.config.delay, crawl_delay)
        host.hold_after(host.answered_at)  # the new delay counts from robots.txt's answer

    def _step_page(self, host: HostQueue, task: Task) -> None:
        doc = task.doc
        known = known_for_request(doc, task.url)
        exchange = self._request(host, task, known)
        doc.update(
            url=task.url,
            status=exchange.status,
            reason=exchange.reason,
            http_version=exchange.http_version,
            headers=exchange.headers,
            content_type=exchange.content_type,
            fetched_at=exchange.started_at,
            attempts=doc["attempts"] + 1,
            truncated=exchange.truncated,
            archive_body=encode_body(exchange.body) if exchange.body is not None else None,
        )
        if host.sitemaps_to_offer:
            # The Parser offers them to the next layer, as it offers a page's links.
            doc["robots_sitemaps"], host.sitemaps_to_offer = host.sitemaps_to_offer, []
        status = exchange.status
        if exchange.transient:
            if task.attempt < self.config.retries:
                host.resumed.appendleft(self._retry(host, task, exchange))
            elif status is None:
                self._finish(doc, NETWORK_ERROR, exchange.failure)
            else:
                self._finish(doc, HTTP_ERROR,
                             Failure(status_kind(status), f"HTTP {status} after {task.attempt + 1} attempts"))
        elif status in REDIRECT_STATUSES:
            self._follow(host, task, exchange)
        elif status == 304 and conditional_headers(known):
            # The page is as the crawl db's earlier fetch found it.  (A 304
            # to a request that asked nothing is a broken server's answer,
            # an HTTP error like any other unexpected status.)
            self._finish(doc, NOT_MODIFIED)
        elif 200 <= status < 300:
            self._settle_response(doc, exchange)
        else:
            self._finish(doc, HTTP_ERROR, Failure(status_kind(status), f"HTTP {status}"))

    def _follow(self, host: HostQueue, task: Task, exchange: Exchange) -> None:
        target, failure = _redirect_target(task, exchange)
        if failure is None and host_key(target) != host.key:
            task.doc["redirect_to"] = target
            self._finish(task.doc, REDIRECT)
            return
        failure = failure or _hop_refusal(task, target)
        if failure is not None:
            self._finish(task.doc, HTTP_ERROR, failure)
        else:
            hop = task.next_hop(target)
            if not self._refused(host, hop):
                host.resumed.appendleft(hop)

    def _settle_response(self, doc: dict, exchange: Exchange) -> None:
        body = exchange.body
        follow, index = header_directives(exchange.header_values("x-robots-tag"), self.agent)
        # A feed or sitemap is known by its first bytes, whatever its
        # Content-Type says (servers send them as text/html, text/plain,
        # application/octet-stream); it is read here, where it is whole.
        kind = sniff(body) if body else None
        if kind is not None:
            doc.update(meta_follow=follow, meta_index=index)  # (never indexed: pagexml.indexable)
            self._finish(doc, FETCHED, self._read_announcement(doc, kind, body))
            return
        # Only a declared HTML type counts: sniffing a missing Content-Type
        # would make what we index depend on guesswork.
        if exchange.content_type in HTML_TYPES and body is not None:
            # The page's own <meta name="robots"> is read by the Parser, which
            # parses the page once for everything read in it (page/outlinks.py).
            doc["encoding"] = detect_encoding(body, exchange.content_type_header)
            # The page's bytes move to `body`, the field parsers read.
            doc["body"], doc["archive_body"] = doc["archive_body"], None
            outcome = FETCHED
        else:
            outcome = NOT_HTML
        doc.update(meta_follow=follow, meta_index=index)
        self._finish(doc, outcome)

    @staticmethod
    def _read_announcement(doc: dict, kind: str, body: bytes) -> Failure | None:
        """Put the entries of a feed or sitemap in `doc`, its bytes in `body`;
        the failure of one that does not parse whole, or was cut at
        max_page_bytes (its entries before the fault are kept)."""
        announcement = read_announcement(body, doc["url"])
        doc.update(kind=kind, entries=[[entry.url, entry.published, entry.modified, entry.title, entry.language]
                                       for entry in announcement.entries])
        doc["body"], doc["archive_body"] = doc["archive_body"], None
        problem = announcement.error
        if doc["truncated"]:
            problem = f"cut at max_page_bytes ({len(body)} bytes)" + (f": {problem}" if problem else "")
        return None if problem is None else Failure(FailureKind.MALFORMED, f"{doc['url']}: {problem}")

    def _retry(self, host: HostQueue, task: Task, exchange: Exchange) -> Task:
        """Back the whole host off before the next attempt: it is struggling."""
        pause = min(BACKOFF_BASE * 2**task.attempt, self.config.max_crawl_delay)
        retry_after = exchange.header_values("retry-after")
        if retry_after and retry_after[0].strip().isdigit():
            pause = max(pause, min(float(retry_after[0]), self.config.max_crawl_delay))
        host.pause_until(time.monotonic() + max(pause, host.delay))
        self._count("retries")
        return task.retry()

    def _finish(self, doc: dict, outcome: str, failure: Failure | None = None) -> None:
        if doc["url"] != doc["requested_url"]:
            doc["redirect_from"] = doc["requested_url"]
        if outcome in (BLOCKED, ROBOTS_DENIED) and not doc["attempts"]:
            doc["fetched_at"] = self.clock.now_iso()
        if failure is None:
            doc.update(outcome=outcome, error=None, error_kind=None)
        else:
            doc.update(outcome=outcome, error=failure.error, error_kind=failure.kind.value)
        self.results.put(doc)

    # ---- one HTTP exchange -------------------------------------------------

    def _close_connection(self, host: HostQueue) -> None:
        if host.connection is not None:
            host.connection.close()
            host.connection = None

    def _answer_arrived(self, sock) -> None:
        """Called by the connection when an answer's first bytes are here."""
        self._thread_state.answered_at = time.monotonic()
        if whole_answer_arrived(sock):
            self._permit.acquire()
            self._thread_state.holds_permit = True

    def _answered_at(self) -> float:
        """When the answer to this thread's request arrived (now, if untimed)."""
        answered_at = self._thread_state.answered_at
        return time.monotonic() if answered_at is None else answered_at

    def _request(self, host: HostQueue, task: Task, known: dict | None = None, limit: int | None = None,
                 hop_address: str | None = None) -> Exchange:
        """Make one request for `task`, starting its host's politeness clock;
        conditional when `known` (known_for_request) holds validators.  The
        body is read up to `limit` bytes (by default max_page_bytes).

        A robots.txt redirect to another host is requested over a connection
        of its own to `hop_address`, closed after its one request: the
        host's kept-alive connection stays with its host."""
        if host_key(task.url) != host.key:
            connection = open_connection(self.config, task.url, on_answer=self._answer_arrived, address=hop_address)
            try:
                exchange, _ = self._exchange(host, connection, task, known, limit)
            finally:
                connection.close()
            return exchange
        if host.connection is None:
            host.connection = open_connection(self.config, task.url, on_answer=self._answer_arrived, address=host.address)
        exchange, reusable = self._exchange(host, host.connection, task, known, limit)
        if not reusable:
            self._close_connection(host)  # the connection's state is unknown, or unread bytes are on it
        return exchange

    def _exchange(self, host: HostQueue, connection: StrictPool, task: Task, known: dict | None,
                  limit: int | None) -> tuple[Exchange, bool]:
        """One request over `connection`: what it brought back, and whether
        the connection may carry the next request."""
        timeout = self.config.timeout
        exchange = Exchange(url=task.url, started_at=self.clock.now_iso())
        self._thread_state.answered_at = None
        try:
            response = connection.urlopen(
                "GET", request_target(task.url, self.config.proxy), headers=request_headers(self.config, task.url, known),
                redirect=False, retries=False, assert_same_host=False, preload_content=False,
                timeout=urllib3.Timeout(connect=timeout, read=timeout), time_limit=RESPONSE_TIME_LIMIT * timeout)
        except (Urllib3Error, OSError) as error:
            # No route, refused or timed out while connecting: the
            # request never left this machine, and is not counted as sent.
            self._count("unconnected" if isinstance(error, ConnectTimeoutError) else "requests")
            host.hold_after(self._answered_at())
            exchange.failure = Failure(exception_kind(error), _error_text(error))
            return exchange, False  # the connection's state is unknown
        self._count("requests")
        host.hold_after(self._answered_at())
        exchange.status = response.status
        exchange.reason = response.reason
        exchange.http_version = {10: "HTTP/1.0", 11: "HTTP/1.1"}.get(response.version, "HTTP/1.1")
        # iteritems keeps repeated headers apart, in the order sent.
        exchange.headers = [[key, value] for key, value in response.headers.iteritems()]
        exchange.content_type_header = response.headers.get("Content-Type")
        exchange.content_type = _media_type(exchange.content_type_header)
        # Every body is read (up to max_page_bytes): the archive keeps error
        # pages and non-HTML files too, and a fully read response leaves the
        # connection reusable.  Its reads keep to the response's time limit.
        try:
            self._read_body(exchange, response, limit or self.config.max_page_bytes)
        except (Urllib3Error, OSError) as error:
            exchange.status = None  # an incomplete response counts as no response
            exchange.failure = Failure(exception_kind(error), _error_text(error, " while reading the body"))
        if exchange.truncated or exchange.status is None:
            response.close()
            return exchange, False  # unread bytes would be taken for the next response
        response.release_conn()
        return exchange, True

    def _read_body(self, exchange: Exchange, response: urllib3.BaseHTTPResponse, limit: int) -> None:
        """Read the decoded body up to `limit` bytes."""
        chunks, size = [], 0
        for chunk in response.stream(CHUNK, decode_content=True):
            chunks.append(chunk)
            size += len(chunk)
            if size >= limit:
                exchange.truncated = size > limit or self._more_to_read(response)
                break
        body = b"".join(chunks)
        exchange.body = body[:limit]
        with self._stats_lock:
            self.stats["bytes"] += len(exchange.body)

    @staticmethod
    def _more_to_read(response: urllib3.BaseHTTPResponse) -> bool:
        try:
            return bool(response.read(1, decode_content=True))
        except Exception:
            return True
