"""Per-host queues and the scheduler that hands them to fetch threads.

This is Nutch's FetchItemQueues and Scrapy's downloader slots in one place:
every host (scheme + host + port) has one queue with its own politeness
clock; a thread may take a host only when no request to it is in flight and
its clock allows the next request to start.  Among the hosts that may go
now, the one with the most work left goes first, so the big hosts that bound
a layer's length start early instead of being left for a lonely tail.

Under `politeness: ip` (fetch/politeness.py) the hosts on one address share
one politeness clock: one request in flight among them, `delay` apart.  A
host whose shared clock is in use waits its turn on the clock, out of the
scheduler's heaps, so no thread spins on it; when the request in flight is
answered, the host that has waited longest goes next (round robin).

Memory stays flat however many URLs a reducer task is fed: each queue keeps a
short head in memory and spills the rest to a file on local disk (IRLbot's
lesson: the frontier belongs on disk, read and written sequentially).
"""
from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections import deque

from mrcrawl.store.protocols import Utf8JsonProtocol

SPILL_BATCH = 256  # URLs written or read per disk access


# A spill file holds store lines: the URL as key, its frontier entry (or null) as value.
_spill_lines = Utf8JsonProtocol()


class MemoryBudget:
    """How many URLs all the queues of one task may hold in memory together."""

    def __init__(self, limit: int):
        self.limit = limit
        self.used = 0


class SpillQueue:
    """A FIFO of URLs, each with its frontier entry or None: a head in
    memory, within a shared budget; the tail in a file."""

    def __init__(self, path: str, budget: MemoryBudget):
        self._path = path
        self._budget = budget
        self._head: deque[tuple[str, dict | None]] = deque()
        self._unwritten: list[tuple[str, dict | None]] = []  # tail items not yet appended to the file
        self._on_disk = 0  # tail lines in the file not yet read back
        self._read_offset = 0

    def __len__(self) -> int:
        return len(self._head) + self._on_disk + len(self._unwritten)

    @property
    def in_memory(self) -> int:
        return len(self._head) + len(self._unwritten)

    def push(self, url: str, entry: dict | None = None) -> None:
        # Once anything is on the tail, new URLs must go behind it to keep order.
        if self._budget.used < self._budget.limit and not self._on_disk and not self._unwritten:
            self._head.append((url, entry))
            self._budget.used += 1
            return
        self._unwritten.append((url, entry))
        if len(self._unwritten) >= SPILL_BATCH:
            self.flush()

    def flush(self) -> None:
        if not self._unwritten:
            return
        with open(self._path, "ab") as spill:
            spill.write(b"".join(_spill_lines.write(url, entry) + b"\n" for url, entry in self._unwritten))
        self._on_disk += len(self._unwritten)
        self._unwritten = []

    def clear(self) -> int:
        """Drop every URL, on disk too: how many there were."""
        count = len(self)
        self._budget.used -= len(self._head)
        self._head.clear()
        self._unwritten = []
        if self._on_disk or self._read_offset:
            os.remove(self._path)
        self._on_disk = self._read_offset = 0
        return count

    def pop(self) -> tuple[str, dict | None]:
        """The oldest URL and its entry."""
        if not self._head:
            self._refill()
        self._budget.used -= 1
        return self._head.popleft()

    def _refill(self) -> None:
        if not self._on_disk:
            # Nothing in the file: the unwritten tail is next in order.
            self._head.extend(self._unwritten)
            self._budget.used += len(self._unwritten)
            self._unwritten = []
            return
        with open(self._path, "rb") as spill:
            spill.seek(self._read_offset)
            for _ in range(min(SPILL_BATCH, self._on_disk)):
                self._head.append(_spill_lines.read(spill.readline().rstrip(b"\n")))
            self._read_offset = spill.tell()
        self._on_disk -= len(self._head)
        self._budget.used += len(self._head)
        if not self._on_disk and not self._unwritten:
            os.remove(self._path)
            self._read_offset = 0


