"""Hostile pages in a whole crawl: the fault matrix's page cases.

A PageFaultServer (mrcrawl/testweb/pagefaults.py) serves the cases beside
the generated test web, and the real driver crawls both at once (inline
runner, depth 4, WARC export), in a process of its own so that its peak
RSS can be read.  The test web is first crawled alone the same way: the
baseline its pace and memory are held against.  Per case the checks are
the record's outcome, the out record's links, the XML line (parsed back by
lxml's strict parser) and the WARC records (read back by warcio with their
digests checked); per request, the wall time the server saw.

Memory is measured as peak RSS, not tracemalloc: libxml2 builds its trees
with malloc, which tracemalloc does not see.  The crawl's bound is on its
whole process (the inline runner runs every task of every job in it); the
page stages' bound is on a fresh process that runs the Parser's and
HtmlToXml's work on one stored doc record, its peak RSS (VmHWM) reset just
before (Linux's /proc/self/clear_refs).
"""
from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import pytest
from lxml import etree

from crawl_support import assert_crawled_as_alone, crawl_alone_then_beside, db_records, read_records, warc_records_for
from mrcrawl.page.charset import decode_page
from mrcrawl.page.links import MAX_OUTLINKS
from mrcrawl.store.records import FETCHED, body_bytes, payload_digest
from mrcrawl.testweb import start_test_web
from mrcrawl.testweb.pagefaults import (
    AFTER_NEST, BASE_DATA, BASE_FTP, BASE_JAVASCRIPT, BASE_TARGET, CHAIN, HOME, MANY_LINK_COUNT, MANY_LINKS,
    NESTED, NESTED_MARKED, NUL_BYTES, ONE_LINE, ONE_LINE_BYTES, REFRESH_A, REFRESH_B, REFRESH_SELF,
    UNKNOWN_LABEL_CODEC, UNKNOWN_LABEL_TEXT, UNKNOWN_LABELS, PageFaultServer, charset_labels, charset_path,
    unknown_label_path,
)

DEPTH = 4  # layers 0-3: the refresh loop's pages on 1 and 2, MANY_LINKS on 3
MAX_PAGE_BYTES = 2 * 1024 * 1024  # the default: the nests and the links fit whole, the 10 MB line does not
STRICT_XML = etree.XMLParser(huge_tree=True)  # recover=False: any error raises
# Peak RSS the fault pages may add to the crawl's process, over the test web
# alone: the body of a page is held a few times over (bytes, base64, the
# decoded text, libxml2's tree), and a task handles one page at a time.
CRAWL_EXTRA_RSS = 40 * MAX_PAGE_BYTES + 64 * 1024 * 1024
# Peak RSS of the page stages on one page, over the RSS before them: the
# text is copied a few times over (decoded, per block, collapsed, the XML).
STAGE_RSS = 40 * MAX_PAGE_BYTES + 32 * 1024 * 1024
# Their wall time on one page: measured under 2 s on the 100,000 nested
# elements; ten times that before anything else in a task is held up.
STAGE_SECONDS = 20.0

_MEASURED_STAGES = """
import json, sys, time
from mrcrawl.output.pagexml import page_to_xml
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.records import encode_body

def stages(doc):
    return out_record(doc, UrlFilter([], [])), page_to_xml(doc, "en")

def status(field):
    for line in open("/proc/self/status"):
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024

doc = json.loads(open(sys.argv[1], encoding="utf-8").read())
small = dict(doc, body=encode_body(b"<html><head><title>t</title></head><body><p>warm-up</p></body></html>"))
stages(small)  # imports and first-use allocations are not the page's
with open("/proc/self/clear_refs", "w") as clear:
    clear.write("5")  # the peak RSS (VmHWM) starts again from the RSS now
before = status("VmRSS")
started = time.monotonic()
out, xml = stages(doc)
seconds = time.monotonic() - started
print(json.dumps({"rss_growth": status("VmHWM") - before, "seconds": seconds, "links": len(out["outlinks"]),
                  "xml_chars": len(xml or "")}))
"""


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The test web crawled alone, then with the fault pages beside it."""
    directory = tmp_path_factory.mktemp("pagefaults")
    with start_test_web(seed=1) as web_server, PageFaultServer() as faults:
        config = web_server.web.crawl_config(max_page_bytes=MAX_PAGE_BYTES,
                                             url_allow=[web_server.web.url_allow, faults.url_allow])
        crawled = crawl_alone_then_beside(directory, web_server, config, [faults.url(HOME)], DEPTH, [faults])
        output = crawled.output
        crawled.faults, crawled.fault_log = faults, faults.log
        crawled.outs = {url: out for layer in range(DEPTH) for url, out in read_records(output / "out" / str(layer))}
        return crawled


def fault_docs(crawled, path: str) -> list[dict]:
    return [doc for doc in crawled.docs if doc["requested_url"] == crawled.faults.url(path)]


def the_doc(crawled, path: str) -> dict:
    """The one record of a fault page, fetched, with no error."""
    docs = fault_docs(crawled, path)
    assert len(docs) == 1, f"{path}: {len(docs)} records"
    doc, = docs
    assert (doc["outcome"], doc["status"], doc["error"], doc["error_kind"]) == (FETCHED, 200, None, None), path
    return doc


def the_xml(crawled, path: str) -> etree._Element:
    """The page's XML document, parsed back strictly."""
    document = crawled.xml[crawled.faults.url(path)]
    assert "\n" not in document and "\r" not in document
    return etree.fromstring(document.encode("utf-8"), STRICT_XML)


