"""Running a crawl's steps (plan.py), each at most once, so that `--resume`
goes on after the last finished one.

A step writes into a scratch directory of the crawl directory, which is
moved into place when its job has succeeded (crawl_store.py), or into the
crawl db's next generation, which the db commits (frontier/crawldb.py);
then crawl.json names it done.  A run killed anywhere in between runs the
step again, but for a db update that was committed before crawl.json said
so: the db knows it applied that one.
"""
from __future__ import annotations

import errno
import logging
import time
from typing import Callable, TextIO

from mrcrawl.frontier.crawldb import CrawlDb
from mrcrawl.interrupts import INTERRUPTED
from mrcrawl.mr.launcher import JobContext, Launcher
from mrcrawl.frontier.placement import Placement
from mrcrawl.plan import ALL_FILES, DB_SLOTS, DIGEST_FILES, INTO_DB, URL_FILES, DbFiles, PartFiles, PlannedTasks, Step
from mrcrawl.progress import StepWatch
from mrcrawl.store.crawl_state import CrawlState, StepName
from mrcrawl.store.crawl_store import CrawlStore, pause_point

log = logging.getLogger("mrcrawl.driver")


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


class Pipeline:
    """One run's steps over one crawl directory and its crawl db."""

    def __init__(self, store: CrawlStore, state: CrawlState, db: CrawlDb, launcher: Launcher,
                 say: Callable[[str], None] = log.info, progress_every: float = 0,
                 progress_stream: TextIO | None = None):
        self.store = store
        self.state = state
        self.db = db
        self.launcher = launcher
        self.say = say  # what the run tells the operator, step by step
        self.progress_every = progress_every
        self.progress_stream = progress_stream
        self.ran: list[StepName] = []  # the steps this run did, in order
        self._writers: dict[str, Step] = {}  # store directory -> the step that writes it

    def run(self, steps: list[Step]) -> None:
        for step in steps:
            self.run_step(step)

    def run_step(self, step: Step) -> None:
        """Run one step's job into its output, unless it is done."""
        self._writers[str(step.output)] = step
        if step.name in self.state.done:
            self.say(f"  {str(step.name):<12} already done")
            return
        into_db = step.output is INTO_DB
        update = self.db.update_name(self.state.run, str(step.name))
        if into_db and self.db.has_applied(update):
            # The run that died committed this update to the db, and died
            # before crawl.json said so: it must not be applied twice.
            self._done(step, 0.0, {})
            return
        inputs = self.inputs_of(step)
        written = self.db.next_dir() if into_db else self.store.begin_output(str(step.name), step.output)
        started = time.monotonic()
        pause_point(f"start {step.name}")
        if inputs:
            try:
                counters = self.launcher.run(step.job, inputs, written, self.context_of(step), self.options_of(step),
                                             watch=self._watch(step))
            except Exception as error:
                if INTERRUPTED.is_set():
                    # Ctrl-C broke the step, wherever it landed: inside a task,
                    # or inside argparse while the job was being made (whose
                    # clean-up then raises an AttributeError of its own).
                    raise KeyboardInterrupt from error
                # A failed step's half output goes: on a full disk, it holds the space needed.
                (self.db.store if into_db else self.store).remove(written)
                if not disk_full(error):  # the cause is plain; a traceback would hide it
                    log.exception("mrcrawl: step %s failed, with this traceback:", step.name)
                raise StepFailed(f"{step.name} failed: {type(error).__name__}: {error}") from error
        else:
            self.store.write_text(self.store.part_file(written), "")
            counters = {}
        pause_point(f"written {step.name}")
        try:
            if into_db:
                self.db.commit(update, self.state.run, step.job.run_counts(counters) if counters else None)
            else:
                self.store.commit(written, step.output)
            pause_point(f"committed {step.name}")
            self._done(step, round(time.monotonic() - started, 3), counters)
        except OSError as error:  # crawl.json does not name the step: --resume runs it again
            raise StepFailed(f"{step.name} failed storing its output: {type(error).__name__}: {error}") from error

    def inputs_of(self, step: Step) -> list:
        inputs = []
        for place in step.inputs:
            if isinstance(place, DbFiles):  # each file a task: given even when empty
                inputs += {URL_FILES: self.db.partition_files, DIGEST_FILES: self.db.digest_files,
                           ALL_FILES: self.db.files}[place]()
            elif self.store.parts(place):  # a store with no part file has nothing to read
                inputs.append(place)
        return inputs

    def options_of(self, step: Step) -> list[str]:
        words = []
        for option in step.options:
            if isinstance(option, PartFiles):
                words += [word for part in self.store.parts(option.store) for word in (option.option, str(part))]
            elif option is DB_SLOTS:
                words += ["--slots", str(self.db.slots)]
            elif isinstance(option, PlannedTasks):
                planned = Placement.from_lines(self.store.read_text(part) for part in self.store.parts(option.placement))
                if planned is not None:  # none: a cap held back every URL of the layer, and no task has work
                    words += ["--jobconf", f"mapreduce.job.reduces={planned.tasks}"]
            else:
                words.append(option)
        return words

    def context_of(self, step: Step) -> JobContext:
        return JobContext(str(self.store.config_path), step.layer, self.db.partitions, self.state.run,
                          self.state.clock_offset)

    def _done(self, step: Step, seconds: float, counters: dict | None) -> None:
        """Record a finished step; `counters` is None when the runner reported none."""
        self.state.record(step.name, seconds, counters or {})
        self.ran.append(step.name)
        self.state.save(self.store)
        if counters is None:
            told = "done (a Spark step reports no counters)"
        else:
            told = step.job.summary(counters, seconds)
        self.say(f"  {str(step.name):<12} {seconds:7.1f} s  {told}")
        if INTERRUPTED.is_set():
            raise KeyboardInterrupt  # a Ctrl-C that could not be raised where it came (see interrupts.py)

    # ---- what the steps' counters say ---------------------------------------------

    def frontier_size(self, frontier) -> tuple[int | None, str]:
        """How many URLs a frontier store holds, from the counters of the step
        that wrote it, and the same in words ("?" when it reported none)."""
        writer = self._writers.get(str(frontier))
        finished = self.state.done.get(writer.name) if writer else None
        if finished is None or not finished.counters:
            return None, "?"
        return writer.job.frontier(finished.counters)

    def _watch(self, step: Step):
        """How the step's progress is shown while its job runs (progress.py), or None."""
        if not self.progress_every:
            return None
        # A job that counts its records done is set against its input's size, when a step's counters say it.
        total = None
        if step.job.progress({})[0] is not None and step.inputs:
            total = self.frontier_size(step.inputs[0])[0]
        return lambda read: StepWatch(str(step.name), step.job, total, read, self.progress_stream, self.progress_every)
