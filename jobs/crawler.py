"""Job 1, Crawler: fetch one layer's frontier.

Map: frontier entry -> (host key, [rank, order key, URL, entry]); the host
key is the partitioner, so all of a host's URLs reach one reducer call on
one machine and politeness can be kept there, in the order of their ranks,
and within a rank in the crawl's order when the layer is ordered.  Combine:
drop duplicate URLs.  Reduce: the threaded fetcher, fed host by host,
yields one doc record per URL.

The layer's time limit (`max_layer_seconds`) is counted in each reduce task
from its start.  That is the layer's time on every runner: the reduce runs
in one wave (one task inline, one per core on the local runner, and
--reducers no more than the cluster's reduce slots on Hadoop, EMR and
Spark), so its tasks start together, as soon as the short map of the
frontier's entries is done; and a task's own monotonic clock needs no clock
shared with the driver or another machine.  The URLs a task had not done
when its time ran out get no doc record, and are counted (URLS_LEFT).
"""
from collections import Counter

from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.frontier.generate import unique_adjacent
from mrcrawl.mr.job import CounterGroup, CrawlJob, JobCounter
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

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    SORT_VALUES = True  # a host's URLs arrive by rank, then order key, then URL, so duplicates are adjacent
    JOBCONF = {
        # A second attempt of a fetch task would hit the same hosts at once.
        "mapreduce.reduce.speculative": "false",
    }

    def mapper(self, url, entry):
        if entry.get("deferred"):  # held back from the layer by a cap: DbBatch records why
            self.count(self.URLS_DEFERRED)
            return
        self.count(self.URLS_IN)
        # Within a rank, in the crawl's order when the layer is ordered (caps.py): a time limit then leaves the last.
        yield host_key(url), [entry["rank"], entry.get("order") or "", url, entry]

    def combiner(self, host, ranked):
        yield from ((host, value) for value in unique_adjacent(ranked))

    def reducer_init(self):
        self.fetcher = Fetcher(self.config, self.layer, on_progress=self.report_progress, clock=self.clock,
                               time_limit=self.config.max_layer_seconds)

    def reducer(self, host, ranked):
        for _, _, url, entry in unique_adjacent(ranked):
            self.fetcher.add(url, entry)
            yield from self.emit(self.fetcher.completed())

    def reducer_final(self):
        yield from self.emit(self.fetcher.finish())
        for name, amount in self.fetcher.stats.items():
            self.increment_counter(self.FETCH.group, name, amount)
        if self.fetcher.left:
            self.count(self.URLS_LEFT, self.fetcher.left)

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
