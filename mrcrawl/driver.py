"""The crawl driver: `python -m mrcrawl.driver SEEDS --depth N --conf CONF [--db DB] [--now TIME]`.

It loops over layers as the thesis's Crawler does, with a crawl db that
remembers every URL across runs (frontier/crawldb.py):
- layer 0's frontier is generated from the seeds and the db's due URLs;
- each layer is crawled and parsed, and what it found is merged into the
  db (DbBatch, then DbMerge, which also runs the cycle filter);
- the next layer's frontier is what the cycle filter queued (Optimizer).
After the last layer it merges the layers' pages and turns the new and
changed ones into XML.  Every step is one mrjob job run by the chosen
runner; the driver itself only moves directories and keeps the record of
what is done, so `--resume` can pick up after the last finished step.
"""
from __future__ import annotations

import argparse
import contextlib
import errno
import fcntl
import json
import logging
import os
import shlex
import shutil
import signal
import sys
import tempfile
import threading
import time
import zipfile
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

from mrjob.job import MRJob
from mrjob.parse import is_uri

from jobs.crawler import MRCrawler
from jobs.db_batch import MRDbBatch
from jobs.db_merge import MRDbMerge
from jobs.duplicates import MRDuplicates
from jobs.generator import MRGenerator
from jobs.html_to_xml import MRHtmlToXml
from jobs.merge import MRMerge
from jobs.optimizer import MROptimizer
from jobs.parser import MRParser

from mrcrawl.cli import invocation
from mrcrawl.config import ConfigError, CrawlConfig, load_config, redacted_proxy
from mrcrawl.export import EXPORT_KINDS, run_exports
from mrcrawl.export import describe as describe_export
from mrcrawl.frontier.crawldb import CREATE_LEFTOVERS, DB_META, CrawlDb, NoCrawlDb
from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.mr.dbconf import DbJobOptions
from mrcrawl.mr.jobconf import CrawlJobOptions
from mrcrawl.mr.progress import task_reports
from mrcrawl.page.urls import UrlFilter, normalize_url
from mrcrawl.progress import DEFAULT_EVERY, StepWatch, progress_stream
from mrcrawl.report import write_report
from mrcrawl.store.cluster_store import ClusterCrawlStore, is_cluster_path
from mrcrawl.store.crawl_store import CRAWL_STATE, STARTUP_LEFTOVERS, STATE_FORMAT, CrawlStore, pause_point
from mrcrawl.store.records import FETCHED, NOT_MODIFIED, OUTCOMES, iso_utc

RUNNERS = ("inline", "local", "spark", "hadoop", "emr")
# Runners whose tasks import the package from a zip (local tasks are forked
# from this process, which has imported it: see mrcrawl/mr/onewave.py).
SHIPPING_RUNNERS = ("spark", "hadoop", "emr")
# mrjob's runners that work on local disk only, reading inputs as globs.
LOCAL_DISK_RUNNERS = ("inline", "local")
# How many kinds of error a crawl step's summary names, most common first.
TOP_ERRORS = 3

log = logging.getLogger("mrcrawl.driver")  # by name: run as `python -m`, __name__ is __main__


EXIT_OK = 0
EXIT_STEP_FAILED = 1  # a job failed: the steps before it are kept, --resume goes on
EXIT_USAGE = 2  # a bad argument, config, seed file or crawl directory: nothing written
EXIT_NOTHING_FETCHED = 3  # the crawl ran, but no page was fetched: see the line printed
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it): --resume goes on


# Set by Ctrl-C, which the driver checks after every step and at a failed one.
INTERRUPTED = threading.Event()
# How long after a Ctrl-C lost in a finalizer it is sent again, from another thread.
RESEND_SECONDS = 0.05


@contextlib.contextmanager
def interrupts_remembered():
    """Within this block, Ctrl-C sets INTERRUPTED as well as raising KeyboardInterrupt.

    Python raises KeyboardInterrupt wherever the main thread is.  Inside a
    weakref callback, a __del__ or an at-fork hook it cannot propagate:
    Python prints it as "Exception ignored" and drops it.  Here such an
    interrupt is not printed but sent again, to be raised where it can be.
    """
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may handle signals
        return
    inside = threading.Event()

    def interrupt(signum, frame):
        INTERRUPTED.set()
        raise KeyboardInterrupt

    def send_again():
        if inside.is_set():
            os.kill(os.getpid(), signal.SIGINT)

    def send_again_later():
        # Sent from this hook, the signal's handler would run before the
        # hook returns and raise inside it, which Python prints too.
        resend = threading.Timer(RESEND_SECONDS, send_again)
        resend.daemon = True
        resend.start()

    def raise_again(unraisable):
        if not isinstance(unraisable.exc_value, KeyboardInterrupt):
            previous_hook(unraisable)
            return
        try:
            send_again_later()
        except KeyboardInterrupt:  # another Ctrl-C, inside this hook
            send_again_later()

    INTERRUPTED.clear()
    previous_handler = signal.signal(signal.SIGINT, interrupt)
    previous_hook, sys.unraisablehook = sys.unraisablehook, raise_again
    inside.set()
    try:
        yield
    finally:
        inside.clear()
        signal.signal(signal.SIGINT, previous_handler)
        sys.unraisablehook = previous_hook


class UsageError(Exception):
    """A bad command line, config or seed file: exit 2, nothing written."""