class PolitenessClock:
    """When the next request of a politeness queue may start, and which host
    may make it: each host has one of its own, and under `politeness: ip`
    the hosts on one address share one (HostScheduler.share_clock).  Only
    the scheduler's lock guards it."""

    def __init__(self, delay: float, shared: bool = False):
        self.delay = delay  # gap between request starts: the largest delay of its hosts
        self.shared = shared
        self.next_start = 0.0  # monotonic time before which no request may start
        self.answered_at = 0.0  # monotonic time the last request was answered or failed
        self.holder: HostQueue | None = None  # the host whose thread may make the one request in flight
        self.listed: HostQueue | None = None  # the host in the scheduler's heaps for the clock's next request
        # Hosts with work waiting for the clock while it has a holder or a
        # listed host, longest waiting first.  A host's own clock never has any.
        self.turns: deque[HostQueue] = deque()

    def politeness_bound(self, remaining: int, in_flight: bool, now: float, deadline: float | None = None) -> float:
        """Seconds from `now` before which `remaining` URLs on this clock can
        be done: each waits its delay after the previous answer, and the
        layer holds a delay after the last one (Fetcher.finish).  With a
        `deadline` (the layer's time limit) no request starts after it, so
        the work is done by then plus the delay its last request holds."""
        # Until a request may start: the answer in flight starts the clock.
        wait = self.delay if in_flight else max(0.0, self.next_start - now)
        bound = wait + remaining * self.delay
        if deadline is not None and remaining:
            bound = min(bound, max(wait, deadline - now + self.delay))
        return bound


class HostQueue:
    """One host's work and politeness state (a Scrapy slot, a Nutch queue).

    Only the scheduler's lock guards these fields; a thread that has taken
    the host owns `robots`, `connection` and the current task until it gives the
    host back.  Its clock's fields (`delay`, `next_start`, `answered_at`)
    read as its own.
    """

    def __init__(self, key: str, urls: SpillQueue, delay: float):
        self.key = key
        self.urls = urls
        self.resumed: deque = deque()  # tasks to continue first: redirect hops, retries
        self.clock = PolitenessClock(delay)  # its own, until it shares its address's
        self.busy = False  # a thread holds the host (at most one request in flight)
        self.scheduled = False  # in the scheduler's ready or waiting heap
        self.fed = False  # the feeder has queued all of this layer's URLs for the host
        self.sitemaps_to_offer: list[str] = []  # robots.txt's Sitemap: URLs, until a doc of the host carries them
        self.robots = None  # RobotsPolicy once known for this layer
        self.robots_task = None  # the robots.txt fetch, while it is under way
        self.blocked_reason: str | None = None  # set when the address guard refused the host
        self.guard_checked = False
        self.address: str | None = None  # what the connection connects to: the address the guard checked
        self.unresolved: str | None = None  # set when the host's name could not be looked up
        self.connection = None  # kept-alive HTTP connection pool, opened on first request

    @property
    def delay(self) -> float:
        """max(config delay, capped Crawl-delay): gap between request starts;
        on a shared clock, the largest of its hosts'."""
        return self.clock.delay

    @delay.setter
    def delay(self, delay: float) -> None:
        self.clock.delay = max(self.clock.delay, delay) if self.clock.shared else delay

    @property
    def next_start(self) -> float:
        """Monotonic time before which no request may start."""
        return self.clock.next_start

    @next_start.setter
    def next_start(self, when: float) -> None:
        self.clock.next_start = when

    @property
    def answered_at(self) -> float:
        """Monotonic time the last request on the host's clock was answered or failed."""
        return self.clock.answered_at

    @answered_at.setter
    def answered_at(self, when: float) -> None:
        self.clock.answered_at = when

    def has_work(self) -> bool:
        return bool(self.resumed) or len(self.urls) > 0

    def remaining(self) -> int:
        return len(self.resumed) + len(self.urls)

    def politeness_bound(self, now: float, deadline: float | None = None) -> float:
        """Seconds from `now` before which this host's work of the layer
        cannot be done (PolitenessClock.politeness_bound)."""
        return self.clock.politeness_bound(self.remaining(), self.busy, now, deadline)

    def drop_work(self) -> int:
        """Forget the work left, the layer's time having run out: how many
        of the layer's URLs it held (a redirect hop or a retry is its URL's)."""
        dropped = self.urls.clear() + len(self.resumed)
        self.resumed.clear()
        self.robots_task = None
        return dropped

    def hold_after(self, answered_at: float) -> None:
        """Keep the host's next request `delay` after this one was answered.

        We time the gap from the answer (its first bytes, or the failure),
        not from when we began to send: the host has surely seen the request
        by then, so the gap between two request starts *as the host sees
        them* is at least `delay`, whatever a new connection's handshake or a
        busy scheduler did to the first one.
        """
        self.answered_at = answered_at
        self.next_start = max(self.next_start, answered_at + self.delay)

    def pause_until(self, when: float) -> None:
        """Back off the whole host (after a timeout, 429 or 5xx)."""
        self.next_start = max(self.next_start, when)


