"""The crawl driver: `python -m mrcrawl.driver SEEDS --depth N --conf CONF [--db DB] [--now TIME]`,
and the same crawl from Python as `mrcrawl.crawl(seeds, depth, conf, ...)`.

It loops over layers as the thesis's Crawler does, with a crawl db that
remembers every URL across runs: layer 0's frontier is the seeds and the
db's due URLs; each layer is fetched, parsed and merged into the db, which
queues the next layer's frontier; after the last layer the layers' pages
are merged and the new and changed ones turned into XML.  plan.py says
which job runs when, pipeline.py runs each step once (so `--resume` goes on
after the last finished one), and mr/launcher.py hands a step to mrjob.
The driver holds the locks, loops over the layers, and says how the run
ended: its exit status and its last line.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import logging
import os
import shlex
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from jobs.crawler import MRCrawler
from mrcrawl.cli import invocation, run_command
from mrcrawl.config import ConfigError, CrawlConfig, config_with_settings, load_config, parse_setting
from mrcrawl.crawl_dir import (
    UsageError,
    check_db_place,
    check_directory,
    crawl_db,
    db_of_run,
    default_output,
    lock,
    open_crawl,
    open_db,
    refuse_links,
    store_at,
)
from mrcrawl.export import EXPORT_KINDS, kind_problems, parse_kinds, run_exports
from mrcrawl.export import describe as describe_export
from mrcrawl.frontier.caps import FrontierCaps
from mrcrawl.frontier.crawldb import CrawlDb
from mrcrawl.frontier.scores import new_url_score, scoring_iterations
from mrcrawl.interrupts import INTERRUPTED, STOPPING_SIGNALS, interrupts_remembered, stopped_status
from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.mr.launcher import LOCAL_DISK_RUNNERS, RUNNERS, Launcher, RunnerSettings
from mrcrawl.page.urls import UrlFilter
from mrcrawl.pipeline import Pipeline, StepFailed, disk_full
from mrcrawl.plan import layer_steps, run_end, run_start
from mrcrawl.progress import DEFAULT_EVERY, progress_stream
from mrcrawl.report import write_report
from mrcrawl.seeds import read_seeds, seed_urls
from mrcrawl.store.cluster_store import ClusterCrawlStore, is_cluster_path
from mrcrawl.store.crawl_state import CrawlState, StepName
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.failures import error_label, no_page_advice
from mrcrawl.store.records import FETCHED, NOT_MODIFIED

log = logging.getLogger("mrcrawl.driver")  # by name: run as `python -m`, __name__ is __main__

EXIT_OK = 0
EXIT_STEP_FAILED = 1  # a job failed: the steps before it are kept, --resume goes on
EXIT_USAGE = 2  # a bad argument, config, seed file or crawl directory: nothing written
EXIT_NOTHING_FETCHED = 3  # the crawl ran, but no page was fetched: see the line printed
EXIT_INTERRUPTED = 130  # Ctrl-C (128 + SIGINT, as shells report it): --resume goes on
# A run a stopping signal ended, as Ctrl-C: 130, 143 (SIGTERM) or 129 (SIGHUP); see interrupts.py
EXIT_STOPPED = frozenset(map(stopped_status, STOPPING_SIGNALS))


@dataclass
class CrawlResult:
    """How a crawl ended, and what it holds."""

    status: int  # the exit status: one of the EXIT_* above
    output: str  # the crawl directory
    db: str  # the crawl db
    totals: Counter  # URLs attempted over every layer of the crawl, by outcome
    stores: dict[str, str] = field(default_factory=dict)  # what it wrote for the index: pages, xml, warc, index
    ending: str | None = None  # for a run that did not succeed, what it said of how it ended

    @property
    def pages(self) -> int:
        """Pages the crawl holds: fetched, or not modified since the db's last fetch."""
        return MRCrawler.pages(self.totals)


