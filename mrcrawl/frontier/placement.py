"""Where a layer's URLs are fetched: queue -> slot -> reduce task.

A crawl spreads its fetching over reduce tasks in two tiers (Igloo's
two-tier hash):

1. A politeness queue (a host, or under `politeness: ip` the address its
   hosts share) lives in one of M logical slots: a stable hash of the
   queue's key, the same on every machine and Python.  M is fixed when the
   crawl db is made and kept in its db.json (`slots`), sized for the
   largest crawl planned.  The db's P partition files hold the slots by
   `slot % P` (P divides M), so a host's db records, its links and its
   queue stay in one slot whatever else changes.
2. Before each Crawler step a small job (jobs/placement.py) counts each
   slot's URLs, queues and biggest queue in the layer's frontier, and
   assigns the slots to the N reduce tasks (`--reducers`) longest expected
   time first, each to the task that is least loaded so far (Graham's LPT).
   The plan is a store of the step, so a resumed step uses the same plan,
   and changing `--reducers` between runs only changes which task a slot
   goes to: no record moves between slots.

A slot's expected time (FetchModel) has two parts.  Its politeness floor:
its biggest queue's URLs x the delay, which no number of threads shortens.
Its work: its URLs x the expected request time / the task's threads, the
share of a task's threads it takes.  A task's expected time is the larger
of its slots' biggest floor and its work summed.

The slot decides the reduce task exactly on the cluster runners: the
Crawler keys each URL by its task's key (reduce_task_key), an integer that
Spark's partitioner (Python's hash of an int is the int) and Hadoop's
KeyFieldBasedPartitioner (a 31-based hash of the key's text) both send to
that task.  mrjob's inline runner has one reduce task, and the local runner
here one per key (mr/onewave.py).
"""
from __future__ import annotations

import hashlib
import heapq
import json
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable

DEFAULT_SLOTS = 4096  # a multiple of every power-of-two db partition count up to it
# The request time a plan expects (seconds: connect, wait and read), for the
# work part of a slot's time.  A crawl's delay is usually above it, so the
# politeness floor decides most plans; at delay 0 only this part counts.
EXPECTED_REQUEST_SECONDS = 0.5


def stable_hash(key: str) -> int:
    """A hash of `key` that is the same on every machine and Python (unlike hash())."""
    return int.from_bytes(hashlib.blake2b(key.encode("utf-8"), digest_size=8).digest(), "big")


def slot_of(queue: str, slots: int) -> int:
    """The logical slot of a politeness queue's key (a host key, or an address)."""
    return stable_hash(queue) % slots


