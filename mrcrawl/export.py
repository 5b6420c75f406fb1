"""What a finished crawl hands over besides its XML: WARC files and a Parquet page index.

    python -m mrcrawl.export warc DIR     # DIR/warc/*.warc.gz   (output/warc.py)
    python -m mrcrawl.export index DIR    # DIR/index/*.parquet  (output/pageindex.py)

Both read the per-layer stores doc/<L>/ and out/<L>/, not doc/merged: the
archive and the index keep every attempt, where the merge keeps one record
per URL.  They read one part file at a time, so a crawl of any size is
exported in bounded memory.  An export is written into a scratch directory
and renamed into place only when it is complete (CrawlStore.commit): a failed
or interrupted export leaves the previous output, never half of a new one.

The driver runs them after a crawl with `--export warc,index`, through
run_exports().
"""
from __future__ import annotations

import argparse
import logging
import shutil
import sys
import time
from pathlib import Path

from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.store.crawl_reader import CrawlReader, NoCrawl
from mrcrawl.store.crawl_store import pause_point

EXPORT_KINDS = ("warc", "index")

log = logging.getLogger("mrcrawl.export")  # by name: run as `python -m`, __name__ is __main__


def run_exports(root: str | Path, kinds: list[str]) -> dict:
    """Run the named exports (of EXPORT_KINDS) of the crawl in `root`, in
    order, each replacing its previous output.  Returns, per kind, what it
    wrote: {"path", "files", "records", "bytes", "seconds", ...}.

    Raises NoCrawl when `root` holds no crawl, ValueError for an unknown kind.
    """
    unknown = [kind for kind in kinds if kind not in EXPORT_KINDS]
    if unknown:
        raise ValueError(f"unknown export {', '.join(unknown)} (known: {', '.join(EXPORT_KINDS)})")
    crawl = CrawlReader(root)
    results = {}
    for kind in kinds:
        # Imported here so that each export loads only its own libraries.
        if kind == "warc":
            from mrcrawl.output.warc import write_warc as write
        else:
            from mrcrawl.output.pageindex import write_index as write
        final = crawl.store.root / kind
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
        crawl.store.commit(scratch, final)
        summary.update(
            path=str(final),
            bytes=sum(path.stat().st_size for path in final.iterdir()),
            seconds=round(time.monotonic() - started, 3),
        )
        results[kind] = summary
    return results


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
        prog="mrcrawl export",
        description="Write a crawl's WARC archive (DIR/warc/) or Parquet page index (DIR/index/), "
                    "replacing the one there. What it wrote is said on stderr.",
    )
    parser.add_argument("kind", choices=EXPORT_KINDS,
                        help="warc: WARC 1.1 files in DIR/warc/; index: Parquet page index in DIR/index/")
    parser.add_argument("directory", metavar="DIR", help="the crawl directory (the crawl's --output)")
    add_verbosity_options(parser)
    args = parser.parse_args(argv)
    configure_logging(args.verbosity)
    try:
        results = run_exports(args.directory, [args.kind])
    except NoCrawl as error:
        log.error(f"{parser.prog}: {error}")
        return 2
    for kind, summary in results.items():
        log.info(describe(kind, summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
