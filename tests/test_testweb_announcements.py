"""Tests of what the daily test web's sites announce: robots.txt's Sitemap:
lines, sitemap indexes, news sitemaps, plain and gzip sitemaps, and RSS 2.0,
Atom and RSS 1.0 feeds, day by day.

The crawler's tests will trust the model (DailyWeb.entries, reachable,
discovery) to say what a correct crawler finds in them, so each document is
fetched over real HTTP from the running server and read here with lxml,
independently of the crawler's own parser, and compared with the model.
"""

from __future__ import annotations

import email.utils
import gzip
import hashlib
import http.client
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from urllib.parse import urljoin, urlsplit

import lxml.html
import pytest
from lxml import etree

from mrcrawl.testweb.daily import (
    ANNOUNCED,
    ANNOUNCEMENT_PATHS,
    ANNOUNCING_BENCHMARK_SPEC,
    ARCHIVE_SITEMAP,
    ATOM_NS,
    BENCHMARK_SPEC,
    BOTH,
    DC_NS,
    LINKED,
    NEWS_NS,
    NEWS_SITEMAP,
    RDF_NS,
    RECENT_SITEMAP,
    RSS1_NS,
    SITEMAPS_NS,
    DailySpec,
    DailyWeb,
    start_daily_web,
)

# 3 sites, 2 of which announce (the third announces nothing); on those, a
# fifth of the articles are linked by no page.
SPEC = DailySpec(announcing_share=0.67, announced_only_share=0.2)
PORT = 41000  # for models that are not served

XML_NS = "http://www.w3.org/XML/1998/namespace"
FEED_TYPES = ("application/rss+xml", "application/atom+xml", "application/rdf+xml")
# No entity expansion, no DTD, no network: the documents need none.
SAFE_XML = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)


def get(url: str, headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
    """One GET, retried once after a 503 (an article that fails once); the body read."""
    for _ in range(2):
        parts = urlsplit(url)
        connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=5)
        connection.request("GET", parts.path, headers=headers or {})
        response = connection.getresponse()
        response.body = response.read()
        connection.close()
        if response.status != 503:
            break
    return response


# -- reading the documents, as a correct parser would --------------------------------------

def iso(moment: datetime) -> str:
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def date_of(text: str | None) -> str | None:
    """An RFC 822 or W3C date as the records write it; a date alone is midnight UTC."""
    if text is None:
        return None
    text = text.strip()
    if text[:1].isalpha():
        return iso(email.utils.parsedate_to_datetime(text))
    if len(text) == 10:
        return iso(datetime.fromisoformat(text).replace(tzinfo=timezone.utc))
    return iso(datetime.fromisoformat(text.replace("Z", "+00:00")))


def plain(text: str | None) -> str | None:
    """A title as plain text: markup stripped, entities decoded, spaces collapsed."""
    if text is None:
        return None
    return " ".join(lxml.html.fragment_fromstring(text, create_parent="div").text_content().split())


def child_text(element, path: str, namespaces: dict | None = None) -> str | None:
    found = element.find(path, namespaces)
    return None if found is None else found.text


def read_document(url: str, body: bytes) -> tuple[str, tuple]:
    """The kind of a feed or sitemap and its entries (url, published, modified, title, language)."""
    root = etree.fromstring(body, SAFE_XML)
    ns = {"s": SITEMAPS_NS, "n": NEWS_NS, "a": ATOM_NS, "r": RDF_NS, "r1": RSS1_NS, "dc": DC_NS}
    if root.tag == f"{{{SITEMAPS_NS}}}sitemapindex":
        return "sitemap_index", tuple((child_text(item, "s:loc", ns), None, date_of(child_text(item, "s:lastmod", ns)),
                                       None, None) for item in root.findall("s:sitemap", ns))
    if root.tag == f"{{{SITEMAPS_NS}}}urlset":
        news = NEWS_NS in root.nsmap.values()
        return ("news_sitemap" if news else "sitemap"), tuple(
            (child_text(item, "s:loc", ns), date_of(child_text(item, "n:news/n:publication_date", ns)),
             date_of(child_text(item, "s:lastmod", ns)), plain(child_text(item, "n:news/n:title", ns)),
             child_text(item, "n:news/n:publication/n:language", ns)) for item in root.findall("s:url", ns))
    if root.tag == "rss":
        language = child_text(root, "channel/language")
        return "feed", tuple((urljoin(url, child_text(item, "link")), date_of(child_text(item, "pubDate")), None,
                              plain(child_text(item, "title")), language) for item in root.iter("item"))
    if root.tag == f"{{{ATOM_NS}}}feed":
        base = urljoin(url, root.get(f"{{{XML_NS}}}base", ""))
        return "feed", tuple((urljoin(base, item.find("a:link[@rel='alternate']", ns).get("href")),
                              date_of(child_text(item, "a:published", ns)), date_of(child_text(item, "a:updated", ns)),
                              plain(child_text(item, "a:title", ns)), root.get(f"{{{XML_NS}}}lang"))
                             for item in root.findall("a:entry", ns))
    assert root.tag == f"{{{RDF_NS}}}RDF", root.tag
    language = child_text(root, "r1:channel/dc:language", ns)
    return "feed", tuple((urljoin(url, child_text(item, "r1:link", ns)), date_of(child_text(item, "dc:date", ns)),
                          None, plain(child_text(item, "r1:title", ns)), language)
                         for item in root.findall("r1:item", ns))