def crawl(seeds, depth: int, conf, *, output: str | None = None, db: str | None = None,
          now: datetime | None = None, runner: str = "inline", resume: bool = False,
          spark_master: str | None = None, mrjob_conf: str | None = None, reducers: int | None = None,
          export: tuple[str, ...] = (), progress_every: float = 0, resume_hint: str | None = None,
          settings: dict | None = None) -> CrawlResult:
    """Crawl `seeds` (a seed file's path, or a list of URLs) `depth` layers
    deep with the config `conf` (a YAML file's path, or a CrawlConfig); the
    keywords are the command's options, `settings` its -s overrides of the
    config's keys (`{"delay": 2, "revisit.max_days": 60}`).  Raises UsageError or ConfigError,
    having written nothing, for a bad argument, config, seed file, crawl
    directory or crawl db; returns how the crawl ended otherwise."""
    problems = request_problems(depth, runner, output, db, reducers, export, progress_every)
    if problems:
        raise UsageError(problems[0])
    settings = dict(settings or {})
    if isinstance(conf, CrawlConfig):
        config = config_with_settings(conf, settings) if settings else conf
    else:
        config = load_config(conf, settings=settings)
    conf_name = str(conf) if not isinstance(conf, CrawlConfig) else "the config"
    scope = UrlFilter(config.url_allow, config.url_deny)
    if isinstance(seeds, (str, Path)):
        seeds_shown, seeds_path = str(seeds), os.path.abspath(seeds)
        seed_list, skipped = read_seeds(seeds_shown, scope)
    else:
        seeds_shown = seeds_path = "the seeds given"
        seed_list, skipped = seed_urls(list(seeds), scope, seeds_shown)
    store = store_at(output or default_output(config))
    check_directory(store, resume)
    check_db_place(store, db)
    refuse_links(store, "--output")
    for message in skipped:
        log.warning("%s", message)
    runner_settings = RunnerSettings(runner, mrjob_conf, spark_master, reducers)
    if resume_hint is None:
        words = command_words(seeds_path, depth, conf_name, store.root, db, settings)
        resume_hint = f"{invocation('crawl')} {shlex.join(words)}"
    with contextlib.ExitStack() as held:
        held.enter_context(lock(store, store.lock_path, "crawl directory"))
        database = crawl_db(db_of_run(store, db, resume))
        refuse_links(database.store, "--db")
        held.enter_context(lock(database.store, database.lock_path, "crawl db"))
        open_db(database)
        state = open_crawl(store, config, conf_name, seeds_path, seeds_shown, seed_list, database, now, resume,
                           settings)
        log.info(f"mrcrawl: crawl {config.name!r} ({config.language}), depth {depth}, runner {runner}, "
                 f"into {store.root}, as of {state.run}, crawl db {state.db}")
        result = crawl_and_export(store, state, database, runner_settings, depth, export, progress_every,
                                  resume_hint, conf_name)
    if result.status not in EXIT_STOPPED:
        write_run_report(store)
    if result.ending:
        log.error(result.ending)
    return result


def crawl_and_export(store: CrawlStore, state: CrawlState, db: CrawlDb, settings: RunnerSettings, depth: int,
                     export, progress_every: float, resume_hint: str, conf_name: str) -> CrawlResult:
    """Crawl, then write the exports, holding the locks.  A run that did not
    succeed says how it ended in the result's `ending` (the last line on
    stderr, once the report is written)."""
    result = CrawlResult(EXIT_OK, str(store.root), state.db, Counter())
    with interrupts_remembered(), Launcher(settings) as launcher, contextlib.ExitStack() as shown:
        stream = shown.enter_context(progress_stream()) if progress_every else None
        pipeline = Pipeline(store, state, db, launcher, progress_every=progress_every, progress_stream=stream)
        try:
            run_layers(pipeline, store, state, depth, settings)
        except (StepFailed, OSError, KeyboardInterrupt) as error:
            # A step whose tasks a stopping signal stopped failed because of it.  An
            # OSError outside a job (saving crawl.json, a commit's rename)
            # leaves the steps crawl.json names, as a failed job does.
            if not isinstance(error, KeyboardInterrupt) and not INTERRUPTED.is_set():
                result.status = EXIT_STEP_FAILED
                result.ending = "\n".join(failure_lines(error, store.root, resume_hint))
            else:
                result.status = INTERRUPTED.exit_status
                result.ending = (f"mrcrawl: interrupted by {INTERRUPTED.name}; the finished steps are kept in "
                                 f"{store.root}; to go on, run: {resume_hint}")
            return result
    result.totals = outcome_totals(state)
    if not result.pages:
        result.status = EXIT_NOTHING_FETCHED
        result.ending = f"mrcrawl: no page fetched: {why_nothing_was_fetched(state, conf_name)}"
        return result
    result.stores.update(pages=str(store.merged()), xml=str(store.xml(state.started_at)))
    for kind in export:
        try:
            summary = run_exports(store.root, [kind])[kind]
        except OSError as error:  # the export's scratch is gone, its previous output kept: --resume exports again
            what = f"the {kind} export failed: {type(error).__name__}: {error}"
            result.status = EXIT_STEP_FAILED
            result.ending = "\n".join(failure_lines(error, store.root, resume_hint, what))
            return result
        result.stores[kind] = summary["path"]
        log.info(describe_export(kind, summary))
    return result


