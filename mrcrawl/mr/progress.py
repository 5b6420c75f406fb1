"""What a running job's tasks have reported so far, read while mrjob runs it.

A task reports through Hadoop streaming's protocol: lines on its stderr,
`reporter:counter:GROUP,NAME,AMOUNT` (MRJob.increment_counter) and
`reporter:status:TEXT` (MRJob.set_status).  What reaches the driver while a
job runs depends on the runner (mrjob 0.7.4):

* inline and local: each task's stderr is a file in the runner's temporary
  directory (step/NNN/mapper|combiner|reducer/NNNNN/stderr), written as the
  task runs; mrjob reads it only when the task is over.  TaskFiles reads
  the lines as they are written: every counter and status, live.
* hadoop: the tasks' lines go to the cluster, which sums the counters and
  shows the statuses in its own web UI; `hadoop jar` prints the job's
  `map X% reduce Y%`, which mrjob logs.  RunnerLog reads those log records.
  The counters arrive when the job ends.
* emr: mrjob polls the cluster and logs the step's state and, through its
  SSH tunnel, `map X% reduce Y%` or `N% complete`: RunnerLog reads those.
* spark: mrjob's harness turns counters into Spark accumulators, read when
  the job ends.  spark-submit's log, which mrjob logs, says as each Spark
  task finishes `(k/n)` of a stage; on a local master a task's status lines
  reach that log too.  RunnerLog reads both.
"""
from __future__ import annotations

import contextlib
import glob
import logging
import os
import re
import threading
from dataclasses import dataclass, field
from typing import Callable, Iterator

from mrjob.parse import parse_mr_job_stderr
from mrjob.sim import SimMRJobRunner

# The loggers through which mrjob passes on what its runners hear while a job runs.
RUNNER_LOGGERS = ("mrjob.logs.step", "mrjob.emr")
# Hadoop's (and EMR's) job progress as mrjob logs it.
_MAP_REDUCE = re.compile(r"map\s+(\d+)%\s+reduce\s+(\d+)%")
_PERCENT_COMPLETE = re.compile(r"([\d.]+)% complete")
# Spark's TaskSetManager: "Finished task 3.0 in stage 1.0 (TID 7) in 52 ms on … (4/8)".
_SPARK_TASK_DONE = re.compile(r"Finished task \S+ in stage (\S+) .*\((\d+)/(\d+)\)\s*$")
_STATUS = "reporter:status:"


@dataclass
class TaskReports:
    """A running job's reports so far."""

    counters: dict = field(default_factory=dict)  # group -> name -> amount, summed over tasks
    statuses: dict = field(default_factory=dict)  # task -> its latest status text
    silent: set = field(default_factory=set)  # reduce tasks under way that have set no status yet
    phase: str = ""  # where the job is: "reducer", "map 100% reduce 40%", "stage 1.0: 3/8 tasks"
    live_counters: bool = False  # whether this runner passes counters while the job runs


class TaskFiles:
    """The inline and local runners' task stderr files, read as they grow."""

    def __init__(self, runner: SimMRJobRunner):
        self._pattern = os.path.join(runner._get_local_tmp_dir(), "step", "*", "*", "*", "stderr")
        self._read: dict[str, int] = {}  # file -> bytes of whole lines read
        self._reports = TaskReports(live_counters=True)

    def __call__(self) -> TaskReports:
        reports = self._reports
        for path in sorted(glob.glob(self._pattern)):
            task_type, task_num = path.split(os.sep)[-3:-1]
            task = f"{task_type} {task_num}"
            if task_type == "reducer" and task not in reports.statuses:
                reports.silent.add(task)
            lines = self._new_lines(path)
            if not lines:
                continue
            parsed = parse_mr_job_stderr(lines, counters=reports.counters)
            if parsed["statuses"]:
                reports.statuses[task] = parsed["statuses"][-1]
                reports.silent.discard(task)
            reports.phase = "reduce" if task_type == "reducer" else "map"
        return reports

    def _new_lines(self, path: str) -> list[bytes]:
        """The whole lines written to `path` since the last call."""
        try:
            with open(path, "rb") as stderr:
                stderr.seek(self._read.get(path, 0))
                chunk = stderr.read()
        except FileNotFoundError:  # the job is being cleaned up
            return []
        whole = chunk[:chunk.rfind(b"\n") + 1]
        self._read[path] = self._read.get(path, 0) + len(whole)
        return whole.splitlines(keepends=True)


class RunnerLog(logging.Handler):
    """Job progress from the log records of mrjob's hadoop, emr and spark runners."""

    def __init__(self):
        super().__init__()
        self._lock_reports = threading.Lock()
        self._reports = TaskReports()

    def __call__(self) -> TaskReports:
        with self._lock_reports:
            return TaskReports(statuses=dict(self._reports.statuses), phase=self._reports.phase)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        with self._lock_reports:
            for line in message.splitlines():
                line = line.strip()
                if _STATUS in line:
                    self._reports.statuses["task"] = line.split(_STATUS, 1)[1]
                elif match := _MAP_REDUCE.search(line):
                    self._reports.phase = f"map {match[1]}% reduce {match[2]}%"
                elif match := _PERCENT_COMPLETE.search(line):
                    self._reports.phase = f"{match[1]}% complete"
                elif match := _SPARK_TASK_DONE.search(line):
                    self._reports.phase = f"stage {match[1]}: {match[2]}/{match[3]} tasks"


@contextlib.contextmanager
def task_reports(runner) -> Iterator[Callable[[], TaskReports]]:
    """While the block runs `runner`, a function that returns its tasks' reports so far."""
    if isinstance(runner, SimMRJobRunner):
        yield TaskFiles(runner)
        return
    handler = RunnerLog()
    with contextlib.ExitStack() as restore:
        for name in RUNNER_LOGGERS:
            restore.enter_context(_heard(logging.getLogger(name), handler))
        yield handler


@contextlib.contextmanager
def _heard(logger: logging.Logger, handler: RunnerLog) -> Iterator[None]:
    """Let `handler` hear the logger's INFO records, and pass on to the
    logger's ancestors only what they were shown before (mrjob's progress
    lines stay as hidden, or as shown, as the driver's logging has them)."""
    shown_from = logger.getEffectiveLevel()
    level, propagate = logger.level, logger.propagate

    class PassOn(logging.Handler):
        def emit(self, record):
            if record.levelno >= shown_from and logger.parent is not None:
                logger.parent.handle(record)

    pass_on = PassOn()
    logger.setLevel(min(shown_from, logging.INFO))
    logger.propagate = False
    logger.addHandler(handler)
    if propagate:
        logger.addHandler(pass_on)
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.removeHandler(pass_on)
        logger.setLevel(level)
        logger.propagate = propagate
