"""Where the commands' messages go: stderr, through the logging module.

A command adds -v and -q to its parser (add_verbosity_options) and calls
configure_logging() with the count; its modules log under "mrcrawl".

    -q         warnings and errors only
    (neither)  the command's progress, and mrjob's warnings and errors
    -v         also the command's details and mrjob's own log lines
    -vv        everything, every library's debug lines too

stdout is left to what a command produces (a report, a dump, a table), so
that it can be piped.  While a live display draws on stderr, log lines go
through it (written_through) rather than across its drawing.
"""
from __future__ import annotations

import argparse
import contextlib
import io
import logging
import sys
from typing import TextIO

PACKAGE_LOGGER = "mrcrawl"
_HANDLER_NAME = "mrcrawl-stderr"


class _StderrHandler(logging.StreamHandler):
    """Writes to sys.stderr as it is when a line is logged (redirected, or
    captured by a caller that runs a command in its own process), not as it
    was when logging was set up; or, while a live display draws on stderr,
    through the display (written_through)."""

    def __init__(self):
        super().__init__(sys.stderr)
        self._stderr_at_start = sys.stderr
        self.display: TextIO | None = None

    @property
    def stream(self):
        if self.display:
            return self.display
        # mrjob's inline runner gives each task a binary stderr of its own,
        # for the task's counter lines: a line logged inside a task (a fetch
        # warning) goes to the stderr the command started with.
        return sys.stderr if isinstance(sys.stderr, io.TextIOBase) else self._stderr_at_start

    @stream.setter
    def stream(self, _):
        pass


class _Formatter(logging.Formatter):
    """The package's lines as they are written (they carry their own
    `mrcrawl:` where one is due); another library's with its name and level,
    so that a line of mrjob's is not taken for the crawler's."""

    def __init__(self):
        super().__init__("%(message)s")
        self._foreign = logging.Formatter("%(name)s: %(levelname)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        if record.name == PACKAGE_LOGGER or record.name.startswith(PACKAGE_LOGGER + "."):
            return super().format(record)
        return self._foreign.format(record)


@contextlib.contextmanager
def written_through(display: TextIO):
    """While the block runs, log lines are written through `display` (a live
    progress bar's writer, which puts them above the bar), not across it."""
    handlers = [handler for handler in logging.getLogger().handlers if isinstance(handler, _StderrHandler)]
    for handler in handlers:
        handler.display = display
    try:
        yield
    finally:
        for handler in handlers:
            handler.display = None


def add_verbosity_options(parser: argparse.ArgumentParser) -> None:
    """-v and -q, counted into `verbosity` (-q is -1)."""
    group = parser.add_mutually_exclusive_group()
    group.add_argument("-v", "--verbose", dest="verbosity", action="count", default=0,
                       help="more detail, and mrjob's own log lines; -vv: every library's debug lines too "
                            "(default: progress, warnings and errors)")
    group.add_argument("-q", "--quiet", dest="verbosity", action="store_const", const=-1,
                       help="warnings and errors only (default: progress too)")


def configure_logging(verbosity: int = 0, handler: logging.Handler | None = None) -> logging.Handler:
    """Send log lines to stderr (or through `handler`) at the levels of
    `verbosity`; calling it again replaces what an earlier call set up."""
    root = logging.getLogger()
    for old in [old for old in root.handlers if old.get_name() == _HANDLER_NAME]:
        root.removeHandler(old)
    handler = handler or _StderrHandler()
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(_Formatter())
    root.addHandler(handler)
    root.setLevel(logging.DEBUG if verbosity >= 2 else logging.WARNING)
    package_level = logging.WARNING if verbosity < 0 else logging.INFO if verbosity == 0 else logging.DEBUG
    logging.getLogger(PACKAGE_LOGGER).setLevel(package_level)
    # mrjob says at INFO what each runner does; an error that fails a step
    # (its "Probable cause of failure") is logged at ERROR and always shown.
    mrjob_level = logging.DEBUG if verbosity >= 2 else logging.INFO if verbosity == 1 else logging.WARNING
    logging.getLogger("mrjob").setLevel(mrjob_level)
    # Without -v, neither is mrjob's warning that no mrjob.conf exists: the normal case here.
    logging.getLogger("mrjob.conf").setLevel(logging.NOTSET if verbosity >= 1 else logging.ERROR)
    # mrjob relays Spark's and Hadoop's own log lines at their log4j level:
    # their warnings (no native-hadoop library, the Spark UI's port taken)
    # come with every step and say nothing about the crawl; their errors show.
    logging.getLogger("mrjob.logs.step").setLevel(logging.NOTSET if verbosity >= 1 else logging.ERROR)
    return handler