class StepFailed(Exception):
    """A job failed; the steps before it are stored, and --resume goes on from it."""


def disk_full(error: BaseException | None) -> bool:
    """Whether a disk (or a quota) ran out of space, here or in what this error
    was raised while handling (mrjob raises its own error while cleaning up)."""
    while error is not None:
        if isinstance(error, OSError) and error.errno in (errno.ENOSPC, errno.EDQUOT):
            return True
        error = error.__cause__ or error.__context__
    return False


def failure_lines(error: BaseException, root, resume_hint: str, what: str = "") -> list[str]:
    """What a run that failed says on stderr: `what` failed (by default the
    error itself), then what is kept and how to go on."""
    what = what or (str(error) if isinstance(error, StepFailed) else f"{type(error).__name__}: {error}")
    if disk_full(error):
        return [f"mrcrawl: {what} (the disk is full)",
                f"mrcrawl: the finished steps are kept in {root}; free some space, then run: {resume_hint}"]
    return [f"mrcrawl: {what}", f"mrcrawl: the finished steps are kept in {root}; fix the cause, then run: {resume_hint}"]


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="mrcrawl crawl",
        description="Crawl a set of sites layer by layer with five MapReduce jobs.",
    )
    parser.add_argument("seeds", metavar="SEEDS",
                        help="seed file: one URL per line; blank lines and # comments are ignored")
    parser.add_argument("--depth", type=int, required=True, metavar="N",
                        help="number of layers (layer 0 is the seeds); required")
    parser.add_argument("--conf", required=True, metavar="CONF", help="YAML crawl config; required")
    parser.add_argument("--output", metavar="DIR", help="crawl directory (default: crawl/<config name>)")
    parser.add_argument("--db", metavar="DB",
                        help="crawl db shared by the runs of these sites, made if missing (default: DIR/db)")
    parser.add_argument("--now", type=_utc_time, metavar="ISO8601",
                        help="behave as if the run started at this UTC time (default: now)")
    parser.add_argument("--runner", default="inline", choices=RUNNERS, help="mrjob runner (default: inline)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the crawl in DIR after its last finished step (default: start a new crawl)")
    parser.add_argument("--spark-master", metavar="URL",
                        help="Spark master for --runner spark (default: the --mrjob-conf's spark_master, else local[*])")
    parser.add_argument("--export", default="", metavar="KINDS",
                        help=f"after the crawl, also write: {' or '.join(EXPORT_KINDS)}, or both comma-separated "
                             "(default: none)")
    parser.add_argument("--mrjob-conf", metavar="FILE",
                        help="mrjob.conf for the runner: clusters, EMR; examples in jobs/conf/ (default: none)")
    parser.add_argument(
        "--reducers", type=int, metavar="N",
        help="reduce tasks per job where the runner honours it (spark, hadoop, emr); inline and local ignore it "
             "(default: the runner's)",
    )
    parser.add_argument(
        "--progress-every", type=float, default=DEFAULT_EVERY, metavar="SECONDS",
        help=f"when stderr is no terminal, a progress line every SECONDS while a step runs "
             f"(default: {DEFAULT_EVERY:g}); on a terminal a bar redraws instead; 0 or -q: no progress shown",
    )
    add_verbosity_options(parser)
    return parser


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.progress_every < 0:
        parser.error(f"--progress-every: must be 0 or more seconds, got {args.progress_every:g}")
    if args.verbosity < 0:  # -q: warnings and errors only, so no progress either
        args.progress_every = 0
    if args.depth < 1:
        parser.error(f"--depth: must be at least 1, got {args.depth}")
    if args.reducers is not None and args.reducers < 1:
        parser.error(f"--reducers: must be at least 1, got {args.reducers}")
    args.export = [kind.strip() for kind in args.export.split(",") if kind.strip()]
    for kind in args.export:
        if kind not in EXPORT_KINDS:
            parser.error(f"--export {kind}: unknown; choose from {', '.join(EXPORT_KINDS)}")
    if args.export and args.output and is_cluster_path(args.output):
        parser.error(f"--export: exports read local disk; copy {args.output} down and run {invocation('export')}")
    if args.runner in LOCAL_DISK_RUNNERS and args.output and is_cluster_path(args.output):
        parser.error(f"--output {args.output}: the {args.runner} runner works on local disk; use hadoop or emr")
    if args.db and is_cluster_path(args.db) != bool(args.output and is_cluster_path(args.output)):
        parser.error(f"--db {args.db}: must be on the filesystem of --output (local disk, or the cluster's)")
    return args


def _utc_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r} (e.g. 2026-01-05T06:00:00Z)") from None
    return moment.replace(tzinfo=moment.tzinfo or timezone.utc)