class HostScheduler:
    """Hands idle hosts whose clock allows a request to the fetch threads."""

    def __init__(self):
        self.lock = threading.Condition()
        self._ready: list = []  # (-remaining work, seq, host): may start now
        self._waiting: list = []  # (next_start, seq, host): clock not yet due
        self._seq = itertools.count()
        self._closed = False  # no more URLs will be fed
        self._busy = 0
        self._shared_clocks: dict[str, PolitenessClock] = {}  # by address

    def schedule(self, host: HostQueue) -> None:
        """Make an idle host with work available to a thread (lock held)."""
        if host.busy or host.scheduled or not host.has_work():
            return
        host.scheduled = True
        clock = host.clock
        if clock.holder is not None or clock.listed is not None:
            clock.turns.append(host)  # another host of its clock is in flight or next
            return
        clock.listed = host
        if host.next_start <= time.monotonic():
            heapq.heappush(self._ready, (-host.remaining(), next(self._seq), host))
        else:
            heapq.heappush(self._waiting, (host.next_start, next(self._seq), host))
        self.lock.notify()

    def take(self) -> HostQueue | None:
        """Block until a host may send its next request; None when all is done."""
        with self.lock:
            while True:
                now = time.monotonic()
                while self._waiting and self._waiting[0][0] <= now:
                    _, seq, host = heapq.heappop(self._waiting)
                    heapq.heappush(self._ready, (-host.remaining(), seq, host))
                if self._ready:
                    host = heapq.heappop(self._ready)[2]
                    host.scheduled = False
                    host.busy = True
                    host.clock.listed, host.clock.holder = None, host
                    self._busy += 1
                    return host
                if self._closed and not self._waiting and not self._busy:
                    self.lock.notify_all()
                    return None
                timeout = self._waiting[0][0] - now if self._waiting else None
                self.lock.wait(timeout)

    def give_back(self, host: HostQueue) -> None:
        with self.lock:
            host.busy = False
            self._busy -= 1
            clock = host.clock
            if clock.holder is host:
                clock.holder = None
                # The host that waited longest goes next; this one queues behind it.
                while clock.turns and clock.listed is None:
                    waiting = clock.turns.popleft()
                    waiting.scheduled = False
                    self.schedule(waiting)
            self.schedule(host)
            if not self._busy:
                self.lock.notify_all()

    def share_clock(self, host: HostQueue, address: str) -> bool:
        """Put a host a thread holds, which has made no request yet, on the
        clock its address's hosts share (`politeness: ip`).  True if it may
        make its request now; False if it must wait its turn: the thread
        gives it back without a request, and it waits on the clock."""
        with self.lock:
            clock = self._shared_clocks.get(address)
            if clock is None:
                clock = self._shared_clocks[address] = PolitenessClock(host.delay, shared=True)
            own_delay = host.delay
            host.clock = clock  # its own clock timed no request: nothing of it is kept
            host.delay = own_delay
            if clock.holder is None and clock.listed is None and clock.next_start <= time.monotonic():
                clock.holder = host
                return True
            return False

    def close(self) -> None:
        """The feeder is done: threads may stop once every queue is empty."""
        with self.lock:
            self._closed = True
            self.lock.notify_all()
