"""What the crawl report shows, gathered from a crawl directory and its crawl db.

The doc stores are read one part file at a time and only aggregates are
kept: a few counters per host, fixed histogram bins, a few example URLs per
kind of error (store/failures.py), and the requests per second of the run's
wall time.  A host's URLs of one layer are all in one part file (the
Crawler's key is the host), so the gaps between its requests are measured
there and forgotten.  What waits in the crawl db (deferred and trapped URLs)
is counted per pay-level domain, one partition file at a time
(frontier/waiting.py); how the db's scores spread is counted per bucket,
with its TOP_SCORES URLs of the highest scores (frontier/score_spread.py).
Each layer's reduce tasks are read from two steps' counters: the load its
placement planned per task (place/L) and the load each Crawler task counted
(crawl/L); a crawl from before placement has neither.
"""
from __future__ import annotations

import json
from array import array
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from lxml import etree

from jobs.crawler import MRCrawler
from jobs.generator import MRGenerator
from jobs.html_to_xml import MRHtmlToXml
from jobs.placement import MRPlacement
from mrcrawl.frontier.crawldb import RUN_COUNTS, CrawlDb, NoCrawlDb
from mrcrawl.frontier.db_update import parse_time
from mrcrawl.frontier.score_spread import ScoreSpread, score_spread
from mrcrawl.frontier.waiting import WaitingTally, waiting_in
from mrcrawl.mr.job import JobCounter
from mrcrawl.page.urls import host_key
from mrcrawl.plan import LAYER_JOBS
from mrcrawl.store.cluster_store import is_cluster_path
from mrcrawl.store.crawl_reader import CrawlReader, NoCrawl, read_part
from mrcrawl.store.crawl_state import CrawlState, StepName
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import FETCHED, NOT_MODIFIED, error_kind, is_fetched_page

# The step kinds of one layer, in the order the driver runs them.
LAYER_STEPS = tuple(job.STEP for job in LAYER_JOBS)
# Main-text lengths (characters) are counted in these bins: the lower bounds.
TEXT_LENGTH_BINS = (0, 1, 100, 250, 500, 1000, 2000, 5000, 10000, 20000)
ERROR_EXAMPLES = 3  # example URLs kept per kind of error
TOP_SCORES = 20  # the URLs of the highest scores listed
# A fetch time is written to the millisecond, so a gap read from two of them
# may be up to 1 ms short of the real one: only a gap shorter by more is flagged.
TIME_RESOLUTION = 0.001


class ReportError(Exception):
    """What the report cannot be made from; the message says what is wrong."""


@dataclass
class HostFigures:
    urls: int = 0
    outcomes: Counter = field(default_factory=Counter)
    bytes: int = 0
    errors: int = 0
    smallest_gap: float | None = None  # seconds between two request starts in one layer; None: fewer than two


@dataclass
class ErrorFigures:
    """The URLs that failed with one kind of error."""

    count: int = 0
    examples: dict[str, str] = field(default_factory=dict)  # requested URL -> its error, the first few


@dataclass
class TaskLoad:
    """One reduce task of a layer's Crawler: its load as the layer's placement
    planned it and as the task counted it; None where the step counted nothing."""

    task: int
    planned_urls: int | None = None
    planned_queues: int | None = None
    expected_seconds: float | None = None
    urls: int | None = None
    hosts: int | None = None
    busy_seconds: float | None = None  # from the task's start to its end


@dataclass
class LayerFigures:
    layer: int
    outcomes: Counter
    seconds: dict[str, float]  # by step kind (LAYER_STEPS)
    expected_seconds: float | None = None  # the plan's slowest task; None: no plan was counted
    tasks: list[TaskLoad] = field(default_factory=list)  # by task; empty: neither step counted a task

    @property
    def crawler_seconds(self) -> float:
        return self.seconds[MRCrawler.STEP]  # a layer is in the report once its Crawler step finished

    @property
    def busy(self) -> list[float]:
        """The busy seconds of the tasks that counted theirs."""
        return [task.busy_seconds for task in self.tasks if task.busy_seconds is not None]

    @property
    def slowest_busy(self) -> float | None:
        return max(self.busy, default=None)

    @property
    def mean_busy(self) -> float | None:
        busy = self.busy
        return sum(busy) / len(busy) if busy else None

    @property
    def imbalance(self) -> float | None:
        """The slowest task's busy seconds over the mean task's: 1 when the tasks were equally busy."""
        mean = self.mean_busy
        return self.slowest_busy / mean if mean else None

    def idle_seconds(self, task: TaskLoad) -> float | None:
        """How long `task` sat done while the layer's slowest task went on: to
        the millisecond, as busy times are counted."""
        return None if task.busy_seconds is None else round(self.slowest_busy - task.busy_seconds, 3)


