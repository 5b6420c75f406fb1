"""Redirects that go wrong, through a real crawl and a real fetch.

One web on loopback holds every case: Locations with spaces, control bytes,
a relative path or another scheme; a Location at an address the
private-network guard refuses; a chain of 20 redirects between two hosts;
and two hosts that redirect to each other.  A host of ordinary pages sits
beside them.  The web is crawled once for the module by the real driver
(inline runner, the WARC exported), and crawled again on the same crawl db;
each case's test reads what those crawls recorded, and fetches the case
alone under tracemalloc for its time and memory.
"""
from __future__ import annotations

from collections import Counter
from types import SimpleNamespace

import pytest

from crawl_support import (
    crawl,
    crawl_docs,
    db_records,
    fetch_urls_measured,
    politeness_violations,
    write_inputs,
    xml_pages,
)
from mrcrawl.export import run_exports
from mrcrawl.fetch.fetcher import MAX_ERROR_CHARS
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import UNFETCHED
from mrcrawl.testweb import Host, Page, Robots, TestWebServer, Web
from test_export import read_warc_files

REDIRECTING, PARTNER, ORDINARY, PRIVATE = "127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"
# The guard lets these through (allow_networks) and refuses PRIVATE, as any loopback address.
LET_THROUGH = [f"{address}/32" for address in (REDIRECTING, PARTNER, ORDINARY)]
DEPTH = 3
CHAIN_HOPS = 20
ORDINARY_PAGES = 8
TIMEOUT = 1.0
# A fetch of a few small answers: Python's allocations, the fetch threads'
# included, stay far below this (they peak below 1 MiB here).
FETCH_MEMORY_BOUND = 4 * 1024 * 1024
MARGIN = 1.0  # seconds: thread start and scheduling on a loaded machine

# Same-host Locations that are followed: (path, Location as sent, path of
# the canonical target).  Control bytes and spaces are percent-encoded, as
# the URL Standard (and so every browser) encodes them.
FOLLOWED = {
    "spaces": ("/loc/spaces", "/with spaces/page one.html", "/with%20spaces/page%20one.html"),
    "control bytes": ("/loc/control", "/control\x01\x1f\x7f.html", "/control%01%1F%7F.html"),
    "relative path": ("/loc/relative/from", "../to/relative.html", "/loc/to/relative.html"),
}
# Locations the crawler cannot fetch: (path, Location as sent).
OTHER_SCHEMES = {
    "ftp": ("/loc/ftp", "ftp://127.0.0.2/file.txt"),
    "file": ("/loc/file", "file:///etc/passwd"),
    "javascript": ("/loc/javascript", "javascript:alert(document.cookie)"),
}
# Another host's URL with a space and a control byte: the fetch ends
# `redirect`, and the next layer fetches the canonical target.
OTHER_HOST = ("/loc/other-host", "/moved here\x01.html", "/moved%20here%01.html")


def html(text: str) -> bytes:
    # Every page's text differs: no page is another's duplicate (which would get no XML).
    return f"<!DOCTYPE html><html><head><title>{text}</title></head><body><p>{text}</p></body></html>".encode()


def chain_url(hop: int, port: int) -> str:
    """The chain alternates between two hosts, so every hop leaves its host."""
    return f"http://{REDIRECTING if hop % 2 == 0 else PARTNER}:{port}/chain/{hop}"


