"""End to end: crawls of the generated test web with real mrjob runners,
checked layer by layer against the oracle's BFS and against the server's log."""
from __future__ import annotations

import base64
import json
import os
import re
from collections import Counter

import pytest
from lxml import etree

from crawl_support import (
    LoopbackProxy, assert_doc_schema, crawl, frontier, layer_docs, layer_triples, politeness_violations,
    read_records, seed_store, write_inputs,
)
from jobs.html_to_xml import MRHtmlToXml
from jobs.parser import MRParser
from mrcrawl.driver import EXIT_NOTHING_FETCHED
from mrcrawl.page import html
from mrcrawl.page.charset import decode_page
from mrcrawl.store.records import FETCHED, REDIRECT, REDIRECT_TARGET, is_fetched_page
from mrcrawl.testweb import expected_duplicates, expected_layers_for_config


# Every depth inline; the local runner at the deepest, whose layers hold the
# shallower crawls' (where a crawl stops is the driver's, the same on each runner).
@pytest.mark.parametrize("depth, runner", [(1, "inline"), (2, "inline"), (3, "inline"), (4, "inline"), (4, "local")])
def test_each_layer_equals_the_oracle(web_server, tmp_path, runner, depth):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, depth, runner) == 0
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=depth)
    crawled = sorted(int(p.name) for p in (output / "doc").iterdir() if p.name.isdigit())
    assert crawled == list(range(len(expected)))
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
        # The Crawler's reduce runs in one wave: one task inline, at most one per core locally.
        tasks = len(list((output / "doc" / str(layer)).glob("part-*")))
        assert 1 <= tasks <= (1 if runner == "inline" else os.cpu_count())
    web_server.wait_idle()
    assert politeness_violations(web_server.log, web_server.web, config) == []


def test_stores_of_a_depth_3_crawl(web_server, tmp_path, monkeypatch):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    # Every HTML parse of the crawl, whichever stage makes it, goes through
    # parse_html, which encodes the page's text once: the texts it was given.
    parsed_texts = []
    encode = html._utf8
    monkeypatch.setattr(html, "_utf8", lambda text: parsed_texts.append(text) or encode(text))
    assert crawl(seeds, conf, output, 3) == 0
    monkeypatch.undo()
    web = web_server.web

    assert seed_store(output) == web_server.seeds
    assert sorted(frontier(output, 0)) == sorted(web_server.seeds)  # a new db: nothing else is due
    all_docs = []
    for layer in range(3):
        urls = frontier(output, layer)
        assert len(urls) == len(set(urls)), f"in/{layer} repeats a URL"
        docs = layer_docs(output, layer)
        assert sorted(doc["requested_url"] for doc in docs) == sorted(urls)
        all_docs += docs
    for doc in all_docs:
        assert_doc_schema(doc)
        assert (doc["body"] is not None) == (doc["outcome"] == FETCHED)
        # Every other response's body is kept for the archive, byte for byte.
        if doc["status"] is not None and doc["outcome"] != FETCHED and not doc["truncated"]:
            sent = web.page(doc["url"]).body
            assert base64.b64decode(doc["archive_body"]) == sent, doc["url"]
        assert doc["redirect_from"] == (doc["requested_url"] if doc["url"] != doc["requested_url"] else None)
        assert doc["fetched_at"].endswith("Z")

    # One HTML parse per fetched page: the Parser's.  HtmlToXml writes the
    # XML from what the Parser read, and no other stage parses a page.
    pages = [doc for doc in all_docs if is_fetched_page(doc)]
    assert sorted(parsed_texts) == sorted(decode_page(doc) for doc in pages)
    stats = json.loads((output / "stats.json").read_text(encoding="utf-8"))
    assert sum(MRParser.PAGES_PARSED.of(step["counters"]) for step in stats.values()) == len(pages)
    # Pages that say noindex, and pages repeating another's content, have no main text read.
    assert 0 < sum(MRParser.TEXTS_READ.of(step["counters"]) for step in stats.values()) < len(pages)
    [xml_step] = [step for name, step in stats.items() if name.startswith(f"{MRHtmlToXml.STEP}/")]
    assert MRHtmlToXml.PARSED_AGAIN.of(xml_step["counters"]) == 0 < MRHtmlToXml.PAGES.of(xml_step["counters"])

    # Decoding: every page in a charset of the contract reads back as its text.
    charset_docs = [doc for doc in all_docs if doc["outcome"] == FETCHED and web.page(doc["url"]).text is not None]
    assert len({web.page(doc["url"]).charset for doc in charset_docs}) >= 5
    for doc in charset_docs:
        page = web.page(doc["url"])
        if doc["truncated"]:
            continue
        assert decode_page(doc) == page.text, f"{doc['url']} ({page.charset}, {page.declared}) as {doc['encoding']}"
    # An oversized page is cut at max_page_bytes and says so.
    truncated = [doc for doc in all_docs if doc["truncated"]]
    assert truncated
    for doc in truncated:
        body = base64.b64decode(doc["body"] or doc["archive_body"])
        assert len(body) == config["max_page_bytes"]
        assert web.page(doc["url"]).body.startswith(body)
    # X-Robots-Tag lands in the Crawler's record, and meta robots with it in
    # Merge's: the Parser reads the page's own (its one parse of the page).
    merged = dict(read_records(output / "doc" / "merged"))
    for doc in all_docs:
        if doc["outcome"] == FETCHED:
            page = web.page(doc["url"])
            said_by_header = dict(page.headers).get("X-Robots-Tag")
            if said_by_header is None:
                assert (doc["meta_follow"], doc["meta_index"]) == (True, True), doc["url"]
            else:
                assert (doc["meta_follow"], doc["meta_index"]) == (page.follow, page.index), doc["url"]
            assert (merged[doc["url"]]["meta_follow"], merged[doc["url"]]["meta_index"]) == (page.follow, page.index)

    # Out store: a redirect yields exactly its (in-scope) target, as type 1.
    outs = dict(read_records(output / "out" / "1")) | dict(read_records(output / "out" / "2"))
    redirects = [doc for doc in all_docs if doc["outcome"] == REDIRECT and doc["layer"] > 0]
    assert redirects
    for doc in redirects:
        out = outs[doc["url"]]
        assert out["type"] == REDIRECT_TARGET
        assert out["outlinks"] in ([doc["redirect_to"]], [])

    # Merge: one record per final URL; a fetched record wins.
    merged = read_records(output / "doc" / "merged")
    keys = [key for key, _ in merged]
    assert len(keys) == len(set(keys))
    assert set(keys) == {doc["url"] for doc in all_docs}
    fetched_urls = {doc["url"] for doc in all_docs if doc["outcome"] == FETCHED}
    for key, doc in merged:
        assert key == doc["url"]
        assert (doc["outcome"] == FETCHED) == (key in fetched_urls)

    # XML: one well-formed document per indexable fetched page, one per line.
    xml_dirs = list((output / "xml").iterdir())
    assert len(xml_dirs) == 1
    lines = []
    for part in sorted(xml_dirs[0].glob("part-*")):
        lines += part.read_text(encoding="utf-8").splitlines()
    # A page whose payload another URL's page had first is that URL's duplicate, and gets no XML.
    duplicates = expected_duplicates(web, expected_layers_for_config(web, config, web_server.seeds, depth=3),
                                     config["max_page_bytes"])
    assert {key: doc["duplicate_of"] for key, doc in merged if doc["duplicate_of"]} == duplicates
    indexable = {key for key, doc in merged if doc["outcome"] == FETCHED and doc["meta_index"]} - set(duplicates)
    assert {line.split("\t", 1)[0] for line in lines} == indexable
    assert len(lines) == len(indexable)
    for line in lines:
        url, xml = line.split("\t", 1)
        page = etree.fromstring(xml.encode("utf-8"))
        assert page.tag == "page" and page.get("url") == url
        assert page.get("language") == "en" and page.get("encoding") and page.get("fetched_at")


