"""A crawl's plan, as data: which job runs on which stores, step by step.

A Step is a value: its name (a kind and a layer), its job class, its
inputs, its output and its options.  One function per phase builds the
steps: `run_start` (layer 0's frontier, from the seeds and the crawl db),
`layer_steps` (fetch a layer, parse it, merge what it found into the db,
and, but for the last layer, read the next layer's frontier out of the db)
and `run_end` (merge the layers' pages and turn them into XML).  The driver
runs them; the report, the progress display, the summaries and the tests
read the same steps.

Some inputs are known only when the step starts: the crawl db's files of
its current generation (DbFiles), and the part files of a store that an
earlier step of the same layer wrote (PartFiles).  They are resolved then
(pipeline.py); everything else is fixed when the plan is made.

    rank/I      Rank                db URL files          -> rank/I, or rank/last   (I: iteration; when scoring)
    rankupdate/I RankUpdate         every db file         -> the db's next generation   --batch-part <each part of rank/I>
    generate/0                      seeds + db            -> in/0
    place/L     Placement           in/L                  -> place/L   --slots <the db's> --reduce-tasks N
    crawl/L     Crawler             in/L                  -> doc/L     --placement-part <each part of place/L>
    parse/L     Parser              doc/L                 -> out/L
    dbbatch/L   DbBatch             in/L, doc/L, out/L    -> dbbatch/L
    dedup/L     Dedup               db digest files       -> dup/L
    dbupdate/L  DbUpdate            every db file         -> the db's next generation
    optimize/L  Optimizer           db URL files          -> in/L+1   (not on the last layer)
    merge/0-N   Merge               doc/0..N, out/0..N, dup/0..N -> doc/merged
    xml/0-N     HtmlToXml           doc/merged            -> xml/<run's start>

When the config caps a layer (max_urls_per_host, max_urls_per_layer:
frontier/caps.py; pld_budget: frontier/budgets.py), the Generator and the
Optimizer write the layer's candidates instead, and up to four steps, named
by the layer whose frontier they choose, hold them to the caps (choose_frontier):

    pldbudget/L PldBudget           cand/L, in/0..L-1     -> budget/L, or in/L without a cap
                                                             --pld-part <each part of the PLD in-degree store>
    hostcap/L   HostCap             budget/L or cand/L    -> hostcap/L, or in/L without a topN
    histogram/L LayerHistogram      the last one's store  -> hist/L
    layercap/L  LayerCap            the last one's store  -> in/L   --histogram-part <each part of hist/L>
"""
from __future__ import annotations

from dataclasses import dataclass

from jobs.crawler import MRCrawler
from jobs.db_batch import MRDbBatch
from jobs.db_update import MRDbUpdate
from jobs.dedup import MRDedup
from jobs.generator import MRGenerator
from jobs.host_cap import MRHostCap
from jobs.html_to_xml import MRHtmlToXml
from jobs.layer_cap import MRLayerCap
from jobs.layer_histogram import MRLayerHistogram
from jobs.merge import MRMerge
from jobs.optimizer import MROptimizer
from jobs.parser import MRParser
from jobs.placement import MRPlacement
from jobs.rank import MRRank
from jobs.rank_update import MRRankUpdate
from jobs.pld_budget import MRPldBudget
from mrcrawl.frontier.caps import FrontierCaps
from mrcrawl.store.crawl_state import StepName
from mrcrawl.store.crawl_store import CrawlStore

# The jobs of one layer, in the order they run (the Optimizer's on every layer but the last).
LAYER_JOBS = (MRPlacement, MRCrawler, MRParser, MRDbBatch, MRDedup, MRDbUpdate, MROptimizer)
# The jobs that hold a layer's candidates to the caps, when the config sets any, in the order they run.
CAP_JOBS = (MRPldBudget, MRHostCap, MRLayerHistogram, MRLayerCap)
# The jobs of a PageRank iteration, at a run's start, in the order they run.
SCORING_JOBS = (MRRank, MRRankUpdate)
# Every job a crawl runs, in the order they first run.
CRAWL_JOBS = (*SCORING_JOBS, MRGenerator, *CAP_JOBS, *LAYER_JOBS, MRMerge, MRHtmlToXml)
JOBS_BY_STEP = {job.STEP: job for job in CRAWL_JOBS}


@dataclass(frozen=True)
class DbFiles:
    """The crawl db's partition files of its current generation, read whole
    (a task each): its URL partitions, its digest partitions, or all of them, link partitions included."""

    which: str

    def __str__(self) -> str:
        return f"the crawl db's {self.which} files"


