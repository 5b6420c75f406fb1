"""The private-network guard: its decision on every spelling of an address and
on names, and the fetcher's records of what it refused, redirect hops too.
Only loopback is reachable here, so a refused fetch shows in its record and
in a request count of nought, never in a connection to the LAN."""
import http.server
import ipaddress
import threading
import urllib.parse
from contextlib import contextmanager

import pytest

from crawl_support import PageHandler
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.fetch.netguard import address_literal, blocked_reason
from mrcrawl.fetch.resolver import DNSLookupError, Resolver
from mrcrawl.page.urls import host_of, normalize_url
from mrcrawl.store.failures import FailureKind

NON_PUBLIC = ["127.0.0.1", "127.0.0.2", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "0.0.0.0",
              "::1", "fe80::1", "::ffff:10.0.0.1", "::ffff:127.0.0.1", "224.0.0.1"]
# Spellings of non-public addresses that a URL parser or the system
# resolver reads as those addresses: decimal, octal, hex, short dotted and
# IPv4-mapped IPv6 forms.
SPELLED = {
    "2130706433": "127.0.0.1",
    "017700000001": "127.0.0.1",
    "0x7f.1": "127.0.0.1",
    "0x7f000001": "127.0.0.1",
    "0177.0.0.01": "127.0.0.1",
    "127.1": "127.0.0.1",
    "10.0.1": "10.0.0.1",
    "0xa9.0xfe.0xa9.0xfe": "169.254.169.254",
    "[::ffff:10.0.0.1]": "::ffff:10.0.0.1",
    "[::ffff:a00:1]": "::ffff:10.0.0.1",
    "[::1]": "::1",
}


def judged(host: str, allowed=()) -> str | None:
    return blocked_reason(host, [address_literal(host)], allowed)


@pytest.mark.parametrize("host", NON_PUBLIC)
def test_non_public_literals_are_blocked(host):
    assert judged(host) == f"{host} is a non-public address"


@pytest.mark.parametrize("host, address", SPELLED.items())
def test_every_spelling_of_an_address_is_read_as_that_address_and_blocked(host, address):
    assert address_literal(host) == ipaddress.ip_address(address)
    assert judged(host) == f"{host} is a non-public address"


@pytest.mark.parametrize("host", ["8.8.8.8", "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946",
                                  "[2606:2800:220:1:248:1893:25c8:1946]", "134744072", "0x8.0x8.0x8.0x8"])
def test_public_literals_pass(host):
    assert judged(host) is None


@pytest.mark.parametrize("host", ["example.com", "1.2.3.256", "0x100000000", "www.123", "1..2"])
def test_names_are_not_taken_for_addresses(host):
    assert address_literal(host) is None


def test_a_name_is_judged_by_every_address_it_has():
    public, private = ipaddress.ip_address("93.184.216.34"), ipaddress.ip_address("10.0.0.1")
    assert blocked_reason("example.test", [public]) is None
    assert blocked_reason("example.test", [public, private]) == "example.test resolves to non-public address 10.0.0.1"


def test_allowed_networks_let_their_addresses_through_and_no_other():
    allowed = [ipaddress.ip_network("127.0.0.2/32"), ipaddress.ip_network("10.0.0.0/8")]
    assert judged("127.0.0.2", allowed) is None
    assert judged("[::ffff:10.9.9.9]", allowed) is None  # a mapped address is its IPv4 address
    assert judged("127.0.0.3", allowed) == "127.0.0.3 is a non-public address"
    assert judged("::1", allowed) == "::1 is a non-public address"


def test_a_name_resolving_to_loopback_is_blocked():
    # "localhost" resolves from /etc/hosts, so this needs no network.
    addresses = Resolver(timeout=5.0).addresses("localhost")
    reason = blocked_reason("localhost", addresses)
    assert reason is not None and reason.startswith("localhost resolves to non-public address ")