def run_layers(pipeline: Pipeline, store: CrawlStore, state: CrawlState, depth: int, settings: RunnerSettings) -> None:
    """Crawl to `depth` layers, or to the depth the crawl already has if that is more."""
    started = time.monotonic()
    if depth < (state.depth or 0):
        # A crawl never gets shallower: a smaller depth would merge fewer
        # layers over what the deeper crawl stored.
        log.info(f"the crawl already has depth {state.depth}; --depth {depth} keeps it at {state.depth}")
        depth = state.depth
    state.depth = depth
    state.runners = list(dict.fromkeys([*state.runners, settings.runner]))  # for the report
    state.save(store)
    config = CrawlConfig.from_dict(state.config)  # the config a resumed run started with
    caps = FrontierCaps.of(config)
    pipeline.run(run_start(store, caps, scoring_iterations(config, pipeline.db, state.run),
                           settings.sorts_reduce_output))
    new_score = new_url_score(config, pipeline.db, state.run)
    layers = 0
    for layer in range(depth):
        if not store.has_records(store.frontier(layer)):
            log.info(f"layer {layer}: frontier is empty, stopping")
            break
        log.info(f"layer {layer}: {pipeline.frontier_size(store.frontier(layer))[1]} URLs{left_before(state, layer)}")
        pipeline.run(layer_steps(store, layer, last=layer == depth - 1, batch_sorted=settings.sorts_reduce_output,
                                 caps=caps, new_url_score=new_score, reduce_tasks=settings.reduce_tasks))
        layers = layer + 1
    pipeline.run(run_end(store, layers, state.started_at))
    if layers:
        log.info(f"pages: {store.merged()}  xml: {store.xml(state.started_at)}")
    log.info(run_summary(pipeline, state, time.monotonic() - started, layers))


def left_before(state: CrawlState, layer: int) -> str:
    """What a layer's line says of the URLs the layer before left when its
    time ran out (max_layer_seconds): the crawl db queued them for this one."""
    crawled = state.done.get(StepName(MRCrawler.STEP, layer - 1))
    left = MRCrawler.URLS_LEFT.of(crawled.counters) if crawled else 0
    return f", {left} of them left when layer {layer - 1}'s time ran out" if left else ""


def outcome_totals(state: CrawlState) -> Counter:
    """URLs attempted over every crawl step of the crawl, by outcome."""
    return sum((MRCrawler.OUTCOMES.of(step.counters) for step in state.finished(MRCrawler.STEP)), Counter())


def run_summary(pipeline: Pipeline, state: CrawlState, seconds: float, layers: int) -> str:
    crawled_now = [state.done[name] for name in pipeline.ran if name.kind == MRCrawler.STEP]
    outcomes_now = sum((MRCrawler.OUTCOMES.of(step.counters) for step in crawled_now), Counter())
    fetched_now = outcomes_now[FETCHED]
    now = (f"this run fetched {fetched_now} pages ({fetched_now / max(seconds, 1e-9):.1f} pages/s), "
           f"{outcomes_now[NOT_MODIFIED]} not modified" if crawled_now else "nothing was left to fetch")
    totals = outcome_totals(state)
    return (f"done in {seconds:.1f} s: {now}; the run holds {totals[FETCHED]} fetched pages "
            f"of {sum(totals.values())} URLs attempted over {layers} layer(s); crawl db: {state.db}")


def why_nothing_was_fetched(state: CrawlState, conf: str) -> str:
    """One line naming the main cause of a crawl that fetched no page."""
    outcomes = outcome_totals(state)
    attempted = sum(outcomes.values())
    if not attempted:
        return "no URL was attempted"
    errors = sum((MRCrawler.ERRORS.of(step.counters) for step in state.finished(MRCrawler.STEP)), Counter())
    if not errors:
        cause, count = outcomes.most_common(1)[0]
        return f"{cause} ({count} of {attempted} URLs)"
    kind, count = errors.most_common(1)[0]
    return "; ".join(filter(None, [f"{error_label(kind)} ({count} of {attempted} URLs)", no_page_advice(kind, conf)]))


def failure_lines(error: BaseException, root, resume_hint: str, what: str = "") -> list[str]:
    """What a run that failed says on stderr: `what` failed (by default the
    error itself), then what is kept and how to go on."""
    what = what or (str(error) if isinstance(error, StepFailed) else f"{type(error).__name__}: {error}")
    if disk_full(error):
        return [f"mrcrawl: {what} (the disk is full)",
                f"mrcrawl: the finished steps are kept in {root}; free some space, then run: {resume_hint}"]
    return [f"mrcrawl: {what}", f"mrcrawl: the finished steps are kept in {root}; fix the cause, then run: {resume_hint}"]


