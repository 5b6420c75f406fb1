"""The partition scenario: how long a layer's fetching takes on N reduce tasks
under three ways of placing its URLs, simulated on a large synthetic frontier
with the real placement code (frontier/placement.py).

The frontier: 10M URLs on 1M hosts (`http://host{k}.example/page{j}`), the
host of rank k holding C·k^-1 URLs (Zipf, s = 1), at least 1 and at most
1,000 (max_urls_per_host), C chosen so the sizes sum to exactly 10M (the
reals are rounded by largest remainder).  Why s = 1 with a cap: host sizes
on the web are that skewed, and with nothing else the biggest host (~700k
URLs, 8 days at a 1 s delay) sets every placement's time, so a crawl of that
size caps a host's URLs per layer.  1,000 URLs (17 minutes at 1 s) is where
a crawl would put it: within the 651 to 10,417 s of thread work that a
reduce task has here (10M URLs at 0.5 s a request on 30 threads, over 256 to
16 tasks), so the cap binds a host without making it the whole layer; about
1,300 hosts reach it.

The placements, each for 16, 32, 64, 128 and 256 reduce tasks of 30 threads
at a 1 s delay:

- host hashing, what the crawl did before the two-tier plan: a host goes to
  task stable_hash(host) % tasks;
- two-tier + LPT (the crawl's plan): host -> slot_of(host, DEFAULT_SLOTS),
  the slots' loads (slot_loads) assigned to the tasks by assign();
- URL hashing (the hierarchical hashing paper's ideal): each URL to task
  stable_hash(url) % tasks, so a host's URLs are spread over every task and
  each task keeps its own queue for that host.  This breaks politeness (a
  host gets up to one request per task per delay): its time can go below the
  bound, which holds only for a polite crawl.

A task's time is FetchModel's: the larger of its biggest host share × the
delay (the politeness floor) and its URLs × the request time / its threads
(the threads' work).  The layer's time is its slowest task's.  The bound is
the larger of the biggest host × the delay and the whole frontier's work /
the tasks.  Every URL is hashed: URL hashing's counts are exact.  Its
biggest host share per task is counted only for the hosts whose whole size,
as a floor, passes the least loaded task's work: a smaller host's share on
any task is at most its size, so its floor cannot be that task's time.
"""
from __future__ import annotations

import bisect
from array import array
from collections import Counter
from dataclasses import dataclass

from mrcrawl.bench.scenarios import row
from mrcrawl.frontier.placement import (
    DEFAULT_SLOTS,
    EXPECTED_REQUEST_SECONDS,
    FetchModel,
    assign,
    slot_loads,
    slot_of,
    stable_hash,
)

HOST_HASHING = "host hashing"
TWO_TIER = "two-tier + LPT"
URL_HASHING = "URL hashing"
PLACEMENTS = (HOST_HASHING, TWO_TIER, URL_HASHING)
TARGET_RATIO = 1.1  # two-tier + LPT's layer time at most this times the bound, at every size


@dataclass(frozen=True)
class PartitionSizes:
    hosts: int
    urls: int
    zipf_exponent: float
    host_cap: int | None  # a layer's max_urls_per_host; None: no cap
    reducers: tuple
    threads: int = 30  # the config's default
    delay: float = 1.0  # the config's default
    request_seconds: float = EXPECTED_REQUEST_SECONDS


FULL_PARTITION = PartitionSizes(hosts=1_000_000, urls=10_000_000, zipf_exponent=1.0, host_cap=1_000,
                                reducers=(16, 32, 64, 128, 256))
# A tenth of the frontier and of the cap, so each task's work and the cap keep
# their proportions: about 5 seconds.
QUICK_PARTITION = PartitionSizes(hosts=100_000, urls=1_000_000, zipf_exponent=1.0, host_cap=100,
                                 reducers=(16, 32, 64, 128, 256))