def fetch_document(url: str, headers: dict | None = None):
    """A feed or sitemap over HTTP: the response and its XML, inflated when gzip."""
    response = get(url, headers)
    xml = response.body
    if url.endswith(".gz") and response.status == 200:
        assert response.headers["Content-Type"] in ("application/gzip", "application/x-gzip")
        assert "Content-Encoding" not in response.headers and xml[:2] == b"\x1f\x8b"
        xml = gzip.decompress(xml)
    return response, xml


def page_links(url: str, body: bytes) -> tuple[list[str], list[str]]:
    """A page's links (<a href>) and the feeds its <head> names, absolute."""
    root = lxml.html.fromstring(body)
    links = [urljoin(url, href) for href in root.xpath("//a/@href")]
    feeds = [urljoin(url, link.get("href")) for link in root.xpath("//head/link[@rel='alternate']")
             if link.get("type") in FEED_TYPES]
    return links, feeds


def robots_sitemaps(url: str) -> list[str]:
    body = get(urljoin(url, "/robots.txt")).body.decode()
    return [line.split(":", 1)[1].strip() for line in body.splitlines() if line.lower().startswith("sitemap:")]


@pytest.fixture(scope="module")
def server():
    with start_daily_web(SPEC) as running:
        yield running


# -- what is served ------------------------------------------------------------------------

@pytest.mark.parametrize("day", [1, 2, 5])
def test_each_site_serves_the_feeds_and_sitemaps_the_model_lists(server, day):
    web = server.web
    server.set_day(day)
    announcing = [home for home in web.seed_urls if web.announces(home)]
    assert len(announcing) == 2
    for home in web.seed_urls:
        sitemaps, (_, feeds) = robots_sitemaps(home), page_links(home, get(home).body)
        assert tuple(sitemaps) == web.robots_sitemaps(home) and tuple(feeds) == web.feeds(home, day)
        if home not in announcing:
            assert not sitemaps and not feeds
            assert all(get(urljoin(home, path)).status == 404 and not web.entries(urljoin(home, path), day)
                       for path in ANNOUNCEMENT_PATHS)
            continue
        assert sitemaps == [urljoin(home, "/sitemap_index.xml")] and len(feeds) == 3
        documents = {}
        for url in sitemaps + feeds:
            documents[url] = fetch_document(url)
            if url in sitemaps:  # the index's sitemaps, read from the index as served
                _, listed = read_document(url, documents[url][1])
                documents.update((entry[0], fetch_document(entry[0])) for entry in listed)
        assert sorted(documents) == sorted(url for url in web.announcement_urls() if url.startswith(home))
        for url, (response, xml) in documents.items():
            assert response.status == 200, url
            kind, entries = read_document(url, xml)
            assert kind == web.announcement_kind(url), url
            assert entries == web.entries(url, day), url
            assert response.headers["ETag"] == dict(web.page(url, day).headers)["ETag"]
            assert response.headers["Last-Modified"] == email.utils.format_datetime(
                web.date(web.version(url, day)), usegmt=True)
            assert all(entry[0].startswith(home) for entry in entries)  # under the sitemap's directory: the root
        # The news sitemap: the day's and the day before's articles, titles written with entities.
        news = documents[urljoin(home, NEWS_SITEMAP)][1]
        assert b"&amp;" in news and b"&#8211;" in news
        assert all(web.date(day) - datetime.fromisoformat(entry.published) < timedelta(days=2)
                   for entry in web.entries(urljoin(home, NEWS_SITEMAP), day))
        rss = documents[feeds[0]][1]
        assert b"&lt;b&gt;" in rss and b"<link>/" in rss  # escaped markup, relative links
        assert b'xml:base="' in documents[feeds[1]][1]