def build(port: int) -> Web:
    redirecting, partner, ordinary, private = (
        Host(address, port, role, Robots(404)) for address, role in
        ((REDIRECTING, "redirects"), (PARTNER, "partner"), (ORDINARY, "ordinary"), (PRIVATE, "private")))
    pages: list[Page] = []

    def redirect(url: str, location: str, target: str | None) -> None:
        pages.append(Page(url=url, kind="redirect", status=302, body=html(f"moved from {url}"),
                          headers=(("Location", location),), redirect_to=target))

    def page(url: str) -> None:
        pages.append(Page(url=url, kind="leaf", body=html(f"the page at {url}")))

    for path, location, target in FOLLOWED.values():
        redirect(redirecting.url(path), location, redirecting.url(target))
        page(redirecting.url(target))
    for path, location in OTHER_SCHEMES.values():
        redirect(redirecting.url(path), location, None)
    path, location, target = OTHER_HOST
    redirect(redirecting.url(path), partner.url(location), partner.url(target))
    page(partner.url(target))
    redirect(redirecting.url("/loc/private"), private.url("/inside.html"), private.url("/inside.html"))
    page(private.url("/inside.html"))
    redirect(redirecting.url("/loop"), partner.url("/loop"), partner.url("/loop"))
    redirect(partner.url("/loop"), redirecting.url("/loop"), redirecting.url("/loop"))
    for hop in range(CHAIN_HOPS):
        redirect(chain_url(hop, port), chain_url(hop + 1, port), chain_url(hop + 1, port))
    page(chain_url(CHAIN_HOPS, port))
    for number in range(ORDINARY_PAGES):
        page(ordinary.url(f"/page/{number}"))
    seeds = [redirecting.url(path) for path, *_ in (*FOLLOWED.values(), *OTHER_SCHEMES.values(), OTHER_HOST)]
    seeds += [redirecting.url("/loc/private"), redirecting.url("/loop"), chain_url(0, port)]
    seeds += [ordinary.url(f"/page/{number}") for number in range(ORDINARY_PAGES)]
    return Web(seed=0, port=port, hosts=(redirecting, partner, ordinary, private),
               pages={page.url: page for page in pages}, seed_urls=tuple(seeds), seed_spellings={})


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The web, crawled to DEPTH and exported, then crawled again on the
    same crawl db; the server stays up for the tests' own fetches."""
    directory = tmp_path_factory.mktemp("redirects")
    output, again, db = directory / "crawl", directory / "again", directory / "db"
    with TestWebServer(hosts=4, web_factory=build) as server:
        seeds, conf, config = write_inputs(server, directory, timeout=TIMEOUT, allow_private_networks=False,
                                           allow_networks=LET_THROUGH)
        assert crawl(seeds, conf, output, DEPTH, "inline", "--db", str(db)) == 0
        run_exports(output, ["warc"])
        assert server.wait_idle()
        first_log = server.log
        server.clear_log()
        assert crawl(seeds, conf, again, DEPTH, "inline", "--db", str(db)) == 0
        assert server.wait_idle()
        yield SimpleNamespace(
            server=server, web=server.web, config=config, output=output, docs=crawl_docs(output),
            again=crawl_docs(again), log=first_log, log_again=server.log, xml=xml_pages(output),
            warc=[record for records in read_warc_files(output / "warc").values() for record in records],
            db={url: record for url, record in db_records(db)})


def one_record(crawled, url: str) -> dict:
    """The one doc record the first crawl made for `url`, over all its layers."""
    records = [doc for doc in crawled.docs if doc["requested_url"] == url]
    assert len(records) == 1, f"{url}: {len(records)} records"
    return records[0]


def requests_to(log, url: str) -> int:
    address, path = url.split("//", 1)[1].split(":", 1)[0], "/" + url.split("/", 3)[3]
    return sum(1 for entry in log if (entry.address, entry.path) == (address, path))


def assert_valid_page_records(crawled, doc: dict) -> None:
    """The fetched page's XML (parsed strictly) and its WARC response, whose digests warcio checked."""
    page = crawled.xml[doc["url"]]
    assert page.tag == "page" and page.get("url") == doc["url"]
    assert page.get("redirect_from") == doc["redirect_from"]
    assert_valid_response_record(crawled, doc)


def assert_valid_response_record(crawled, doc: dict) -> None:
    [response] = [record for record in crawled.warc if record.type == "response"
                  and record.headers.get_header("WARC-Target-URI") == doc["url"]]
    assert response.digests_passed is not False
    assert response.http.get_statuscode() == str(doc["status"])


