"""WARC 1.1 files of a crawl: every HTTP response it received, as received.

    DIR/warc/<name>-<start>-L<layer>-<part>.warc.gz

One file per doc part file of each layer (doc/<L>/part-*): a file is as large
as one task's output, so files stay bounded however large the crawl, and a
map-only job could later write each one where its part file lies.  A part
file with no HTTP response in it gives no file.  Each file is gzip-compressed
record by record (a reader can seek to any record) and starts with a
`warcinfo` record naming the software, the format and the crawl, dated the
run's start (crawl.json's `run`), so that a second export writes the same one.
Every other record's WARC-Date is its fetch's `fetched_at`: under `--now`
both are on the run's clock (records.RunClock), not the wall clock.

For every doc record that got an HTTP response (`status` not null), in this
order, as Common Crawl writes them:

- `request`: the GET the fetcher sent, request line and headers rebuilt by
  the very functions the fetcher sends them with (fetch/connection.py),
  conditional headers (If-None-Match, If-Modified-Since) included;
- `response`: the status line, the headers in the order and repetition they
  came in, and the stored body (records.response_body).  The body is stored
  after Content-Encoding and chunked Transfer-Encoding were undone, so, as
  Common Crawl does, the headers that described the wire form are renamed
  (`X-Crawler-Content-Encoding`, `X-Crawler-Transfer-Encoding`,
  `X-Crawler-Content-Length`) and a Content-Length of the stored body is put
  in: the record then parses as the HTTP message it holds.  A body cut at
  max_page_bytes gets `WARC-Truncated: length`;
- or, for a `not_modified` record (a 304 to a conditional request), a
  `revisit` record with WARC 1.1's server-not-modified profile in its place:
  the 304's status line and headers as received, no payload, and what the
  crawl db knew of the earlier fetch it stands for: WARC-Refers-To-Target-URI
  (the same URL), WARC-Refers-To-Date (that fetch's time) and
  WARC-Payload-Digest (that fetch's payload, which the profile defines as
  this record's payload).  The earlier response's record ID is not known to
  the crawl db, so there is no WARC-Refers-To;
- or, for a page whose payload (its very bytes, not only its content)
  repeats another URL's (the layer's dup store, frontier/dedup.py), a
  `revisit` record with the identical-payload-digest
  profile, as Common Crawl and Heritrix write for a payload seen before: the
  response's status line and headers, no payload, the shared
  WARC-Payload-Digest, and the original it repeats (WARC-Refers-To-Target-URI,
  WARC-Refers-To-Date: that URL and its fetch with this payload);
- `metadata` (fetched and redirect records only): `application/warc-fields`
  with the layer, the outcome, `redirect-from` when same-host redirects were
  followed, and one `outlink` field per link of the out record, in order.
  warc-fields rather than JSON because it is the format WARC defines for
  metadata records, and Heritrix's outlink fields already use it.

Request and response name each other with WARC-Concurrent-To; the metadata
record names the response with WARC-Refers-To.  Record IDs are UUIDs derived
from the fetch (layer, requested URL, fetch time), so exporting the same
crawl again gives the same IDs.  robots.txt responses are not in the doc
store and are not archived.
"""
from __future__ import annotations

import ipaddress
import json
import sqlite3
import tempfile
import uuid
from collections import Counter
from datetime import datetime, timezone
from importlib import metadata as package_metadata
from io import BytesIO
from pathlib import Path

from urllib3.response import HTTPResponse
from warcio.statusandheaders import StatusAndHeaders
from warcio.warcwriter import WARCWriter

from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.connection import known_for_request, request_headers, request_target
from mrcrawl.page.urls import host_of
from mrcrawl.store.crawl_reader import CrawlReader, fetch_key, read_part
from mrcrawl.store.records import (
    FETCHED,
    NOT_HTML,
    NOT_MODIFIED,
    REDIRECT,
    is_content_duplicate,
    payload_digest,
    response_body,
)

WARC_VERSION = "1.1"
WARC_1_1_SPEC = "https://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/"
SERVER_NOT_MODIFIED = "http://netpreserve.org/warc/1.1/revisit/server-not-modified"
IDENTICAL_PAYLOAD_DIGEST = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"
# Fixed, so that one fetch gets the same record IDs on every export.
RECORD_ID_NAMESPACE = uuid.UUID("5d0c6a0e-2f4b-4e8b-9a52-6d8b8f3c1e27")