def test_the_sitemaps_share_out_the_live_articles_and_the_feeds_hold_the_newest():
    for spec, day in ((SPEC, 5), (ANNOUNCING_BENCHMARK_SPEC, 7)):
        web = DailyWeb(spec, PORT)
        home = next(url for url in web.seed_urls if web.announces(url))
        listed = {path: [entry.url for entry in web.entries(urljoin(home, path), day)]
                  for path in (NEWS_SITEMAP, RECENT_SITEMAP, ARCHIVE_SITEMAP, "/feed.rss")}
        live = {url for url in web.existing(day) if url.startswith(home) and url.endswith(".html")
                and web.page(url, day).same_text_as is None}
        assert set(listed[RECENT_SITEMAP]) | set(listed[ARCHIVE_SITEMAP]) == live
        assert not set(listed[RECENT_SITEMAP]) & set(listed[ARCHIVE_SITEMAP])
        assert set(listed[NEWS_SITEMAP]) <= set(listed[RECENT_SITEMAP]) and listed[NEWS_SITEMAP]
        assert listed["/feed.rss"] == listed[RECENT_SITEMAP][:spec.latest]  # the newest first
    assert DailyWeb(ANNOUNCING_BENCHMARK_SPEC, PORT).announcement_urls()[-1].endswith("/feed.rdf")
    assert len({urlsplit(url).hostname for url in DailyWeb(ANNOUNCING_BENCHMARK_SPEC, PORT).announcement_urls()}) == 40


def test_feeds_and_sitemaps_answer_conditional_requests_until_their_entries_change():
    quiet = replace(SPEC, new_share=0.0, deleted_share=0.0, fail_once_share=0.0)  # only updates happen
    with start_daily_web(quiet) as still:
        web = still.web
        day = 3
        answers = {}
        for url in web.announcement_urls():
            still.set_day(day)
            response, _ = fetch_document(url)
            etag, modified = response.headers["ETag"], response.headers["Last-Modified"]
            assert get(url, {"If-None-Match": etag}).status == 304
            assert get(url, {"If-Modified-Since": modified}).status == 304
            still.set_day(day + 1)
            unchanged = web.version(url, day + 1) == web.version(url, day)
            assert (fetch_document(url)[0].headers["ETag"] == etag) == unchanged, url
            answers[url] = get(url, {"If-None-Match": etag}).status
            assert answers[url] == (304 if unchanged else 200), url
            assert get(url, {"If-Modified-Since": modified}).status == answers[url], url
        # Feeds without modified dates stay as they were; the sitemaps and the Atom feed
        # (which give an updated article's date) change with the updates.
        assert 304 in answers.values() and 200 in answers.values()


def test_announced_only_articles_are_linked_by_no_page_and_listed_by_the_announcements(server):
    web = server.web
    day = 3
    server.set_day(day)
    only = [url for url in web.events(day).published if web.announced_only(url)]
    assert only and all(web.announces(url) for url in only)
    linked = set()
    for url in sorted(web.existing(day)):
        if web.announcement_kind(url) is None and not url.endswith("/robots.txt"):
            links, _ = page_links(url, get(url).body)
            assert tuple(dict.fromkeys(links)) == web.outlinks(url, day), url
            linked.update(links)
    assert not linked & set(only)
    announced = {entry.url for url in web.announcement_urls() for entry in web.entries(url, day)}
    assert set(only) <= announced
    paths = web.discovery(day, depth=4)
    assert all(paths[url] == ANNOUNCED for url in only)
    assert {paths[url] for url in web.events(day).published if not web.announces(url)} == {LINKED}
    assert BOTH in paths.values()


# -- the model's crawl ----------------------------------------------------------------------