@dataclass
class DayTrend:
    day: str  # YYYY-MM-DD (UTC) of the runs' starts
    runs: int
    counts: dict[str, int]  # RUN_COUNTS


@dataclass(frozen=True)
class StepCount:
    """What one counter of a finished step says: `count`, or why there is
    no count (`missing`)."""

    count: int | None
    missing: str = ""


@dataclass
class CrawlFigures:
    directory: str
    name: str
    language: str
    run: str  # the run's start as the crawl's clock had it (--now)
    depth: int
    runners: list[str]
    seeds: int
    delay: float
    db: str | None
    steps: dict[str, float]  # every finished step's seconds, in the order run
    result: str
    complete: bool
    due_urls: StepCount  # the crawl db's URLs due at the run's start: layer 0's frontier besides the seeds
    xml_pages: StepCount  # the pages the run wrote as XML: those new or changed
    layers: list[LayerFigures] = field(default_factory=list)
    hosts: dict[str, HostFigures] = field(default_factory=dict)
    charsets: Counter = field(default_factory=Counter)
    content_types: Counter = field(default_factory=Counter)
    errors: dict[FailureKind, ErrorFigures] = field(default_factory=dict)
    text_lengths: list[int] = field(default_factory=lambda: [0] * len(TEXT_LENGTH_BINS))
    bytes: int = 0
    first_request: float | None = None  # epoch seconds
    last_request: float | None = None
    requests_per_second: Counter = field(default_factory=Counter)  # (epoch second, "fetched"|"other") -> URLs
    trend: list[DayTrend] | None = None
    trend_note: str = ""
    waiting: WaitingTally | None = None  # what waits in the crawl db, per pay-level domain; None: not read
    waiting_note: str = ""  # why it was not read
    scores: ScoreSpread | None = None  # how the crawl db's scores spread; None: not read
    scores_note: str = ""  # why they were not read

    @property
    def outcomes(self) -> Counter:
        total = Counter()
        for layer in self.layers:
            total.update(layer.outcomes)
        return total

    @property
    def fetched(self) -> int:
        return self.outcomes[FETCHED] + self.outcomes[NOT_MODIFIED]

    @property
    def attempted(self) -> int:
        return sum(self.outcomes.values())

    @property
    def step_seconds(self) -> float:
        return sum(self.steps.values())


def gather(directory: str | Path, db: str | None = None) -> CrawlFigures:
    """The figures of the crawl in `directory`; the trend from `db`, else
    from the crawl db crawl.json names.  Raises ReportError."""
    if is_cluster_path(str(directory)):
        raise ReportError(f"{directory}: the report reads local disk; copy the crawl directory down first")
    if not Path(directory).is_dir():
        raise ReportError(f"{directory}: no such directory")
    try:
        reader = CrawlReader(directory, require_layers=False)
    except NoCrawl as error:
        raise ReportError(str(error)) from None
    except (OSError, ValueError) as error:
        raise ReportError(f"{directory}: crawl.json or config.json unreadable ({error})") from None
    state, config = reader.state, reader.config
    done = state.done
    figures = CrawlFigures(
        directory=str(reader.store.root), name=config.name, language=config.language, run=state.run,
        depth=state.depth or 0, runners=list(state.runners), seeds=state.seeds_count,
        delay=config.delay, db=db or state.db, steps={str(name): step.seconds for name, step in done.items()},
        result="", complete=any(name.kind == MRHtmlToXml.STEP for name in done),
        due_urls=step_count(state, MRGenerator.STEP, MRGenerator.DUE_URLS),
        xml_pages=step_count(state, MRHtmlToXml.STEP, MRHtmlToXml.PAGES),
    )
    for layer in (layer for layer in reader.layers if StepName(MRCrawler.STEP, layer) in done):
        steps = [StepName(kind, layer) for kind in LAYER_STEPS]
        seconds = {name.kind: done[name].seconds for name in steps if name in done}
        expected, tasks = _task_loads(done, layer)
        figures.layers.append(LayerFigures(layer, _read_layer(reader, layer, figures), seconds, expected, tasks))
    if figures.complete:
        _read_text_lengths(reader.store, state.started_at, figures)
    figures.result = _result(figures, done)
    _read_trend(figures, explicit_db=db is not None)
    _read_waiting(figures)
    _read_scores(figures)
    return figures


