"""The Parquet page index of a crawl: one row per attempted URL, every outcome.

    DIR/index/<name>-<start>-L<layer>.parquet

One file per layer, written part file by part file of doc/<L>/.  The only
thing held for a whole layer is what its out store says of each fetch: its
link count, and its page's title, which the Parser read when it parsed the
page (so the export parses no page; only a layer parsed by an older
version, whose out records hold no title, has its pages parsed again).
Rows are held for one row group at most.

Layout:
- Row groups of ROW_GROUP_ROWS rows.  An index row is a few hundred bytes, so
  a group is some 30-60 MB before compression: large enough that a scan reads
  long runs of each column, small enough that readers parallelise over a
  layer's groups (DuckDB splits work by row group, and its own groups are
  122,880 rows) and that the writer's buffer stays small.
- Each row group is sorted by registered_domain, host, url (IP-literal hosts,
  which have no registered domain, last), and the files say so in their
  sorting_columns.  A site's rows sit together, so the min/max statistics let
  a reader skip groups when it filters on a domain or host, and the
  dictionary-encoded columns compress well.  A layer that fits in one group
  is sorted whole; larger layers are sorted within each group, since sorting
  a whole layer would hold it in memory.
- Low-cardinality strings (host, registered_domain, outcome, content_type,
  encoding, language, error_kind, db_status) are Arrow dictionaries, stored
  as Parquet dictionary pages, read back as pandas categoricals.
- zstd compression: smaller than snappy for text-heavy columns at a
  similar decoding speed, and read by pyarrow, DuckDB and Spark alike.

registered_domain is the pay-level domain under the public suffix list's
ICANN section (news.bbc.co.uk -> bbc.co.uk), from the snapshot of the list
that tldextract ships (page/domains.py): an export never touches the
network, and the same crawl always gives the same index.  IP-literal hosts
have none (null).
"""
from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import NamedTuple

import pyarrow as pa
import pyarrow.parquet as pq

from mrcrawl.frontier.crawldb import NoCrawlDb, records_of
from mrcrawl.page.charset import decode_page
from mrcrawl.page.domains import registered_domain
from mrcrawl.page.html import parse_html
from mrcrawl.page.metadata import headline
from mrcrawl.page.urls import host_of
from mrcrawl.store.crawl_reader import CrawlReader, fetch_key, read_keys, read_part
from mrcrawl.store.records import error_kind, is_fetched_page, payload_digest, response_body

log = logging.getLogger(__name__)

ROW_GROUP_ROWS = 128 * 1024
BATCH_ROWS = 8 * 1024  # rows turned from Python values into Arrow at a time
_CATEGORY = pa.dictionary(pa.int32(), pa.string())

INDEX_SCHEMA = pa.schema([
    pa.field("url", pa.string(), nullable=False),
    pa.field("requested_url", pa.string(), nullable=False),
    pa.field("redirect_from", pa.string()),
    pa.field("host", _CATEGORY, nullable=False),
    pa.field("registered_domain", _CATEGORY),
    pa.field("layer", pa.int16(), nullable=False),
    pa.field("outcome", _CATEGORY, nullable=False),
    pa.field("status", pa.int16()),
    pa.field("fetched_at", pa.timestamp("ms", tz="UTC"), nullable=False),
    pa.field("content_type", _CATEGORY),
    pa.field("encoding", _CATEGORY),
    pa.field("content_length", pa.int32()),  # bytes of the stored body (cut at max_page_bytes)
    pa.field("truncated", pa.bool_(), nullable=False),
    pa.field("digest", pa.string()),  # sha1: + base32 of the stored body, as WARC-Payload-Digest
    pa.field("title", pa.string()),
    pa.field("language", _CATEGORY, nullable=False),  # the crawl's language
    pa.field("outlink_count", pa.int32()),  # null when the layer was never parsed
    pa.field("error", pa.string()),
    pa.field("error_kind", _CATEGORY),  # the error's kind (store/failures.py); "unknown" for records older than kinds
    pa.field("db_status", _CATEGORY),  # the URL's status in the crawl db when the index was written
    pa.field("score", pa.float64()),  # the URL's score in the crawl db when it was queued; null when it had none
    pa.field("kind", _CATEGORY),  # a feed's or sitemap's kind (feed, news_sitemap, sitemap, sitemap_index); null for a page
])
SORT_KEYS = [("registered_domain", "ascending"), ("host", "ascending"), ("url", "ascending")]
# The same columns with plain strings, as rows are first gathered.
_GATHER_SCHEMA = pa.schema([
    field.with_type(pa.string()) if pa.types.is_dictionary(field.type) else field for field in INDEX_SCHEMA
])

def page_title(doc: dict) -> str | None:
    """The headline of a fetched page, as the XML's <headline> has it, read
    from the page (for a layer whose out records hold none)."""
    try:
        return headline(parse_html(decode_page(doc)))
    except Exception:  # one page that breaks the parser must not stop the export
        log.exception("no title taken from %s", doc["url"])
        return None