def test_an_unresolvable_name_raises_a_dns_error():
    with pytest.raises(DNSLookupError, match="DNS lookup of no-such-host.invalid"):
        Resolver(timeout=2.0).addresses("no-such-host.invalid")


# -- the fetcher: what the guard refused, and that it made no request ---------

def guarded_fetch(urls, **options) -> tuple[list[dict], dict]:
    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=2, delay=0.0, retries=0,
                         obey_robots=False, timeout=2.0, **options)
    fetcher = Fetcher(config, layer=0)
    for url in urls:
        fetcher.add(url)
    return list(fetcher.finish()), fetcher.stats


LITERAL_URLS = ["http://2130706433/", "http://0x7f.1/", "http://017700000001/", "http://[::ffff:10.0.0.1]/",
                "http://[::1]:8080/", "http://10.0.0.1/admin", "http://169.254.169.254/latest/meta-data/"]


@pytest.mark.parametrize("url", LITERAL_URLS)
@pytest.mark.parametrize("as_written", [True, False], ids=["as written", "canonical"])
def test_a_fetch_of_a_non_public_literal_is_blocked_without_a_lookup_or_a_request(url, as_written):
    # The frontier hands the fetcher canonical URLs (0x7f.1 is 127.0.0.1
    # there), but the guard does not count on it.
    url = url if as_written else normalize_url(url)
    [doc], stats = guarded_fetch([url])
    assert (doc["outcome"], doc["error"]) == ("blocked", f"{host_of(url)} is a non-public address")
    assert doc["error_kind"] == FailureKind.BLOCKED_PRIVATE
    assert (stats["requests"], stats["unconnected"], stats["dns_lookups"]) == (0, 0, 0)


def test_a_fetch_of_a_name_resolving_to_loopback_is_blocked():
    [doc], stats = guarded_fetch(["http://localhost:8080/"])
    assert doc["outcome"] == "blocked"
    assert doc["error"].startswith("localhost resolves to non-public address ")
    assert doc["error_kind"] == FailureKind.BLOCKED_PRIVATE
    assert (stats["requests"], stats["dns_lookups"]) == (0, 1)


class Redirector(PageHandler):
    """/to?<target> redirects there; anything else is a page."""

    def do_GET(self):
        path, _, target = self.path.partition("?")
        if path == "/to":
            self.send_response(302)
            self.send_header("Location", urllib.parse.unquote(target))
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_html(b"<html><p>page</p></html>")


@contextmanager
def redirector(address: str):
    server = http.server.ThreadingHTTPServer((address, 0), Redirector)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield f"http://{address}:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("target", ["http://2130706433/", "http://0x7f.1/x", "http://017700000001/",
                                    "http://[::ffff:10.0.0.1]/", "http://[::1]/", "http://10.0.0.1/",
                                    "http://localhost/"])
def test_a_redirect_to_a_non_public_host_is_blocked_at_its_hop(target):
    # 127.0.0.2 is let through; the redirect's target is another host, so
    # it is the next layer's URL, and its fetch is refused there.
    allowed = dict(allow_networks=["127.0.0.2/32"])
    with redirector("127.0.0.2") as origin:
        [doc], _ = guarded_fetch([f"{origin}/to?{target}"], **allowed)
    assert doc["outcome"] == "redirect" and doc["redirect_to"] == normalize_url(target)
    [hop], stats = guarded_fetch([doc["redirect_to"]], **allowed)
    assert hop["outcome"] == "blocked" and "non-public address" in hop["error"]
    assert hop["error_kind"] == FailureKind.BLOCKED_PRIVATE
    assert stats["requests"] == 0


def test_a_same_host_redirect_hop_is_fetched_from_the_checked_address():
    with redirector("127.0.0.2") as origin:
        [doc], stats = guarded_fetch([f"{origin}/to?/page"], allow_networks=["127.0.0.2/32"])
    assert (doc["outcome"], doc["url"], doc["redirect_from"]) == ("fetched", f"{origin}/page", f"{origin}/to?/page")
    assert stats["requests"] == 2
