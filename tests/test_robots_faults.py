"""robots.txt files that go wrong, through a real crawl and a real fetch.

One web on loopback gives each case a host: a 5 MiB robots.txt, one that
redirects in a loop, one that redirects to another host, HTML served as
robots.txt, one with bytes that are not UTF-8, and one that answers 503 and
then, in the next layer, 200.  A host of ordinary pages sits beside them.  The web is crawled once for the module
by the real driver (inline runner, two layers, the WARC exported); each
case's test reads what the crawl recorded for the host's pages, and fetches
the host alone under tracemalloc for its time and memory.  An endless
robots.txt comes from the raw-socket FaultServer, and chains of redirects
from host to host from small servers, each on a port of its own.
"""
from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from http.server import ThreadingHTTPServer
from types import SimpleNamespace

import pytest

from crawl_support import (PageHandler, crawl, crawl_docs, fetch_urls, fetch_urls_measured, politeness_violations,
                           write_inputs, xml_pages)
from mrcrawl.export import run_exports
from mrcrawl.fetch.fetcher import RESPONSE_TIME_LIMIT
from mrcrawl.fetch.robots import MAX_ROBOTS_BYTES
from mrcrawl.store.failures import FailureKind
from mrcrawl.testweb import USER_AGENT, Host, Page, Robots, TestWebServer, Web
from mrcrawl.testweb.faults import ENDLESS_BODY, HTTP_10, PLAIN_PAGE, FaultServer
from mrcrawl.testweb.markup import digits_in_words
from test_dns import ALLOWED, STEADY, dns_server, tls_listener
from test_export import read_warc_files

BIG, LOOP, HTML, NOT_UTF8, FAILS_FIRST, ORDINARY, MOVED, ELSEWHERE = (f"127.0.0.{2 + number}" for number in range(8))
TIMEOUT = 2.0
MARGIN = 1.0  # seconds: thread start and scheduling on a loaded machine
ORDINARY_PAGES = 8
# A fetch of a few small answers and a small robots.txt: Python's
# allocations, the fetch threads' included (they peak below 1 MiB here).
SMALL_FETCH_MEMORY = 4 * 1024 * 1024

# 5 MiB of rules: one near the start, then filler rules, then one far past
# the 512 KiB that are read and parsed.
FILLER_RULES = b"".join(b"Disallow: /filler/%d/\n" % number for number in range(260_000))
BIG_ROBOTS = b"User-agent: *\nDisallow: /early/\n" + FILLER_RULES + b"Disallow: /late/\n"
# Parsing 512 KiB of rules takes protego about half a second (the time
# bound allows for a loaded machine) and 9 MiB at its peak, beside the
# 512 KiB read: reading all 5 MiB would pass the memory bound.
BIG_ROBOTS_MEMORY = 12 * 1024 * 1024
BIG_ROBOTS_PARSE_SECONDS = 3.0
# /caf\xe9/ is Latin-1, not UTF-8: the rule still matches the URL /caf%E9/
# that the site's own Latin-1 links lead to (its byte is read as U+FFFD, and
# so is the URL's %E9).  The comment holds bytes that are no UTF-8 at all.
NOT_UTF8_ROBOTS = b"User-agent: *\nDisallow: /caf\xe9/\n# \xff\xfe\xc3 not UTF-8\nDisallow: /private/\n"
HTML_ROBOTS = (b"<!DOCTYPE html><html><head><title>Welcome</title></head><body>\n"
               b"<h1>Welcome to our site</h1>\n<p>User-agent and Disallow are words on this page.</p>\n</body></html>\n")
FAILS_FIRST_ROBOTS = b"User-agent: *\nDisallow: /private/\n"
# MOVED's robots.txt redirects to ELSEWHERE, another host, which serves these
# rules (as a CDN would): they apply to MOVED.
ELSEWHERE_ROBOTS_PATH = "/shared/robots.txt"
ELSEWHERE_ROBOTS = b"User-agent: *\nDisallow: /private/\n"


