"""The WARC and Parquet exports of a real crawl of the test web.

One crawl (depth 3, inline runner) is exported once for the module; the
checks read the outputs back with warcio and pyarrow.dataset, and hold them
against the doc and out stores and against the web model, which knows the
exact bytes the server sent for every URL.
"""
from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.cli import main as warcio_main

from crawl_support import PageHandler, crawl, crawled_test_web, driver_command, outs_by_fetch, read_records, write_inputs
from mrcrawl import driver
from mrcrawl.config import CrawlConfig
from mrcrawl.crawl_dir import UsageError
from mrcrawl.driver import parse_args
from mrcrawl.export import run_exports
from mrcrawl.export import main as export_main
from mrcrawl.fetch.connection import known_for_request
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.frontier.crawldb import read_db
from mrcrawl.output import pageindex
from mrcrawl.output.pageindex import registered_domain
from mrcrawl.output.warc import IDENTICAL_PAYLOAD_DIGEST, archived_headers, request_message, warc_date
from mrcrawl.page.urls import normalize_url
from mrcrawl.store.crawl_reader import CrawlReader
from mrcrawl.store.records import FETCHED, NOT_HTML, REDIRECT, new_frontier_entry, payload_digest
from mrcrawl.testweb import expected_duplicates, expected_layers_for_config, start_test_web
from test_kill_anywhere import kill, start_paused_at

DEPTH = 3


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """A crawl of the test web with both exports written, and everything the checks compare with."""
    directory = tmp_path_factory.mktemp("export")
    with start_test_web(seed=1) as server:
        _, _, config, output = crawled_test_web(server, directory, DEPTH)
        web = server.web
        layers = expected_layers_for_config(web, config, server.seeds, DEPTH)
    summary = run_exports(output, ["warc", "index"])
    docs = [doc for layer in range(DEPTH) for _, doc in read_records(output / "doc" / str(layer))]
    return SimpleNamespace(web=web, output=output, config=config, summary=summary, docs=docs,
                           outs=outs_by_fetch(output, DEPTH),
                           warc=read_warc_files(output / "warc"),
                           duplicates=expected_duplicates(web, layers, config["max_page_bytes"]))


def read_warc_files(directory: Path) -> dict[str, list[SimpleNamespace]]:
    """Every record of every WARC file, its HTTP message parsed, its digests checked by warcio."""
    files = {}
    for path in sorted(directory.iterdir()):
        records = []
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream, check_digests=True):
                payload = record.raw_stream.read()  # the digests are checked as it is read
                records.append(SimpleNamespace(
                    type=record.rec_type, headers=record.rec_headers, http=record.http_headers,
                    payload=payload, digests_passed=record.digest_checker.passed,
                ))
        files[path.name] = records
    return files


def records_of(exported, kind: str) -> list[SimpleNamespace]:
    return [record for records in exported.warc.values() for record in records if record.type == kind]


def responses_of(exported) -> list[SimpleNamespace]:
    """The record of each response received: a response record, or a revisit
    record for a page whose payload is another URL's."""
    return records_of(exported, "response") + records_of(exported, "revisit")


def doc_by_fetch(exported) -> dict[tuple[str, str], dict]:
    return {(doc["url"], doc["fetched_at"]): doc for doc in exported.docs}


def fetch_of(record) -> tuple[str, str]:
    # The doc's fetched_at is ISO 8601 UTC to the millisecond, as WARC-Date is.
    return record.headers.get_header("WARC-Target-URI"), record.headers.get_header("WARC-Date")


def sent_body(exported, url: str) -> bytes:
    """What the server sent for `url`, as much of it as the crawler keeps."""
    return exported.web.page(url).body[: exported.config["max_page_bytes"]]


# ---- WARC ------------------------------------------------------------------


