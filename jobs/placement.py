"""Where layer L's URLs are fetched, Placement: a plan of one line, before the Crawler.

Map: frontier entry -> (its politeness queue's slot, [the queue, 1]); the
queue is the URL's host, or under `politeness: ip` its host's address.
Combine: the URLs of each queue of a slot.  Reduce, in one task (the plan
is step options, `mapreduce.job.reduces=1`): each slot's URLs, queues and
biggest queue; then the slots assigned to the layer's reduce tasks,
longest expected time first (mrcrawl/frontier/placement.py) ->
("placement", the plan).

The Crawler is shipped the plan and keys each URL by its slot's task; the
plan is a store of its own, so a resumed Crawler step fetches by the plan
its layer began with, whatever --reducers the resumed run is given.
"""
from collections import Counter

from mrcrawl.fetch.politeness import PolitenessKeys
from mrcrawl.frontier.placement import FetchModel, SlotLoad, assign, slot_loads, slot_of
from mrcrawl.mr.job import CrawlJob, JobCounter, TaskCounters
from mrcrawl.store.protocols import Utf8JsonProtocol

PLAN_KEY = "placement"


class MRPlacement(CrawlJob):
    STEP = "place"
    URLS = JobCounter(STEP, "urls")
    QUEUES = JobCounter(STEP, "queues")
    SLOTS = JobCounter(STEP, "slots")
    TASKS = JobCounter(STEP, "reduce tasks")
    EXPECTED_MS = JobCounter(STEP, "expected layer ms")  # the plan's slowest task
    PLANNED = TaskCounters("planned load")  # per task: urls, queues, expected ms
    SUMMARY = "{URLS} URLs of {QUEUES} queues in {SLOTS} slots on {TASKS} reduce tasks"

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    JOBCONF = {"mapreduce.job.counters.max": "10000"}  # three per reduce task

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--slots", type=int, required=True, help="the crawl's logical slots (its db.json says)")
        self.add_passthru_arg("--reduce-tasks", type=int, required=True, help="the reduce tasks the Crawler runs")

    def mapper_init(self):
        self.keys = PolitenessKeys(self.config)

    def mapper(self, url, entry):
        if not entry.get("deferred"):  # held back by a cap: the Crawler skips it too
            queue = self.keys.of(url)
            yield slot_of(queue, self.options.slots), [queue, 1]

    def combiner(self, slot, queued):
        for queue, urls in urls_per_queue(queued).items():
            yield slot, [queue, urls]

    def reducer_init(self):
        self.loads: list[SlotLoad] = []

    def reducer(self, slot, queued):
        self.loads += slot_loads((slot, urls) for urls in urls_per_queue(queued).values())
        return ()

    def reducer_final(self):
        if not self.loads:
            return
        model = FetchModel(delay=self.config.delay, threads=self.config.threads)
        placement = assign(self.loads, self.options.reduce_tasks, self.options.slots, model)
        self.count(self.URLS, sum(placement.urls))
        self.count(self.QUEUES, sum(placement.queues))
        self.count(self.SLOTS, len(self.loads))
        self.count(self.TASKS, placement.tasks)
        self.count(self.EXPECTED_MS, round(1000 * max(placement.expected_seconds)))
        for task in range(placement.tasks):
            self.count_for_task(self.PLANNED, task, "urls", placement.urls[task])
            self.count_for_task(self.PLANNED, task, "queues", placement.queues[task])
            self.count_for_task(self.PLANNED, task, "expected ms", round(1000 * placement.expected_seconds[task]))
        yield PLAN_KEY, placement.to_json()


def urls_per_queue(queued) -> Counter:
    """[queue, URLs] pairs summed by queue."""
    urls = Counter()
    for queue, count in queued:
        urls[queue] += count
    return urls


if __name__ == "__main__":
    MRPlacement.run()