def html(text: str) -> bytes:
    # Every page's text differs, in words and not in digits alone (which a
    # crawler reads no text by): no page is another's duplicate (which would get no XML).
    text = digits_in_words(text)
    return f"<!DOCTYPE html><html><head><title>{text}</title></head><body><p>{text}</p></body></html>".encode()


def host(address: str, port: int) -> Host:
    return Host(address, port, "robots case", Robots(200))


# The host's pages of each case crawled in layer 0, and what becomes of each.
CASE_PAGES = {
    BIG: {"/early/page.html": "robots_denied", "/late/page.html": "fetched", "/page.html": "fetched"},
    LOOP: {"/page.html": "fetched", "/private/page.html": "fetched"},
    HTML: {"/page.html": "fetched", "/private/page.html": "fetched"},
    NOT_UTF8: {"/caf%E9/page.html": "robots_denied", "/private/page.html": "robots_denied", "/page.html": "fetched"},
    FAILS_FIRST: {"/first.html": "robots_denied"},
    MOVED: {"/page.html": "fetched", "/private/page.html": "robots_denied"},
}
# FAILS_FIRST's pages that the ordinary host links to: layer 1's.
NEXT_LAYER_PAGES = {"/next.html": "fetched", "/private/next.html": "robots_denied"}


def build(port: int) -> Web:
    pages: list[Page] = []
    for address, paths in {**CASE_PAGES, FAILS_FIRST: {**CASE_PAGES[FAILS_FIRST], **NEXT_LAYER_PAGES}}.items():
        pages += [Page(url=host(address, port).url(path), kind="leaf", body=html(f"{address} {path}"))
                  for path in paths]

    def robots(address: str, body: bytes, **fields) -> None:
        fields.setdefault("content_type", "text/plain")
        pages.append(Page(url=host(address, port).url("/robots.txt"), kind="robots", body=body, **fields))

    robots(BIG, BIG_ROBOTS)
    robots(NOT_UTF8, NOT_UTF8_ROBOTS)
    robots(HTML, HTML_ROBOTS, content_type="text/html")
    robots(FAILS_FIRST, FAILS_FIRST_ROBOTS, flaky=True)  # 503 to its first request
    loop = host(LOOP, port)
    for path, location in (("/robots.txt", "/robots-moved.txt"), ("/robots-moved.txt", "/robots.txt")):
        pages.append(Page(url=loop.url(path), kind="redirect", status=302, body=html(f"moved {path}"),
                          headers=(("Location", location),), redirect_to=loop.url(location)))
    elsewhere = host(ELSEWHERE, port).url(ELSEWHERE_ROBOTS_PATH)
    pages.append(Page(url=host(MOVED, port).url("/robots.txt"), kind="redirect", status=301, body=html("moved"),
                      headers=(("Location", elsewhere),), redirect_to=elsewhere))
    pages.append(Page(url=elsewhere, kind="robots", body=ELSEWHERE_ROBOTS, content_type="text/plain"))
    ordinary = host(ORDINARY, port)
    links = "".join(f'<a href="{host(FAILS_FIRST, port).url(path)}">next</a>' for path in NEXT_LAYER_PAGES)
    pages.append(Page(url=ordinary.url("/"), kind="home", body=html("home").replace(b"</p>", links.encode() + b"</p>"),
                      links=tuple(host(FAILS_FIRST, port).url(path) for path in NEXT_LAYER_PAGES)))
    pages += [Page(url=ordinary.url(f"/page/{number}"), kind="leaf", body=html(f"ordinary {number}"))
              for number in range(ORDINARY_PAGES)]
    seeds = [host(address, port).url(path) for address, paths in CASE_PAGES.items() for path in paths]
    seeds += [ordinary.url("/")] + [ordinary.url(f"/page/{number}") for number in range(ORDINARY_PAGES)]
    hosts = tuple(host(address, port)
                  for address in (BIG, LOOP, HTML, NOT_UTF8, FAILS_FIRST, ORDINARY, MOVED, ELSEWHERE))
    return Web(seed=0, port=port, hosts=hosts, pages={page.url: page for page in pages},
               seed_urls=tuple(seeds), seed_spellings={})


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """The web crawled to depth 2 without retries (so that the 503 stands
    for the layer) and exported; the server stays up for the tests' own
    fetches, its robots.txt that fails once reset to fail again."""
    directory = tmp_path_factory.mktemp("robots")
    output = directory / "crawl"
    with TestWebServer(hosts=8, web_factory=build) as server:
        seeds, conf, config = write_inputs(server, directory, timeout=TIMEOUT, retries=0)
        assert crawl(seeds, conf, output, 2) == 0
        run_exports(output, ["warc"])
        assert server.wait_idle()
        log = server.log
        server.reset_flaky()
        yield SimpleNamespace(
            server=server, web=server.web, config=config, log=log, docs=crawl_docs(output), xml=xml_pages(output),
            warc=[record for records in read_warc_files(output / "warc").values() for record in records])