def test_every_file_starts_with_warcinfo_and_passes_warcio_check(exported):
    assert exported.warc, "no WARC file written"
    for name, records in exported.warc.items():
        assert name.endswith(".warc.gz")
        info = records[0]
        assert info.type == "warcinfo" and all(record.type != "warcinfo" for record in records[1:])
        assert info.headers.protocol == "WARC/1.1"
        assert info.headers.get_header("WARC-Filename") == name
        fields = dict(line.split(": ", 1) for line in info.payload.decode("utf-8").splitlines())
        assert fields["format"] == "WARC File Format 1.1"
        assert fields["software"].startswith("mrcrawl")
        assert fields["isPartOf"] == exported.config["name"]
        assert fields["language"] == exported.config["language"]
        assert fields["http-header-user-agent"] == exported.config["user_agent"]
        assert fields["robots"] == "obey"
        for record in records[1:]:
            assert record.headers.get_header("WARC-Warcinfo-ID") == info.headers.get_header("WARC-Record-ID")
            assert record.headers.get_header("WARC-Payload-Digest")
        for record in records:
            assert record.headers.get_header("WARC-Block-Digest")
            # A revisit's payload digest is its original's, which it does not hold: warcio checks nothing.
            passed = None if record.type == "revisit" else True
            assert record.digests_passed is passed, (name, record.type, record.headers.get_header("WARC-Target-URI"))
    with pytest.raises(SystemExit) as check:
        warcio_main(["check", *map(str, sorted((exported.output / "warc").iterdir()))])
    assert check.value.code == 0


def test_one_request_and_response_per_doc_record_with_a_response(exported):
    answered = [doc for doc in exported.docs if doc["status"] is not None]
    assert len(answered) < len(exported.docs), "the crawl should include URLs that got no response"
    responses, requests = responses_of(exported), records_of(exported, "request")
    assert len(responses) == len(answered) == len(requests)
    assert sorted(map(fetch_of, responses)) == sorted((doc["url"], doc["fetched_at"]) for doc in answered)
    by_type = exported.summary["warc"]["by_type"]
    assert by_type["response"] + by_type["revisit"] == len(answered)


def test_a_duplicate_is_an_identical_payload_revisit_of_its_original(exported):
    """The web serves some payloads under several URLs: each URL but the first
    to show one is archived as a revisit that names the original."""
    revisits = {record.headers.get_header("WARC-Target-URI"): record for record in records_of(exported, "revisit")}
    assert revisits and set(revisits) == set(exported.duplicates)
    for url, record in revisits.items():
        original = exported.duplicates[url]
        first_fetch = min(doc["fetched_at"] for doc in exported.docs
                          if doc["url"] == original and doc["outcome"] in (FETCHED, NOT_HTML))
        assert record.headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD_DIGEST
        assert record.headers.get_header("WARC-Refers-To-Target-URI") == original
        assert record.headers.get_header("WARC-Refers-To-Date") == warc_date(first_fetch)
        assert record.headers.get_header("WARC-Payload-Digest") == payload_digest(sent_body(exported, original))
        assert record.payload == b"" and record.http.get_statuscode() == "200"


def test_request_and_response_name_each_other(exported):
    for records in exported.warc.values():
        requests = {record.headers.get_header("WARC-Record-ID"): (position, record) for position, record in enumerate(records)
                    if record.type == "request"}
        for position, response in enumerate(records):
            if response.type != "response":
                continue
            request_position, request = requests[response.headers.get_header("WARC-Concurrent-To")]
            assert request_position == position - 1
            assert request.headers.get_header("WARC-Concurrent-To") == response.headers.get_header("WARC-Record-ID")
            assert fetch_of(request) == fetch_of(response)


