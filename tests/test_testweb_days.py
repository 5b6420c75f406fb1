"""Tests of the daily test web: a news web that changes day by day.

Recrawl tests will trust it to publish, update, delete and fail pages on the
days its model says, and to answer conditional requests as RFC 9110 says, so
both are checked here against a running server over real HTTP (http.client,
one keep-alive connection per host, as a crawler keeps them).
"""

from __future__ import annotations

import html
import http.client
import re
import time
import tracemalloc
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from email.utils import format_datetime
from typing import NamedTuple
from urllib.parse import urljoin, urlsplit

import pytest

from mrcrawl.testweb.daily import BENCHMARK_SPEC, DailySpec, DailyWeb, start_daily_web
from mrcrawl.testweb.oracle import expected_layers
from mrcrawl.testweb.server import start_test_web
from mrcrawl.testweb.sites import MIN_HOSTS

SPEC = DailySpec()  # 3 sites of 3 sections and 40 articles, 4 new a day each, days 1 to 7
HREF = re.compile(r'href="([^"]*)"')
PARAGRAPH = re.compile(r"<p>(.*?)</p>")
TITLE = re.compile(r"<title>(.*?)</title>")
STRONG_ETAG = re.compile(r'"[0-9a-f]+"')
PORT = 41000  # for models that are not served


class Response(NamedTuple):
    status: int
    headers: http.client.HTTPMessage
    body: bytes


class Client:
    """GETs over one keep-alive connection per host."""

    def __init__(self):
        self.connections: dict[str, http.client.HTTPConnection] = {}

    def get(self, url: str, headers: dict[str, str] | None = None) -> Response:
        parts = urlsplit(url)
        if parts.netloc not in self.connections:
            self.connections[parts.netloc] = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        connection = self.connections[parts.netloc]
        connection.request("GET", parts.path, headers=headers or {})
        response = connection.getresponse()
        return Response(response.status, response.headers, response.read())

    def get_past_503(self, url: str, headers: dict[str, str] | None = None) -> Response:
        """A GET retried once after a 503, as a crawler retries a failing page."""
        response = self.get(url, headers)
        return self.get(url, headers) if response.status == 503 else response

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


@pytest.fixture(scope="module")
def server():
    with start_daily_web(SPEC) as running:
        yield running


@pytest.fixture
def web(server) -> DailyWeb:
    return server.web


@pytest.fixture
def client():
    http_client = Client()
    yield http_client
    http_client.close()


def links_in(url: str, body: bytes) -> list[str]:
    """The links of a served page, made absolute (the daily web writes
    canonical hrefs, root-relative on its own site)."""
    return [urljoin(url, html.unescape(href)) for href in HREF.findall(body.decode("utf-8"))]


def section_page_of(article_url: str) -> str:
    """An article's section page, from the section its path starts with."""
    parts = urlsplit(article_url)
    return f"{parts.scheme}://{parts.netloc}/section/{parts.path.split('/')[1]}/"


def is_article(url: str) -> bool:
    return url.endswith(".html")


def hub_links(client: Client, web: DailyWeb) -> set[str]:
    """Every link of every hub page served now."""
    links = set()
    for hub in web.hub_urls():
        response = client.get(hub)
        assert response.status == 200, hub
        links.update(links_in(hub, response.body))
    return links


# -- the model ------------------------------------------------------------------------

def test_each_day_stands_for_a_date_one_day_after_the_last():
    web = DailyWeb(SPEC, PORT)
    assert list(web.days) == [1, 2, 3, 4, 5, 6, 7]
    assert web.date(1) == datetime(2026, 1, 5, 6, 0, tzinfo=timezone.utc)
    assert web.date_iso(1) == "2026-01-05T06:00:00Z"
    assert web.date_iso(7) == "2026-01-11T06:00:00Z"
    assert all(web.date(day + 1) - web.date(day) == timedelta(days=1) for day in web.days)


def test_same_seed_gives_the_same_web_and_another_seed_another():
    first, again = DailyWeb(SPEC, PORT), DailyWeb(SPEC, PORT)
    other = DailyWeb(replace(SPEC, seed=2), PORT)
    for day in first.days:
        assert first.events(day) == again.events(day)
        urls = sorted(first.existing(day))
        assert urls == sorted(again.existing(day))
        assert [first.page(url, day).body for url in urls] == [again.page(url, day).body for url in urls]
    assert first.existing(1) != other.existing(1)  # the titles in the article paths differ
    assert [first.events(day) for day in first.days] != [other.events(day) for day in other.days]


def test_impossible_shapes_are_refused():
    for shape in ({"sites": 0}, {"sites": 254}, {"latest": 0}, {"days": 0}, {"updated_share": 1.5},
                  {"deleted_share": -0.1}, {"related": -1}):
        with pytest.raises(ValueError):
            DailySpec(**shape)
    with pytest.raises(ValueError):
        DailyWeb(SPEC, PORT).on(8)