def records_of(crawled, address: str) -> dict[str, dict]:
    """The crawl's one record of each of a host's URLs, by path."""
    docs = [doc for doc in crawled.docs if f"//{address}:" in doc["requested_url"]]
    paths = Counter(doc["requested_url"].split("/", 3)[3] for doc in docs)
    assert set(paths.values()) == {1}, f"{address}: more than one record of {paths}"
    return {"/" + doc["requested_url"].split("/", 3)[3]: doc for doc in docs}


def assert_host_crawled(crawled, address: str, expected: dict[str, str], denial: str | None = None,
                        denial_kind: FailureKind = FailureKind.ROBOTS_DENIED) -> None:
    """Each of the host's pages has the one expected outcome; a fetched page
    valid XML (parsed strictly) and a WARC response whose digests warcio
    checked; a denied page the robots.txt reason and its kind."""
    records = records_of(crawled, address)
    assert {path: records[path]["outcome"] for path in expected} == expected
    for path, outcome in expected.items():
        doc = records[path]
        if outcome == "fetched":
            page = crawled.xml[doc["url"]]
            assert page.tag == "page" and page.get("url") == doc["url"]
            [response] = [record for record in crawled.warc if record.type == "response"
                          and record.headers.get_header("WARC-Target-URI") == doc["url"]]
            assert response.digests_passed is not False and response.http.get_statuscode() == "200"
        else:
            assert doc["error"] == f"{doc['url']}: {denial or 'disallowed by robots.txt'}"
            assert doc["error_kind"] == denial_kind


def assert_fetched_alone_within_bounds(crawled, address: str, seconds_bound: float = TIMEOUT + MARGIN,
                                       memory_bound: int = SMALL_FETCH_MEMORY, **options) -> dict[str, dict]:
    """Fetch the host's layer-0 pages and the ordinary host's in one task,
    robots.txt obeyed, under tracemalloc, and check the host's pages end as
    in the crawl, the ordinary ones are fetched, each request keeps to its
    timeout and the whole fetch to the bounds: the host's records by path.
    `options`: more config keys."""
    pages = [crawled.web.host(f"http://{address}:{crawled.web.port}/").url(path) for path in CASE_PAGES[address]]
    ordinary = [f"http://{ORDINARY}:{crawled.web.port}/page/{number}" for number in range(ORDINARY_PAGES)]
    crawled.server.clear_log()
    docs, seconds, peak = fetch_urls_measured([*pages, *ordinary], threads=2, timeout=TIMEOUT, obey_robots=True,
                                              user_agent=USER_AGENT, **options)
    assert crawled.server.wait_idle()
    assert Counter(doc["requested_url"] for doc in docs) == Counter([*pages, *ordinary])
    assert {doc["outcome"] for doc in docs if doc["requested_url"] in ordinary} == {"fetched"}
    assert all(entry.end - entry.start <= TIMEOUT for entry in crawled.server.log)
    records = {"/" + doc["requested_url"].split("/", 3)[3]: doc for doc in docs if doc["requested_url"] in pages}
    assert {path: doc["outcome"] for path, doc in records.items()} == CASE_PAGES[address]
    assert seconds <= seconds_bound
    assert peak <= memory_bound
    return records