def test_response_payloads_are_the_bytes_the_server_sent(exported):
    checked = Counter()
    for response in records_of(exported, "response"):
        url = response.headers.get_header("WARC-Target-URI")
        page = exported.web.page(url)
        assert response.payload == sent_body(exported, url), url
        assert payload_digest(response.payload) == response.headers.get_header("WARC-Payload-Digest")
        cut = len(page.body) > exported.config["max_page_bytes"]
        assert response.headers.get_header("WARC-Truncated") == ("length" if cut else None), url
        assert response.headers.get_header("WARC-IP-Address") == exported.web.host(url).address
        if cut:
            checked["truncated"] += 1
        if page.gzip_body is not None:
            checked["gzip"] += 1
        if page.charset and page.charset != "utf-8":
            checked[f"charset {page.charset}"] += 1
        if page.media_type in ("image/png", "application/pdf"):
            checked[page.media_type] += 1
        if page.status >= 400:
            checked["error page"] += 1
    for kind in ("truncated", "gzip", "image/png", "application/pdf", "error page",
                 "charset big5", "charset euc-jp", "charset gb18030", "charset shift_jis", "charset koi8-r",
                 "charset windows-1251"):
        assert checked[kind], f"no {kind} response was archived: {checked}"


def test_status_line_and_headers_are_the_docs(exported):
    docs = doc_by_fetch(exported)
    rewritten = ("content-length", "content-encoding", "x-crawler-content-length", "x-crawler-content-encoding")
    seen = Counter()
    for response in records_of(exported, "response"):
        doc = docs[fetch_of(response)]
        http = response.http
        assert (http.protocol, http.statusline) == (doc["http_version"], f"{doc['status']} {doc['reason']}")
        # Every other header is there, in the order and with the repeats it was sent with.
        assert [header for header in http.headers if header[0].lower() not in rewritten] == [
            tuple(header) for header in doc["headers"] if header[0].lower() not in rewritten]
        sent = {name.lower(): value for name, value in doc["headers"]}
        stored_length = str(len(response.payload))
        assert http.get_header("Content-Length") == stored_length
        assert http.get_header("Content-Encoding") is None
        assert http.get_header("X-Crawler-Content-Encoding") == sent.get("content-encoding")
        if sent["content-length"] == stored_length:
            assert http.get_header("X-Crawler-Content-Length") is None
        else:
            assert http.get_header("X-Crawler-Content-Length") == sent["content-length"]
            seen["gzip" if "content-encoding" in sent else "truncated"] += 1
    assert seen["gzip"] and seen["truncated"], seen


def test_request_records_show_what_the_crawler_sent(exported):
    for request in records_of(exported, "request"):
        url = request.headers.get_header("WARC-Target-URI")
        host = exported.web.host(url)
        http = request.http
        assert http.protocol == "GET" and http.statusline.endswith(" HTTP/1.1")
        assert url.startswith(host.origin) and http.statusline.split(" ")[0] == url[len(host.origin):]
        assert http.headers[0] == ("Host", f"{host.address}:{host.port}")
        assert http.get_header("User-Agent") == exported.config["user_agent"]
        assert http.get_header("Accept-Language").startswith(exported.config["language"] + ",")
        assert "gzip" in http.get_header("Accept-Encoding")
        assert request.payload == b""


KNOWN = {"etag": 'W/"5e-17"', "last_modified": "Mon, 05 Jan 2026 06:00:00 GMT", "signature": "s",
         "digest": "sha1:AAAA", "fetched_at": "2026-01-05T06:00:00.000Z"}


@pytest.mark.parametrize("through_proxy, known", [(False, None), (True, None), (False, KNOWN)],
                         ids=["direct", "proxy", "conditional"])