def links_of(crawled, path: str) -> list[str]:
    return crawled.outs[crawled.faults.url(path)]["outlinks"]


# ---- every case -------------------------------------------------------------


def test_every_fault_page_is_one_fetched_record_its_xml_and_its_warc_records(crawled):
    pages = crawled.faults.pages
    for path, page in pages.items():
        doc = the_doc(crawled, path)
        sent = page.body[:MAX_PAGE_BYTES]
        assert body_bytes(doc) == sent, path
        assert doc["truncated"] == (len(page.body) > MAX_PAGE_BYTES), path
        page_xml = the_xml(crawled, path)
        assert page_xml.get("url") == crawled.faults.url(path)
        assert page_xml.get("digest") == payload_digest(sent)
        records = warc_records_for(crawled.warc, crawled.faults.url(path))
        assert [len(records[kind]) for kind in ("request", "response", "metadata")] == [1, 1, 1], path
        response, = records["response"]
        assert response.digests_passed is True, path
        assert response.payload.endswith(sent), path  # the HTTP header block, then the body as stored
        assert response.headers.get_header("WARC-Payload-Digest") == payload_digest(sent)
        assert response.headers.get_header("WARC-Truncated") == ("length" if doc["truncated"] else None), path
        metadata, = records["metadata"]
        fields = [line.split(": ", 1) for line in metadata.payload.decode("utf-8").splitlines()]
        assert [value for name, value in fields if name == "outlink"] == links_of(crawled, path), path
    # Every request to the fault server, robots.txt too, ended within the config's bound.
    bound = 3 * crawled.config["timeout"]
    assert crawled.fault_log
    for entry in crawled.fault_log:
        assert entry.end - entry.start <= bound, (entry.path, entry.end - entry.start)
    requested = Counter(entry.path for entry in crawled.fault_log if entry.path != "/robots.txt")
    assert requested == Counter(list(pages)), "each page once"


def test_the_crawl_s_memory_is_bounded(crawled):
    # The body a task holds is cut at max_page_bytes: 10 MB on one line costs what 2 MiB does.
    assert crawled.rss - crawled.baseline_rss <= CRAWL_EXTRA_RSS, (crawled.rss, crawled.baseline_rss)


@pytest.mark.parametrize("path", [NESTED, NESTED_MARKED, ONE_LINE, MANY_LINKS, NUL_BYTES, charset_path("big5")])
def test_the_page_stages_on_one_page_are_bounded(crawled, tmp_path, path):
    doc_file = tmp_path / "doc.json"
    doc_file.write_text(json.dumps(the_doc(crawled, path)), encoding="utf-8")
    finished = subprocess.run([sys.executable, "-c", _MEASURED_STAGES, str(doc_file)], capture_output=True,
                              text=True, timeout=300)
    assert finished.returncode == 0, finished.stderr[-3000:]
    measured = json.loads(finished.stdout.splitlines()[-1])
    assert measured["rss_growth"] <= STAGE_RSS, measured
    assert measured["seconds"] <= STAGE_SECONDS, measured
    assert measured["xml_chars"] > 0 and measured["links"] == len(links_of(crawled, path))


def test_the_ordinary_web_is_crawled_as_without_the_fault_pages(crawled):
    assert_crawled_as_alone(crawled, (crawled.faults.origin,))


# ---- the cases, one by one --------------------------------------------------


@pytest.mark.parametrize("path", [NESTED, NESTED_MARKED])
def test_100000_nested_elements_lose_nothing_after_the_nest(crawled, path):
    assert len(crawled.faults.pages[path].body) <= MAX_PAGE_BYTES  # whole: the end of the page is there
    assert crawled.faults.url(AFTER_NEST) in links_of(crawled, path)
    content = the_xml(crawled, path).findtext("content")
    assert "deep inside" in content and "After the nest comes the rest of the page." in content
    assert crawled.outs[crawled.faults.url(path)]["signature"]
    # The link after the nest was followed on the next layer.
    assert the_doc(crawled, AFTER_NEST)["layer"] == the_doc(crawled, path)["layer"] + 1


def test_ten_megabytes_on_one_line_is_cut_at_max_page_bytes(crawled):
    doc = the_doc(crawled, ONE_LINE)
    assert doc["truncated"] and len(body_bytes(doc)) == MAX_PAGE_BYTES < ONE_LINE_BYTES
    content = the_xml(crawled, ONE_LINE).findtext("content")
    assert content.startswith("ten megabytes on one line ten megabytes")
    assert MAX_PAGE_BYTES - 200 <= len(content) <= MAX_PAGE_BYTES