def step_count(state: CrawlState, kind: str, counter: JobCounter) -> StepCount:
    """`counter` of the run's last finished step of `kind` (a deeper resume
    runs Merge and HtmlToXml again, and the last one's output stands)."""
    finished = state.finished(kind)
    if not finished:
        return StepCount(None, f"none yet: the run has not finished its {kind} step")
    if not finished[-1].counters:
        return StepCount(None, f"not counted: the runner of the {kind} step reported no counters")
    return StepCount(counter.of(finished[-1].counters))


# What a Crawler task that was given no URL counts: nothing, for its reducer
# never learns which task it is; it fetched nothing, and sat idle all along.
NO_URL_LOAD = {"urls": 0, "hosts": 0, "busy ms": 0}


def _task_loads(done: dict, layer: int) -> tuple[float | None, list[TaskLoad]]:
    """The layer's expected seconds and its tasks' loads, from its place and crawl steps' counters."""
    place = done.get(StepName(MRPlacement.STEP, layer))
    planned = MRPlacement.PLANNED.of(place.counters) if place else {}
    counted = MRCrawler.TASK_LOAD.of(done[StepName(MRCrawler.STEP, layer)].counters)
    tasks = []
    for task in sorted(planned.keys() | counted.keys()):
        plan = planned.get(task, {})
        load = counted.get(task, NO_URL_LOAD) if counted else {}
        tasks.append(TaskLoad(task, plan.get("urls"), plan.get("queues"), _seconds(plan.get("expected ms")),
                              load.get("urls"), load.get("hosts"), _seconds(load.get("busy ms"))))
    expected = MRPlacement.EXPECTED_MS.of(place.counters) / 1000 if planned else None
    return expected, tasks


def _seconds(milliseconds: int | None) -> float | None:
    return None if milliseconds is None else milliseconds / 1000


def _read_layer(reader: CrawlReader, layer: int, figures: CrawlFigures) -> Counter:
    """Count the layer's doc records into `figures`; return the layer's outcomes."""
    outcomes = Counter()
    for part in reader.doc_parts(layer):
        request_times: dict[str, array] = {}
        for _, doc in read_part(part):
            outcomes[doc["outcome"]] += 1
            _count_doc(doc, figures, request_times)
        for host, times in request_times.items():
            _note_gap(figures.hosts[host], sorted(times))
    return outcomes


def _count_doc(doc: dict, figures: CrawlFigures, request_times: dict[str, array]) -> None:
    origin = host_key(doc["url"])
    host = figures.hosts.setdefault(origin, HostFigures())
    host.urls += 1
    host.outcomes[doc["outcome"]] += 1
    size = _base64_length(doc.get("body") or doc.get("archive_body"))
    host.bytes += size
    figures.bytes += size
    kind = error_kind(doc)
    if kind:
        host.errors += 1
        error = figures.errors.setdefault(kind, ErrorFigures())
        error.count += 1
        if len(error.examples) < ERROR_EXAMPLES:
            error.examples[doc["requested_url"]] = doc["error"]
    if doc.get("status") not in (None, 304):  # an answer with a body: a 304 has neither body nor type
        figures.content_types[doc.get("content_type") or "(none)"] += 1
    if is_fetched_page(doc):  # a page's: a feed's or sitemap's is its XML's
        figures.charsets[doc.get("encoding") or "(unknown)"] += 1
    if doc.get("attempts"):  # a request was sent: fetched_at is when the last one started
        moment = parse_time(doc["fetched_at"]).timestamp()
        request_times.setdefault(origin, array("d")).append(moment)
        figures.first_request = moment if figures.first_request is None else min(figures.first_request, moment)
        figures.last_request = moment if figures.last_request is None else max(figures.last_request, moment)
        kind = "fetched" if doc["outcome"] in (FETCHED, NOT_MODIFIED) else "other"
        figures.requests_per_second[int(moment), kind] += 1