def host_sizes(hosts: int, urls: int, exponent: float, cap: int | None) -> list[int]:
    """The URLs of each host by rank k (from 1): C·k^-exponent clamped to
    [1, cap], C such that they sum to `urls`, rounded by largest remainder
    (ties: the higher rank) so the counts sum to exactly `urls`."""
    if hosts < 1 or urls < hosts:
        raise ValueError(f"partition frontier: {urls} URLs cannot give each of {hosts} hosts one")
    if cap is not None and (cap < 1 or cap * hosts < urls):
        raise ValueError(f"partition frontier: a cap of {cap} URLs per host cannot hold {urls} URLs on {hosts} hosts")
    if exponent < 0:
        raise ValueError(f"partition frontier: the Zipf exponent must be >= 0, got {exponent}")
    ceiling = cap if cap is not None else urls
    weights = [rank ** -exponent for rank in range(1, hosts + 1)]  # decreasing
    rising = weights[::-1]
    prefix = [0.0]
    for weight in weights:
        prefix.append(prefix[-1] + weight)

    def at_least(threshold: float) -> int:  # how many weights are >= threshold: the first ranks
        return hosts - bisect.bisect_left(rising, threshold)

    def total(scale: float) -> float:
        capped, above_one = at_least(ceiling / scale), hosts - bisect.bisect_right(rising, 1 / scale)
        return capped * ceiling + scale * (prefix[above_one] - prefix[capped]) + (hosts - above_one)

    low, high = 1 / weights[0], ceiling / weights[-1]  # every host at 1; every host at the ceiling
    for _ in range(200):  # bisection to the float's precision
        middle = (low + high) / 2
        if middle in (low, high):
            break
        low, high = (middle, high) if total(middle) <= urls else (low, middle)
    shares = [min(ceiling, max(1.0, low * weight)) for weight in weights]
    counts = [int(share) for share in shares]
    by_remainder = sorted(range(hosts), key=lambda rank: (int(shares[rank]) - shares[rank], rank))
    for rank in by_remainder[: urls - sum(counts)]:
        counts[rank] += 1
    if sum(counts) != urls or max(counts) > ceiling:  # the bisection's low end keeps both; a guard
        raise RuntimeError(f"partition frontier: sizes sum to {sum(counts)}, max {max(counts)}")
    return counts


def host_name(rank: int) -> str:
    return f"http://host{rank}.example"


def url_hashes(sizes: list[int]) -> array:
    """stable_hash of every URL of the frontier, host after host."""
    return array("Q", (stable_hash(f"{host_name(rank)}/page{page}")
                       for rank, size in enumerate(sizes) for page in range(size)))


def layer_seconds(urls: list[int], biggest: list[int], model: FetchModel) -> float:
    """The slowest task's time, from each task's URLs and biggest host share."""
    return max(max(model.floor(share), model.work(count)) for count, share in zip(urls, biggest))


def host_placement_seconds(task_of_host: list[int], sizes: list[int], tasks: int, model: FetchModel) -> float:
    """The layer's time when each host's URLs all go to one task."""
    urls, biggest = [0] * tasks, [0] * tasks
    for task, size in zip(task_of_host, sizes):
        urls[task] += size
        if size > biggest[task]:
            biggest[task] = size
    return layer_seconds(urls, biggest, model)


def url_hashing_seconds(hashes: array, sizes: list[int], tasks: int, model: FetchModel) -> float:
    """The layer's time when each URL goes to the task of its own hash (see the module's docstring)."""
    counted = Counter(map(tasks.__rmod__, hashes))
    urls = [counted[task] for task in range(tasks)]
    least_work = model.work(min(urls))
    biggest = [0] * tasks
    start = 0
    for size in sizes:
        if model.floor(size) > least_work:
            for task, share in Counter(hashed % tasks for hashed in hashes[start:start + size]).items():
                biggest[task] = max(biggest[task], share)
        start += size
    return layer_seconds(urls, biggest, model)