def write_warc(crawl: CrawlReader, directory: Path) -> dict:
    """Write the crawl's WARC files into `directory`; say what was written."""
    by_type: Counter = Counter()
    files = 0
    with tempfile.TemporaryDirectory(prefix="mrcrawl-warc-") as scratch:
        for layer in crawl.layers:
            outlinks = LayerOutlinks(crawl, layer, Path(scratch) / f"out-{layer}.sqlite")
            duplicates = LayerDuplicates(crawl, layer, Path(scratch) / f"dup-{layer}.sqlite")
            try:
                for part in crawl.doc_parts(layer):
                    with WarcFile(directory / f"{crawl.file_prefix}-L{layer}-{part.name}.warc.gz", crawl, layer) as warc:
                        for _, doc in read_part(part):
                            if doc["status"] is not None:
                                warc.write_fetch(doc, outlinks, duplicates)
                    files += warc.opened
                    by_type.update(warc.by_type)
            finally:
                outlinks.close()
                duplicates.close()
    return {"files": files, "records": sum(by_type.values()), "by_type": dict(by_type)}


def request_message(config: CrawlConfig, url: str, known: dict | None = None) -> StatusAndHeaders:
    """The request line and headers the fetcher sent for `url`, with `known`
    (connection.known_for_request) the validators it sent back."""
    headers = list(request_headers(config, url, known).items())
    return StatusAndHeaders(f"GET {request_target(url, config.proxy)} HTTP/1.1", headers, is_http_request=True)


def archived_headers(headers: list, stored_length: int) -> list[tuple[str, str]]:
    """A response's headers as they must read beside the stored body: the
    wire-form headers renamed to X-Crawler-*, a true Content-Length added."""
    codings = [token.strip().lower() for name, value in headers if name.lower() == "content-encoding"
               for token in value.split(",")]
    # urllib3 undoes these codings for requests; if it undid any, the stored
    # body is no longer what Content-Encoding describes.
    decoded = any(coding in HTTPResponse.CONTENT_DECODERS for coding in codings)
    archived, length_written, dechunked = [], False, False
    for name, value in headers:
        lower = name.lower()
        if lower == "content-encoding" and decoded:
            archived.append(("X-Crawler-Content-Encoding", value))
        elif lower == "transfer-encoding":
            archived.append(("X-Crawler-Transfer-Encoding", value))
            dechunked = True
        elif lower == "content-length" and value.strip() != str(stored_length):
            archived.append(("X-Crawler-Content-Length", value))
            if not length_written:
                archived.append(("Content-Length", str(stored_length)))
                length_written = True
        else:
            archived.append((name, value))
            length_written |= lower == "content-length"
    if dechunked and not length_written:
        archived.append(("Content-Length", str(stored_length)))
    return archived


def warc_date(fetched_at: str) -> str:
    """WARC 1.1's W3C-ISO8601 date in UTC, to the millisecond, as the crawl
    records it: a fetch on a whole second keeps its ".000", so the date reads
    back as the doc record's `fetched_at`."""
    moment = datetime.fromisoformat(fetched_at).astimezone(timezone.utc)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def ip_address(url: str) -> str | None:
    """The URL's host when it is an IP literal; the crawl keeps no DNS answers."""
    try:
        return str(ipaddress.ip_address(host_of(url)))
    except ValueError:
        return None


def record_id(*fields) -> str:
    return f"<urn:uuid:{uuid.uuid5(RECORD_ID_NAMESPACE, ' '.join(map(str, fields)))}>"


def software() -> str:
    names = []
    for name in ("mrcrawl", "warcio"):
        try:
            names.append(f"{name}/{package_metadata.version(name)}")
        except package_metadata.PackageNotFoundError:  # run from a source tree that was never installed
            names.append(name)
    return " ".join(names)