def test_the_ordinary_host_is_crawled_politely_beside_the_faulty_robots_files(crawled):
    assert not politeness_violations(crawled.log, crawled.web, crawled.config)
    ordinary = records_of(crawled, ORDINARY)
    assert {(doc["outcome"], doc["layer"]) for doc in ordinary.values()} == {("fetched", 0)}


def robots_requests(log, address: str) -> list[str]:
    return [entry.path for entry in log if entry.address == address and entry.path.startswith("/robots")]


def test_a_5_mib_robots_txt_is_read_and_parsed_to_512_kib(crawled):
    assert len(BIG_ROBOTS) > 5 * 1024 * 1024
    # The rule past 512 KiB is neither read nor parsed: /late/ is fetched.
    assert_host_crawled(crawled, BIG, CASE_PAGES[BIG])
    assert robots_requests(crawled.log, BIG) == ["/robots.txt"]  # the host has URLs in layer 0 only
    # However large max_page_bytes is, robots.txt is read to 512 KiB only:
    # reading all 5 MiB would take more memory than the bound.
    assert_fetched_alone_within_bounds(crawled, BIG, TIMEOUT + BIG_ROBOTS_PARSE_SECONDS, BIG_ROBOTS_MEMORY,
                                       max_page_bytes=8 * 1024 * 1024)


@pytest.mark.parametrize("drip_interval, names_the_fault", [
    pytest.param(0.0, None, id="coming fast: read to 512 KiB"),
    pytest.param(0.5, "ResponseTimeLimitError while reading the body", id="coming slowly: the time limit"),
])
def test_an_endless_robots_txt_ends_at_512_kib_or_at_the_whole_response_time_limit(drip_interval, names_the_fault):
    # ENDLESS_BODY is one endless line: fast, its first 512 KiB are read,
    # and the line the limit cuts is dropped, which leaves no rule; slowly
    # (64 KiB every half second), the time limit comes first and
    # robots.txt is unreachable, which denies the host for the layer.
    timeout = 1.0
    limit = RESPONSE_TIME_LIMIT * timeout
    with FaultServer(drip_interval=drip_interval, drip_for=limit + 4 * MARGIN, robots_txt=ENDLESS_BODY) as server:
        docs, seconds, peak = fetch_urls_measured([server.url(HTTP_10)], timeout=timeout, obey_robots=True)
        assert server.wait_idle(timeout=MARGIN)
        log = server.log
    [doc] = docs
    if names_the_fault is None:
        assert (doc["outcome"], doc["error"]) == ("fetched", None)
        assert [entry.path for entry in log] == ["/robots.txt", HTTP_10]
        assert seconds <= timeout
    else:
        assert (doc["outcome"], doc["error_kind"]) == ("robots_denied", FailureKind.TIME_LIMIT)
        assert doc["error"] == (f"{server.url(HTTP_10)}: robots.txt unreachable ({names_the_fault}: "
                                f"the whole response took longer than its time limit of {limit:g}s)")
        assert [entry.path for entry in log] == ["/robots.txt"]
        assert limit <= seconds <= limit + MARGIN
    assert log[0].client_left  # the crawler hung up: nothing more was read
    # What the body's read holds at once: its chunks and their join. (With
    # max_page_bytes, 2 MiB by default, it would be four times as much.)
    assert peak <= 4 * MAX_ROBOTS_BYTES


