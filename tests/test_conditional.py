"""Conditional requests, on a real server on loopback.

A URL the crawl db fetched before is asked for with its validators
(If-None-Match, If-Modified-Since); a 304 finishes its doc as `not_modified`;
the WARC export writes that doc as a server-not-modified `revisit` record
beside the conditional request that was sent.  What the server answered each
request (its own log) shows which requests carried validators: its pages
answer 304 only to a request whose validators match.
"""
from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.cli import main as warcio_main

from crawl_support import politeness_violations
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.export import run_exports
from mrcrawl.output.warc import SERVER_NOT_MODIFIED, warc_date
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import FETCHED, HTTP_ERROR, NOT_MODIFIED, new_frontier_entry, payload_digest
from mrcrawl.testweb import AGENT_TOKEN, Host, Page, Robots, RobotsGroup, Web
from mrcrawl.testweb.server import TestWebServer

ETAG = '"v1"'
LAST_MODIFIED = "Mon, 05 Jan 2026 06:00:00 GMT"
VALIDATORS = (("ETag", ETAG), ("Last-Modified", LAST_MODIFIED))
HTML = b"<!DOCTYPE html><html><head><title>t</title></head><body><p>text</p></body></html>"
DELAY = 0.1

# What the crawl db may know of a URL (records.KNOWN_FIELDS).
EARLIER = {"fetched_at": "2026-01-05T06:00:00.000Z", "digest": payload_digest(HTML), "signature": "sig"}
BY_ETAG = {"etag": ETAG, "last_modified": None, **EARLIER}
BY_DATE = {"etag": None, "last_modified": LAST_MODIFIED, "signature": None, "digest": None, "fetched_at": None}
NO_VALIDATORS = {"etag": None, "last_modified": None, **EARLIER}

# path: (what the server does, what the crawl db knows of the URL)
CASES = {
    "/by-etag": (dict(body=HTML, headers=VALIDATORS), BY_ETAG),
    "/by-date": (dict(body=HTML, headers=VALIDATORS), BY_DATE),
    "/unknown": (dict(body=HTML, headers=VALIDATORS), None),
    "/no-validators": (dict(body=HTML, headers=VALIDATORS), NO_VALIDATORS),
    "/changed": (dict(body=HTML, headers=(("ETag", '"v2"'),)), BY_ETAG),
    "/flaky": (dict(body=HTML, headers=VALIDATORS, flaky=True), BY_ETAG),  # 503 first: the retry asks again
    # A same-host redirect to a page whose validators the db's record would
    # match: the hop must not send them, for the record is not of that page.
    "/moved": (dict(status=301, headers=(("Location", "/target"),)), BY_ETAG),
    "/target": (dict(body=HTML, headers=VALIDATORS), "not fed"),
    # robots.txt is fetched for the host before any page, never conditionally;
    # fed as a page too, it is.
    "/robots.txt": (dict(body=b"User-agent: *\nAllow: /\n", content_type="text/plain", headers=VALIDATORS), BY_ETAG),
    # Broken servers, answering 304 to requests that asked nothing.
    "/unasked": (dict(status=304), None),
    "/unasked-known": (dict(status=304), NO_VALIDATORS),
}


def build(port: int) -> Web:
    host = Host("127.0.0.2", port, "conditional", Robots(200, (RobotsGroup(("*",), allow=("/",)),)))
    pages = [Page(url=host.url(path), kind="test", **served) for path, (served, _) in CASES.items()]
    return Web(seed=0, port=port, hosts=(host,), pages={page.url: page for page in pages},
               seed_urls=(pages[0].url,), seed_spellings={})


@pytest.fixture(scope="module")
def fetched():
    """Every fed URL's doc record by path, and what the server answered each path."""
    config = CrawlConfig(language="en", user_agent=f"{AGENT_TOKEN}/1.0", threads=2, delay=DELAY,
                         allow_private_networks=True)
    with TestWebServer(hosts=1, web_factory=build) as server:
        host = server.web.hosts[0]
        fetcher = Fetcher(config, layer=1)
        for rank, (path, (_, known)) in enumerate(CASES.items()):
            if known != "not fed":
                fetcher.add(host.url(path), new_frontier_entry(rank, False, 2, known))
        docs = {doc["requested_url"].removeprefix(host.origin): doc for doc in fetcher.finish()}
        server.wait_idle()
        log = server.log
    answered = defaultdict(list)
    for entry in log:
        answered[entry.path].append(entry.status)
    return SimpleNamespace(config=config, web=server.web, docs=docs, answered=answered, log=log, stats=fetcher.stats)


def test_validators_are_sent_only_to_the_url_they_were_taken_from(fetched):
    assert fetched.answered == {
        "/by-etag": [304], "/by-date": [304],
        "/unknown": [200], "/no-validators": [200],
        "/changed": [200],  # If-None-Match decides, and the tag is not the page's
        "/flaky": [503, 304],
        "/moved": [301], "/target": [200],
        "/robots.txt": [200, 304],  # the host's robots.txt fetch, then the page
        "/unasked": [304], "/unasked-known": [304],
    }