class LayerTable:
    """Text by key, on local disk: a layer's records looked up one at a time,
    for a layer whose records do not fit in memory (their count does)."""

    def __init__(self, path: Path, rows):
        self.db = sqlite3.connect(path)
        self.db.execute("PRAGMA journal_mode = OFF")
        self.db.execute("PRAGMA synchronous = OFF")
        self.db.execute("CREATE TABLE rows (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        with self.db:
            self.db.executemany("INSERT OR REPLACE INTO rows VALUES (?, ?)", rows)

    def get(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM rows WHERE key = ?", (key,)).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self.db.close()


class LayerOutlinks(LayerTable):
    """A layer's out records' links, by fetch_key()."""

    def __init__(self, crawl: CrawlReader, layer: int, path: Path):
        self.complete = crawl.has_outlinks(layer)
        records = crawl.out_records(layer) if self.complete else ()
        super().__init__(path, ((fetch_key(url, out["timestamp"]), "\n".join(out["outlinks"])) for url, out in records))

    def links(self, url: str, fetched_at: str) -> list[str] | None:
        """The record's outlinks; None when its layer was never parsed."""
        text = self.get(fetch_key(url, fetched_at))
        if text is None:
            return None
        return text.split("\n") if text else []


class LayerDuplicates(LayerTable):
    """A layer's payload duplicate records (records.DUPLICATE_FIELDS), by URL:
    a page whose content, and not its bytes, repeats another's is archived
    as the response it was."""

    def __init__(self, crawl: CrawlReader, layer: int, path: Path):
        super().__init__(path, ((url, json.dumps(duplicate)) for url, duplicate in crawl.duplicates(layer)
                                if not is_content_duplicate(duplicate)))

    def of(self, url: str) -> dict | None:
        text = self.get(url)
        return None if text is None else json.loads(text)


class WarcFile:
    """One .warc.gz file, opened (and given its warcinfo record) on the first
    fetch written to it, so that a part file without responses leaves none."""

    def __init__(self, path: Path, crawl: CrawlReader, layer: int):
        self.path = path
        self.crawl = crawl
        self.layer = layer
        self.by_type: Counter = Counter()
        self.opened = False
        self.info_id = record_id("warcinfo", path.name)
        self._file = None
        self._writer: WARCWriter | None = None

    def __enter__(self) -> "WarcFile":
        return self

    def __exit__(self, *exc) -> None:
        if self._file is not None:
            self._file.close()

    def _write(self, record) -> None:
        self._writer.write_record(record)
        self.by_type[record.rec_type] += 1

    def _open(self) -> None:
        self._file = open(self.path, "wb")
        self._writer = WARCWriter(self._file, gzip=True, warc_version=WARC_VERSION)
        self.opened = True
        config = self.crawl.config
        fields = [
            ("software", software()),
            ("format", f"WARC File Format {WARC_VERSION}"),
            ("conformsTo", WARC_1_1_SPEC),
            ("isPartOf", config.name),
            ("description", f"layer {self.layer} of crawl {config.name!r} (language {config.language}), "
                            f"started {self.crawl.started:%Y-%m-%dT%H:%M:%SZ}"),
            ("language", config.language),
            ("http-header-user-agent", config.user_agent),
            ("robots", "obey" if config.obey_robots else "ignore"),
        ]
        payload = "".join(f"{name}: {value}\r\n" for name, value in fields).encode("utf-8")
        self._write(self._writer.create_warc_record(
            "", "warcinfo", payload=BytesIO(payload), length=len(payload),
            warc_headers_dict={
                "WARC-Type": "warcinfo",
                "WARC-Record-ID": self.info_id,
                "WARC-Date": warc_date(self.crawl.state.run),
                "WARC-Filename": self.path.name,
            },
        ))

    def write_fetch(self, doc: dict, outlinks: LayerOutlinks, duplicates: LayerDuplicates) -> None:
        """The request, response (or revisit) and (for pages and redirects)
        metadata records of one doc record."""
        if not self.opened:
            self._open()
        url, fetched_at = doc["url"], doc["fetched_at"]
        ids = {kind: record_id(kind, doc["layer"], doc["requested_url"], fetched_at)
               for kind in ("request", "response", "metadata")}
        common = {"WARC-Date": warc_date(fetched_at), "WARC-Target-URI": url, "WARC-Warcinfo-ID": self.info_id}
        exchange = dict(common)  # the request and response went to this address
        address = ip_address(url)
        if address:
            exchange["WARC-IP-Address"] = address

        self._write(self._writer.create_warc_record(
            url, "request",
            http_headers=request_message(self.crawl.config, url, known_for_request(doc, url)),
            warc_headers_dict={"WARC-Type": "request", "WARC-Record-ID": ids["request"], **exchange,
                               "WARC-Concurrent-To": ids["response"]},
        ))

        status_line = f"{doc['status']} {doc['reason']}" if doc["reason"] else str(doc["status"])
        protocol = doc["http_version"] or "HTTP/1.1"
        if doc["outcome"] == NOT_MODIFIED:
            self._write_revisit(doc, ids, exchange, StatusAndHeaders(status_line, doc["headers"] or [], protocol))
            return

        body = response_body(doc)
        http_headers = StatusAndHeaders(status_line, archived_headers(doc["headers"] or [], len(body)), protocol)
        duplicate = duplicates.of(url) if doc["outcome"] in (FETCHED, NOT_HTML) else None
        if duplicate is not None:
            self._write_duplicate(doc, ids, exchange, http_headers, duplicate)
        else:
            response_headers = {"WARC-Type": "response", "WARC-Record-ID": ids["response"], **exchange,
                                "WARC-Concurrent-To": ids["request"], "WARC-Payload-Digest": payload_digest(body)}
            if doc["truncated"]:
                response_headers["WARC-Truncated"] = "length"
            self._write(self._writer.create_warc_record(url, "response", payload=BytesIO(body), length=len(body),
                                                        http_headers=http_headers, warc_headers_dict=response_headers))

        if doc["outcome"] not in (FETCHED, REDIRECT):
            return
        links = outlinks.links(url, fetched_at)
        if links is None:
            return  # the layer was never parsed: no outlinks to tell
        fields = [("layer", doc["layer"]), ("outcome", doc["outcome"])]
        if doc["redirect_from"]:
            fields.append(("redirect-from", doc["redirect_from"]))
        fields += [("outlink", link) for link in links]
        payload = "".join(f"{name}: {value}\r\n" for name, value in fields).encode("utf-8")
        self._write(self._writer.create_warc_record(
            url, "metadata",
            payload=BytesIO(payload), length=len(payload), warc_content_type="application/warc-fields",
            warc_headers_dict={"WARC-Type": "metadata", "WARC-Record-ID": ids["metadata"], **common,
                               "WARC-Refers-To": ids["response"]},
        ))

    def _write_revisit(self, doc: dict, ids: dict, exchange: dict, http_headers: StatusAndHeaders) -> None:
        """A 304's record, in the response's place and with its ID: the
        headers as received (no body follows them for them to misdescribe),
        and a reference to the earlier fetch it confirms."""
        known = doc["known"] or {}
        warc_headers = {"WARC-Type": "revisit", "WARC-Record-ID": ids["response"], **exchange,
                        "WARC-Concurrent-To": ids["request"], "WARC-Profile": SERVER_NOT_MODIFIED,
                        "WARC-Refers-To-Target-URI": doc["url"]}
        if known.get("fetched_at"):
            warc_headers["WARC-Refers-To-Date"] = warc_date(known["fetched_at"])
        if known.get("digest"):
            warc_headers["WARC-Payload-Digest"] = known["digest"]
        # warcio's create_revisit_record insists on a digest and writes the
        # identical-payload-digest profile: a plain record of type revisit
        # takes these headers as they are.
        self._write(self._writer.create_warc_record(doc["url"], "revisit", http_headers=http_headers,
                                                    warc_headers_dict=warc_headers))

    def _write_duplicate(self, doc: dict, ids: dict, exchange: dict, http_headers: StatusAndHeaders,
                         duplicate: dict) -> None:
        """A page whose payload repeats another URL's, in the response's place
        and with its ID: the response's headers (as the response record would
        hold them), no payload, and the original it repeats."""
        warc_headers = {"WARC-Type": "revisit", "WARC-Record-ID": ids["response"], **exchange,
                        "WARC-Concurrent-To": ids["request"], "WARC-Profile": IDENTICAL_PAYLOAD_DIGEST,
                        "WARC-Refers-To-Target-URI": duplicate["duplicate_of"],
                        "WARC-Refers-To-Date": warc_date(duplicate["original_fetched_at"]),
                        "WARC-Payload-Digest": duplicate["digest"]}
        if doc["truncated"]:
            warc_headers["WARC-Truncated"] = "length"
        self._write(self._writer.create_warc_record(doc["url"], "revisit", http_headers=http_headers,
                                                    warc_headers_dict=warc_headers))
