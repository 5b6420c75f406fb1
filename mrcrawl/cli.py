"""`mrcrawl COMMAND ...`: one command for every tool, as Scrapy and Nutch have.

Each command is its module's `python -m` form, given the rest of the command
line unchanged: `mrcrawl crawl ...` is `python -m mrcrawl.driver ...`.  A
module is imported only when its command runs, so that `mrcrawl db` does not
load mrjob or Spark's bindings.
"""
from __future__ import annotations

import argparse
import importlib
import sys
from importlib import metadata
from typing import NamedTuple

PROG = "mrcrawl"


class Command(NamedTuple):
    module: str  # its `python -m` form; the module has main(argv) -> exit status
    summary: str  # one line for `mrcrawl --help`


COMMANDS = {
    "crawl": Command("mrcrawl.driver", "crawl seed URLs layer by layer with MapReduce jobs"),
    "export": Command("mrcrawl.export", "write a crawl's WARC archive or Parquet page index"),
    "report": Command("mrcrawl.report", "write a crawl's report as one self-contained HTML file"),
    "db": Command("mrcrawl.db", "read a crawl db: stats, one URL's record, or a dump"),
    "bench": Command("mrcrawl.bench", "measure the crawler against its bounds and against Scrapy"),
    "testweb": Command("mrcrawl.testweb", "serve the generated test web, or crawl it in a demo"),
}


def invocation(command: str) -> str:
    """How this process was started as `command`, for a hint naming a command
    to run next: `mrcrawl crawl`, `python -m mrcrawl crawl`, or the module's
    own `python -m mrcrawl.driver`."""
    started_as = sys.argv[0].replace("\\", "/")
    if started_as.rsplit("/", 1)[-1] == PROG:
        return f"{PROG} {command}"
    if started_as.endswith(f"/{PROG}/__main__.py"):
        return f"python -m {PROG} {command}"
    return f"python -m {COMMANDS[command].module}"


def parser() -> argparse.ArgumentParser:
    """The parser of the command's first word only: it names the command,
    and makes --help, --version and the usage errors."""
    top = argparse.ArgumentParser(
        prog=PROG,
        description="A polite, layer-by-layer MapReduce web crawler.",
        epilog=f"`{PROG} COMMAND ...` is the same as `python -m mrcrawl.COMMAND ...`, but for crawl, which is "
               f"`python -m mrcrawl.driver ...`. `{PROG} COMMAND --help` gives a command's options.",
    )
    top.add_argument("--version", action="version", version=f"{PROG} {metadata.version(PROG)}")
    commands = top.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, command in COMMANDS.items():
        commands.add_parser(name, help=command.summary, add_help=False)
    return top


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    top = parser()
    if argv and argv[0].startswith("-") and argv[0] not in ("-h", "--help", "--version"):
        top.error(f"unrecognized option {argv[0]}: name a COMMAND first; its options follow it")
    # Only the first word is this parser's: the rest, --help included, is the command's.
    name = top.parse_args(argv[:1]).command
    module = importlib.import_module(COMMANDS[name].module)
    if hasattr(module, "__path__"):  # a package: `python -m` runs its __main__
        module = importlib.import_module(f"{module.__name__}.__main__")
    return module.main(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