def read_seeds(path: str, scope: UrlFilter) -> tuple[list[str], list[str]]:
    """The canonical seeds of a seed file, and a message for each line skipped."""
    try:
        with open(path, encoding="utf-8") as seed_file:
            lines = seed_file.read().splitlines()
    except OSError as error:
        raise ConfigError(path, "file", f"cannot read the seed file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "file", "the seed file is not UTF-8 text") from None
    seeds, skipped, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        url = normalize_url(text)
        if url is None:
            skipped.append(f"{path}:{number}: skipped {text!r}: not an absolute http(s) URL")
        elif not scope.allows(url):
            skipped.append(f"{path}:{number}: skipped {url}: outside url_allow/url_deny")
        elif url not in seen:
            seen.add(url)
            seeds.append(url)
    if not seeds:
        raise ConfigError(path, "seeds", f"no usable seed URL ({len(skipped)} line(s) skipped)")
    return seeds, skipped


def package_root() -> str:
    """The directory that holds the mrcrawl package."""
    return str(Path(__file__).resolve().parent.parent)


def package_zip(directory: str) -> str:
    """Zip the mrcrawl package so that tasks on any runner can import it."""
    package = Path(__file__).resolve().parent
    archive = os.path.join(directory, "mrcrawl.zip")
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        for path in sorted(package.rglob("*.py")):
            zipped.write(path, path.relative_to(package.parent).as_posix())
    return archive


class Crawl:
    """One crawl directory being worked on by one run of the driver."""

    def __init__(self, store: CrawlStore, state: dict, config: CrawlConfig, args: argparse.Namespace, say=None):
        self.store = store
        self.db = crawl_db(state["db"])
        self.state = state
        self.config = config
        self.runner = args.runner
        self.reducers = args.reducers
        self.say = say or log.info  # what the run tells the operator, step by step
        self.ran: list[str] = []  # the steps this run has done, in order
        self._scratch = contextlib.ExitStack()  # this run's temporary files, removed by close()
        self.progress_every = args.progress_every
        self._progress_stream = self._scratch.enter_context(progress_stream()) if args.progress_every else None
        self._runner_args = ["-r", self.runner]
        conf_args = ["--conf-path", args.mrjob_conf] if args.mrjob_conf else []
        self._runner_args += conf_args
        spark_master = args.spark_master or (None if args.mrjob_conf else "local[*]")
        on_this_machine = self.runner == "local" or (self.runner == "spark" and (spark_master or "").startswith("local"))
        if self.runner == "local":
            self._runner_args += local_task_args()
        elif self.runner in SHIPPING_RUNNERS:
            # Tasks run in other processes (or machines) and import the
            # package from this zip, not from wherever the driver found it.
            scratch = self._scratch.enter_context(tempfile.TemporaryDirectory(prefix="mrcrawl-run-"))
            self._runner_args += ["--py-files", package_zip(scratch)]
        if on_this_machine and self.runner != "local":
            self._runner_args += ["--python-bin", sys.executable]
        if self.runner == "spark":
            if spark_master:
                self._runner_args += ["--spark-master", spark_master]
            if on_this_machine:
                # Spark otherwise binds its driver to the host's first
                # non-loopback address; a local master needs no network.
                os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")

    # ---- the loop ----------------------------------------------------------

    def run(self, depth: int) -> Counter:
        """Crawl to `depth` layers, or to the depth the crawl already has if
        that is more; return the outcome totals of the whole crawl."""
        started = time.monotonic()
        kept = self.state.get("depth", 0)
        if depth < kept:
            # A crawl never gets shallower: a smaller depth would merge fewer
            # layers over what the deeper crawl stored.
            self.say(f"the crawl already has depth {kept}; --depth {depth} keeps it at {kept}")
            depth = kept
        self.state["depth"] = depth
        self.state["runners"] = list(dict.fromkeys([*self.state.get("runners", []), self.runner]))  # for the report
        self.store.save_state(self.state)
        self.generate()
        layers = 0
        for layer in range(depth):
            if not self.store.has_records(self.store.frontier(layer)):
                self.say(f"layer {layer}: frontier is empty, stopping")
                break
            self.crawl_layer(layer, last=layer == depth - 1)
            layers = layer + 1
        self.merge_and_convert(layers)
        totals = self._outcome_totals()
        self.say(self._summary(time.monotonic() - started, layers, totals))
        return totals

    def _summary(self, seconds: float, layers: int, totals: Counter) -> str:
        crawl_steps = [name for name in self.ran if name.startswith("crawl/")]
        outcomes_now = Counter()
        for name in crawl_steps:
            outcomes_now.update(self.state["done"][name]["counters"].get("outcome", {}))
        fetched_now = outcomes_now[FETCHED]
        now = (
            f"this run fetched {fetched_now} pages ({fetched_now / max(seconds, 1e-9):.1f} pages/s), "
            f"{outcomes_now[NOT_MODIFIED]} not modified"
            if crawl_steps else "nothing was left to fetch"
        )
        return (
            f"done in {seconds:.1f} s: {now}; the run holds {totals[FETCHED]} fetched pages "
            f"of {sum(totals.values())} URLs attempted over {layers} layer(s); crawl db: {self.db.root}"
        )

    def close(self) -> None:
        """Remove this run's scratch files, however the run ended."""
        self._scratch.close()

    def crawl_layer(self, layer: int, last: bool) -> None:
        self.say(f"layer {layer}: {self._frontier_size(layer)} URLs")
        self.fetch(layer)
        self.parse(layer)
        self.update_db(layer)
        if not last:
            self.optimize(layer)

    def generate(self) -> None:
        """Layer 0's frontier: the seeds, and the db's URLs due at the run's start."""
        seeds = ["--seeds-part", str(self.store.part_file(self.store.seeds()))]  # written by open_crawl
        self.step("generate/0", MRGenerator, self.db.partition_files(), self.store.frontier(0), 0, seeds)

    def fetch(self, layer: int) -> None:
        self.step(f"crawl/{layer}", MRCrawler, [self.store.frontier(layer)], self.store.docs(layer), layer)

    def parse(self, layer: int) -> None:
        self.step(f"parse/{layer}", MRParser, [self.store.docs(layer)], self.store.outlinks(layer), layer)

    def update_db(self, layer: int) -> None:
        """Merge what the layer found into the db: sort the batch, find the
        duplicates among its pages, then merge both into each partition."""
        store = self.store
        layer_stores = [store.frontier(layer), store.docs(layer), store.outlinks(layer)]
        self.step(f"dbbatch/{layer}", MRDbBatch, layer_stores, store.db_batch(layer), layer)
        batch = self._part_args("--batch-part", store.db_batch(layer))
        if self.runner != "spark":  # Spark's shuffle leaves a reduce task's keys unsorted
            batch.append("--batch-sorted")
        self.step(f"dedup/{layer}", MRDuplicates, self.db.digest_files(), store.duplicates(layer), layer, batch)
        duplicates = self._part_args("--duplicates-part", store.duplicates(layer))
        self.step(f"dbupdate/{layer}", MRDbMerge, self.db.files(), self.db, layer, batch + duplicates)

    def _part_args(self, option: str, directory) -> list[str]:
        """`option PART` for each part file of a store: how a job is shipped a store it reads whole."""
        return [arg for part in self.store.parts(directory) for arg in (option, str(part))]

    def optimize(self, layer: int) -> None:
        self.step(f"optimize/{layer}", MROptimizer, self.db.partition_files(), self.store.frontier(layer + 1), layer)

    def merge_and_convert(self, layers: int) -> None:
        if layers == 0:
            return
        store = self.store
        merged_layers = "0" if layers == 1 else f"0-{layers - 1}"
        # The duplicate stores mark the pages that repeat another URL's (no XML for those).
        inputs = [store.docs(n) for n in range(layers)] + [store.duplicates(n) for n in range(layers)]
        self.step(f"merge/{merged_layers}", MRMerge, inputs, store.merged(), layers - 1)
        xml = store.xml(self.state["started_at"])
        self.step(f"xml/{merged_layers}", MRHtmlToXml, [store.merged()], xml, layers - 1)
        self.say(f"pages: {store.merged()}  xml: {xml}")

    # ---- one job -----------------------------------------------------------

    def step(self, name: str, job_class, inputs: list, output, layer: int, options: list[str] = ()) -> None:
        """Run one job into `output`, a store of the crawl directory or the
        crawl db (whose next generation it then writes), unless it is done."""
        done = self.state["done"]
        if name in done:
            self.say(f"  {name:<12} already done")
            return
        into_db = output is self.db
        if into_db and self.db.meta()["applied"] == self._db_update_name(name):
            # The run that died committed this update to the db, and died
            # before crawl.json said so: it must not be applied twice.
            self._done(name, 0.0, {})
            return
        if not reads_whole_files(job_class):  # those are given the db's files, each one a task
            inputs = [directory for directory in inputs if self.store.parts(directory)]
        written = self.db.next_dir() if into_db else self.store.begin_output(name, output)
        started = time.monotonic()
        pause_point(f"start {name}")
        if inputs:
            try:
                counters = self._run_job(name, job_class, inputs, written, layer, options)
            except Exception as error:
                if INTERRUPTED.is_set():
                    # Ctrl-C broke the step, wherever it landed: inside a task,
                    # or inside argparse while the job was being made (whose
                    # clean-up then raises an AttributeError of its own).
                    raise KeyboardInterrupt from error
                # A failed step's half output goes: on a full disk, it holds the space needed.
                (self.db.store if into_db else self.store).remove(written)
                if not disk_full(error):  # the cause is plain; a traceback would hide it
                    log.exception("mrcrawl: step %s failed, with this traceback:", name)
                raise StepFailed(f"{name} failed: {type(error).__name__}: {error}") from error
        else:
            self.store.write_text(self.store.part_file(written), "")
            counters = {}
        pause_point(f"written {name}")
        try:
            if into_db:
                self.db.commit(self._db_update_name(name), self.state["run"], (counters or {}).get("dbupdate"))
            else:
                self.store.commit(written, output)
            pause_point(f"committed {name}")
            self._done(name, round(time.monotonic() - started, 3), counters)
        except OSError as error:  # crawl.json does not name the step: --resume runs it again
            raise StepFailed(f"{name} failed storing its output: {type(error).__name__}: {error}") from error

    def _db_update_name(self, step: str) -> str:
        """How db.json names the update a step of this run commits."""
        return f"{self.state['run']} {step}"

    def _done(self, name: str, seconds: float, counters: dict | None) -> None:
        """Record a finished step; `counters` is None when the runner reported none."""
        done = self.state["done"]
        done[name] = {"seconds": seconds, "counters": counters or {}}
        self.ran.append(name)
        self.store.save_state(self.state)
        self.store.write_json(self.store.stats_path, done)
        told = describe(name, counters, seconds) if counters is not None else "done (a Spark step reports no counters)"
        self.say(f"  {name:<12} {seconds:7.1f} s  {told}")
        if INTERRUPTED.is_set():
            raise KeyboardInterrupt  # a Ctrl-C that could not be raised where it came (see interrupts_remembered)

    def job_args(self, job_class, inputs: list, output, layer: int, options: list[str] = ()) -> list[str]:
        """The command line of one job of this crawl, for this runner.
        `inputs` are stores (directories), or for a job that reads whole
        files (reads_whole_files), the files."""
        whole_files = reads_whole_files(job_class)
        args = [*self._runner_args, "--output-dir", str(output), *options]
        if whole_files and self.runner == "spark":
            # mrjob's Spark runner has no input manifests, and reads no counters of a Spark step (mr/wholefile.py).
            args += ["--spark-whole-files", "--spark-counters", self._spark_counters_path()]
        if issubclass(job_class, CrawlJobOptions):
            args += ["--crawl-config", str(self.store.config_path), "--layer", str(layer)]
        if issubclass(job_class, DbJobOptions):
            args += ["--db-partitions", str(self.db.partitions), "--run", self.state["run"]]
        if self.reducers and job_class.reducer is not MRJob.reducer:
            args += ["--jobconf", f"mapreduce.job.reduces={self.reducers}"]
        if whole_files:
            # The db's jobs read whole partition files, a task each, and are
            # given them by name: a task takes its partition from the name.
            args += [str(part) for part in inputs]
        elif self.runner in LOCAL_DISK_RUNNERS:
            # These runners, given a directory, read every file in it
            # (.crc and _SUCCESS too): name the part files.
            args += [f"{directory}/part-*" for directory in inputs]
        else:
            # Spark and Hadoop read directories and skip their marker files,
            # and Spark cannot expand a local glob.
            args += [str(directory) for directory in inputs]
        return args

    def _run_job(self, name: str, job_class, inputs: list, output, layer: int, options: list[str]) -> dict:
        job = job_class(args=self.job_args(job_class, inputs, output, layer, options))
        with job.make_runner() as runner, contextlib.ExitStack() as made_here:
            if job.options.runner == "spark" and not is_uri(runner._spark_tmp_dir):
                # mrjob 0.7.4 writes counters there on a local master
                # without creating it first, and leaves it behind: one
                # directory per job in the temp directory, every day.
                os.makedirs(runner._spark_tmp_dir, exist_ok=True)
                made_here.callback(shutil.rmtree, runner._spark_tmp_dir, ignore_errors=True)
            with self._progress_shown(name, runner):
                runner.run()
            if getattr(job.options, "spark_whole_files", False):
                return spark_step_counters(job.options.spark_counters)
            return merge_counters(runner.counters())

    def _progress_shown(self, name: str, runner):
        """Show the step's progress on stderr while its job runs (mrcrawl/progress.py)."""
        if not self.progress_every:
            return contextlib.nullcontext()
        total = self._frontier_count(int(name.split("/")[1])) if name.startswith("crawl/") else None
        watching = contextlib.ExitStack()
        read = watching.enter_context(task_reports(runner))
        watching.enter_context(StepWatch(name, total, read, self._progress_stream, self.progress_every))
        return watching

    def _spark_counters_path(self) -> str:
        """Where a job run as a Spark step writes its counters (mr/wholefile.py): a file of this run's scratch."""
        scratch = self._scratch.enter_context(tempfile.TemporaryDirectory(prefix="mrcrawl-counters-"))
        return os.path.join(scratch, "counters.json")

    def _frontier_size(self, layer: int):
        if layer == 0:
            generated = self._frontier_counters(0)
            if generated is None:
                return "the seeds and the due"  # a step without counters (Spark)
            return f"{generated.get('seeds', 0)} seeds + {generated.get('due urls', 0)} due"
        count = self._frontier_count(layer)
        return "?" if count is None else count

    def _frontier_counters(self, layer: int) -> dict | None:
        """The counters of the step that wrote layer L's frontier (None: it reported none)."""
        step, group = ("generate/0", "generate") if layer == 0 else (f"optimize/{layer - 1}", "optimize")
        return self.state["done"].get(step, {}).get("counters", {}).get(group)

    def _frontier_count(self, layer: int) -> int | None:
        """How many URLs layer L's frontier holds, if its step's counters say."""
        counters = self._frontier_counters(layer)
        if counters is None:
            return None
        return sum(counters.get(name, 0) for name in (("seeds", "due urls") if layer == 0 else ("new urls",)))

    def _outcome_totals(self) -> Counter:
        return crawl_counters(self.state["done"], "outcome")


def spark_step_counters(path: str) -> dict | None:
    """The counters a job run as a Spark step wrote, or None when there are none
    here (Spark's cluster deploy mode runs the step's driver on another machine)."""
    try:
        with open(path, encoding="utf-8") as written:
            return json.load(written)
    except FileNotFoundError:
        return None


def crawl_counters(done: dict, group: str) -> Counter:
    """One counter group summed over every finished crawl step."""
    totals = Counter()
    for name, step in done.items():
        if name.startswith("crawl/"):
            totals.update(step["counters"].get(group, {}))
    return totals


# What to tell the operator when most URLs failed one way.
_ADVICE = {
    "blocked: non-public address": "set allow_private_networks: true in {conf} to crawl hosts on loopback or private networks",
    "DNSLookupError": "host names do not resolve: is this machine online, and is its DNS (or dns_server in {conf}) working?",
    # Through a proxy, the proxy's own name is looked up by the HTTP client.
    "NameResolutionError": "the proxy's name does not resolve: is this machine online, and is its DNS working?",
    "ProxyError (Connection refused)": "nothing listens at the address of the proxy in {conf}",
    "Connection refused": "nothing listens at the seeds' addresses",
    "blocked: outside url_allow/url_deny": "the seeds' redirects lead outside url_allow/url_deny in {conf}",
}


def why_nothing_was_fetched(done: dict, conf: str) -> str:
    """One line naming the main cause of a crawl that fetched no page."""
    outcomes = crawl_counters(done, "outcome")
    attempted = sum(outcomes.values())
    if not attempted:
        return "no URL was attempted"
    errors = crawl_counters(done, "error")
    cause, count = (errors or outcomes).most_common(1)[0]
    line = f"{cause} ({count} of {attempted} URLs)"
    # The first advice that fits: the more particular causes come first.
    advice = [text.format(conf=conf) for key, text in _ADVICE.items() if key in cause][:1]
    return "; ".join([line, *advice])


def merge_counters(per_step: list[dict]) -> dict:
    merged: dict = {}
    for step in per_step:
        for group, counters in step.items():
            for name, amount in counters.items():
                merged.setdefault(group, {})
                merged[group][name] = merged[group].get(name, 0) + amount
    return merged


def describe(step: str, counters: dict, seconds: float) -> str:
    """One line of what a step did, from its counters."""
    kind = step.split("/", 1)[0]
    if kind == "crawl":
        outcomes = counters.get("outcome", {})
        fetched = outcomes.get(FETCHED, 0)
        parts = [f"{name} {outcomes[name]}" for name in OUTCOMES if outcomes.get(name)]
        fetch = counters.get("fetch", {})
        requests = f"{fetch.get('requests', 0)} requests sent"
        if fetch.get("unconnected"):
            requests += f", {fetch['unconnected']} could not connect"
        errors = Counter(counters.get("error", {})).most_common(TOP_ERRORS)
        return (
            f"{counters.get('crawl', {}).get('urls in', 0)} URLs in: "
            f"{', '.join(parts) or 'nothing attempted'}; {requests}, "
            f"{fetch.get('retries', 0)} retries ({fetched / max(seconds, 1e-9):.1f} pages/s)"
            + "".join(f"\n{'':26}{count} × {kind}" for kind, count in errors)
        )
    group = counters.get(kind, {})
    if kind == "parse":
        return f"{group.get('records in', 0)} records in, {group.get('outlinks', 0)} outlinks in scope"
    if kind == "optimize":
        return f"{group.get('new urls', 0)} new URLs for the next layer"
    if kind == "generate":
        return f"{group.get('seeds', 0)} seeds and {group.get('due urls', 0)} due URLs for layer 0"
    if kind == "dbbatch":
        return f"{group.get('urls', 0)} URLs and {group.get('digests', 0)} payload digests in the batch"
    if kind == "dedup":
        return f"{counters.get('duplicates', {}).get('urls', 0)} page(s) repeat another URL's payload"
    if kind == "dbupdate":
        return (f"{group.get('urls', 0)} URLs in the db: {group.get('urls added', 0)} added, "
                f"{group.get('urls updated', 0)} updated ({group.get('duplicates', 0)} duplicates), "
                f"{group.get('urls queued', 0)} queued for the next layer; "
                f"{group.get('digests', 0)} payload digests ({group.get('digests added', 0)} added)")
    if kind == "merge":
        return f"{group.get('records in', 0)} records in, {group.get('records out', 0)} out"
    return f"{group.get('records in', 0)} records in, {group.get('pages', 0)} XML pages"


def reads_whole_files(job_class) -> bool:
    """Whether the job's map tasks read whole input files (mapper_raw): the crawl db's jobs."""
    return job_class.mapper_raw is not MRJob.mapper_raw


def local_task_args() -> list[str]:
    """What the local runner is told so that its tasks are forks of this process.

    The tasks have the package and mrjob already.  Shipping either (mrjob
    zips itself for every job unless told not to) would wrap every task in
    mrjob's setup script, and so make it a new interpreter again.  Should an
    mrjob.conf add setup commands anyway, those tasks find the package where
    this process did, with this interpreter.
    """
    return ["--no-bootstrap-mrjob", "--cmdenv", f"PYTHONPATH={package_root()}", "--python-bin", sys.executable]


def store_at(root: str) -> CrawlStore:
    return ClusterCrawlStore(root) if is_cluster_path(root) else CrawlStore(root)


def crawl_store(args: argparse.Namespace, config: CrawlConfig) -> CrawlStore:
    return store_at(args.output or str(Path("crawl") / config.name))


def db_root(args: argparse.Namespace, store: CrawlStore) -> str:
    """Where the crawl db is: --db, else the crawl directory's db/ (absolute,
    so that a resume from another directory finds the same db)."""
    root = args.db or str(store.join("db"))
    return root if is_cluster_path(root) else os.path.abspath(root)


def db_of_run(store: CrawlStore, args: argparse.Namespace) -> str:
    """The crawl db of this run: a resumed crawl's own, else db_root()."""
    if not args.resume:
        return db_root(args, store)
    state = store.load_state()
    if args.db and db_root(args, store) != state.get("db"):
        raise UsageError(f"--db {args.db}: the crawl in {store.root} works on the crawl db {state.get('db')}; "
                         "resume without --db, or with that one")
    return state.get("db") or db_root(args, store)


def crawl_db(root: str) -> CrawlDb:
    return CrawlDb(store_at(root))


def check_directory(store: CrawlStore, resume: bool) -> None:
    """Refuse a crawl directory that this run would damage or misread."""
    try:
        entries = store.entries()
    except NotADirectoryError:
        raise UsageError(f"--output {store.root}: exists and is not a directory") from None
    holds_crawl = entries is not None and CRAWL_STATE in entries
    if resume and not holds_crawl:
        what = "does not exist" if entries is None else "holds no crawl (no crawl.json)"
        raise UsageError(f"--resume: {store.root} {what}; check the path, or drop --resume to start a new crawl there")
    if not resume and holds_crawl:
        raise UsageError(f"{store.root}: already holds a crawl; use --resume to continue it or another --output")
    if not resume and entries and not entries <= STARTUP_LEFTOVERS:
        # Someone else's files: a crawl written among them could not be told
        # apart from them, and a later clean-up could delete them.
        shown = ", ".join(sorted(entries - STARTUP_LEFTOVERS)[:3])
        raise UsageError(f"--output {store.root}: holds other files ({shown}…); give a new or empty directory")


def refuse_links(store: CrawlStore, option: str) -> None:
    """Refuse a crawl directory or crawl db that holds a symbolic link: what
    the crawler writes there could land outside both (CrawlStore.links)."""
    refusal = store.link_refusal()
    if refusal:
        raise UsageError(f"{option} {refusal}")


def open_crawl(store: CrawlStore, args: argparse.Namespace, config: CrawlConfig, seeds: list[str], db: CrawlDb) -> dict:
    """Start the crawl in the store's directory, or reopen it for --resume
    (check_directory() has refused a directory that fits neither)."""
    if args.resume:
        state = store.load_state()
        if state.get("format") != STATE_FORMAT:
            raise UsageError(f"{store.state_path}: format: not a crawl state this version can resume")
        if args.now and iso_utc(args.now) != state["run"]:
            raise UsageError(f"--now {args.now.isoformat()}: the crawl in {store.root} runs as of {state['run']}; "
                             "resume without --now, or with that time")
        changed = config_differences(state["config"], json_config(config))
        if changed:
            raise UsageError(
                f"{args.conf}: {'; '.join(changed)}: differs from the config of the crawl in {store.root}; "
                "resume with the same config, or crawl into another --output")
        check_same_seeds(store, args.seeds, seeds)
        # The same config but perhaps for the proxy's password, which
        # crawl.json does not keep: a password changed since takes effect.
        store.write_text(store.config_path, config.to_json() + "\n", private=True)
        return state
    store.make_root()
    store.write_text(store.config_path, config.to_json() + "\n", private=True)
    start = args.now or datetime.now(timezone.utc)
    state = {
        "format": STATE_FORMAT,
        "config": json_config(config),
        "seeds": os.path.abspath(args.seeds),
        "seeds_count": len(seeds),
        "run": iso_utc(start),  # the run's start: what the db's revisit times count from
        "started_at": start.astimezone(timezone.utc).strftime("%Y_%m_%d_%H_%M_%S"),
        "db": str(db.root),
        "done": {},
    }
    written = store.begin_output("seeds", store.seeds())
    store.write_text(store.part_file(written), "".join(url + "\n" for url in seeds))
    store.commit(written, store.seeds())
    store.save_state(state)
    return state


def config_differences(crawled: dict, given: dict) -> list[str]:
    """The keys whose values differ, each with both values when they are short."""
    differences = []
    for key in sorted(set(crawled) | set(given)):
        before, now = crawled.get(key), given.get(key)
        if before != now:
            values = f"{before!r} in the crawl, {now!r} here"
            differences.append(f"{key} ({values})" if len(values) <= 60 else key)
    return differences


def check_same_seeds(store: CrawlStore, seeds_path: str, seeds: list[str]) -> None:
    """A resume continues the seeds it started from; refuse a seed file that says otherwise."""
    crawled = {url for part in store.parts(store.seeds()) for url in store.read_text(part).splitlines() if url}
    added, dropped = sorted(set(seeds) - crawled), sorted(crawled - set(seeds))
    if added or dropped:
        example = f"{added[0]} is new" if added else f"{dropped[0]} is missing"
        raise UsageError(
            f"{seeds_path}: differs from the seeds of the crawl in {store.root} "
            f"({len(added)} added, {len(dropped)} missing; {example}); resume with the same seeds")


def json_config(config: CrawlConfig) -> dict:
    """The config as crawl.json keeps it and messages show it: the proxy's
    password masked.  Only config.json, which the jobs read, holds it."""
    values = json.loads(config.to_json())
    if values.get("proxy"):
        values["proxy"] = redacted_proxy(values["proxy"])
    return values


def lock(store: CrawlStore, lock_path, what: str):
    """Keep two runs out of one local crawl directory or crawl db; the lock
    dies with the process.

    A directory on HDFS or S3 has no such lock: run_depth.sh's per-language
    lock on the machine that drives the crawl keeps runs apart there.
    """
    if isinstance(store, ClusterCrawlStore):
        return contextlib.nullcontext()
    try:
        store.make_root()
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"{store.root}: exists and is not a directory; give the {what} a directory") from None
    # Not truncated, and never through a link (refuse_links ran before).
    handle = open(os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o666), "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise UsageError(f"{store.root}: another run is working on this {what}") from None
    return handle