def test_a_robots_txt_that_redirects_in_a_loop_is_unavailable_and_allows_everything(crawled):
    # RFC 9309: a robots.txt the crawler cannot follow to is unavailable, as a 4xx is.
    assert_host_crawled(crawled, LOOP, CASE_PAGES[LOOP])
    assert robots_requests(crawled.log, LOOP) == ["/robots.txt", "/robots-moved.txt"]  # the loop is seen at once
    assert_fetched_alone_within_bounds(crawled, LOOP)


def test_a_robots_txt_that_redirects_to_another_host_brings_that_hosts_rules(crawled):
    # RFC 9309 §2.3.1.2: redirects are followed across hosts, and the rules
    # found apply to the host whose robots.txt was asked for.
    assert_host_crawled(crawled, MOVED, CASE_PAGES[MOVED])
    assert robots_requests(crawled.log, MOVED) == ["/robots.txt"]
    assert [entry.path for entry in crawled.log if entry.address == ELSEWHERE] == [ELSEWHERE_ROBOTS_PATH]
    assert_fetched_alone_within_bounds(crawled, MOVED)
    assert [entry.path for entry in crawled.server.log if entry.address == ELSEWHERE] == [ELSEWHERE_ROBOTS_PATH]


def test_html_served_as_robots_txt_has_no_rules_and_allows_everything(crawled):
    assert_host_crawled(crawled, HTML, CASE_PAGES[HTML])
    assert_fetched_alone_within_bounds(crawled, HTML)


def test_a_robots_txt_with_bytes_that_are_not_utf8_keeps_its_rules(crawled):
    assert_host_crawled(crawled, NOT_UTF8, CASE_PAGES[NOT_UTF8])
    assert_fetched_alone_within_bounds(crawled, NOT_UTF8)


def test_a_robots_txt_that_fails_denies_its_host_for_the_layer_and_its_rules_apply_in_the_next(crawled):
    assert_host_crawled(crawled, FAILS_FIRST, CASE_PAGES[FAILS_FIRST], "robots.txt unreachable (HTTP 503)",
                        FailureKind.HTTP_5XX)
    assert_host_crawled(crawled, FAILS_FIRST, NEXT_LAYER_PAGES)
    records = records_of(crawled, FAILS_FIRST)
    assert {path: doc["layer"] for path, doc in records.items()} == {"/first.html": 0, "/next.html": 1,
                                                                      "/private/next.html": 1}
    # One robots.txt request a layer: the 503, then the 200.
    assert [(entry.path, entry.status) for entry in crawled.log if entry.address == FAILS_FIRST
            and entry.path == "/robots.txt"] == [("/robots.txt", 503), ("/robots.txt", 200)]
    # A layer's task alone: the 503 denies the host at once, without a page request.
    records = assert_fetched_alone_within_bounds(crawled, FAILS_FIRST)
    assert records["/first.html"]["error"].endswith(": robots.txt unreachable (HTTP 503)")
    assert records["/first.html"]["error_kind"] == FailureKind.HTTP_5XX
    assert [entry.path for entry in crawled.server.log if entry.address == FAILS_FIRST] == ["/robots.txt"]


# -- robots.txt redirected from host to host -------------------------------------
#
# Each host is a small server on a port of its own (a host is scheme, name and
# port), answering the routes it is given: a redirect or the rules.

RULES = b"User-agent: *\nDisallow: /private/\n"
SITE_PAGES = {"/page.html": html("page"), "/private/page.html": html("private page")}


class RoutedHandler(PageHandler):
    def do_GET(self):
        self.server.requests.append(self.path)
        route = self.server.routes.get(self.path)
        if route is None:
            self.send_html(SITE_PAGES[self.path]) if self.path in SITE_PAGES else self.send_error(404)
            return
        status, location, body = route
        self.send_response(status)
        if location is not None:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@contextmanager