def slots_for(partitions: int) -> int:
    """The slots of a new crawl db of `partitions` partition files: DEFAULT_SLOTS
    when the partitions divide it, else the nearest multiple of them above it."""
    return -(-DEFAULT_SLOTS // partitions) * partitions


# ---- the key that sends a URL to its reduce task ---------------------------------


def hadoop_field_hash(text: bytes) -> int:
    """Hadoop's KeyFieldBasedPartitioner's hash of a key field: h = 31·h + b
    over the field's bytes (signed, as Java's), from 0, in 32 bits; the
    partition is then (h & Integer.MAX_VALUE) % reduce tasks."""
    hashed = 0
    for byte in text:
        hashed = (31 * hashed + (byte - 256 if byte > 127 else byte)) & 0xFFFFFFFF
    return hashed & 0x7FFFFFFF


def reduce_task_key(task: int, tasks: int) -> int:
    """The Crawler's key for reduce task `task` of `tasks`: the smallest
    integer k with k % tasks == task (Spark: partitionBy takes hash(k) % tasks,
    and hash(k) == k) whose decimal text Hadoop's KeyFieldBasedPartitioner
    also sends to `task` (mrjob partitions a SORT_VALUES job on the key's
    text, field 1).  About `tasks` integers are tried."""
    key = task
    while hadoop_field_hash(str(key).encode("ascii")) % tasks != task:
        key += tasks
    return key


# ---- what a slot is expected to cost ----------------------------------------------


@dataclass(frozen=True)
class FetchModel:
    """What a plan expects of a reduce task's fetching."""

    delay: float  # seconds between two requests to one queue
    threads: int  # fetch threads per task
    request_seconds: float = EXPECTED_REQUEST_SECONDS

    def floor(self, biggest_queue: int) -> float:
        """The seconds a queue of that many URLs takes however many threads a task has."""
        return biggest_queue * self.delay

    def work(self, urls: int) -> float:
        """The seconds of a task's threads that many URLs take."""
        return urls * self.request_seconds / self.threads


@dataclass(frozen=True)
class SlotLoad:
    """A slot's share of a layer's frontier."""

    slot: int
    urls: int
    queues: int
    biggest: int  # the URLs of its biggest queue

    def seconds(self, model: FetchModel) -> float:
        return max(model.floor(self.biggest), model.work(self.urls))


def slot_loads(queue_sizes: Iterable[tuple[int, int]]) -> list[SlotLoad]:
    """Each slot's load, from (slot, URLs of one queue) for every queue."""
    urls: dict[int, int] = {}
    queues: dict[int, int] = {}
    biggest: dict[int, int] = {}
    for slot, size in queue_sizes:
        urls[slot] = urls.get(slot, 0) + size
        queues[slot] = queues.get(slot, 0) + 1
        biggest[slot] = max(biggest.get(slot, 0), size)
    return [SlotLoad(slot, urls[slot], queues[slot], biggest[slot]) for slot in sorted(urls)]


# ---- the plan ----------------------------------------------------------------------


@dataclass
class Placement:
    """Which reduce task fetches each slot of a layer, and what each task is expected to do."""

    tasks: int
    slots: int
    task_of: dict[int, int] = field(default_factory=dict)  # slot -> task; a slot with no URL is in none
    expected_seconds: list[float] = field(default_factory=list)  # per task
    urls: list[int] = field(default_factory=list)  # per task
    queues: list[int] = field(default_factory=list)  # per task

    def task_of_slot(self, slot: int) -> int:
        """The task of a slot; one the plan did not see (no URL in the frontier it counted) goes by its number."""
        return self.task_of.get(slot, slot % self.tasks)

    def key_of_slot(self, slot: int) -> int:
        """The Crawler's key for the slot's URLs (reduce_task_key of its task)."""
        return self.task_keys[self.task_of_slot(slot)]

    def task_of_key(self, key: int) -> int:
        return key % self.tasks

    @cached_property
    def task_keys(self) -> list[int]:
        return [reduce_task_key(task, self.tasks) for task in range(self.tasks)]

    def to_json(self) -> dict:
        return {"tasks": self.tasks, "slots": self.slots,
                "task_of": {str(slot): task for slot, task in sorted(self.task_of.items())},
                "expected_seconds": [round(seconds, 3) for seconds in self.expected_seconds],
                "urls": self.urls, "queues": self.queues}

    @classmethod
    def from_json(cls, values: dict) -> "Placement":
        return cls(values["tasks"], values["slots"], {int(slot): task for slot, task in values["task_of"].items()},
                   list(values["expected_seconds"]), list(values["urls"]), list(values["queues"]))

    @classmethod
    def from_lines(cls, texts: Iterable[str]) -> "Placement | None":
        """The plan in the texts of the part files the placement job wrote (one
        line: its key, then the plan as JSON); None when it wrote none (a cap
        held back every URL of the layer)."""
        for text in texts:
            for line in text.splitlines():
                if line.strip():
                    return cls.from_json(json.loads(line.split("\t", 1)[1]))
        return None

    @classmethod
    def read(cls, paths: Iterable[str]) -> "Placement | None":
        """The plan in the part files at `paths` (a task's copies of them)."""
        def texts():
            for path in paths:
                with open(path, encoding="utf-8") as part:
                    yield part.read()
        return cls.from_lines(texts())


def assign(loads: Iterable[SlotLoad], tasks: int, slots: int, model: FetchModel) -> Placement:
    """Assign slots to `tasks` reduce tasks, longest expected time first, each
    to the task whose expected time is least so far; of tasks whose time is
    their politeness floor alike, the one with the least work (else the
    first would take every big queue until its work rose past the floor)."""
    placement = Placement(tasks, slots, expected_seconds=[0.0] * tasks, urls=[0] * tasks, queues=[0] * tasks)
    floors = [0.0] * tasks
    works = [0.0] * tasks
    least = [(0.0, 0.0, task) for task in range(tasks)]  # (expected seconds, work, task): a heap
    for load in sorted(loads, key=lambda load: (-load.seconds(model), load.slot)):
        _, _, task = heapq.heappop(least)
        placement.task_of[load.slot] = task
        floors[task] = max(floors[task], model.floor(load.biggest))
        works[task] += model.work(load.urls)
        placement.urls[task] += load.urls
        placement.queues[task] += load.queues
        placement.expected_seconds[task] = max(floors[task], works[task])
        heapq.heappush(least, (placement.expected_seconds[task], works[task], task))
    return placement
