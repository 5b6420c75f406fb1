"""What a finished crawl hands over besides its XML: WARC files and a Parquet page index.

    python -m mrcrawl.export warc DIR         # DIR/warc/*.warc.gz   (output/warc.py)
    python -m mrcrawl.export index DIR        # DIR/index/*.parquet  (output/pageindex.py)
    python -m mrcrawl.export warc,index DIR   # both

Both read the per-layer stores doc/<L>/ and out/<L>/, not doc/merged: the
archive and the index keep every attempt, where the merge keeps one record
per URL.  They read one part file at a time, so a crawl of any size is
exported in bounded memory.  An export is written into a scratch directory
and renamed into place only when it is complete (replace_export): a failed or
killed export leaves the previous output whole, never half of a new one.

The command exports a finished crawl only, holding the crawl directory's
lock meanwhile (export_crawl): an export of a crawl that a run is still
working on would hold part of it, and stay in place when the run has ended.
The driver runs the exports after its crawl with `--export warc,index`,
through run_exports(), holding the lock itself.
"""
from __future__ import annotations

import argparse
import logging
import os
import shutil
import sys
import time
from pathlib import Path

from jobs.html_to_xml import MRHtmlToXml
from mrcrawl.cli import invocation, run_command
from mrcrawl.crawl_dir import UsageError, lock
from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.store.crawl_reader import CrawlReader, NoCrawl
from mrcrawl.store.crawl_store import CrawlStore, pause_point

EXPORT_KINDS = ("warc", "index")

log = logging.getLogger("mrcrawl.export")  # by name: run as `python -m`, __name__ is __main__


def parse_kinds(text: str) -> list[str]:
    """The exports a comma-separated list names (`warc,index`), as `crawl
    --export` and the export command take it: each once, in the order given.
    What is no export is kept, for kind_problems() to name."""
    return list(dict.fromkeys(kind.strip() for kind in text.split(",") if kind.strip()))


def kind_problems(kinds) -> list[str]:
    """A line for each of `kinds` that is no export."""
    return [f"{kind}: unknown export; choose from {', '.join(EXPORT_KINDS)}"
            for kind in kinds if kind not in EXPORT_KINDS]


def export_crawl(root: str | Path, kinds: list[str]) -> dict:
    """run_exports() for the export command: of a finished crawl only, and
    holding the crawl directory's lock, so that no run changes the crawl
    meanwhile.  Raises NoCrawl, or UsageError when another run holds the lock
    or the crawl is not finished."""
    store = CrawlReader(root, require_layers=False).store  # NoCrawl before the lock makes anything
    try:
        held = lock(store, store.lock_path, "crawl directory")
    except UsageError as error:
        raise UsageError(f"{error}; export once that run has ended") from None
    with held:
        refuse_unfinished(CrawlReader(root, require_layers=False))  # read under the lock: no run changes it now
        return run_exports(root, kinds)


def refuse_unfinished(crawl: CrawlReader) -> None:
    """A crawl is finished when the last step crawl.json names is its XML:
    a run that stopped before it (or a resume that went deeper) left one
    whose stores an export would hold only part of."""
    steps = list(crawl.state.done)
    if not steps or steps[-1].kind != MRHtmlToXml.STEP:
        where = f"its last finished step is {steps[-1]}" if steps else "no step of it has finished"
        raise UsageError(f"{crawl.store.root}: the crawl is not finished ({where}); finish it with the command that "
                         f"started it and --resume ({invocation('crawl')} ... --resume), then export it")