def test_archived_request_is_the_one_on_the_wire(through_proxy, known):
    """The request the fetcher sends a real server (or an HTTP proxy) equals
    the archived one: request line, and every header in order, the
    conditional ones included for a URL the crawl db knows."""
    received = []

    class Recorder(PageHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            received.append((self.requestline, list(self.headers.items())))
            self.send_html(b"<html><title>t</title></html>")

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    recorder = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        config = CrawlConfig(language="ja", user_agent="mrcrawl-test/1.0 (+http://127.0.0.1/about)", threads=1,
                             delay=0.0, obey_robots=False, allow_private_networks=True,
                             proxy=recorder if through_proxy else None)
        # Through the proxy the URL's own host is never connected to.  The
        # path is canonicalised (%7e, lower-case hex) as every frontier URL is.
        origin = "http://127.0.0.77:8080" if through_proxy else recorder
        fetcher = Fetcher(config, layer=0)
        fetcher.add(normalize_url(f"{origin}/a%7eb/c.html?q=%e4&x=y"), new_frontier_entry(3, False, 2, known))
        (doc,) = list(fetcher.finish())
    finally:
        server.shutdown()
        server.server_close()
    assert doc["status"] == 200
    ((request_line, headers),) = received
    archived = request_message(config, doc["url"], known_for_request(doc, doc["url"]))
    assert f"{archived.protocol} {archived.statusline}" == request_line
    assert request_line.startswith(f"GET {origin if through_proxy else ''}/a~b/c.html?q=%E4&x=y ")
    assert archived.headers == headers
    sent = dict(headers)
    if known:
        assert (sent["If-None-Match"], sent["If-Modified-Since"]) == (known["etag"], known["last_modified"])
    else:
        assert not {"If-None-Match", "If-Modified-Since"} & sent.keys()


def test_wire_form_headers_are_renamed_beside_the_stored_body():
    sent = [["Date", "x"], ["Transfer-Encoding", "chunked"], ["Content-Encoding", "gzip"],
            ["Set-Cookie", "a=1"], ["Set-Cookie", "b=2"]]
    assert archived_headers(sent, 1234) == [
        ("Date", "x"), ("X-Crawler-Transfer-Encoding", "chunked"), ("X-Crawler-Content-Encoding", "gzip"),
        ("Set-Cookie", "a=1"), ("Set-Cookie", "b=2"), ("Content-Length", "1234"),
    ]
    # A coding urllib3 does not undo stays: the stored body is still encoded.
    assert archived_headers([["Content-Encoding", "x-custom"], ["Content-Length", "10"]], 10) == [
        ("Content-Encoding", "x-custom"), ("Content-Length", "10"),
    ]
    assert archived_headers([["Content-Length", "3000"], ["Server", "s"]], 1000) == [
        ("X-Crawler-Content-Length", "3000"), ("Content-Length", "1000"), ("Server", "s"),
    ]


def test_metadata_records_hold_the_outlinks(exported):
    docs = doc_by_fetch(exported)
    responses = {record.headers.get_header("WARC-Record-ID"): record for record in responses_of(exported)}
    metadata = records_of(exported, "metadata")
    pages = [doc for doc in exported.docs if doc["status"] is not None and doc["outcome"] in (FETCHED, REDIRECT)]
    assert len(metadata) == len(pages)
    redirects_with_target = 0
    for record in metadata:
        assert record.headers.get_header("Content-Type") == "application/warc-fields"
        response = responses[record.headers.get_header("WARC-Refers-To")]
        assert fetch_of(response) == fetch_of(record)
        doc = docs[fetch_of(record)]
        fields = [line.split(": ", 1) for line in record.payload.decode("utf-8").splitlines()]
        assert fields[:2] == [["layer", str(doc["layer"])], ["outcome", doc["outcome"]]]
        outlinks = [value for name, value in fields if name == "outlink"]
        assert outlinks == exported.outs[(doc["url"], doc["fetched_at"])]["outlinks"]
        assert (["redirect-from", doc["redirect_from"]] in fields) == bool(doc["redirect_from"])
        if doc["outcome"] == REDIRECT and outlinks:
            assert outlinks == [doc["redirect_to"]]
            redirects_with_target += 1
    assert redirects_with_target


# ---- Parquet index -----------------------------------------------------------

EXPECTED_COLUMNS = [
    ("url", pa.string(), False),
    ("requested_url", pa.string(), False),
    ("redirect_from", pa.string(), True),
    ("host", pa.dictionary(pa.int32(), pa.string()), False),
    ("registered_domain", pa.dictionary(pa.int32(), pa.string()), True),
    ("layer", pa.int16(), False),
    ("outcome", pa.dictionary(pa.int32(), pa.string()), False),
    ("status", pa.int16(), True),
    ("fetched_at", pa.timestamp("ms", tz="UTC"), False),
    ("content_type", pa.dictionary(pa.int32(), pa.string()), True),
    ("encoding", pa.dictionary(pa.int32(), pa.string()), True),
    ("content_length", pa.int32(), True),
    ("truncated", pa.bool_(), False),
    ("digest", pa.string(), True),
    ("title", pa.string(), True),
    ("language", pa.dictionary(pa.int32(), pa.string()), False),
    ("outlink_count", pa.int32(), True),
    ("error", pa.string(), True),
    ("error_kind", pa.dictionary(pa.int32(), pa.string()), True),
    ("db_status", pa.dictionary(pa.int32(), pa.string()), True),
    ("score", pa.float64(), True),
    ("kind", pa.dictionary(pa.int32(), pa.string()), True),
]


def index_dataset(exported) -> ds.Dataset:
    return ds.dataset(exported.output / "index", format="parquet")


def test_index_schema_and_types(exported):
    schema = index_dataset(exported).schema
    assert [(field.name, field.type, field.nullable) for field in schema] == EXPECTED_COLUMNS
    for path in (exported.output / "index").iterdir():
        metadata = pq.ParquetFile(path).metadata
        assert metadata.row_group(0).column(0).compression == "ZSTD"


def test_index_counts_match_the_doc_store(exported):
    dataset = index_dataset(exported)
    assert dataset.count_rows() == len(exported.docs)
    # Each file has its own dictionaries; grouping needs them unified.
    table = dataset.to_table(columns=["layer", "outcome"]).unify_dictionaries()
    counts = table.group_by(["layer", "outcome"]).aggregate([([], "count_all")])
    from_index = {(row["layer"], row["outcome"]): row["count_all"] for row in counts.to_pylist()}
    from_docs = Counter((doc["layer"], doc["outcome"]) for doc in exported.docs)
    assert from_index == dict(from_docs)
    assert len({outcome for _, outcome in from_docs}) >= 6
    assert dataset.count_rows(filter=ds.field("layer") == 2) == sum(doc["layer"] == 2 for doc in exported.docs)


def test_index_rows_match_the_pages(exported):
    docs = doc_by_fetch(exported)
    db_records = dict(read_db(exported.output / "db"))
    cjk_titles = 0
    for row in index_dataset(exported).to_table().to_pylist():
        doc = docs[(row["url"], row["fetched_at"].strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z")]
        page = exported.web.page(row["url"])
        assert (row["requested_url"], row["redirect_from"], row["layer"], row["outcome"], row["status"], row["error"]) == (
            doc["requested_url"], doc["redirect_from"], doc["layer"], doc["outcome"], doc["status"], doc["error"])
        assert row["host"] == exported.web.host(row["url"]).address
        assert row["registered_domain"] is None  # every test host is an IP literal
        assert row["language"] == exported.config["language"]
        assert row["outlink_count"] == len(exported.outs[(doc["url"], doc["fetched_at"])]["outlinks"])
        assert row["db_status"] == db_records[row["url"]]["status"]
        if doc["status"] is None:
            assert (row["digest"], row["content_length"], row["title"]) == (None, None, None)
            continue
        body = sent_body(exported, row["url"])
        assert row["digest"] == "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode("ascii")
        assert row["content_length"] == len(body)
        assert row["truncated"] == (len(page.body) > len(body))
        if doc["outcome"] == FETCHED:
            assert row["title"] == page.title, row["url"]
            cjk_titles += any(ord(char) >= 0x3000 for char in page.title)
        else:
            assert row["title"] is None
    assert cjk_titles >= 5, "titles of CJK pages in legacy charsets should be among those checked"


def test_index_is_written_in_sorted_row_groups(exported, tmp_path, monkeypatch):
    """A layer larger than a row group streams out group by group, each sorted by site."""
    monkeypatch.setattr(pageindex, "BATCH_ROWS", 4)
    monkeypatch.setattr(pageindex, "ROW_GROUP_ROWS", 16)
    summary = pageindex.write_index(CrawlReader(exported.output), tmp_path)
    assert summary["records"] == len(exported.docs)
    layer_sizes = Counter(doc["layer"] for doc in exported.docs)
    assert summary["row_groups"] == sum(-(-size // 16) for size in layer_sizes.values()) > DEPTH
    for path in sorted(tmp_path.iterdir()):
        parquet = pq.ParquetFile(path)
        sorted_by = [parquet.schema_arrow.names[column.column_index] for column in parquet.metadata.row_group(0).sorting_columns]
        assert sorted_by == ["registered_domain", "host", "url"]
        for number in range(parquet.num_row_groups):
            rows = parquet.read_row_group(number, columns=["host", "url"]).to_pylist()
            assert 0 < len(rows) <= 16
            assert rows == sorted(rows, key=lambda row: (row["host"], row["url"]))  # no registered domains here


def test_registered_domain_follows_the_public_suffix_list():
    assert registered_domain("news.bbc.co.uk") == "bbc.co.uk"
    assert registered_domain("www.sina.com.cn") == "sina.com.cn"
    assert registered_domain("www.gov.cn") == "www.gov.cn"  # gov.cn is itself a public suffix
    assert registered_domain("gov.cn") is None
    assert registered_domain("a.b.c.kawasaki.jp") == "b.c.kawasaki.jp"  # the *.kawasaki.jp wildcard rule
    assert registered_domain("www.city.kawasaki.jp") == "city.kawasaki.jp"  # and its !city exception
    assert registered_domain("news.xn--fiqs8s") == "news.xn--fiqs8s"  # .中国 in punycode, as canonical URLs hold it
    assert registered_domain("someone.blogspot.com") == "blogspot.com"  # ICANN section only: a pay-level domain
    assert registered_domain("127.0.0.2") is None
    assert registered_domain("::1") is None
    assert registered_domain("localhost") is None


NO_NETWORK = """
import socket, sys

def refuse(*args, **kwargs):
    raise AssertionError(f"network used: {args!r}")

socket.socket.connect = socket.socket.connect_ex = refuse
socket.create_connection = socket.getaddrinfo = refuse
from mrcrawl.export import main
from mrcrawl.output.pageindex import registered_domain
assert registered_domain("news.bbc.co.uk") == "bbc.co.uk"
directory = sys.argv[1]
sys.exit(main(["index", directory]) or main(["warc", directory]))
"""


def test_exports_use_no_network_and_write_no_cache(exported, tmp_path):
    """In a fresh process whose sockets refuse to connect, with an empty home:
    both exports run again (the public suffix list comes from tldextract's
    bundled snapshot), and nothing is cached on disk."""
    home = tmp_path / "home"
    home.mkdir()
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
                   "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    result = subprocess.run([sys.executable, "-c", NO_NETWORK, str(exported.output)],
                            capture_output=True, text=True, env=environment, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""  # what an export wrote is said on stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith(f"index: {len(exported.docs)} index rows")
    assert lines[1].startswith(f"warc: {sum(len(records) for records in exported.warc.values())} WARC records")
    assert list(home.iterdir()) == []


def test_a_failed_export_leaves_the_previous_output(exported, tmp_path):
    copy = tmp_path / "crawl"
    shutil.copytree(exported.output, copy, ignore=shutil.ignore_patterns("xml"))
    before = {path.relative_to(copy): hashlib.sha1(path.read_bytes()).hexdigest()
              for kind in ("warc", "index") for path in (copy / kind).iterdir()}
    with open(sorted((copy / "doc" / str(DEPTH - 1)).glob("part-*"))[-1], "a", encoding="utf-8") as part:
        part.write('"http://127.0.0.2/broken"\t{"url": "http://127.0.0.2/bro\n')
    for kind in ("warc", "index"):
        with pytest.raises(json.JSONDecodeError):
            run_exports(copy, [kind])
    after = {path.relative_to(copy): hashlib.sha1(path.read_bytes()).hexdigest()
             for kind in ("warc", "index") for path in (copy / kind).iterdir()}
    assert after == before
    assert not list((copy / ".work").glob("export-*")), "the half-written export should be gone"


def test_cli_refuses_a_directory_without_a_crawl(tmp_path, capsys):
    assert export_main(["warc", str(tmp_path)]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and str(tmp_path) in error and "no crawl" in error
    assert not (tmp_path / "warc").exists()
    with pytest.raises(ValueError, match="cdx: unknown export"):
        run_exports(tmp_path, ["cdx"])


def test_export_takes_a_list_of_kinds_as_crawl_export_does(exported, tmp_path, capsys):
    """`export warc,index DIR` writes both, as `crawl --export warc,index`
    does; the list is read one way for both commands, and refused alike."""
    copy = tmp_path / "crawl"
    shutil.copytree(exported.output, copy, ignore=shutil.ignore_patterns("warc", "index"))
    crawl_words = ["seeds.txt", "--depth", "1", "--conf", "conf.yaml", "--export"]
    assert parse_args([*crawl_words, " index, warc,index"]).export == ["index", "warc"]
    assert export_main([" index, warc,index", str(copy)]) == 0
    said = capsys.readouterr().err.splitlines()
    assert [line.split(":")[0] for line in said] == ["index", "warc"]
    assert list((copy / "index").glob("*.parquet")) and list((copy / "warc").glob("*.warc.gz"))
    with pytest.raises(UsageError, match="^mrcrawl crawl: --export cdx: unknown export; choose from warc, index$"):
        parse_args([*crawl_words, "warc,cdx"])
    for kinds, refusal in [("warc,cdx", "cdx: unknown export; choose from warc, index"),
                           (",", "KINDS: name an export: warc, index, or both")]:
        with pytest.raises(SystemExit) as refused:
            export_main([kinds, str(copy)])
        assert refused.value.code == 2 and capsys.readouterr().err == f"mrcrawl export: {refusal}\n"


def export_command(directory: Path, kinds: str = "warc") -> list[str]:
    return [sys.executable, "-m", "mrcrawl.export", kinds, str(directory)]


def test_an_export_refuses_a_crawl_a_run_is_working_on_and_one_not_finished(tmp_path):
    """The issue's export, run while the crawl ran, wrote the little the crawl
    had then and left it in place.  An export of a crawl that a run holds is
    refused, naming that run; of one whose run was killed, refused with what
    to do; of the crawl resumed to its end, written."""
    output, log = tmp_path / "crawl", tmp_path / "crawl.log"
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, tmp_path)
        command = driver_command(seeds, conf, output, 2)
        running = start_paused_at(command, "start crawl/1", log)
        try:
            refused = subprocess.run(export_command(output), capture_output=True, text=True, timeout=120)
        finally:
            kill(running)
        # The run as it was started: `python -m` makes the module's file its first word.
        run = shlex.join([str(Path(driver.__file__)), *command[3:]])
        assert (refused.returncode, refused.stdout, refused.stderr) == (2, "", (
            f"mrcrawl export: {output}: another run is working on this crawl directory (pid {running.pid}: {run}); "
            "export once that run has ended\n"))
        assert not (output / "warc").exists()

        refused = subprocess.run(export_command(output, "warc,index"), capture_output=True, text=True, timeout=120)
        assert (refused.returncode, refused.stdout) == (2, "")
        said = refused.stderr.splitlines()
        assert len(said) == 1 and said[0].startswith(
            f"mrcrawl export: {output}: the crawl is not finished (its last finished step is place/1); finish it "
            "with the command that started it and --resume (")
        assert said[0].endswith("-m mrcrawl.driver ... --resume), then export it")
        assert not (output / "warc").exists() and not (output / "index").exists()

        resumed = subprocess.run([*command, "--resume"], capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        server.wait_idle()
    exported = subprocess.run(export_command(output, "warc,index"), capture_output=True, text=True, timeout=120)
    assert exported.returncode == 0, exported.stderr
    assert [line.split(":")[0] for line in exported.stderr.splitlines()] == ["warc", "index"]
    assert list((output / "warc").glob("*.warc.gz")) and list((output / "index").glob("*.parquet"))
    assert not list((output / ".work").glob("export-*"))


def warc_hashes(directory: Path) -> dict[str, str] | None:
    """Each WARC file's SHA-1 by name; None when there is no export in place."""
    if not directory.exists():
        return None
    return {path.name: hashlib.sha1(path.read_bytes()).hexdigest() for path in sorted(directory.iterdir())}


# Where an export is killed: before it writes (`start`), once it has written
# into its scratch directory (`written`), and while replacing the previous
# export (`replacing`: the previous one moved aside, the new one not in place).
EXPORT_KILLS = [("start export-warc", None), ("start export-warc", 0.3), ("written export-warc", None),
                ("replacing export-warc", None)]


@pytest.mark.parametrize("point, wait", EXPORT_KILLS, ids=["before writing", "while writing", "written",
                                                           "while replacing"])
def test_a_killed_export_leaves_the_previous_export_whole(exported, tmp_path, point, wait):
    """An export killed (SIGKILL) anywhere leaves in place the previous export
    whole, or none while it was replacing it: never part of one.  The next
    export puts the previous one back before it writes, so that it is kept
    if that one is killed too; the one after writes a whole export."""
    copy, log = tmp_path / "crawl", tmp_path / "export.log"
    shutil.copytree(exported.output, copy, ignore=shutil.ignore_patterns("xml", "index"))
    previous = warc_hashes(copy / "warc")
    killed = start_paused_at(export_command(copy), point, log)
    if wait is not None:  # let it go on writing, and kill it some way in
        os.kill(killed.pid, signal.SIGCONT)
        time.sleep(wait * exported.summary["warc"]["seconds"])
    kill(killed)
    assert killed.returncode == -signal.SIGKILL, "the export ended before it was killed"
    assert warc_hashes(copy / "warc") == (None if point.startswith("replacing") else previous)
    kill(start_paused_at(export_command(copy), "start export-warc", log))
    assert warc_hashes(copy / "warc") == previous
    done = subprocess.run(export_command(copy), capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sum(map(len, read_warc_files(copy / "warc").values())) == sum(map(len, exported.warc.values()))
    assert not list((copy / ".work").glob("export-*")), "an export's scratch or previous output left behind"


def test_driver_exports_after_the_crawl(tmp_path):
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, tmp_path)
        assert crawl(seeds, conf, tmp_path / "crawl", 1, "inline", "--export", "warc,index") == 0
    assert list((tmp_path / "crawl" / "warc").glob("*.warc.gz"))
    assert list((tmp_path / "crawl" / "index").glob("*.parquet"))


def test_warc_dates_keep_milliseconds_even_on_a_whole_second():
    from mrcrawl.output.warc import warc_date

    assert warc_date("2026-11-21T12:40:02.000Z") == "2026-11-21T12:40:02.000Z"
    assert warc_date("2026-11-21T12:40:02.057Z") == "2026-11-21T12:40:02.057Z"
    assert warc_date("2026-11-21T13:40:02.5+01:00") == "2026-11-21T12:40:02.500Z"