def test_nul_bytes_never_reach_the_xml(crawled):
    document = crawled.xml[crawled.faults.url(NUL_BYTES)]
    assert "\x00" not in document and "&#0;" not in document and "\x07" not in document and "\x1b" not in document
    page = the_xml(crawled, NUL_BYTES)
    # NUL is U+FFFD, as browsers show it; the controls XML forbids are gone.
    assert page.findtext("headline") == "NUL\ufffdtitle"
    assert page.findtext("description") == "NUL\ufffddescription"
    assert page.findtext("content") == ("Before\ufffdbetween\ufffdafter, with a bell and an escape too.\n"
                                        "Second\ufffdparagraph.")


@pytest.mark.parametrize("codec, label", sorted(charset_labels().items()))
def test_bytes_invalid_in_the_declared_charset_are_replaced(crawled, codec, label):
    path = charset_path(label)
    doc = the_doc(crawled, path)
    # A BOM-less declared charset is obeyed (euc_jp and big5hkscs may widen to
    # the sibling that decodes the bytes, as browsers' decoders do).
    assert doc["encoding"] in {codec, *{"euc_jp": ("euc_jis_2004",), "big5hkscs": ("cp950",)}.get(codec, ())}
    body = body_bytes(doc)
    try:
        body.decode(doc["encoding"])
        invalid = False
    except UnicodeDecodeError:
        invalid = True
    text = decode_page(doc)
    assert ("\ufffd" in text) == invalid
    page = the_xml(crawled, path)
    assert page.get("encoding") == doc["encoding"]
    assert page.findtext("headline") == f"Bytes invalid in {label}"
    content = page.findtext("content")
    assert "and the page goes on." in content and "The last paragraph." in content
    assert ("\ufffd" in content) == invalid
    assert not any(control in content for control in "\x01\x08\x1f")


@pytest.mark.parametrize("path", [unknown_label_path(label) for label in UNKNOWN_LABELS]
                         + [unknown_label_path("foo-bar", "meta")])
def test_a_charset_label_python_has_no_codec_for_falls_back_to_detection(crawled, path):
    doc = the_doc(crawled, path)
    assert doc["encoding"] == UNKNOWN_LABEL_CODEC
    page = the_xml(crawled, path)
    # The codec the page was read with is named in the XML (and the record).
    assert page.get("encoding") == UNKNOWN_LABEL_CODEC
    assert page.findtext("headline") == "Страница"
    assert page.findtext("content") == " ".join(UNKNOWN_LABEL_TEXT.split())


def test_50000_links_are_capped_in_document_order(crawled):
    assert len(crawled.faults.pages[MANY_LINKS].body) <= MAX_PAGE_BYTES  # every link is in the stored body
    links = links_of(crawled, MANY_LINKS)
    assert MAX_OUTLINKS < MANY_LINK_COUNT
    assert links == [crawled.faults.url(f"/many/{n}.html") for n in range(MAX_OUTLINKS)]
    # The next layer's frontier: the db queued exactly those, and nothing more of the fault host.
    many = [url for url, _ in db_records(crawled.output / "db") if url.startswith(crawled.faults.url("/many/"))]
    assert sorted(many) == sorted(links)
    assert the_doc(crawled, MANY_LINKS)["layer"] == DEPTH - 1 == len(CHAIN) + 1


@pytest.mark.parametrize("path", [BASE_JAVASCRIPT, BASE_FTP, BASE_DATA])
def test_a_base_of_another_scheme_leaves_only_absolute_http_links(crawled, path):
    # Relative links resolve against the base, to no http(s) URL; never against the page's URL.
    assert links_of(crawled, path) == [crawled.faults.url(BASE_TARGET)]
    assert the_xml(crawled, path).findtext("headline") == "Base"


def test_a_meta_refresh_loop_ends(crawled):
    url = crawled.faults.url
    assert links_of(crawled, REFRESH_A) == [url(REFRESH_B)]
    assert links_of(crawled, REFRESH_B) == [url(REFRESH_A)]
    assert links_of(crawled, REFRESH_SELF) == [url(REFRESH_SELF)]
    layers = {path: the_doc(crawled, path)["layer"] for path in (REFRESH_A, REFRESH_B, REFRESH_SELF)}
    assert layers == {REFRESH_A: 1, REFRESH_B: 2, REFRESH_SELF: 1}
    # Each was fetched once, and the layer after B's asks for none of them again.
    loop = {url(REFRESH_A), url(REFRESH_B), url(REFRESH_SELF)}
    for layer in range(DEPTH):
        queued = [entry for entry, _ in read_records(crawled.output / "in" / str(layer)) if entry in loop]
        assert len(queued) == (2 if layer == 1 else 1 if layer == 2 else 0), (layer, queued)
    statuses = {key: (record["status"], record["fetch_count"])
                for key, record in db_records(crawled.output / "db") if key in loop}
    assert statuses == dict.fromkeys(loop, (FETCHED, 1))