def test_no_loopback_fetch_without_allow_private_networks(web_server, tmp_path):
    seeds, conf, _ = write_inputs(web_server, tmp_path, allow_private_networks=False)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 2) == EXIT_NOTHING_FETCHED
    docs = layer_docs(output, 0)
    assert Counter(doc["outcome"] for doc in docs) == {"blocked": len(web_server.seeds)}
    assert all("non-public" in doc["error"] for doc in docs)
    web_server.wait_idle()
    assert web_server.log == []


def test_demo_command_crawls_the_bundled_test_web(tmp_path):
    import subprocess
    import sys

    output = tmp_path / "demo"
    result = subprocess.run(
        [sys.executable, "-m", "mrcrawl.testweb", "demo", "--depth", "1", "--output", str(output)],
        capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "fetched pages" in result.stderr and str(output / "doc" / "0") in result.stdout
    assert (output / "crawl.json").exists() and list((output / "xml").iterdir())


def test_seed_file_spellings_are_normalised_and_bad_ones_reported(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    spellings = web_server.web.seed_spellings
    seeds.write_text("# odd spellings\n\n" + "\n".join(spellings) + "\n", encoding="utf-8")
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 1) == 0
    allowed = re.compile(web_server.web.url_allow)
    expected = []
    for canonical in spellings.values():
        if canonical and allowed.search(canonical) and canonical not in expected:
            expected.append(canonical)
    assert seed_store(output) == expected
    assert sorted(frontier(output, 0)) == sorted(expected)
    reported = capsys.readouterr().err
    for spelling, canonical in spellings.items():
        if canonical is None:
            assert repr(spelling) in reported and "not an absolute http(s) URL" in reported
        elif not allowed.search(canonical):
            assert f"{canonical}: outside url_allow/url_deny" in reported


def test_politeness_and_keep_alive_under_many_threads(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path, threads=16, delay=0.1)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 3) == 0
    web_server.wait_idle()
    log = web_server.log
    assert politeness_violations(log, web_server.web, config) == []
    # The threads really did work on several hosts at once (requests here
    # take a millisecond, so catching two in flight together is enough) ...
    busiest = max(
        sum(1 for other in log if other.address != entry.address and other.start <= entry.start < other.end)
        for entry in log
    )
    assert busiest >= 1
    # ... and each host's requests of a layer mostly share one connection.
    for address in {entry.address for entry in log}:
        requests = [entry for entry in log if entry.address == address]
        connections = {entry.connection for entry in requests}
        assert len(connections) <= 3 + len(requests) // 4, address


def test_every_request_goes_through_the_configured_proxy(web_server, tmp_path):
    with LoopbackProxy() as proxy:
        seeds, conf, config = write_inputs(web_server, tmp_path, proxy=proxy.url)
        output = tmp_path / "crawl"
        assert crawl(seeds, conf, output, 2) == 0
        expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=2)
        for layer, oracle in enumerate(expected):
            assert layer_triples(output, layer) == oracle, f"layer {layer}"
        web_server.wait_idle()
        served = {f"http://{entry.address}:{entry.port}{entry.path}" for entry in web_server.log}
        assert served and served <= set(proxy.seen)
