"""The driver's live progress: what a running step has done so far, on stderr.

While a step's job runs, a watcher thread reads its tasks' reports (through
mrcrawl/mr/progress.py: how depends on the runner) every POLL_SECONDS and
shows them: on a terminal, a bar that redraws in place (tqdm); elsewhere
(cron, CI, a pipe, or a terminal with no size, as a pseudo-terminal a
program makes has until it is given one), one plain line every `every`
seconds, and a last one when a step that printed any ends.

A crawl step shows pages done out of its frontier, pages per second, the
outcomes so far, the hosts still busy, and an ETA: the larger of the
politeness bound (a layer cannot end before its busiest host's URLs left x
its delay, as the fetch tasks report it) and the pages left at the rate so
far, which a layer's time limit cuts short; the line says which.  The other steps show their counters so far.
Where the runner passes nothing while a job runs, a step shows what it has:
its phase, if any, and the time elapsed.
"""
from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
import time
from typing import Callable, Iterator, TextIO

from tqdm import tqdm

from mrcrawl.logs import written_through

POLL_SECONDS = 0.5  # how often the watcher reads the tasks' reports
DEFAULT_EVERY = 30.0  # seconds between plain progress lines
BAR_WIDTH = 20  # the bar's characters: the figures after it are cut at the terminal's width, not the bar
# A crawl step's bar: the pages done after it, then the rest of the figures (tqdm's postfix).
BAR_FORMAT = f"{{desc}}: {{percentage:3.0f}}%|{{bar:{BAR_WIDTH}}}| {{n_fmt}}/{{total_fmt}} pages{{postfix}}"

log = logging.getLogger(__name__)