def test_every_day_publishes_updates_deletes_and_fails_some_articles():
    web = DailyWeb(SPEC, PORT)
    first = web.events(1)
    assert len(first.published) == SPEC.sites * SPEC.articles
    assert not first.updated and not first.deleted  # changes start on day 2
    for day in range(2, SPEC.days + 1):
        events = web.events(day)
        assert len(events.published) == SPEC.sites * SPEC.new_per_day
        assert all(web.version(url, day) == day for url in events.published + events.updated)
        assert all(web.version(url, day - 1) is None for url in events.published)
        assert all(web.deleted_on(url) == day and not web.exists(url, day) and web.exists(url, day - 1)
                   for url in events.deleted)
        assert all(web.fails_once(url, day) for url in events.failing)
    # Over days 2 to 7 each kind of change happens, at roughly the rate asked for.
    later = [web.events(day) for day in range(2, SPEC.days + 1)]
    # About as many articles live each day as on day 1:
    article_days = SPEC.sites * SPEC.articles * len(later)
    for happened, share in ((sum(len(e.updated) for e in later), SPEC.updated_share),
                            (sum(len(e.deleted) for e in later), SPEC.deleted_share),
                            (sum(len(e.failing) for e in later), SPEC.fail_once_share)):
        assert 0.25 * share * article_days < happened < 4 * share * article_days


def test_the_model_at_benchmark_size_is_lazy_fast_and_small():
    tracemalloc.start()
    try:
        started = time.perf_counter()
        web = DailyWeb(BENCHMARK_SPEC, PORT)
        built = time.perf_counter() - started
        after_build = tracemalloc.get_traced_memory()[0]
        hubs = web.hub_urls()
        first_site = hubs[:1 + 20]
        articles = list(dict.fromkeys(url for hub in first_site for url in web.outlinks(hub, 7) if is_article(url)))
        sample = hubs[::21] + articles[:25]
        before_pages = tracemalloc.get_traced_memory()[0]
        for day in web.days:
            for url in sample:
                web.page(url, day)
        after_pages = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert built < 0.5
    assert after_build < 2_000_000  # bytes; 100,000 pages' bodies would be a thousand times more
    assert after_pages - before_pages < 50_000  # rendering keeps nothing
    assert len(hubs) == 50 * (1 + 20)
    assert len(web.existing(1)) == 50 * (1 + 20 + 2000) + 50  # robots.txt too
    # The newest article of day 7 is new that day.
    assert web.page(articles[0], 7).status == 200 and web.page(articles[0], 6).status == 404

    def mean_seconds(urls: list[str], day: int) -> float:
        best = float("inf")
        for _ in range(3):  # the best of three: a busy machine only slows a run down
            started = time.perf_counter()
            for url in urls:
                assert web.page(url, day).status == 200
            best = min(best, (time.perf_counter() - started) / len(urls))
        return best

    # Rendering takes under half a millisecond a page on a quiet machine; the
    # bound is ten times that, so a busy machine does not fail it (the bench
    # measures speed), while a model that built more than the page asked for
    # would.
    assert mean_seconds(hubs[:200], 7) < 0.005
    assert mean_seconds(articles, 7) < 0.005


# -- the server ----------------------------------------------------------------------

def test_new_articles_appear_on_the_hubs_on_their_day(server, web, client):
    for day in (2, 3, 4):
        published = web.events(day).published
        assert published
        server.set_day(day - 1)
        before = hub_links(client, web)
        assert all(client.get(url).status == 404 for url in published)
        server.set_day(day)
        after = hub_links(client, web)
        assert all(client.get_past_503(url).status == 200 for url in published)
        assert not before & set(published) and set(published) <= after
        for home in web.seed_urls:
            # Newest first: the site's new articles head its home page's list.
            new_here = [url for url in reversed(published) if url.startswith(home)]
            listed = [url for url in links_in(home, client.get(home).body) if is_article(url)]
            assert listed[:len(new_here)] == new_here
        for url in published:
            section = section_page_of(url)
            listed = [link for link in links_in(section, client.get(section).body) if is_article(link)]
            new_in_section = [link for link in reversed(published) if section_page_of(link) == section]
            assert listed[:len(new_in_section)] == new_in_section