class Parsed(NamedTuple):
    """What a layer's out store says of one fetch, for its index row."""

    outlink_count: int
    title: str | None  # its page's headline; None for no page, or an out record older than titles


NOT_PARSED = Parsed(None, None)  # a fetch of a layer that was never parsed


def index_row(doc: dict, language: str, parsed: Parsed = NOT_PARSED, db_status: str | None = None) -> dict:
    """One doc record as a row of the index."""
    body = response_body(doc)
    host = host_of(doc["url"])
    return {
        "url": doc["url"],
        "requested_url": doc["requested_url"],
        "redirect_from": doc["redirect_from"],
        "host": host,
        "registered_domain": registered_domain(host),
        "layer": doc["layer"],
        "outcome": doc["outcome"],
        "status": doc["status"],
        "fetched_at": datetime.fromisoformat(doc["fetched_at"]),
        "content_type": doc["content_type"],
        "encoding": doc["encoding"],
        "content_length": None if body is None else len(body),
        "truncated": bool(doc["truncated"]),
        "digest": None if body is None else payload_digest(body),
        "title": (page_title(doc) if parsed.title is None else parsed.title) if is_fetched_page(doc) else None,
        "language": language,
        "outlink_count": parsed.outlink_count,
        "error": doc["error"],
        "error_kind": error_kind(doc),
        "db_status": db_status,
        "score": doc.get("score"),  # records written before scores have no such field
        "kind": doc.get("kind"),
    }


def write_index(crawl: CrawlReader, directory: Path) -> dict:
    """Write the crawl's index files into `directory`; say what was written."""
    rows = row_groups = 0
    sorting = pq.SortingColumn.from_ordering(INDEX_SCHEMA, SORT_KEYS, null_placement="at_end")
    statuses = db_statuses(crawl)
    for layer in crawl.layers:
        parsed = parsed_fetches(crawl, layer)
        path = directory / f"{crawl.file_prefix}-L{layer}.parquet"
        with pq.ParquetWriter(
            path, INDEX_SCHEMA, compression="zstd", sorting_columns=sorting,
            use_dictionary=[field.name for field in INDEX_SCHEMA if pa.types.is_dictionary(field.type)],
        ) as writer:
            group = _RowGroup(writer)
            for part in crawl.doc_parts(layer):
                for _, doc in read_part(part):
                    found = parsed.get(fetch_key(doc["url"], doc["fetched_at"]), NOT_PARSED)
                    group.add(index_row(doc, crawl.config.language, found, statuses.get(doc["url"])))
            group.flush()
        rows += group.rows_written
        row_groups += pq.ParquetFile(path).metadata.num_row_groups
    return {"files": len(crawl.layers), "records": rows, "row_groups": row_groups}


def db_statuses(crawl: CrawlReader) -> dict[str, str]:
    """The crawl db status of each URL this crawl attempted, read from the
    partitions that hold them; empty when the crawl's db is gone (the index
    then says null)."""
    attempted = {url for layer in crawl.layers for part in crawl.doc_parts(layer) for url in read_keys(part)}
    try:
        return {url: record["status"] for url, record in records_of(Path(crawl.state.db), attempted).items()}
    except (KeyError, NoCrawlDb):
        return {}


def parsed_fetches(crawl: CrawlReader, layer: int) -> dict[str, Parsed]:
    """What the out store of a layer says of each fetch, by fetch_key; empty when it was never parsed."""
    if not crawl.has_outlinks(layer):
        return {}
    return {fetch_key(url, out["timestamp"]): Parsed(len(out["outlinks"]), (out.get("page") or {}).get("headline"))
            for url, out in crawl.out_records(layer)}


class _RowGroup:
    """Rows gathered into Arrow batches until a row group is full, then
    sorted and written as one group."""

    def __init__(self, writer: pq.ParquetWriter):
        self.writer = writer
        self.columns: dict[str, list] = {name: [] for name in INDEX_SCHEMA.names}
        self.pending = 0
        self.batches: list[pa.RecordBatch] = []
        self.batched = 0
        self.rows_written = 0

    def add(self, row: dict) -> None:
        for name, values in self.columns.items():
            values.append(row[name])
        self.pending += 1
        if self.pending == BATCH_ROWS:
            self._batch()
            if self.batched >= ROW_GROUP_ROWS:
                self.flush()

    def _batch(self) -> None:
        if self.pending:
            self.batches.append(pa.RecordBatch.from_pydict(self.columns, schema=_GATHER_SCHEMA))
            self.batched += self.pending
            self.columns = {name: [] for name in INDEX_SCHEMA.names}
            self.pending = 0

    def flush(self) -> None:
        self._batch()
        if not self.batches:
            return
        table = pa.Table.from_batches(self.batches).sort_by(SORT_KEYS)  # nulls last, as sorting_columns says
        self.writer.write_table(table.cast(INDEX_SCHEMA), row_group_size=ROW_GROUP_ROWS)
        self.rows_written += self.batched
        self.batches, self.batched = [], 0