def crawl_over_http(web: DailyWeb, day: int, depth: int, max_age_days: float = 30,
                    max_sitemap_nesting: int = 2) -> tuple[dict[str, int], dict[str, set[str]]]:
    """The crawler's rules for links and announcements, walked over the served
    bytes: each URL's layer, and the ways (links, entries) each is offered."""
    layer_of, nesting_of, ways = dict.fromkeys(web.seed_urls, 0), dict.fromkeys(web.seed_urls, 0), {}
    sitemaps_of = {}
    frontier = list(web.seed_urls)
    for layer in range(1, depth):
        offered, hosts = {}, set()
        for url in frontier:
            host = urlsplit(url).netloc
            if host not in hosts:
                hosts.add(host)
                if host not in sitemaps_of:
                    sitemaps_of[host] = robots_sitemaps(url)
                offered.update((sitemap, min(0, offered.get(sitemap, 0))) for sitemap in sitemaps_of[host])
            response, xml = fetch_document(url)
            if response.status != 200:
                continue
            if response.headers["Content-Type"].startswith("text/html"):
                links, feeds = page_links(url, response.body)
                for link in links:
                    offered.setdefault(link, 0)
                    ways.setdefault(link, set()).add(LINKED)
                offered.update((feed, 0) for feed in feeds)
                continue
            kind, entries = read_document(url, xml)
            nesting = nesting_of[url] + (kind == "sitemap_index")
            if kind == "sitemap_index" and nesting > max_sitemap_nesting:
                continue
            for entry_url, published, modified, _, _ in entries:
                dated = published or modified
                if dated and web.date(day) - datetime.fromisoformat(dated) >= timedelta(days=max_age_days):
                    continue
                offered[entry_url] = min(nesting, offered.get(entry_url, nesting))
                ways.setdefault(entry_url, set()).add(ANNOUNCED)
        frontier = [url for url in offered if url not in layer_of]
        layer_of.update(dict.fromkeys(frontier, layer))
        nesting_of.update((url, offered[url]) for url in frontier)
    return layer_of, ways


@pytest.mark.parametrize("rules", [{}, {"max_age_days": 3}, {"max_sitemap_nesting": 0}])
def test_the_model_agrees_with_a_crawl_of_links_and_announcements_over_http(server, rules):
    web, day, depth = server.web, 4, 4
    server.set_day(day)
    layer_of, ways = crawl_over_http(web, day, depth, **rules)
    assert layer_of == web.reachable(day, depth, **rules)
    # Each rule holds some entries back.
    assert (set(layer_of) < set(web.reachable(day, depth))) == bool(rules)
    paths = web.discovery(day, depth, **rules)
    assert paths == {url: BOTH if len(ways.get(url, ())) == 2 else next(iter(ways.get(url, {"unreached"})))
                     for url in web.events(day).published}
    if not rules:
        assert layer_of[urljoin(web.seed_urls[0], "/sitemap_index.xml")] == 1
        assert layer_of[urljoin(web.seed_urls[0], RECENT_SITEMAP)] == 2


# -- the web without announcements is the web it was --------------------------------------------

# Digests of everything served (and the events and reachable URLs) on every day of two
# webs, as the web served them before sites announced.
UNCHANGED = {
    DailySpec(): "b582861ed4a13af884400717b8ee2bd2b60d0dc4675fbde26370b915bad52ab1",
    DailySpec(sites=2, sections=3, articles=12, new_share=0.25, updated_share=0.3, deleted_share=0.0,
              cross_posted_share=0.5): "5ddf139df020558954d7713ea76a957306ac7b2293c1d2492afcc061a87f50c3",
}


def served_digest(spec: DailySpec) -> str:
    web = DailyWeb(spec, PORT)
    digest = hashlib.sha256()
    for day in web.days:
        urls = sorted(web.existing(day) | {home + path.lstrip("/") for home in web.seed_urls
                                           for path in ANNOUNCEMENT_PATHS})
        for url in urls:
            page = web.page(url, day)
            digest.update(repr((url, page.status, page.content_type, page.headers, page.flaky)).encode() + page.body)
        digest.update(repr((web.events(day), sorted(web.reachable(day, 4).items()))).encode())
    return digest.hexdigest()


@pytest.mark.parametrize("spec", list(UNCHANGED))
def test_a_web_whose_sites_announce_nothing_serves_what_it_served_before(spec):
    assert served_digest(spec) == UNCHANGED[spec]
    assert served_digest(replace(spec, announcing_share=0.0, announced_only_share=0.0)) == UNCHANGED[spec]


def test_the_announcing_knobs_default_to_nothing_and_refuse_what_cannot_be():
    assert DailySpec().announcing_share == BENCHMARK_SPEC.announcing_share == 0.0
    assert ANNOUNCING_BENCHMARK_SPEC.announcing_sites == 40
    assert replace(ANNOUNCING_BENCHMARK_SPEC, announcing_share=0.0, announced_only_share=0.0) == BENCHMARK_SPEC
    for shape in ({"announcing_share": 1.5}, {"announced_only_share": -0.1}, {"announced_only_share": 0.1}):
        with pytest.raises(ValueError):
            DailySpec(**shape)