def assert_fetched_alone_within_bounds(crawled, url: str) -> list[dict]:
    """Fetch `url` beside the ordinary host's pages in one task, under
    tracemalloc: its records, after checking that the whole fetch kept to
    the timeout and FETCH_MEMORY_BOUND and that the ordinary pages kept
    their pace."""
    ordinary = [crawled.server.web.hosts[2].url(f"/page/{number}") for number in range(ORDINARY_PAGES)]
    crawled.server.clear_log()
    docs, seconds, peak = fetch_urls_measured([url, *ordinary], threads=2, timeout=TIMEOUT,
                                              allow_private_networks=False, allow_networks=LET_THROUGH)
    assert crawled.server.wait_idle()
    assert Counter(doc["requested_url"] for doc in docs) == Counter([url, *ordinary])
    assert {doc["outcome"] for doc in docs if doc["requested_url"] in ordinary} == {"fetched"}
    assert seconds <= TIMEOUT + MARGIN
    assert peak <= FETCH_MEMORY_BOUND
    ordinary_log = [entry for entry in crawled.server.log if entry.address == ORDINARY]
    assert len(ordinary_log) == ORDINARY_PAGES
    assert all(entry.end - entry.start <= TIMEOUT for entry in crawled.server.log)
    return [doc for doc in docs if doc["requested_url"] == url]


def test_the_ordinary_host_is_crawled_politely_beside_the_redirects(crawled):
    assert not politeness_violations(crawled.log, crawled.web, crawled.config)
    ordinary = [one_record(crawled, url) for url in crawled.web.seed_urls if ORDINARY in url]
    assert {(doc["outcome"], doc["layer"]) for doc in ordinary} == {("fetched", 0)}
    # Every URL requested in the first crawl has one record, whatever its layer.
    requested = Counter(doc["requested_url"] for doc in crawled.docs)
    assert set(requested.values()) == {1}


@pytest.mark.parametrize("case", FOLLOWED)
def test_a_location_with_spaces_control_bytes_or_a_relative_path_is_followed_to_its_page(crawled, case):
    path, _, target_path = FOLLOWED[case]
    url, target = crawled.web.hosts[0].url(path), crawled.web.hosts[0].url(target_path)
    doc = one_record(crawled, url)
    assert (doc["outcome"], doc["url"], doc["redirect_from"], doc["error"]) == ("fetched", target, url, None)
    assert requests_to(crawled.log, url) == requests_to(crawled.log, target) == 1
    assert_valid_page_records(crawled, doc)
    [alone] = assert_fetched_alone_within_bounds(crawled, url)
    assert (alone["outcome"], alone["url"]) == ("fetched", target)


def test_a_location_on_another_host_with_a_space_and_a_control_byte_is_the_next_layers_page(crawled):
    path, location, target_path = OTHER_HOST
    url, target = crawled.web.hosts[0].url(path), crawled.web.hosts[1].url(target_path)
    doc = one_record(crawled, url)
    assert (doc["outcome"], doc["layer"], doc["redirect_to"], doc["error"]) == ("redirect", 0, target, None)
    # The 302 is archived with its Location as sent, control byte and all.
    assert ["Location", crawled.web.hosts[1].url(location)] in doc["headers"]
    assert_valid_response_record(crawled, doc)
    page = one_record(crawled, target)
    assert (page["outcome"], page["layer"], page["hops"]) == ("fetched", 1, 1)
    assert_valid_page_records(crawled, page)
    [alone] = assert_fetched_alone_within_bounds(crawled, url)
    assert (alone["outcome"], alone["redirect_to"]) == ("redirect", target)


@pytest.mark.parametrize("case", OTHER_SCHEMES)
def test_a_location_of_another_scheme_is_an_http_error_that_quotes_it(crawled, case):
    path, location = OTHER_SCHEMES[case]
    url = crawled.web.hosts[0].url(path)
    doc = one_record(crawled, url)
    error = f"redirect (HTTP 302) to a Location that is no http(s) URL: {location!r}"
    assert (doc["outcome"], doc["status"], doc["url"], doc["error"]) == ("http_error", 302, url, error)
    assert doc["error_kind"] == FailureKind.REDIRECT_LOCATION
    assert len(doc["error"]) <= MAX_ERROR_CHARS
    assert requests_to(crawled.log, url) == 1
    assert_valid_response_record(crawled, doc)  # the 302 itself
    [alone] = assert_fetched_alone_within_bounds(crawled, url)
    assert (alone["outcome"], alone["error"], alone["error_kind"]) == (
        "http_error", error, FailureKind.REDIRECT_LOCATION)


