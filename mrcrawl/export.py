"""What a finished crawl hands over besides its XML: WARC files and a Parquet page index.

    python -m mrcrawl.export warc DIR     # DIR/warc/*.warc.gz   (warc.py)
    python -m mrcrawl.export index DIR    # DIR/index/*.parquet  (pageindex.py)

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
import shutil
import sys
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Iterator

from .config import CrawlConfig
from .protocols import Utf8JsonProtocol
from .store import CrawlStore

EXPORT_KINDS = ("warc", "index")
_store_lines = Utf8JsonProtocol()


class NoCrawl(Exception):
    """The directory holds no crawl to export; the message says what is missing."""


class CrawlReader:
    """A finished (or partly finished) crawl directory, as the exports read it."""

    def __init__(self, root: str | Path):
        self.store = CrawlStore(root)
        store = self.store
        if not store.holds_crawl():
            raise NoCrawl(f"{store.root}: holds no crawl (no {store.state_path.name})")
        if not store.config_path.exists():
            raise NoCrawl(f"{store.root}: holds no crawl config ({store.config_path.name} is missing)")
        self.layers = sorted(int(path.name) for path in (store.root / "doc").glob("*") if path.name.isdigit())
        if not self.layers:
            raise NoCrawl(f"{store.root}: holds no crawled layer yet (no doc/0/)")
        self.config = CrawlConfig.from_json(store.config_path.read_text(encoding="utf-8"))
        self.state = store.load_state()

    @property
    def started(self) -> datetime:
        """When the crawl started (UTC)."""
        return datetime.strptime(self.state["started_at"], "%Y_%m_%d_%H_%M_%S").replace(tzinfo=timezone.utc)

    @property
    def file_prefix(self) -> str:
        """`<config name>-<start as YYYYMMDDHHMMSS>`: what export file names start with."""
        name = "".join(char if char.isalnum() or char in "._-" else "_" for char in self.config.name)
        return f"{name or 'crawl'}-{self.started:%Y%m%d%H%M%S}"

    def doc_parts(self, layer: int) -> list[Path]:
        return self.store.parts(self.store.docs(layer))

    def has_outlinks(self, layer: int) -> bool:
        """False when the crawl stopped between the layer's Crawler and Parser steps."""
        return self.store.outlinks(layer).is_dir()

    def out_records(self, layer: int) -> Iterator[tuple[str, dict]]:
        for part in self.store.parts(self.store.outlinks(layer)):
            yield from read_part(part)


def read_part(part: Path) -> Iterator[tuple[str, dict]]:
    """(key, record) of each line of a doc or out store's part file."""
    with open(part, "rb") as lines:
        for line in lines:
            line = line.rstrip(b"\r\n")
            if line:
                yield _store_lines.read(line)


def fetch_key(url: str, fetched_at: str) -> str:
    """What ties a doc record to its out record.  The URL alone is not enough:
    two frontier URLs that redirect to one page on the same host give two doc
    records of that URL in one layer, told apart by their fetch time, which the
    out record keeps as its timestamp."""
    return f"{url} {fetched_at}"


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
            from .warc import write_warc as write
        else:
            from .pageindex import write_index as write
        final = crawl.store.root / kind
        scratch = crawl.store.scratch(f"export-{kind}")
        scratch.mkdir()
        started = time.monotonic()
        try:
            summary = write(crawl, scratch)
        except BaseException:
            shutil.rmtree(scratch, ignore_errors=True)
            raise
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
        prog="python -m mrcrawl.export",
        description="Write a crawl's WARC archive (DIR/warc/) or Parquet page index (DIR/index/).",
    )
    parser.add_argument("kind", choices=EXPORT_KINDS, help="warc: WARC 1.1 files; index: Parquet page index")
    parser.add_argument("directory", metavar="DIR", help="the crawl directory (the driver's --output)")
    args = parser.parse_args(argv)
    try:
        results = run_exports(args.directory, [args.kind])
    except NoCrawl as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    for kind, summary in results.items():
        print(describe(kind, summary))
    return 0


if __name__ == "__main__":
    # Run the imported module's main, not this __main__ copy: warc.py and
    # pageindex.py import mrcrawl.export, and there must be one of each class.
    from mrcrawl.export import main as export_main

    sys.exit(export_main())