def routed_hosts(count: int, address: str = "127.0.0.1"):
    """`count` hosts on `address`, each on its own port: servers whose
    `routes` map a path to (status, Location or None, body) and whose
    `requests` list the paths asked for, in order; other paths are
    SITE_PAGES or a 404."""
    servers = []
    try:
        for _ in range(count):
            server = ThreadingHTTPServer((address, 0), RoutedHandler)
            server.routes, server.requests = {}, []
            server.origin = f"http://{address}:{server.server_address[1]}"
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
            servers.append(server)
        yield servers
    finally:
        for server in servers:
            server.shutdown()
            server.server_close()


def redirect_chain(hosts, final: tuple) -> None:
    """hosts[0]'s /robots.txt redirects to hosts[1], and so on, one redirect a
    host; the last host answers `final` (status, Location, body)."""
    paths = ["/robots.txt"] + [f"/hop-{number}/robots.txt" for number in range(1, len(hosts))]
    for number, server in enumerate(hosts[:-1]):
        server.routes[paths[number]] = (302, hosts[number + 1].origin + paths[number + 1], b"moved\n")
    hosts[-1].routes[paths[-1]] = final


def fetch_site(origin: str, **options) -> tuple[dict[str, str], float]:
    """Fetch the site's pages at `origin` with robots.txt obeyed: each page's
    outcome by path, and the seconds the fetch took."""
    settings = dict(timeout=TIMEOUT, obey_robots=True, user_agent=USER_AGENT, threads=2)
    docs, seconds = fetch_urls([origin + path for path in SITE_PAGES], **{**settings, **options})
    return {doc["requested_url"].removeprefix(origin): doc["outcome"] for doc in docs}, seconds


RULES_APPLY = {"/page.html": "fetched", "/private/page.html": "robots_denied"}
NO_RULES = {"/page.html": "fetched", "/private/page.html": "fetched"}


def test_five_redirects_across_hosts_are_followed_and_the_rules_apply_to_the_first_host():
    with routed_hosts(6) as hosts:
        redirect_chain(hosts, (200, None, RULES))
        outcomes, seconds = fetch_site(hosts[0].origin)
    assert outcomes == RULES_APPLY
    # One request a host: each hop once, and the first host's pages after its rules.
    assert hosts[0].requests[0] == "/robots.txt" and sorted(hosts[0].requests[1:]) == ["/page.html"]
    assert [server.requests for server in hosts[1:]] == [[f"/hop-{number}/robots.txt"] for number in range(1, 6)]
    assert seconds <= TIMEOUT + MARGIN


def test_a_sixth_redirect_is_not_followed_and_leaves_robots_txt_unavailable(caplog):
    # RFC 9309: past five redirects robots.txt may be taken as unavailable,
    # as a 4xx: everything is allowed, as for a loop on one host.
    with routed_hosts(7) as hosts:
        redirect_chain(hosts, (200, None, b"User-agent: *\nDisallow: /\n"))
        outcomes, _ = fetch_site(hosts[0].origin)
    assert outcomes == NO_RULES
    assert [len(server.requests) for server in hosts[1:]] == [1, 1, 1, 1, 1, 0]  # the 7th host is never asked
    assert "robots.txt not followed (more than 5 redirects): everything is allowed" in caplog.text


def test_a_redirect_loop_across_hosts_is_seen_at_its_first_repeat():
    with routed_hosts(2) as (first, second):
        first.routes["/robots.txt"] = (302, second.origin + "/robots.txt", b"moved\n")
        second.routes["/robots.txt"] = (302, first.origin + "/robots.txt", b"moved\n")
        outcomes, _ = fetch_site(first.origin)
    assert outcomes == NO_RULES
    assert first.requests.count("/robots.txt") == 1 and second.requests == ["/robots.txt"]