def write_run_report(store: CrawlStore) -> None:
    """DIR/report.html: one that cannot be written is a warning, and changes
    neither the crawl nor its exit status."""
    if isinstance(store, ClusterCrawlStore):  # the report reads local disk: `mrcrawl report` on a copy
        return
    try:
        log.info("report: %s", write_report(store.root))
    except Exception as error:  # whatever went wrong in the report, the crawl is done and stays so
        log.warning("the crawl report was not written: %s: %s", type(error).__name__, error)


# ---- the command line ---------------------------------------------------------------------------

def request_problems(depth: int, runner: str, output: str | None, db: str | None, reducers: int | None,
                     export, progress_every: float) -> list[str]:
    """What is wrong with a crawl's options, as the command line names them."""
    problems = []
    if progress_every < 0:
        problems.append(f"--progress-every: must be 0 or more seconds, got {progress_every:g}")
    if depth < 1:
        problems.append(f"--depth: must be at least 1, got {depth}")
    if reducers is not None and reducers < 1:
        problems.append(f"--reducers: must be at least 1, got {reducers}")
    if runner not in RUNNERS:
        problems.append(f"--runner {runner}: unknown; choose from {', '.join(RUNNERS)}")
    problems += [f"--export {problem}" for problem in kind_problems(export)]
    if export and output and is_cluster_path(output):
        problems.append(f"--export: exports read local disk; copy {output} down and run {invocation('export')}")
    if runner in LOCAL_DISK_RUNNERS and output and is_cluster_path(output):
        problems.append(f"--output {output}: the {runner} runner works on local disk; use hadoop or emr")
    if db and is_cluster_path(db) != bool(output and is_cluster_path(output)):
        problems.append(f"--db {db}: must be on the filesystem of --output (local disk, or the cluster's)")
    return problems


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(prog="mrcrawl crawl", allow_abbrev=False,
                             description="Crawl a set of sites layer by layer with MapReduce jobs.")
    parser.add_argument("seeds", metavar="SEEDS",
                        help="seed file: one URL per line, then optional key=value metadata and a # comment; "
                             "blank lines and # comment lines are ignored")
    parser.add_argument("--depth", type=int, required=True, metavar="N",
                        help="number of layers (layer 0 is the seeds); required")
    parser.add_argument("--conf", required=True, metavar="CONF", help="YAML crawl config; required")
    parser.add_argument("-s", "--set", dest="settings", action="append", default=[], metavar="KEY=VALUE",
                        help="this run's value of a config key (revisit.KEY for a revisit key), read as YAML: "
                             "-s delay=2; repeat for more keys (default: the config's values)")
    parser.add_argument("--output", metavar="DIR", help="crawl directory (default: crawl/<config name>)")
    parser.add_argument("--db", metavar="DB",
                        help="crawl db shared by the runs of these sites, made if missing (default: DIR/db)")
    parser.add_argument("--now", type=utc_time, metavar="ISO8601",
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
    args.export = parse_kinds(args.export)
    args.settings = dict(parse_setting(text) for text in args.settings)  # a key given again: the last wins
    problems = request_problems(args.depth, args.runner, args.output, args.db, args.reducers, args.export,
                                args.progress_every)
    if problems:
        parser.error(problems[0])
    if args.verbosity < 0:  # -q: warnings and errors only, so no progress either
        args.progress_every = 0
    return args


def utc_time(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r} (e.g. 2026-01-05T06:00:00Z)") from None
    return moment.replace(tzinfo=moment.tzinfo or timezone.utc)


def command_words(seeds_path: str, depth: int, conf: str, output, db: str | None,
                  settings: dict | None = None) -> list[str]:
    """A command line that continues a crawl started from Python: the resume hint's.
    An override's value is written as JSON, which YAML reads as the same value."""
    overrides = [word for key, value in (settings or {}).items()
                 for word in ("-s", f"{key}={json.dumps(value, ensure_ascii=False)}")]
    return [seeds_path, "--depth", str(depth), "--conf", conf, "--output", str(output),
            *(["--db", db] if db else []), *overrides, "--resume"]


def resume_command(argv: list[str]) -> str:
    """This command line, as a shell would take it, with --resume."""
    words = argv if "--resume" in argv else [*argv, "--resume"]
    return f"{invocation('crawl')} {shlex.join(words)}"


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
        return crawl(args.seeds, args.depth, args.conf, output=args.output, db=args.db, now=args.now,
                     runner=args.runner, resume=args.resume, spark_master=args.spark_master,
                     mrjob_conf=args.mrjob_conf, reducers=args.reducers, export=tuple(args.export),
                     progress_every=args.progress_every, resume_hint=resume_hint or resume_command(argv),
                     settings=args.settings).status
    except (UsageError, ConfigError) as error:
        log.error("%s", error)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(run_command(main))