def _note_gap(host: HostFigures, times: list[float]) -> None:
    for before, after in zip(times, times[1:]):
        gap = after - before
        if host.smallest_gap is None or gap < host.smallest_gap:
            host.smallest_gap = gap


def below_delay(gap: float | None, delay: float) -> bool:
    """Whether a gap between two request starts to one host is shorter than the crawl's delay."""
    return gap is not None and gap < delay - TIME_RESOLUTION


def _base64_length(text: str | None) -> int:
    """The number of bytes a canonical base64 text decodes to, without decoding it."""
    if not text:
        return 0
    return len(text) * 3 // 4 - text.endswith("=") - text.endswith("==")


def _read_text_lengths(store: CrawlStore, started_at: str, figures: CrawlFigures) -> None:
    """Main-text lengths from the run's XML: its new and changed pages (the <content> element)."""
    for part in store.parts(store.xml(started_at)):
        with open(part, "rb") as lines:
            for line in lines:
                document = line.rstrip(b"\r\n").partition(b"\t")[2]
                if not document:
                    continue
                content = etree.fromstring(document).find("content")
                length = len(content.text or "") if content is not None else 0
                figures.text_lengths[text_length_bin(length)] += 1


def text_length_bin(length: int) -> int:
    """The index in TEXT_LENGTH_BINS of the bin that counts `length`."""
    return max(index for index, low in enumerate(TEXT_LENGTH_BINS) if length >= low)


def _result(figures: CrawlFigures, done: dict) -> str:
    if not done:
        return "no step finished"
    if not figures.complete:
        last = str(list(done)[-1])
        return f"stopped after {last}: a step failed or the run was interrupted; run the crawl again with --resume"
    if not figures.fetched:
        return "no page fetched (the driver exits with status 3)"
    return "complete"


def _read_trend(figures: CrawlFigures, explicit_db: bool) -> None:
    """Per day, the counts db.json keeps of each run (frontier/crawldb.py's RUN_COUNTS)."""
    if not figures.db:
        figures.trend_note = "crawl.json names no crawl db"
        return
    if is_cluster_path(figures.db):
        figures.trend_note = f"the crawl db {figures.db} is on a cluster: copy it down and pass --db"
        return
    try:
        runs = CrawlDb(CrawlStore(figures.db)).meta().get("runs") or {}
    except (NoCrawlDb, OSError, json.JSONDecodeError) as error:
        if explicit_db:
            raise ReportError(f"--db {figures.db}: {error}") from None
        figures.trend_note = f"the crawl db is not readable: {error}"
        return
    days: dict[str, DayTrend] = {}
    for run in sorted(runs):
        day = days.setdefault(run[:10], DayTrend(run[:10], 0, dict.fromkeys(RUN_COUNTS, 0)))
        day.runs += 1
        for name in RUN_COUNTS:
            day.counts[name] += int(runs[run].get(name, 0))
    figures.trend = list(days.values())
    if not runs:
        figures.trend_note = "the crawl db has recorded no run yet"


def _read_waiting(figures: CrawlFigures) -> None:
    """What waits in the crawl db: its URLs deferred and trapped, per pay-level domain."""
    if not figures.db or is_cluster_path(figures.db):
        figures.waiting_note = figures.trend_note  # why the trend was not read either
        return
    try:
        figures.waiting = waiting_in(figures.db)
    except (NoCrawlDb, OSError) as error:
        figures.waiting_note = f"the crawl db is not readable: {error}"


def _read_scores(figures: CrawlFigures) -> None:
    """How the crawl db's scores spread, and its URLs of the highest scores."""
    if figures.waiting is None:
        figures.scores_note = figures.waiting_note  # the db was not read for what waits either, and why
        return
    try:
        figures.scores = score_spread(figures.db, TOP_SCORES)
    except (NoCrawlDb, OSError) as error:
        figures.scores_note = f"the crawl db is not readable: {error}"
