"""`mrcrawl parsechecker URL --conf CONF`: one page of the test web fetched
with a crawl config's rules, and what each stage makes of it, against what a
real crawl of the same web with the same config stored for the same page.

One depth-3 crawl of the test web serves every test; the web is served on
for the command's own requests, which the server's log shows.
"""
from __future__ import annotations

import re
import subprocess
import sys
from types import SimpleNamespace

import pytest
from lxml import etree

from crawl_support import crawl_docs, crawled_test_web, outs_by_fetch, politeness_violations, xml_documents
from mrcrawl.parsechecker import EXIT_FETCHED, EXIT_NOT_FETCHED, EXIT_USAGE
from mrcrawl.store.records import FETCHED, ROBOTS_DENIED
from mrcrawl.testweb import start_test_web

DEPTH = 3


@pytest.fixture(scope="module")
def web(tmp_path_factory):
    directory = tmp_path_factory.mktemp("parsechecker")
    with start_test_web(seed=1) as server:
        _, conf, config, output = crawled_test_web(server, directory, DEPTH)
        yield SimpleNamespace(server=server, conf=conf, config=config, output=output, docs=crawl_docs(output),
                              outs=outs_by_fetch(output, DEPTH), xml=xml_documents(output), directory=directory)


def parsechecker(*argv) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mrcrawl.parsechecker", *map(str, argv)], capture_output=True,
                          text=True, timeout=120)


def sections(text: str) -> dict[str, tuple[str, list[str]]]:
    """Each section's title and lines, by the title's first word."""
    found, lines = {}, None
    for line in text.splitlines():
        titled = re.fullmatch(r"== (.*) ==", line)
        if titled:
            lines = []
            found[titled.group(1).split()[0].rstrip(":")] = (titled.group(1), lines)
        elif lines is not None:
            lines.append(line)
    return found


def without_fetch_time(xml: str) -> etree._Element:
    """A page's XML without what the fetch's moment and the crawl db gave
    it: its fetch time, and the score its db record had (parsechecker reads
    no db)."""
    page = etree.fromstring(xml.encode("utf-8"))
    del page.attrib["fetched_at"]
    page.attrib.pop("score", None)
    return page


def stored(web, doc: dict) -> tuple[dict, str | None]:
    """The out record and the XML the crawl stored for a doc record."""
    return web.outs[doc["url"], doc["fetched_at"]], web.xml.get(doc["url"])


def pages_to_check(web) -> list[dict]:
    """Fetched pages reached without a redirect: a seed, a page in a charset
    other than UTF-8, and a page that says noindex."""
    fetched = [doc for doc in web.docs if doc["outcome"] == FETCHED and doc["url"] == doc["requested_url"]]
    seed = next(doc for doc in fetched if doc["layer"] == 0)
    charset = next(doc for doc in fetched if doc["encoding"] not in ("utf-8", "ascii"))
    noindex = next(doc for doc in fetched if not doc["meta_index"])
    return [seed, charset, noindex]


def test_a_page_comes_out_as_the_crawl_stored_it(web):
    """Outlinks in scope, title and XML are what the crawl stored for the
    page (its fetch time aside, and its layer: the command fetches on layer 0)."""
    for doc in pages_to_check(web):
        done = parsechecker(doc["url"], "--conf", web.conf)
        assert (done.returncode, done.stderr) == (EXIT_FETCHED, ""), doc["url"]
        found = sections(done.stdout)
        out, xml = stored(web, doc)
        title, links = found["outlinks"]
        kept = [line.removeprefix("in   ") for line in links if line.startswith("in   ")]
        assert kept == out["outlinks"], doc["url"]
        assert title.startswith(f"outlinks: {len(kept)} in scope, "), doc["url"]
        assert f"charset      {doc['encoding']} " in found["parse"][1][0]
        assert f"meta robots  {'index' if doc['meta_index'] else 'noindex'}, " in found["parse"][1][2]
        [shown_xml] = found["XML"][1]
        if doc["meta_index"]:
            expected = without_fetch_time(xml)
            expected.set("layer", "0")
            assert etree.tostring(without_fetch_time(shown_xml)) == etree.tostring(expected), doc["url"]
            assert found["title"][1] == [expected.findtext("headline")]
            assert "\n".join(found["main"][1]) == expected.findtext("content")
        else:  # the crawl wrote no XML of it, and the command says why
            assert xml is None and shown_xml == "(none: HtmlToXml writes no XML for a page that says noindex)"


def test_links_out_of_scope_are_listed_apart(web):
    [home] = [doc for doc in web.docs if doc["requested_url"] == web.server.seeds[0]]
    found = sections(parsechecker(home["url"], "--conf", web.conf).stdout)
    out_of_scope = [line.removeprefix("out  ") for line in found["outlinks"][1] if line.startswith("out  ")]
    assert out_of_scope and not [link for link in out_of_scope if re.search(web.config["url_allow"][0], link)
                                 and not re.search(web.config["url_deny"][0], link)]
    assert not set(out_of_scope) & set(web.outs[home["url"], home["fetched_at"]]["outlinks"])


def test_robots_txt_is_obeyed_and_the_host_asked_politely(web):
    """A URL robots.txt disallows is not requested; the command's requests keep the host's delay."""
    denied = [doc for doc in web.docs if doc["outcome"] == ROBOTS_DENIED and doc["url"] == doc["requested_url"]
              and doc["error"] == f"{doc['url']}: disallowed by robots.txt"]
    assert denied
    server = web.server
    server.wait_idle()
    server.clear_log()
    url = denied[0]["url"]
    done = parsechecker(url, "--conf", web.conf)
    assert done.returncode == EXIT_NOT_FETCHED
    found = sections(done.stdout)
    assert found["parse"][1][1].startswith(f"robots.txt   {url}: disallowed by robots.txt; Crawl-delay ")
    assert dict(line.split(None, 1) for line in found["fetch"][1])["outcome"] == ROBOTS_DENIED
    path = url.split("/", 3)[3]
    parsechecker(denied[0]["url"].rsplit("/", 1)[0] + "/", "--conf", web.conf)  # another request to the host
    server.wait_idle()
    requested = [entry.path for entry in server.log]
    assert "/robots.txt" in requested and f"/{path}" not in requested
    assert politeness_violations(server.log, server.web, web.config) == []


def test_bad_input_is_one_line(web, tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("language: en\ndealy: 5\n")
    done = parsechecker(web.server.seeds[0], "--conf", bad)
    assert done.returncode == EXIT_USAGE and done.stdout == ""
    assert done.stderr.startswith(f"mrcrawl parsechecker: {bad}: ") and "dealy" in done.stderr
    done = parsechecker("not a url", "--conf", web.conf)
    assert (done.returncode, done.stderr) == (EXIT_USAGE,
                                              "mrcrawl parsechecker: not a url: not an absolute http(s) URL\n")
    done = parsechecker(web.server.seeds[0])
    assert done.returncode == EXIT_USAGE and done.stderr.endswith("the following arguments are required: --conf\n")
    assert list(tmp_path.iterdir()) == [bad]  # nothing stored
