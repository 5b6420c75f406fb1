"""`mrcrawl COMMAND ...`: one command for every tool, as Scrapy and Nutch have.

Each command is its module's `python -m` form, given the rest of the command
line unchanged: `mrcrawl crawl ...` is `python -m mrcrawl.driver ...`.  A
module is imported only when its command runs, so that `mrcrawl db` does not
load mrjob or Spark's bindings.  Both forms run the command's main() through
run_command(), which ends a command whose reader closed its stdout quietly.
"""
from __future__ import annotations

import argparse
import importlib
import os
import select
import shlex
import shutil
import sys
from importlib import metadata
from typing import NamedTuple

PROG = "mrcrawl"
# A command whose stdout its reader closed (`mrcrawl db dump DB | head`): 128 + SIGPIPE, as a
# shell reports `cat` ended by it.
EXIT_STDOUT_CLOSED = 141


class Command(NamedTuple):
    module: str  # its `python -m` form; the module has main(argv) -> exit status
    summary: str  # one line for `mrcrawl --help`


COMMANDS = {
    "crawl": Command("mrcrawl.driver", "crawl seed URLs layer by layer with MapReduce jobs"),
    "export": Command("mrcrawl.export", "write a crawl's WARC archive or Parquet page index"),
    "report": Command("mrcrawl.report", "write a crawl's report as one self-contained HTML file"),
    "db": Command("mrcrawl.db", "read a crawl db: stats, the top scores, one URL's record or inlinks, or a dump"),
    "inject": Command("mrcrawl.inject", "add URLs to a crawl db without crawling them, due for the next crawl"),
    "show": Command("mrcrawl.show", "print one URL's record, headers and page from a crawl"),
    "parsechecker": Command("mrcrawl.parsechecker", "fetch one URL with a config's rules and show every stage's result"),
    "bench": Command("mrcrawl.bench", "measure the crawler against its bounds and against Scrapy"),
    "testweb": Command("mrcrawl.testweb", "serve the generated test web, or crawl it in a demo"),
}


def invocation(command: str) -> str:
    """`command` as this process was started, for a hint naming a command to
    run next: the script or interpreter that ran, as the user can type it
    where they are (`runnable`), then `crawl`, `-m mrcrawl crawl`, or the
    module's own `-m mrcrawl.driver`: `.venv/bin/mrcrawl crawl`,
    `.venv/bin/python -m mrcrawl.driver`."""
    started_as = sys.argv[0].replace("\\", "/")
    if started_as.rsplit("/", 1)[-1] == PROG:
        return f"{runnable(sys.argv[0])} {command}"
    interpreter = runnable(sys.executable or "python")
    if started_as.endswith(f"/{PROG}/__main__.py"):
        return f"{interpreter} -m {PROG} {command}"
    return f"{interpreter} -m {COMMANDS[command].module}"


def runnable(program: str) -> str:
    """`program` as a shell in the current directory runs it: its bare name
    when PATH finds this very file there (an active venv), else its path:
    relative when it lies below the current directory, absolute otherwise."""
    path = os.path.abspath(program)
    name = os.path.basename(path)
    found = shutil.which(name)
    if found and os.path.abspath(found) == path:
        return name
    relative = os.path.relpath(path)
    if relative == os.pardir or relative.startswith(os.pardir + os.sep):
        return shlex.quote(path)
    return shlex.quote(relative if os.sep in relative else os.path.join(os.curdir, relative))


class CommandParser(argparse.ArgumentParser):
    """A command's parser whose usage error is one line on stderr, `mrcrawl
    COMMAND: what is wrong`, and exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


class CommandListFormatter(argparse.HelpFormatter):
    """argparse measures the commands' names two columns left of where it
    lists them, so a name as long as `parsechecker` would push its line to
    the next: measure them where they are listed."""

    def add_argument(self, action):
        super().add_argument(action)
        for command in self._iter_indented_subactions(action):  # indented while it yields
            self._action_max_length = max(self._action_max_length,
                                          len(self._format_action_invocation(command)) + self._current_indent)


def parser() -> argparse.ArgumentParser:
    """The parser of the command's first word only: it names the command,
    and makes --help, --version and the usage errors."""
    top = argparse.ArgumentParser(
        prog=PROG, allow_abbrev=False, formatter_class=CommandListFormatter,
        description="A polite, layer-by-layer MapReduce web crawler.",
        epilog=f"`{PROG} COMMAND ...` is the same as `python -m mrcrawl.COMMAND ...`, but for crawl, which is "
               f"`python -m mrcrawl.driver ...`. `{PROG} COMMAND --help` gives a command's options.",
    )
    top.add_argument("--version", action="version", version=f"{PROG} {metadata.version(PROG)}")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        commands.add_parser(name, help=command.summary, add_help=False, allow_abbrev=False)
    return top


def main(argv: list[str] | None = None) -> int:
    return run_command(dispatch, sys.argv[1:] if argv is None else list(argv))


def dispatch(argv: list[str]) -> int:
    """Run the command `argv` names with the rest of it."""
    top = parser()
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        top.error(f"unrecognized option {argv[0]}: name a COMMAND first; its options follow it")
    # Only the first word is this parser's: the rest, --help included, is the command's.
    name = top.parse_args(argv[:1]).command
    module = importlib.import_module(COMMANDS[name].module)
    if hasattr(module, "__path__"):  # a package: `python -m` runs its __main__
        module = importlib.import_module(f"{module.__name__}.__main__")
    return module.main(argv[1:])


def run_command(command_main, argv: list[str] | None = None) -> int:
    """Run a command's main(argv) and return its exit status.  A stdout that
    its reader has closed (`| head`) ends the command quietly, as it ends
    `cat`: EXIT_STDOUT_CLOSED, and no traceback."""
    try:
        try:
            status = command_main(argv)
        except SystemExit:  # --help, or a usage error: what argparse printed is flushed here
            sys.stdout.flush()
            raise
        sys.stdout.flush()  # here, not as Python exits, where the closed pipe would be reported
        return status
    except BrokenPipeError:
        if not stdout_closed():  # a pipe or socket of the command's own: not the reader's doing
            raise
        # Python flushes stdout once more as it exits: what is left goes nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_STDOUT_CLOSED


def stdout_closed() -> bool:
    """Whether stdout is a pipe (or socket) whose reader has gone: polling
    its end says so."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & (select.POLLERR | select.POLLHUP) for _, events in poller.poll(0))
    except (AttributeError, OSError, ValueError):  # no stdout, or not one with a file descriptor
        return False


if __name__ == "__main__":
    sys.exit(main())