@contextlib.contextmanager
def progress_stream() -> Iterator[TextIO]:
    """A stream of its own onto this process's stderr, for the watcher thread.

    The local runner forks its tasks while the watcher may be writing.  A
    child forked while another thread holds a stream's lock finds it held
    for ever, and multiprocessing's workers flush sys.stderr as they exit:
    written through sys.stderr, progress could hang a worker.  No child
    touches this stream.
    """
    try:
        descriptor = os.dup(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # stderr is no file (a caller's capture): written as it is
        yield sys.stderr
        return
    with open(descriptor, "w", encoding="utf-8", errors="replace", buffering=1) as stream:
        yield stream


def terminal_columns(stream: TextIO) -> int:
    """The width of the terminal `stream` writes to: 0 when it is no terminal,
    or one with no size, where a bar would be drawn 0 characters wide."""
    try:
        return os.get_terminal_size(stream.fileno()).columns if stream.isatty() else 0
    except (AttributeError, OSError, ValueError):  # no file descriptor, or not a terminal after all
        return 0


def status_fields(status: str) -> dict[str, str]:
    """A task status of `key=value` words (the Crawler's) as a dict."""
    return dict(word.split("=", 1) for word in status.split() if "=" in word)


def duration(seconds: float) -> str:
    seconds = round(seconds)
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"


class StepProgress:
    """One running step's figures, from its tasks' reports.  The step's job
    says what its counters mean (mr/job.py's `progress`): a job that counts
    its records done, as the Crawler counts pages, is shown against `total`."""

    def __init__(self, step: str, job: type, total: int | None):
        self.step = step
        self.job = job
        self.counts_done = job.progress({})[0] is not None
        self.total = total
        self.started = time.monotonic()
        self._status_seen: dict[str, tuple[str, float]] = {}  # task -> (status, when first read)
        self.done = 0
        self.count = ""  # the records done, "15/39 pages", when the job counts them
        self.details = ""  # the rest of the figures

    @property
    def summary(self) -> str:
        return "; ".join(part for part in (self.count, self.details) if part)

    def update(self, reports) -> None:
        now = time.monotonic()
        elapsed = now - self.started
        parts = []
        if self.counts_done:
            parts += self._done_parts(reports, now, elapsed)
        else:
            parts.append(self.job.progress(reports.counters)[1])
        if not reports.live_counters and reports.phase:
            parts.append(reports.phase)
        parts.append(f"{duration(elapsed)} elapsed")
        self.details = "; ".join(part for part in parts if part)

    def _done_parts(self, reports, now: float, elapsed: float) -> list[str]:
        """The figures of a job that counts its records done, after the count (self.count)."""
        if not reports.live_counters:  # the runner passes counters only at the end
            return []
        self.done, outcomes = self.job.progress(reports.counters)
        rate = self.done / elapsed if elapsed > 0 else 0.0
        busy, bound, time_left = 0, 0.0, None
        for task, status in reports.statuses.items():
            seen = self._status_seen.get(task)
            if seen is None or seen[0] != status:
                seen = self._status_seen[task] = (status, now)
            fields = status_fields(status)
            busy += int(fields.get("busy", 0))
            # The bound counts from when the task reported it.
            bound = max(bound, float(fields.get("bound", 0)) - (now - seen[1]))
            if "time_left" in fields:  # the layer's time limit: no request starts after it
                time_left = max(time_left or 0.0, float(fields["time_left"]) - (now - seen[1]))
        left = self.total - self.done if self.total is not None else None
        self.count = f"{self.done}/{self.total} pages" if left is not None else f"{self.done} pages"
        parts = [f"{rate:.1f} pages/s", outcomes]
        # Until every fetch task has reported, the busiest host may be in one that has not.
        if not reports.statuses or reports.silent:
            return parts
        parts.append(f"{busy} host{'' if busy == 1 else 's'} busy")
        by_rate = left / rate if left and rate > 0 else 0.0
        # Under a time limit, what is left when it runs out is not waited for.
        by_time = by_rate if time_left is None else min(by_rate, max(time_left, 0.0))
        if left != 0 and (bound > 0 or by_time > 0):
            which = ("politeness bound" if bound >= by_time else
                     "at the rate so far" if by_time == by_rate else "time limit")
            parts.append(f"ETA {duration(max(bound, by_time))} ({which})")
        return parts

    def line(self) -> str:
        return f"{self.step}: {self.summary}"


class _AboveTheBar:
    """A logging handler's stream while a bar is live: each message is written
    above the bar, which is then drawn again (tqdm.write)."""

    def __init__(self, bar_stream: TextIO):
        self._bar_stream = bar_stream

    def write(self, text: str) -> None:
        tqdm.write(text, file=self._bar_stream, end="")

    def flush(self) -> None:
        self._bar_stream.flush()


class StepWatch:
    """Show a step's progress while the block runs its job."""

    def __init__(self, step: str, job: type, total: int | None, read: Callable, stream: TextIO, every: float):
        self.progress = StepProgress(step, job, total)
        self._read = read
        self._stream = stream
        self._every = every
        self._on_terminal = terminal_columns(stream) > 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, name=f"progress {step}", daemon=True)
        self._bar = None
        self._lines = 0
        self._log_lines_above = contextlib.ExitStack()

    def __enter__(self) -> "StepWatch":
        if self._on_terminal:
            crawl = self.progress.counts_done and self.progress.total is not None
            self._bar = tqdm(
                total=self.progress.total if crawl else None, desc=self.progress.step, file=self._stream,
                leave=False, dynamic_ncols=True, mininterval=0,
                # Without a frontier size there is no bar: the step's line is its description.
                bar_format=BAR_FORMAT if crawl else "{desc}")
            # Log lines written while the bar is live go above it, not through it.
            self._log_lines_above.enter_context(written_through(_AboveTheBar(self._stream)))
        self._thread.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._stop.set()
        self._thread.join()
        if exc_info[0] is None and self._bar is None:
            self._show(last=True)
        if self._bar is not None:
            self._bar.close()
            self._log_lines_above.close()

    def _watch(self) -> None:
        next_line = time.monotonic() + self._every
        while not self._stop.wait(POLL_SECONDS):
            if self._bar is not None:
                self._show()
            elif time.monotonic() >= next_line:
                next_line += self._every
                self._show()

    def _show(self, last: bool = False) -> None:
        try:
            self.progress.update(self._read())
        except Exception:  # the display must never stop the crawl
            log.debug("reading the step's progress failed", exc_info=True)
            return
        if self._bar is not None:
            if self._bar.total is None:
                self._bar.set_description_str(self.progress.line(), refresh=False)
            else:
                self._bar.n = self.progress.done
                self._bar.set_postfix_str(self.progress.details, refresh=False)
            self._bar.refresh()
        elif not last or self._lines:  # the last line ends a series, if one began
            self._lines += 1
            print(self.progress.line(), file=self._stream, flush=True)
