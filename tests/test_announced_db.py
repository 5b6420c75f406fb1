"""What the crawl db makes of announcements: entries queued as links are,
a lastmod newer than the last fetch queues a page again, an entry (or a
linked page) announced as old news is not queued, feeds and sitemaps are
revisited by their kind, and hubs of a site that announces wait longer when
the config says so.  The rules are applied to records as DbUpdate and the
Generator apply them (frontier/db_update.py, frontier/generate.py)."""
from __future__ import annotations

from mrcrawl.config import RevisitConfig
from mrcrawl.frontier.db_update import DAY, RevisitPolicy, apply_update, fold, parse_time, updates_from_out
from mrcrawl.frontier.generate import announcing_hosts, layer_zero
from mrcrawl.page.announce import FEED, NEWS_SITEMAP, SITEMAP, SITEMAP_INDEX
from mrcrawl.page.entries import EntryRules, followed_entries
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import ANNOUNCED, FETCHED, UNFETCHED, new_out

RUN = "2026-01-10T06:00:00.000Z"
SITE = "http://news.example"
EVERYTHING = UrlFilter([], [])


def said(published=None, modified=None, title=None, nesting=0):
    return {"published": published, "modified": modified, "title": title, "language": None, "nesting": nesting}


def fetch(kind=None, at="2026-01-09T06:00:00.000Z"):
    return {"outcome": FETCHED, "status": 200, "fetched_at": at, "error": None, "error_kind": None,
            "redirect_to": None, "last_modified": None, "etag": None, "digest": "sha1:X", "kind": kind}


def announced_on_layer(record, url, announcement, policy, layer=0):
    """`record` after a feed fetched on `layer` announced `url` with `announcement`."""
    out = new_out([url], ANNOUNCED, layer, RUN, announced=[announcement])
    update = fold(update for key, update in updates_from_out(out, SITE + "/feed.rss") if key == url)
    return apply_update(record, url, update, RUN, layer, policy)


def test_an_entry_never_fetched_is_queued_with_what_was_said_of_it():
    policy = RevisitPolicy.from_config(RevisitConfig(), 30)
    record = announced_on_layer(None, SITE + "/a.html", said("2026-01-10T05:00:00.000Z", title="A & B"), policy)
    assert record["status"] == UNFETCHED and record["queued"] == f"{RUN} 1"
    assert record["announced"]["title"] == "A & B" and record["announced"]["published"] == "2026-01-10T05:00:00.000Z"


def test_old_news_is_not_queued_announced_or_linked_later():
    policy = RevisitPolicy.from_config(RevisitConfig(), 2)
    url = SITE + "/old.html"
    record = announced_on_layer(None, url, said(modified="2026-01-08T06:00:00.000Z"), policy)  # exactly 2 days
    assert record["queued"] is None and record["announced"]["modified"] == "2026-01-08T06:00:00.000Z"
    link = new_out([url], 0, 1, RUN, hops=1, signature="s", hub=False)
    update = fold(update for key, update in updates_from_out(link, SITE + "/new.html") if key == url)
    assert apply_update(record, url, update, RUN, 1, policy)["queued"] is None
    # Without an age limit the same link queues it; a day younger, so does the age limit.
    assert apply_update(record, url, update, RUN, 1, RevisitPolicy.from_config(RevisitConfig()))["queued"]
    younger = announced_on_layer(None, url, said(modified="2026-01-08T06:00:01.000Z"), policy)
    assert younger["queued"] == f"{RUN} 1"


def test_a_lastmod_newer_than_the_last_fetch_queues_a_page_again():
    policy = RevisitPolicy.from_config(RevisitConfig())
    url = SITE + "/a.html"
    record = apply_update(None, url, {"fetch": fetch()}, "2026-01-09T06:00:00.000Z", 0, policy)
    same = announced_on_layer(record, url, said(modified="2026-01-09T05:00:00.000Z"), policy)
    assert same["queued"] is None  # changed before our fetch: nothing new
    newer = announced_on_layer(record, url, said(modified="2026-01-09T12:00:00.000Z"), policy)
    assert newer["queued"] == f"{RUN} 1"


def test_feeds_and_sitemaps_are_revisited_by_their_kind():
    revisit = RevisitConfig(feed_days=0.5, news_sitemap_days=1.0, sitemap_days=14.0, sitemap_index_days=7.0)
    policy = RevisitPolicy.from_config(revisit)
    for kind, days in ((FEED, 0.5), (NEWS_SITEMAP, 1.0), (SITEMAP, 14.0), (SITEMAP_INDEX, 7.0), (None, 7.0)):
        record = apply_update(None, SITE + "/x", {"fetch": fetch(kind)}, RUN, 0, policy)
        assert record["kind"] == kind
        assert (parse_time(record["due_at"]) - parse_time(RUN)).total_seconds() == days * DAY, kind


def test_a_sitemap_index_nested_too_deep_and_entries_outside_a_sitemaps_directory_are_left():
    rules = EntryRules(sitemap_strict=True, max_sitemap_nesting=1)
    entries = [[SITE + "/news/a.html", None, None, None, None], [SITE + "/sport/b.html", None, None, None, None],
               ["http://other.example/news/c.html", None, None, None, None]]
    sitemap = {"url": SITE + "/news/sitemap.xml", "kind": SITEMAP, "entries": entries, "fetched_at": RUN,
               "announced": None}
    assert followed_entries(sitemap, EVERYTHING, rules)[0] == [SITE + "/news/a.html"]
    assert len(followed_entries(sitemap, EVERYTHING, EntryRules(sitemap_strict=False))[0]) == 3
    feed = {**sitemap, "kind": FEED}  # the directory rule is the sitemaps'
    assert len(followed_entries(feed, EVERYTHING, rules)[0]) == 3
    index = {**sitemap, "url": SITE + "/index.xml", "kind": SITEMAP_INDEX}
    urls, announced = followed_entries(index, EVERYTHING, rules)
    assert len(urls) == 2 and {said["nesting"] for said in announced} == {1}
    deeper = {**index, "announced": said(nesting=1)}
    assert followed_entries(deeper, EVERYTHING, rules) == ([], [])


def test_hubs_of_a_site_that_announces_wait_when_the_config_says_so():
    policy = RevisitPolicy.from_config(RevisitConfig())
    day1 = "2026-01-05T06:00:00.000Z"
    hub = apply_update(None, SITE + "/section/a/", {"fetch": {**fetch(at=day1)}, "page": {"signature": "s", "hub": True}},
                       day1, 0, policy)
    feed = apply_update(None, SITE + "/feed.rss", {"fetch": fetch(FEED, at=day1)}, day1, 0, policy)
    other = apply_update(None, "http://quiet.example/section/a/", {"fetch": {**fetch(at=day1)},
                         "page": {"signature": "s", "hub": True}}, day1, 0, policy)
    lines = sorted(Utf8JsonProtocol().write(record["url"], record) for record in (hub, feed, other))
    assert announcing_hosts(lines) == {SITE}
    day2 = "2026-01-06T06:00:00.000Z"
    due = {url for url, _ in layer_zero(lines, [], day2)}
    assert due == {hub["url"], feed["url"], other["url"]}
    waiting = {url for url, _ in layer_zero(lines, [], day2, announcing={SITE}, announcing_hub_days=7)}
    assert waiting == {feed["url"], other["url"]}
    day8 = "2026-01-12T06:00:00.000Z"
    assert hub["url"] in {url for url, _ in layer_zero(lines, [], day8, announcing={SITE}, announcing_hub_days=7)}