def test_a_304_to_a_conditional_request_is_not_modified(fetched):
    docs = fetched.docs
    for path in ("/by-etag", "/by-date", "/flaky", "/robots.txt"):
        doc = docs[path]
        assert (doc["outcome"], doc["status"], doc["error"], doc["error_kind"], doc["body"]) == (
            NOT_MODIFIED, 304, None, None, None), path
        assert doc["url"] == doc["requested_url"] and doc["redirect_from"] is None
        assert [name for name, _ in doc["headers"] if name in ("ETag", "Last-Modified")] == ["ETag", "Last-Modified"]
        assert doc["hops"] == 2 and doc["known"] == CASES[path][1]
    assert docs["/flaky"]["attempts"] == 2
    assert (docs["/moved"]["outcome"], docs["/moved"]["url"]) == (FETCHED, fetched.web.hosts[0].url("/target"))
    assert {docs[path]["outcome"] for path in ("/unknown", "/no-validators", "/changed")} == {FETCHED}


def test_a_304_nobody_asked_for_is_an_http_error(fetched):
    for path in ("/unasked", "/unasked-known"):
        doc = fetched.docs[path]
        assert (doc["outcome"], doc["status"], doc["error"]) == (HTTP_ERROR, 304, "HTTP 304")
        assert doc["error_kind"] == FailureKind.HTTP_UNEXPECTED


def test_a_304_counts_for_politeness_like_any_answer(fetched):
    config = fetched.config
    assert fetched.stats["requests"] == len(fetched.log)
    limits = {"delay": config.delay, "max_crawl_delay": config.max_crawl_delay}
    assert politeness_violations(fetched.log, fetched.web, limits) == []


def test_not_modified_is_archived_as_a_revisit(fetched, tmp_path):
    docs = fetched.docs.values()
    crawl = write_crawl(tmp_path / "crawl", fetched.config, docs)
    summary = run_exports(crawl, ["warc"])["warc"]
    not_modified = {doc["url"]: doc for doc in docs if doc["outcome"] == NOT_MODIFIED}
    assert summary["by_type"]["revisit"] == len(not_modified) == 4
    assert summary["by_type"]["response"] == len(docs) - len(not_modified)

    (path,) = (crawl / "warc").iterdir()
    with pytest.raises(SystemExit) as check:
        warcio_main(["check", str(path)])
    assert check.value.code == 0
    with open(path, "rb") as stream:
        records = [SimpleNamespace(type=record.rec_type, headers=record.rec_headers, http=record.http_headers,
                                   payload=record.content_stream().read()) for record in ArchiveIterator(stream)]
    by_id = {record.headers.get_header("WARC-Record-ID"): record for record in records}
    revisits = [record for record in records if record.type == "revisit"]
    assert sorted(record.headers.get_header("WARC-Target-URI") for record in revisits) == sorted(not_modified)
    for revisit in revisits:
        headers = revisit.headers
        doc = not_modified[headers.get_header("WARC-Target-URI")]
        known = doc["known"]
        assert headers.get_header("WARC-Profile") == SERVER_NOT_MODIFIED
        assert headers.get_header("WARC-Refers-To-Target-URI") == doc["url"]
        assert headers.get_header("WARC-Date") == doc["fetched_at"]
        assert headers.get_header("WARC-Refers-To-Date") == (known["fetched_at"] and warc_date(known["fetched_at"]))
        assert headers.get_header("WARC-Payload-Digest") == known["digest"]
        assert headers.get_header("WARC-Refers-To") is None  # the crawl db keeps no record IDs
        assert (revisit.http.protocol, revisit.http.statusline) == ("HTTP/1.1", "304 Not Modified")
        assert revisit.http.headers == [tuple(header) for header in doc["headers"]]
        assert revisit.payload == b""
        # The request it answers: the conditional GET that was sent.
        request = by_id[headers.get_header("WARC-Concurrent-To")]
        assert (request.type, request.headers.get_header("WARC-Target-URI")) == ("request", doc["url"])
        sent = {"If-None-Match": known["etag"], "If-Modified-Since": known["last_modified"]}
        assert {name: request.http.get_header(name) for name in sent} == sent
    # Of the other requests, only the one whose page had changed sent validators.
    conditional = {request.http.statusline.split(" ")[0] for request in records if request.type == "request"
                   and (request.http.get_header("If-None-Match") or request.http.get_header("If-Modified-Since"))}
    assert conditional == {"/by-etag", "/by-date", "/flaky", "/robots.txt", "/changed"}


def write_crawl(root: Path, config: CrawlConfig, docs) -> Path:
    """A crawl directory holding `docs` as its layer 1, as the exports read one."""
    store = CrawlStore(root)
    store.make_root()
    CrawlState.new(config, str(root / "seeds.txt"), 1, datetime(2026, 1, 6, 6, tzinfo=timezone.utc),
                   str(root / "db")).save(store)
    store.write_text(store.config_path, config.to_json())
    layer = Path(store.docs(1))
    layer.mkdir(parents=True)
    lines = Utf8JsonProtocol()
    with open(CrawlStore.part_file(layer), "wb") as part:
        for doc in docs:
            part.write(lines.write(doc["url"], doc) + b"\n")
    return root