def test_a_location_at_a_private_address_is_blocked_without_a_request(crawled):
    url, target = crawled.web.hosts[0].url("/loc/private"), crawled.web.hosts[3].url("/inside.html")
    doc = one_record(crawled, url)
    assert (doc["outcome"], doc["redirect_to"]) == ("redirect", target)
    hop = one_record(crawled, target)
    assert (hop["outcome"], hop["layer"], hop["error"]) == ("blocked", 1, f"{PRIVATE} is a non-public address")
    assert hop["error_kind"] == FailureKind.BLOCKED_PRIVATE
    assert (hop["status"], hop["attempts"]) == (None, 0)
    assert not [entry for entry in crawled.log + crawled.log_again if entry.address == PRIVATE]
    assert crawled.db[target]["status"] == "blocked"
    [alone] = assert_fetched_alone_within_bounds(crawled, target)
    assert (alone["outcome"], alone["error"]) == ("blocked", f"{PRIVATE} is a non-public address")
    assert alone["error_kind"] == FailureKind.BLOCKED_PRIVATE


def test_a_chain_of_20_redirects_across_hosts_advances_one_hop_a_layer_and_stops_at_the_depth(crawled):
    # A redirect to another host is a link to the next layer: each hop is
    # one request in one layer, its `hops` one more than the last, so the
    # depth bounds the chain as it bounds a chain of links.
    port = crawled.web.port
    for hop in range(DEPTH):
        doc = one_record(crawled, chain_url(hop, port))
        assert (doc["outcome"], doc["layer"], doc["hops"]) == ("redirect", hop, hop)
        assert doc["redirect_to"] == chain_url(hop + 1, port)
    # The hop past the depth is known, never requested, and holds no record.
    beyond = chain_url(DEPTH, port)
    assert crawled.db[beyond]["status"] == UNFETCHED and crawled.db[beyond]["hops"] == DEPTH
    assert not [doc for doc in crawled.docs if doc["requested_url"] == beyond]
    chain = [entry for entry in crawled.log if entry.path.startswith("/chain/")]
    assert [entry.path for entry in chain] == [f"/chain/{hop}" for hop in range(DEPTH)]
    # The next run of the same db requests the seed again (seeds are fetched
    # on every run), but no hop it already knows as a redirect: those wait
    # for their revisit, so the chain does not run on run after run.
    assert [entry.path for entry in crawled.log_again if entry.path.startswith("/chain/")] == ["/chain/0"]
    assert [(doc["requested_url"], doc["outcome"]) for doc in crawled.again if "/chain/" in doc["requested_url"]] == [
        (chain_url(0, port), "redirect")]


def test_two_hosts_that_redirect_to_each_other_are_each_fetched_once(crawled):
    there, back = crawled.web.hosts[0].url("/loop"), crawled.web.hosts[1].url("/loop")
    first, second = one_record(crawled, there), one_record(crawled, back)
    assert (first["outcome"], first["layer"], first["redirect_to"]) == ("redirect", 0, back)
    assert (second["outcome"], second["layer"], second["redirect_to"]) == ("redirect", 1, there)
    # The crawl db knows `there` as fetched (a redirect): the cycle filter
    # does not queue it again, though the crawl had a layer left for it.
    assert requests_to(crawled.log, there) == requests_to(crawled.log, back) == 1
    assert {crawled.db[there]["status"], crawled.db[back]["status"]} == {"redirect"}
    # The next run requests the seed, and not the partner it redirects to.
    assert (requests_to(crawled.log_again, there), requests_to(crawled.log_again, back)) == (1, 0)