def open_db(db: CrawlDb) -> None:
    """Check the run's crawl db, or make an empty one where there is none yet."""
    try:
        entries = db.store.entries()
    except NotADirectoryError:
        raise UsageError(f"--db {db.root}: exists and is not a directory") from None
    if entries and DB_META not in entries and not entries <= CREATE_LEFTOVERS:
        raise UsageError(f"--db {db.root}: holds other files and no crawl db; give a crawl db or a new directory")
    if not entries or DB_META not in entries:
        db.create()
    try:
        db.meta()
    except NoCrawlDb as error:
        raise UsageError(f"--db: {error}") from None


def main(argv: list[str] | None = None, resume_hint: str | None = None) -> int:
    """Run the driver; return the exit status (see EXIT_* above).

    `resume_hint` is the command that continues this crawl, for the line
    printed when a run stops early; by default this command with --resume.
    """
    argv = sys.argv[1:] if argv is None else list(argv)
    configure_logging()  # until the command line says otherwise: it may be refused
    try:
        args = parse_args(argv)
        configure_logging(args.verbosity)
        config = load_config(args.conf)
        seeds, skipped = read_seeds(args.seeds, UrlFilter(config.url_allow, config.url_deny))
        store = crawl_store(args, config)
        check_directory(store, args.resume)
        refuse_links(store, "--output")
    except (UsageError, ConfigError) as error:
        log.error("%s", error)
        return EXIT_USAGE
    for message in skipped:
        log.warning("%s", message)
    resume_hint = resume_hint or resume_command(argv)
    with contextlib.ExitStack() as held:
        try:
            held.enter_context(lock(store, store.lock_path, "crawl directory"))
            db = crawl_db(db_of_run(store, args))
            refuse_links(db.store, "--db")
            held.enter_context(lock(db.store, db.lock_path, "crawl db"))
            open_db(db)
            state = open_crawl(store, args, config, seeds, db)
        except UsageError as error:
            log.error("%s", error)
            return EXIT_USAGE
        return run_crawl(store, state, config, args, resume_hint)