def test_a_deleted_article_is_404_from_its_day_on_and_gone_from_the_hubs(server, web, client):
    checked = 0
    for day in range(2, SPEC.days + 1):
        deleted = web.events(day).deleted
        server.set_day(day - 1)
        listed_before = set(deleted) & hub_links(client, web)
        assert all(client.get_past_503(url).status == 200 for url in deleted)
        server.set_day(day)
        assert all(client.get(url).status == 404 for url in deleted)
        assert not set(deleted) & hub_links(client, web)
        server.set_day(SPEC.days)
        assert all(client.get(url).status == 404 for url in deleted)
        checked += len(listed_before)
    assert checked  # some deleted article was on a hub the day before


def test_fail_once_answers_503_then_200_that_day_and_200_on_other_days(server, web, client):
    day = 2
    failing = web.events(day).failing
    assert failing
    url = failing[0]
    other_day = next(d for d in range(day + 1, SPEC.days + 1) if web.exists(url, d) and not web.fails_once(url, d))
    server.set_day(day)
    assert [client.get(url).status for _ in range(3)] == [503, 200, 200]
    server.set_day(other_day)
    assert client.get(url).status == 200
    server.set_day(day)  # the day again: it fails once again
    assert [client.get(url).status for _ in range(2)] == [503, 200]
    steady = next(u for u in web.outlinks(web.seed_urls[0], day) if is_article(u) and not web.fails_once(u, day))
    assert client.get(steady).status == 200


def test_every_200_carries_validators_and_html_is_utf8(server, web, client):
    day = 3
    server.set_day(day)
    home = web.seed_urls[1]
    section = next(url for url in web.outlinks(home, day) if "/section/" in url)
    article = next(url for url in web.outlinks(section, day) if is_article(url) and web.version(url, day) < day)
    robots = urljoin(home, "/robots.txt")
    for url, modified in ((home, day), (section, day), (article, web.version(article, day)), (robots, 1)):
        response = client.get_past_503(url)
        assert response.status == 200, url
        assert STRONG_ETAG.fullmatch(response.headers["ETag"]), url
        assert response.headers["Last-Modified"] == format_datetime(web.date(modified), usegmt=True), url
        assert int(response.headers["Content-Length"]) == len(response.body)
        if url != robots:
            assert response.headers["Content-Type"] == "text/html; charset=utf-8"
            text = response.body.decode("utf-8")
            assert "<title>" in text and text.count("<p>") >= 2
    assert client.get(robots).body.decode().splitlines()[-2:] == ["User-agent: *", "Allow: /"]
    assert "ETag" not in client.get(urljoin(home, "/no-such-page.html")).headers


def test_conditional_requests_get_304_until_the_page_changes(server, web, client):
    def steady_on(url: str, *days: int) -> bool:
        return all(web.exists(url, d) and not web.fails_once(url, d) for d in days)

    day = next(d for d in range(2, SPEC.days + 1)
               if any(steady_on(url, d - 1, d) for url in web.events(d).updated))
    updated = next(url for url in web.events(day).updated if steady_on(url, day - 1, day))
    unchanged = next(url for url in sorted(web.existing(day)) if is_article(url) and steady_on(url, day - 1, day)
                     and web.version(url, day) == web.version(url, day - 1))
    server.set_day(day - 1)
    server.clear_log()
    first = {url: client.get(url) for url in (updated, unchanged)}
    etag, modified = first[unchanged].headers["ETag"], first[unchanged].headers["Last-Modified"]

    # The same day: unchanged by definition.
    not_modified = client.get(unchanged, {"If-None-Match": etag})
    assert not_modified.status == 304 and not_modified.body == b""
    assert not_modified.headers["ETag"] == etag and "Content-Length" not in not_modified.headers
    assert client.get(unchanged, {"If-Modified-Since": modified}).status == 304
    assert client.get(unchanged, {"If-None-Match": f'"other", W/{etag}'}).status == 304  # a list; weak comparison
    assert client.get(unchanged, {"If-None-Match": "*"}).status == 304
    an_hour_earlier = format_datetime(web.date(web.version(unchanged, day)) - timedelta(hours=1), usegmt=True)
    assert client.get(unchanged, {"If-Modified-Since": an_hour_earlier}).status == 200
    assert client.get(unchanged, {"If-Modified-Since": "not a date"}).status == 200
    # If-None-Match decides when both are sent (RFC 9110 §13.2.2).
    assert client.get(unchanged, {"If-None-Match": '"other"', "If-Modified-Since": modified}).status == 200
    assert client.get(unchanged, {"If-None-Match": etag, "If-Modified-Since": an_hour_earlier}).status == 304

    server.set_day(day)
    assert client.get(unchanged, {"If-None-Match": etag}).status == 304
    assert client.get(unchanged, {"If-Modified-Since": modified}).status == 304
    old_etag, old_modified = first[updated].headers["ETag"], first[updated].headers["Last-Modified"]
    changed = client.get(updated, {"If-None-Match": old_etag})
    assert changed.status == 200
    # The text is new (not only its dateline, which now says "Updated"); the title stays.
    before, after = first[updated].body.decode(), changed.body.decode()
    assert PARAGRAPH.findall(after)[0].endswith(f"Updated {web.date(day):%Y-%m-%d %H:%M} UTC.")
    assert not set(PARAGRAPH.findall(before)[1:]) & set(PARAGRAPH.findall(after)[1:])
    assert TITLE.findall(before) == TITLE.findall(after)
    assert changed.headers["ETag"] != old_etag
    assert changed.headers["Last-Modified"] == format_datetime(web.date(day), usegmt=True)
    assert client.get(updated, {"If-Modified-Since": old_modified}).status == 200
    assert client.get(updated, {"If-None-Match": changed.headers["ETag"]}).status == 304
    # A 304 has no body, and the connection goes on after it.
    assert server.wait_idle()
    addresses = {urlsplit(url).hostname for url in (updated, unchanged)}
    for address in addresses:
        assert len({entry.connection for entry in server.log if entry.address == address}) == 1