def run_exports(root: str | Path, kinds: list[str]) -> dict:
    """Run the named exports (of EXPORT_KINDS) of the crawl in `root`, in
    order, each replacing its previous output.  Returns, per kind, what it
    wrote: {"path", "files", "records", "bytes", "seconds", ...}.  The caller
    knows that no other run works on the crawl: the driver, which holds its
    lock, or export_crawl().

    Raises NoCrawl when `root` holds no crawl, ValueError for an unknown kind.
    """
    problems = kind_problems(kinds)
    if problems:
        raise ValueError(problems[0])
    crawl = CrawlReader(root)
    results = {}
    for kind in kinds:
        # Imported here so that each export loads only its own libraries.
        if kind == "warc":
            from mrcrawl.output.warc import write_warc as write
        else:
            from mrcrawl.output.pageindex import write_index as write
        final = crawl.store.root / kind
        previous = crawl.store.work_dir / f"export-{kind}-previous"
        put_back(crawl.store, previous, final)
        scratch = crawl.store.scratch(f"export-{kind}")
        scratch.mkdir()
        started = time.monotonic()
        pause_point(f"start export-{kind}")
        try:
            summary = write(crawl, scratch)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
        pause_point(f"written export-{kind}")
        replace_export(crawl.store, scratch, final, previous)
        summary.update(
            path=str(final),
            bytes=sum(path.stat().st_size for path in final.iterdir()),
            seconds=round(time.monotonic() - started, 3),
        )
        results[kind] = summary
    return results


def replace_export(store: CrawlStore, written: Path, final: Path, previous: Path) -> None:
    """Put a written export in place of the previous one.  The previous one
    is moved aside whole first, and deleted once the new one is in: a kill at
    any moment leaves one of them whole in place, or, between the two moves,
    neither, the previous one then kept aside for put_back(); never one
    half deleted."""
    if final.exists():
        os.replace(final, previous)
    store.commit(written, final)
    store.remove(previous)


def put_back(store: CrawlStore, previous: Path, final: Path) -> None:
    """Before an export: the previous one that an export killed midway left
    aside goes back in place, so that it is kept if this one fails too; what
    is left aside beside one in place is deleted."""
    if previous.exists():
        if final.exists():
            store.remove(previous)
        else:
            os.replace(previous, final)


def describe(kind: str, summary: dict) -> str:
    """One line of what an export wrote."""
    seconds = summary["seconds"]
    rate = summary["records"] / max(seconds, 1e-9)
    what = {"warc": "WARC records", "index": "index rows"}[kind]
    details = ", ".join(f"{count} {name}" for name, count in summary.get("by_type", {}).items())
    return (
        f"{kind}: {summary['records']} {what}{f' ({details})' if details else ''} in {summary['files']} file(s), "
        f"{summary['bytes'] / 1e6:.1f} MB, {summary['path']} ({seconds:.1f} s, {rate:.0f} records/s)"
    )


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def main(argv: list[str] | None = None) -> int:
    parser = _ArgumentParser(
        prog="mrcrawl export", allow_abbrev=False,
        description="Write a finished crawl's WARC archive (DIR/warc/), its Parquet page index (DIR/index/), or "
                    "both, replacing those there. What it wrote is said on stderr.",
        epilog="Exit status: 0 written; 1 an export failed (the error is shown; what was in place is kept); "
               "2 a bad command line, or DIR holds no crawl, a crawl that is not finished, or one another run is "
               "working on (one line on stderr; nothing written).",
    )
    parser.add_argument("kinds", metavar="KINDS", type=parse_kinds,
                        help="warc: WARC 1.1 files in DIR/warc/; index: Parquet page index in DIR/index/; "
                             "or both comma-separated: warc,index")
    parser.add_argument("directory", metavar="DIR", help="the crawl directory (the crawl's --output)")
    add_verbosity_options(parser)
    args = parser.parse_args(argv)
    problems = kind_problems(args.kinds) or ([] if args.kinds else ["KINDS: name an export: warc, index, or both"])
    if problems:
        parser.error(problems[0])
    configure_logging(args.verbosity)
    try:
        results = export_crawl(args.directory, args.kinds)
    except (NoCrawl, UsageError) as error:
        log.error(f"{parser.prog}: {error}")
        return 2
    for kind, summary in results.items():
        log.info(describe(kind, summary))
    return 0


if __name__ == "__main__":
    sys.exit(run_command(main))
