"""Per-host queues: order and frontier entries kept across memory and disk, memory bounded,
scheduling fair to big hosts."""
import os
import threading
import time

from mrcrawl.fetch.hostqueue import SPILL_BATCH, HostQueue, HostScheduler, MemoryBudget, SpillQueue
from mrcrawl.store.records import new_frontier_entry


def frontier_entry(n: int) -> dict | None:
    """Every third URL has no entry (a bare `add(url)`); the others carry
    what the crawl db knew, with text a spill line must keep intact."""
    if n % 3 == 0:
        return None
    known = {"etag": f'W/"{n}\t\\x"', "last_modified": "Mon, 05 Jan 2026 06:00:00 GMT",
             "signature": "sig-é", "digest": None, "fetched_at": "2026-01-05T06:00:00.000Z"}
    return new_frontier_entry(n, seed=n % 2 == 0, hops=n, known=known if n % 3 == 1 else None)


def test_spill_queue_keeps_fifo_order_across_memory_and_disk(tmp_path):
    budget = MemoryBudget(limit=10)
    queue = SpillQueue(str(tmp_path / "q"), budget)
    items = [(f"http://h/{n}", frontier_entry(n)) for n in range(3 * SPILL_BATCH + 7)]
    for url, entry in items[:500]:
        queue.push(url, entry)
    popped = [queue.pop() for _ in range(300)]
    for url, entry in items[500:]:  # pushes interleaved with pops must still queue behind
        queue.push(url, entry)
    queue.flush()
    while len(queue):
        popped.append(queue.pop())
    assert popped == items  # the entries that went through the file came back whole
    assert budget.used == 0
    assert not os.path.exists(tmp_path / "q")  # the spill file goes once read


def test_memory_stays_within_budget_plus_one_batch(tmp_path):
    budget = MemoryBudget(limit=50)
    queues = [SpillQueue(str(tmp_path / str(n)), budget) for n in range(20)]
    for n in range(20_000):
        queues[n % 20].push(f"http://h{n % 20}/{n}")
    for queue in queues:
        queue.flush()
    assert budget.used <= 50
    assert sum(queue.in_memory for queue in queues) <= 50
    assert sum(len(queue) for queue in queues) == 20_000
    for queue in queues:
        queue.pop()
        assert queue.in_memory <= SPILL_BATCH + 50


def make_host(tmp_path, key, urls, budget):
    host = HostQueue(key, SpillQueue(str(tmp_path / key.replace("/", "_")), budget), delay=0.0)
    for url in urls:
        host.urls.push(url)
    return host


def test_scheduler_serves_the_host_with_most_work_first(tmp_path):
    budget = MemoryBudget(1000)
    scheduler = HostScheduler()
    small = make_host(tmp_path, "http://small", ["u"] * 2, budget)
    big = make_host(tmp_path, "http://big", ["u"] * 40, budget)
    with scheduler.lock:
        scheduler.schedule(small)
        scheduler.schedule(big)
    assert scheduler.take() is big
    assert scheduler.take() is small


def test_scheduler_never_hands_out_a_busy_host_and_respects_its_clock(tmp_path):
    budget = MemoryBudget(1000)
    scheduler = HostScheduler()
    host = make_host(tmp_path, "http://h", ["a", "b"], budget)
    with scheduler.lock:
        scheduler.schedule(host)
    taken = scheduler.take()
    assert taken is host and host.busy
    with scheduler.lock:
        scheduler.schedule(host)  # busy: must not be queued a second time
        host.urls.pop()
    host.delay = 0.3
    host.hold_after(time.monotonic())
    scheduler.give_back(host)
    started = time.monotonic()
    assert scheduler.take() is host
    assert time.monotonic() - started >= 0.25
    with scheduler.lock:
        host.urls.pop()
    scheduler.give_back(host)
    scheduler.close()
    assert scheduler.take() is None


def test_take_returns_none_for_every_thread_once_closed_and_idle(tmp_path):
    scheduler = HostScheduler()
    results = []
    threads = [threading.Thread(target=lambda: results.append(scheduler.take())) for _ in range(4)]
    for thread in threads:
        thread.start()
    time.sleep(0.05)
    scheduler.close()
    for thread in threads:
        thread.join(timeout=5)
    assert results == [None] * 4