def write_run_report(store: CrawlStore) -> None:
    """DIR/report.html: one that cannot be written is a warning, and changes
    neither the crawl nor its exit status."""
    if isinstance(store, ClusterCrawlStore):  # the report reads local disk: `mrcrawl report` on a copy
        return
    try:
        log.info("report: %s", write_report(store.root))
    except Exception as error:  # whatever went wrong in the report, the crawl is done and stays so
        log.warning("the crawl report was not written: %s: %s", type(error).__name__, error)


def run_crawl(store: CrawlStore, state: dict, config: CrawlConfig, args: argparse.Namespace, resume_hint: str) -> int:
    """Crawl and export, holding the locks; write the report, however the run
    ended but for Ctrl-C, before the line that says how a run that failed
    ended (the last one on stderr); return the exit status."""
    status, ending = crawl_and_export(store, state, config, args, resume_hint)
    if status != EXIT_INTERRUPTED:
        write_run_report(store)
    if ending:
        log.error(ending)
    return status


def crawl_and_export(store: CrawlStore, state: dict, config: CrawlConfig, args: argparse.Namespace,
                     resume_hint: str) -> tuple[int, str | None]:
    """Crawl, then write the exports; return the exit status, and for a run
    that did not succeed what to say of how it ended."""
    log.info(f"mrcrawl: crawl {config.name!r} ({config.language}), depth {args.depth}, runner {args.runner}, "
             f"into {store.root}, as of {state['run']}, crawl db {state['db']}")
    with interrupts_remembered():
        crawl = Crawl(store, state, config, args)
        try:
            totals = crawl.run(args.depth)
        except (StepFailed, OSError, KeyboardInterrupt) as error:
            # A step whose tasks Ctrl-C stopped failed because of it.  An
            # OSError outside a job (saving crawl.json, a commit's rename)
            # leaves the steps crawl.json names, as a failed job does.
            if not isinstance(error, KeyboardInterrupt) and not INTERRUPTED.is_set():
                return EXIT_STEP_FAILED, "\n".join(failure_lines(error, store.root, resume_hint))
            return (EXIT_INTERRUPTED,
                    f"mrcrawl: interrupted; the finished steps are kept in {store.root}; to go on, run: {resume_hint}")
        finally:
            crawl.close()
    if not totals[FETCHED] + totals[NOT_MODIFIED]:
        return EXIT_NOTHING_FETCHED, f"mrcrawl: no page fetched: {why_nothing_was_fetched(state['done'], args.conf)}"
    for kind in args.export:
        try:
            summary = run_exports(store.root, [kind])[kind]
        except OSError as error:  # the export's scratch is gone, its previous output kept: --resume exports again
            what = f"the {kind} export failed: {type(error).__name__}: {error}"
            return EXIT_STEP_FAILED, "\n".join(failure_lines(error, store.root, resume_hint, what))
        log.info(describe_export(kind, summary))
    return EXIT_OK, None


def resume_command(argv: list[str]) -> str:
    """This command line, as a shell would take it, with --resume."""
    words = argv if "--resume" in argv else [*argv, "--resume"]
    return f"{invocation('crawl')} {shlex.join(words)}"


if __name__ == "__main__":
    sys.exit(main())