URL_FILES, DIGEST_FILES, ALL_FILES = DbFiles("URL"), DbFiles("digest"), DbFiles("URL, digest and link")


@dataclass(frozen=True)
class PartFiles:
    """`option PART` for each part file of a store, listed when the step starts:
    how a job is shipped a store it reads whole beside its input."""

    option: str
    store: object  # a store's directory (a Path, or a URI string)


@dataclass(frozen=True)
class IntoDb:
    """A step's output that is the crawl db's next generation, committed by the db itself."""

    def __str__(self) -> str:
        return "the crawl db's next generation"


INTO_DB = IntoDb()


@dataclass(frozen=True)
class DbSlots:
    """`--slots M`: the crawl db's logical slots (frontier/placement.py), read from the db when the step starts."""

    def __str__(self) -> str:
        return "--slots <the crawl db's>"


DB_SLOTS = DbSlots()


@dataclass(frozen=True)
class PlannedTasks:
    """The reduce tasks a layer's placement planned, read from its store when
    the Crawler's step starts: a resumed step runs as many as its plan,
    whatever --reducers the resumed run was given."""

    placement: object  # the placement store's directory

    def __str__(self) -> str:
        return "--jobconf mapreduce.job.reduces=<the placement's tasks>"


@dataclass(frozen=True)
class Step:
    name: StepName
    job: type  # the mrjob class
    inputs: tuple  # store directories, or DbFiles
    output: object  # a store directory, or INTO_DB
    options: tuple = ()  # words of the job's command line, and PartFiles

    @property
    def layer(self) -> int:
        return self.name.layer

    def describe(self, root=None) -> str:
        """One line: the step, its job, what it reads and what it writes
        (store paths relative to `root`, the crawl directory, when given)."""
        def shown(place) -> str:
            if isinstance(place, PartFiles):
                return f"{place.option} <each part of {shown(place.store)}>"
            if isinstance(place, PlannedTasks):
                return f"--jobconf mapreduce.job.reduces=<the tasks of {shown(place.placement)}>"
            text = str(place)
            if root is not None and text.startswith(f"{root}/"):
                return text[len(str(root)) + 1:]
            return text

        options = "".join(f" {shown(option)}" for option in self.options)
        inputs = ", ".join(shown(place) for place in self.inputs)
        return f"{str(self.name):<12} {self.job.__name__:<12} {inputs} -> {shown(self.output)}{options}"


def run_start(store: CrawlStore, caps: FrontierCaps = FrontierCaps(), scoring: int = 0,
              batch_sorted: bool = True) -> list[Step]:
    """The scores' `scoring` iterations (none: 0), then layer 0's frontier:
    the run's seeds (written by the driver when the crawl began), and the
    db's URLs due at the run's start, within the `caps`."""
    return scoring_steps(store, scoring, batch_sorted) + choose_frontier(store, 0, caps, lambda output: Step(
        StepName(MRGenerator.STEP, 0), MRGenerator, (URL_FILES,), output, (PartFiles("--seeds-part", store.seeds()),)))


def scoring_steps(store: CrawlStore, iterations: int, batch_sorted: bool) -> list[Step]:
    """PageRank's power iterations over the db's links, each named by its
    number (frontier/scores.py): what links give each URL, then every
    URL's new score written into the db; the last one also writes the PLD
    in-degree store (CrawlStore.pld_indegree)."""
    steps = []
    for iteration in range(iterations):
        last = iteration == iterations - 1
        ranks = store.rank(iteration, last)
        steps += [Step(StepName(MRRank.STEP, iteration), MRRank, (URL_FILES,), ranks,
                       ("--pld-indegree",) if last else ()),
                  Step(StepName(MRRankUpdate.STEP, iteration), MRRankUpdate, (ALL_FILES,), INTO_DB,
                       (PartFiles("--batch-part", ranks),) + (("--batch-sorted",) if batch_sorted else ()))]
    return steps


