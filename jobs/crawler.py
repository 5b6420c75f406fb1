"""Job 1, Crawler: fetch one layer's frontier.

Map: frontier entry -> (its reduce task's key, [queue, host, rank, order
key, URL, entry]).  The queue is what politeness is kept by: the URL's
host, or under `politeness: ip` its host's address.  The layer's placement
(jobs/placement.py, shipped as --placement-part) says which reduce task
fetches the queue's slot, and the key sends it there exactly on every
runner (mrcrawl/frontier/placement.py), so all of a queue's URLs reach one
task, where politeness is kept, in the order of their ranks, and within a
rank in the crawl's order when the layer is ordered.  Combine: drop
duplicate URLs.  Reduce, one call per task: the threaded fetcher, fed
queue by queue and host by host, yields one doc record per URL.  Each task
counts its load (URLs, hosts, seconds busy) under its number, beside the
plan's expected load (the placement step's counters).

The layer's time limit (`max_layer_seconds`) is counted in each reduce task
from its start.  That is the layer's time on every runner: the reduce runs
in one wave (one task inline, the plan's tasks at once on the local runner,
and --reducers no more than the cluster's reduce slots on Hadoop, EMR and
Spark), so its tasks start together, as soon as the short map of the
frontier's entries is done; and a task's own monotonic clock needs no clock
shared with the driver or another machine.  The URLs a task had not done
when its time ran out get no doc record, and are counted (URLS_LEFT).
"""
import time
from collections import Counter

from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.fetch.politeness import PolitenessKeys
from mrcrawl.frontier.generate import unique_adjacent
from mrcrawl.frontier.placement import Placement, slot_of
from mrcrawl.mr.job import CounterGroup, CrawlJob, JobCounter, TaskCounters
from mrcrawl.page.urls import host_key
from mrcrawl.store.failures import error_label
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import FETCHED, NOT_MODIFIED, OUTCOMES

# How many kinds of error the step's summary names, most common first.
TOP_ERRORS = 3


# All of a task's hosts are fetched at once, so the reduce must not run in
# waves (see mrcrawl/mr/onewave.py).
class MRCrawler(CrawlJob):
    STEP = "crawl"
    URLS_IN = JobCounter(STEP, "urls in")
    URLS_DEFERRED = JobCounter(STEP, "urls deferred")  # frontier entries a cap held back
    URLS_LEFT = JobCounter(STEP, "urls left")  # URLs not done when the layer's time ran out (max_layer_seconds)
    OUTCOMES = CounterGroup("outcome")  # doc records by outcome
    ERRORS = CounterGroup("error")  # failed doc records by error kind (store/failures.py)
    FETCH = CounterGroup("fetch")  # the fetcher's own figures: requests, retries, bytes, ...
    TASK_LOAD = TaskCounters("task load")  # per reduce task: urls, hosts, busy ms

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    # A queue's URLs arrive together, host by host, by rank, then order key,
    # then URL, so duplicates are adjacent.
    SORT_VALUES = True
    JOBCONF = {
        # A second attempt of a fetch task would hit the same hosts at once.
        "mapreduce.reduce.speculative": "false",
        "mapreduce.job.counters.max": "10000",  # three per reduce task
    }

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--placement-part", action="append", default=[],
                          help="a part file of the layer's placement (jobs/placement.py; repeat for each)")

    def mapper_init(self):
        self.keys = PolitenessKeys(self.config)
        self.placement = Placement.read(self.options.placement_part)

    def mapper(self, url, entry):
        if entry.get("deferred"):  # held back from the layer by a cap: DbBatch records why
            self.count(self.URLS_DEFERRED)
            return
        self.count(self.URLS_IN)
        queue = self.keys.of(url)
        task_key = self.placement.key_of_slot(slot_of(queue, self.placement.slots))
        # Within a rank, in the crawl's order when the layer is ordered (caps.py): a time limit then leaves the last.
        yield task_key, [queue, host_key(url), entry["rank"], entry.get("order") or "", url, entry]

    def combiner(self, task_key, queued):
        yield from ((task_key, value) for value in unique_adjacent(queued))

    def reducer_init(self):
        self.started = time.monotonic()
        self.task = None  # the reduce task this is, from its key: Spark may give a task no key at all
        self.fetcher = Fetcher(self.config, self.layer, on_progress=self.report_progress, clock=self.clock,
                               time_limit=self.config.max_layer_seconds)

    def reducer(self, task_key, queued):
        if self.task is None:
            self.task = Placement.read(self.options.placement_part).task_of_key(task_key)
        urls, hosts, host = 0, 0, None
        for _, url_host, _, _, url, entry in unique_adjacent(queued):
            urls += 1
            if url_host != host:
                hosts, host = hosts + 1, url_host
            self.fetcher.add(url, entry)
            yield from self.emit(self.fetcher.completed())
        self.count_for_task(self.TASK_LOAD, self.task, "urls", urls)
        self.count_for_task(self.TASK_LOAD, self.task, "hosts", hosts)

    def reducer_final(self):
        yield from self.emit(self.fetcher.finish())
        for name, amount in self.fetcher.stats.items():
            self.increment_counter(self.FETCH.group, name, amount)
        if self.fetcher.left:
            self.count(self.URLS_LEFT, self.fetcher.left)
        if self.task is not None:
            self.count_for_task(self.TASK_LOAD, self.task, "busy ms", round(1000 * (time.monotonic() - self.started)))

    def emit(self, docs):
        for doc in docs:
            self.increment_counter(self.OUTCOMES.group, doc["outcome"])
            if doc["error_kind"]:
                self.increment_counter(self.ERRORS.group, doc["error_kind"])
            yield doc["url"], doc

    def report_progress(self, progress):
        # Hadoop kills a task that reports nothing for mapreduce.task.timeout.
        self.set_status(" ".join(f"{key}={value}" for key, value in progress.items()))

    # ---- what its counters say -------------------------------------------------

    @staticmethod
    def pages(outcomes: Counter) -> int:
        """Of URLs by outcome, the pages: fetched, or not modified since the
        db's last fetch.  A crawl that holds none achieved nothing."""
        return outcomes[FETCHED] + outcomes[NOT_MODIFIED]

    @classmethod
    def progress(cls, counters: dict) -> tuple[int | None, str]:
        outcomes = cls.OUTCOMES.of(counters)
        return sum(outcomes.values()), ", ".join(f"{name} {outcomes[name]}" for name in OUTCOMES if outcomes[name])

    @classmethod
    def summary(cls, counters: dict, seconds: float) -> str:
        _, outcomes = cls.progress(counters)
        fetch = cls.FETCH.of(counters)
        requests = f"{fetch['requests']} requests sent"
        if fetch["unconnected"]:
            requests += f", {fetch['unconnected']} could not connect"
        errors = cls.ERRORS.of(counters).most_common(TOP_ERRORS)
        pages_per_second = cls.OUTCOMES.of(counters)[FETCHED] / max(seconds, 1e-9)
        left = cls.URLS_LEFT.of(counters)
        return (f"{cls.URLS_IN.of(counters)} URLs in: {outcomes or 'nothing attempted'}"
                + (f"; {left} left when the layer's time ran out (max_layer_seconds)" if left else "")
                + f"; {requests}, {fetch['retries']} retries ({pages_per_second:.1f} pages/s)"
                + "".join(f"\n{'':26}{count} × {error_label(kind)}" for kind, count in errors))


if __name__ == "__main__":
    MRCrawler.run()