@pytest.mark.parametrize("location", ["ftp://127.0.0.1/robots.txt", "javascript:alert(1)"])
def test_a_redirect_to_a_location_that_is_no_http_url_leaves_robots_txt_unavailable(location, caplog):
    with routed_hosts(1) as (site,):
        site.routes["/robots.txt"] = (302, location, b"moved\n")
        outcomes, _ = fetch_site(site.origin)
    assert outcomes == NO_RULES
    assert site.requests.count("/robots.txt") == 1
    assert "to a Location that is no http(s) URL" in caplog.text


def test_a_redirect_to_an_address_the_guard_refuses_is_not_requested_and_leaves_robots_txt_unavailable(caplog):
    # The site is at an address allow_networks lets through; its robots.txt
    # redirects to another loopback address, which the guard refuses.
    site_address, refused_address = "127.0.0.2", "127.0.0.3"
    with routed_hosts(1, site_address) as (site,), routed_hosts(1, refused_address) as (refused,):
        refused.routes["/robots.txt"] = (200, None, b"User-agent: *\nDisallow: /\n")
        site.routes["/robots.txt"] = (302, refused.origin + "/robots.txt", b"moved\n")
        outcomes, _ = fetch_site(site.origin, allow_private_networks=False, allow_networks=[f"{site_address}/32"])
    assert outcomes == NO_RULES
    assert refused.requests == []
    assert f"redirect to {refused.origin}/robots.txt: {refused_address} is a non-public address" in caplog.text


def test_a_redirect_to_a_name_that_does_not_resolve_leaves_robots_txt_unreachable():
    # A lookup that fails is as a connection that fails: the host is denied for the layer.
    with dns_server() as (zone, resolver), routed_hosts(1) as (site,):
        site.routes["/robots.txt"] = (302, "http://unknown.test/robots.txt", b"moved\n")
        docs, _ = fetch_urls([site.origin + path for path in SITE_PAGES], timeout=TIMEOUT, obey_robots=True,
                             user_agent=USER_AGENT, dns_server=resolver)
    assert zone.questions == {"unknown.test": 1}
    reason = (f"robots.txt unreachable (DNSLookupError: DNS lookup of unknown.test: "
              f"the DNS server at {resolver} answered NXDOMAIN)")
    assert {(doc["outcome"], doc["error"], doc["error_kind"]) for doc in docs} == {
        ("robots_denied", f"{doc['url']}: {reason}", FailureKind.DNS) for doc in docs}
    assert site.requests == ["/robots.txt"]


def test_a_redirect_from_http_to_https_on_the_same_name_connects_to_the_checked_address(tmp_path):
    # http://name/robots.txt -> https://name/robots.txt: another host (the
    # scheme and port differ) of the same name, looked up once for both.
    # The TLS server's certificate is self-signed and refused: robots.txt
    # is then unreachable, as any failed connection leaves it.
    with dns_server() as (zone, resolver), routed_hosts(1, ALLOWED) as (site,), \
            tls_listener(tmp_path, ALLOWED) as (tls_port, server_names):
        origin = f"http://{STEADY}:{site.server_address[1]}"
        site.routes["/robots.txt"] = (301, f"https://{STEADY}:{tls_port}/robots.txt", b"moved\n")
        docs, _ = fetch_urls([origin + path for path in SITE_PAGES], timeout=TIMEOUT, obey_robots=True,
                             user_agent=USER_AGENT, dns_server=resolver, allow_private_networks=False,
                             allow_networks=[f"{ALLOWED}/32"])
    assert zone.questions == {STEADY: 1}
    assert server_names == [STEADY]  # the hello reached the checked address, and named the host
    assert {(doc["outcome"], doc["error_kind"]) for doc in docs} == {("robots_denied", FailureKind.TLS)}
    assert all("robots.txt unreachable (SSLError" in doc["error"] and "CERTIFICATE_VERIFY_FAILED" in doc["error"]
               for doc in docs)
    assert site.requests == ["/robots.txt"]