def choose_frontier(store: CrawlStore, layer: int, caps: FrontierCaps, writer) -> list[Step]:
    """The steps that write `layer`'s frontier: `writer(output)`, the
    Generator's or the Optimizer's step, alone when no cap is set; else its
    candidates, then the steps that hold them to the caps (frontier/caps.py)."""
    if not caps:
        return [writer(store.frontier(layer))]
    chosen = store.candidates(layer)
    steps = [writer(chosen)]

    def step(job, output, options=()):
        return Step(StepName(job.STEP, layer), job, (chosen,), output, tuple(options))

    if caps.pld_budget is not None:
        # The run's earlier frontiers say what each PLD has spent of its budget.
        earlier = tuple(store.frontier(before) for before in range(layer))
        output = store.budgeted(layer) if caps.per_host is not None or caps.per_layer is not None else store.frontier(layer)
        # The scoring step's PLD in-degree store: none on a run that scored nothing, every in-degree 0.
        steps.append(Step(StepName(MRPldBudget.STEP, layer), MRPldBudget, (chosen, *earlier), output,
                          (PartFiles("--pld-part", store.pld_indegree()),)))
        chosen = output
    if caps.per_host is not None:
        steps.append(step(MRHostCap, store.host_capped(layer) if caps.per_layer is not None else store.frontier(layer)))
        chosen = steps[-1].output
    if caps.per_layer is not None:
        steps += [step(MRLayerHistogram, store.histogram(layer)),
                  step(MRLayerCap, store.frontier(layer), [PartFiles("--histogram-part", store.histogram(layer))])]
    return steps


def layer_steps(store: CrawlStore, layer: int, last: bool, batch_sorted: bool,
                caps: FrontierCaps = FrontierCaps(), new_url_score: float | None = None,
                reduce_tasks: int = 1) -> list[Step]:
    """One layer: place its queues on `reduce_tasks` reduce tasks, fetch and
    parse it, merge what it found into the crawl db
    (sort the batch, find the duplicates among its pages, then merge both
    into each partition), and, unless it is the last, read the next layer's
    frontier out of the db, within the `caps`.  `batch_sorted`: the runner writes a reduce
    task's output sorted by key (launcher.RunnerSettings.sorts_reduce_output).
    `new_url_score`: the start score of a URL new to the db, from which
    DbUpdate gives the URLs first seen on the run provisional scores
    (scores.new_url_score); None: none."""
    frontier, docs, outlinks = store.frontier(layer), store.docs(layer), store.outlinks(layer)
    batch = (PartFiles("--batch-part", store.db_batch(layer)),) + (("--batch-sorted",) if batch_sorted else ())
    duplicates = (PartFiles("--duplicates-part", store.duplicates(layer)),)

    def step(job, inputs, output, options=()):
        return Step(StepName(job.STEP, layer), job, tuple(inputs), output, tuple(options))

    placement = store.placement(layer)
    steps = [
        # One reduce task: it sees every slot, and assigns them all at once.
        step(MRPlacement, [frontier], placement,
             (DB_SLOTS, "--reduce-tasks", str(reduce_tasks), "--jobconf", "mapreduce.job.reduces=1")),
        step(MRCrawler, [frontier], docs, (PartFiles("--placement-part", placement), PlannedTasks(placement))),
        step(MRParser, [docs], outlinks),
        step(MRDbBatch, [frontier, docs, outlinks], store.db_batch(layer)),
        step(MRDedup, [DIGEST_FILES], store.duplicates(layer), batch),
        step(MRDbUpdate, [ALL_FILES], INTO_DB, batch + duplicates
             + (() if new_url_score is None else ("--new-url-score", repr(new_url_score)))),
    ]
    if not last:
        steps += choose_frontier(store, layer + 1, caps, lambda output: step(MROptimizer, [URL_FILES], output))
    return steps


def run_end(store: CrawlStore, layers: int, started_at: str) -> list[Step]:
    """After the last layer: one doc record per final URL over the `layers`
    crawled (a page's with what the Parser read of it, from the out stores;
    the duplicate stores mark the pages that repeat another URL's, which
    get no XML), then the XML of the run's new and changed pages."""
    if layers == 0:
        return []
    last = layers - 1
    inputs = tuple(stores(layer) for stores in (store.docs, store.outlinks, store.duplicates) for layer in range(layers))
    return [Step(StepName(MRMerge.STEP, last, 0), MRMerge, inputs, store.merged()),
            Step(StepName(MRHtmlToXml.STEP, last, 0), MRHtmlToXml, (store.merged(),), store.xml(started_at))]


def whole_plan(store: CrawlStore, depth: int, started_at: str, batch_sorted: bool = True,
               caps: FrontierCaps = FrontierCaps(), scoring: int = 0, reduce_tasks: int = 1) -> list[Step]:
    """Every step of a crawl of `depth` layers whose frontiers never run dry."""
    steps = run_start(store, caps, scoring, batch_sorted)
    for layer in range(depth):
        steps += layer_steps(store, layer, last=layer == depth - 1, batch_sorted=batch_sorted, caps=caps,
                             reduce_tasks=reduce_tasks)
    return steps + run_end(store, depth, started_at)