def test_hub_bytes_change_every_day_while_their_links_may_not(web, client):
    quiet = replace(SPEC, new_share=0.0, deleted_share=0.0)  # no hub list ever changes
    with start_daily_web(quiet) as still:
        pages = {}
        for day in (1, 2):
            still.set_day(day)
            pages[day] = {hub: client.get(hub) for hub in still.web.hub_urls()}
        for hub, before in pages[1].items():
            after = pages[2][hub]
            assert before.body != after.body and before.headers["ETag"] != after.headers["ETag"]
            assert after.headers["Last-Modified"] == format_datetime(still.web.date(2), usegmt=True)
            assert links_in(hub, before.body) == links_in(hub, after.body)
            assert still.web.version(hub, 2) == 1  # the edition date alone is no change
            # The hub of day 1 is not the hub of day 2.
            assert client.get(hub, {"If-None-Match": before.headers["ETag"]}).status == 200
    # On the default web, the model's version of a hub moves exactly when its links do.
    for hub in web.hub_urls():
        for day in range(2, SPEC.days + 1):
            moved = web.outlinks(hub, day) != web.outlinks(hub, day - 1)
            assert (web.version(hub, day) == day) == moved, (hub, day)


@pytest.mark.parametrize("day", [1, 5])
def test_the_model_agrees_with_a_crawl_over_http(server, web, client, day):
    depth = 4
    server.set_day(day)
    layer_of = dict.fromkeys(web.seed_urls, 0)
    frontier = list(web.seed_urls)
    for layer in range(depth):
        found = []
        for url in frontier:
            first = client.get(url)
            response = client.get(url) if first.status == 503 else first
            assert (first.status == 503) == web.fails_once(url, day), url
            assert response.status == (200 if web.exists(url, day) else 404), url
            links = links_in(url, response.body) if response.status == 200 else []
            assert tuple(dict.fromkeys(links)) == web.outlinks(url, day), url
            found += [link for link in links if link not in layer_of]
        frontier = list(dict.fromkeys(found)) if layer + 1 < depth else []
        layer_of.update(dict.fromkeys(frontier, layer + 1))
    assert layer_of == web.reachable(day, depth)
    assert any(not web.exists(url, day) for url in layer_of) == (day > 1)  # dead links, once articles go
    # The crawl oracle reads one day of the model like any test web.
    layers = expected_layers(web.on(day), web.seed_urls, depth, retries=1)
    assert [{url for url, _, _ in records} for records in layers] == [
        {url for url, layer in layer_of.items() if layer == number} for number in range(depth)]
    assert all(outcome == ("fetched" if web.exists(url, day) else "http_error")
               for records in layers for url, outcome, _ in records)


def test_set_day_keeps_the_addresses_and_refuses_days_the_web_lacks(server, web, client):
    port, seeds = server.port, server.seeds
    server.set_day(6)
    assert server.day == 6 and server.port == port and server.seeds == seeds == list(web.seed_urls)
    for missing_day in (0, SPEC.days + 1):
        with pytest.raises(ValueError):
            server.set_day(missing_day)
    assert server.day == 6
    edition = f"Edition of {web.date(6):%Y-%m-%d %H:%M} UTC."
    assert edition in client.get(seeds[0]).body.decode()


def test_the_generated_web_has_no_days_and_ignores_conditional_requests(client):
    with start_test_web(seed=1, hosts=MIN_HOSTS) as plain:
        assert plain.day is None
        with pytest.raises(RuntimeError):
            plain.set_day(2)
        url = plain.seeds[0]
        response = client.get(url, {"If-None-Match": "*", "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT"})
        assert response.status == 200 and response.body == plain.web.page(url).body
        assert "ETag" not in response.headers and "Last-Modified" not in response.headers