def partition(sizes: PartitionSizes, say) -> list[dict]:
    model = FetchModel(delay=sizes.delay, threads=sizes.threads, request_seconds=sizes.request_seconds)
    counts = host_sizes(sizes.hosts, sizes.urls, sizes.zipf_exponent, sizes.host_cap)
    names = [host_name(rank) for rank in range(sizes.hosts)]
    host_hashes = [stable_hash(name) for name in names]
    slots = [slot_of(name, DEFAULT_SLOTS) for name in names]
    loads = slot_loads(zip(slots, counts))
    say(f"partition: {sizes.urls:,} URLs on {sizes.hosts:,} hosts (Zipf s={sizes.zipf_exponent:g}, cap "
        f"{sizes.host_cap}, biggest {counts[0]:,}), {len(loads)} of {DEFAULT_SLOTS} slots used; hashing every URL")
    hashes = url_hashes(counts)
    rows = []
    for tasks in sizes.reducers:
        plan = assign(loads, tasks, DEFAULT_SLOTS, model)
        seconds = {
            HOST_HASHING: host_placement_seconds([hashed % tasks for hashed in host_hashes], counts, tasks, model),
            TWO_TIER: host_placement_seconds([plan.task_of[slot] for slot in slots], counts, tasks, model),
            URL_HASHING: url_hashing_seconds(hashes, counts, tasks, model),
        }
        floor, work = model.floor(max(counts)), model.work(sizes.urls) / tasks
        bound = max(floor, work)
        placements = {name: {"layer_s": value, "ratio_to_bound": value / bound} for name, value in seconds.items()}
        rows.append(row(f"partition {tasks} reducers", "simulated", pages=sizes.urls, bound_s=bound,
                        ratio_to_bound=placements[TWO_TIER]["ratio_to_bound"], reducers=tasks, hosts=sizes.hosts,
                        urls=sizes.urls, zipf_exponent=sizes.zipf_exponent, host_cap=sizes.host_cap,
                        biggest_host=max(counts), threads=sizes.threads, politeness_delay_s=sizes.delay,
                        request_s=sizes.request_seconds, slots=DEFAULT_SLOTS, floor_s=floor, work_per_reducer_s=work,
                        planned_s=max(plan.expected_seconds), placements=placements))
        say(f"partition: {tasks} reducers: " + ", ".join(f"{name} {value:,.0f} s" for name, value in seconds.items()))
    return rows


def meets_target(measured: dict) -> bool:
    return measured["placements"][TWO_TIER]["ratio_to_bound"] <= TARGET_RATIO


def partition_notes(rows: list[dict]) -> list[str]:
    """One line per reducer count, then what the figures assume."""
    ours = [measured for measured in rows if measured["name"].startswith("partition ")]
    if not ours:
        return []
    lines = []
    for measured in ours:
        placements = measured["placements"]
        figures = ", ".join(f"{name} {placements[name]['layer_s']:,.0f} s "
                            f"({placements[name]['ratio_to_bound']:.2f}×)" for name in PLACEMENTS)
        lines.append(f"partition, {measured['reducers']} reducers: bound {measured['bound_s']:,.0f} s (floor "
                     f"{measured['floor_s']:,.0f} s, work {measured['work_per_reducer_s']:,.0f} s a reducer); {figures}")
    first = ours[0]
    lines.append(f"partition: simulated, not fetched: {first['urls']:,} URLs on {first['hosts']:,} Zipf hosts "
                 f"(s={first['zipf_exponent']:g}, capped at {first['host_cap']} URLs a host, as max_urls_per_host), "
                 f"{first['threads']} threads a reducer, delay {first['politeness_delay_s']:g} s, "
                 f"{first['request_s']:g} s a request; a reducer's time is max(its biggest host share × delay, "
                 f"its URLs × request time / threads). URL hashing breaks politeness (each reducer keeps its own "
                 f"queue for a host, so a host gets up to one request per reducer per delay): it may go below "
                 f"1.0× the bound, which holds only for a polite crawl.")
    return lines
