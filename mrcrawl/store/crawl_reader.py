"""A crawl directory as the exports read it: its config, its layers, its part files.

The exports (WARC, the Parquet page index) and the crawl report read the
per-layer stores doc/<L>/, out/<L>/ and dup/<L>/ one part file at a time,
through this one reader.
"""
from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Iterator

from mrcrawl.config import CrawlConfig
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol, decode_value

_store_lines = Utf8JsonProtocol()


class NoCrawl(Exception):
    """The directory holds no crawl to export; the message says what is missing."""


class CrawlReader:
    """A finished (or partly finished) crawl directory, as the exports read it."""

    def __init__(self, root: str | Path, require_layers: bool = True):
        """Raises NoCrawl when `root` holds no crawl, or with `require_layers`
        when no layer has been crawled yet (the crawl report reads the rest)."""
        self.store = CrawlStore(root)
        store = self.store
        if not store.holds_crawl():
            raise NoCrawl(f"{store.root}: holds no crawl (no {store.state_path.name})")
        refusal = store.link_refusal()
        if refusal:
            raise NoCrawl(refusal)
        if not store.config_path.exists():
            raise NoCrawl(f"{store.root}: holds no crawl config ({store.config_path.name} is missing)")
        self.layers = sorted(int(path.name) for path in (store.root / "doc").glob("*") if path.name.isdigit())
        if require_layers and not self.layers:
            raise NoCrawl(f"{store.root}: holds no crawled layer yet (no doc/0/)")
        self.config = CrawlConfig.from_json(store.config_path.read_text(encoding="utf-8"))
        try:
            self.state = CrawlState.load(store)
        except (ValueError, KeyError, TypeError) as error:  # StateMismatch among them
            raise NoCrawl(f"{store.state_path}: not a crawl state this version reads ({error})") from None

    @property
    def started(self) -> datetime:
        """When the crawl started (UTC)."""
        return self.state.started

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

    def duplicates(self, layer: int) -> Iterator[tuple[str, dict]]:
        """(URL, duplicate record) of each page of the layer whose payload, or
        content, is another URL's (records.DUPLICATE_FIELDS); none when the
        layer's db update has not run."""
        for part in self.store.parts(self.store.duplicates(layer)):
            yield from read_part(part)


def read_part(part: Path) -> Iterator[tuple[str, dict]]:
    """(key, record) of each line of a doc or out store's part file."""
    with open(part, "rb") as lines:
        for line in lines:
            line = line.rstrip(b"\r\n")
            if line:
                yield _store_lines.read(line)


def read_keys(part: Path) -> Iterator[str]:
    """The key of each line of a store's part file, the records left undecoded."""
    with open(part, "rb") as lines:
        for line in lines:
            if line.strip():
                yield decode_value(line.split(b"\t", 1)[0])


def fetch_key(url: str, fetched_at: str) -> str:
    """What ties a doc record to its out record.  The URL alone is not enough:
    two frontier URLs that redirect to one page on the same host give two doc
    records of that URL in one layer, told apart by their fetch time, which the
    out record keeps as its timestamp."""
    return f"{url} {fetched_at}"
