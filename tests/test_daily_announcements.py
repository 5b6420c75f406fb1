"""A simulated week of daily crawls of a web whose sites announce their
articles (robots.txt's Sitemap: lines, sitemap indexes, news and plain
sitemaps, feeds), sharing one crawl db, checked against the week oracle
(mrcrawl/testweb/week.py) day by day.

The web is the week benchmark's quick one (3 sites, two announcing, a tenth
of their articles announced only), drawn from a seed whose week has an
updated article announced before it is due, and the config is the
benchmark's news crawl's: a page
that a feed or sitemap dated two days before the run or earlier is not
fetched as new, and the section pages of a site that announces are revisited
weekly (its feeds and news sitemap bring the new articles); articles are
first revisited after two days, so that updates announced by a feed's or a
sitemap's modified date happen within the week.  Every run is inline.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace

import pytest
import yaml

from crawl_support import write_daily_inputs, xml_pages
from mrcrawl.bench.week import NEWS_SETTINGS, QUICK_WEEK
from mrcrawl.testweb.daily import DailyWeb, start_daily_web
from mrcrawl.testweb.week import DUE_SLACK, PREDICTED_FIELDS, WeekOracle, iso_utc
import test_daily_runs as daily_runs
from test_daily_runs import Day, check, observe, record_differences, run_day, set_difference

SPEC, DEPTH = replace(QUICK_WEEK.spec, seed=4), QUICK_WEEK.depth
REVISIT = {"first_days": 2, **NEWS_SETTINGS["revisit"]}
RULES = {"announced_max_age_days": NEWS_SETTINGS["announced_max_age_days"]}
RETRIES = 1  # a 503 is asked again at once: every new article is fetched on its day


def news_oracle(web: DailyWeb, revisit: dict = REVISIT, **rules) -> WeekOracle:
    return WeekOracle(web, DEPTH, retries=RETRIES, revisit=revisit, **{**RULES, **rules})


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> tuple[DailyWeb, list[Day]]:
    """The week's runs, each observed right after it ran."""
    directory = tmp_path_factory.mktemp("announcing-week")
    days = []
    with start_daily_web(SPEC) as server:
        web = server.web
        seeds, conf, config = write_daily_inputs(server, directory, revisit=REVISIT, order="bfs", retries=RETRIES)
        conf.write_text(yaml.safe_dump({**config, **RULES}), encoding="utf-8")
        oracle = news_oracle(web)
        db = directory / "db"
        for day in web.days:
            output = directory / f"day{day}"
            status = run_day(server, seeds, conf, output, db, DEPTH, day)
            assert status == 0, f"day {day}: the driver exited {status}"
            days.append(observe(day, output, db, server, oracle.run(day)))
    return web, days


def kinds_requested(day: Day, web: DailyWeb) -> Counter:
    return Counter(web.announcement_kind(url) for url in day.predicted.requested)


def test_the_week_exercises_what_the_sites_announce(week):
    """The scenario is worth checking: the oracle foresees each rule at work."""
    web, days = week
    announcing = [url for url in web.seed_urls if web.announces(url)]
    assert 0 < len(announcing) < len(web.seed_urls), "no site announces, or every site does"
    # Day 1 reads robots.txt's sitemap index, its sitemaps and the feeds; a later day the feeds and news sitemap.
    assert kinds_requested(days[0], web) >= Counter({"sitemap_index": 2, "news_sitemap": 2, "sitemap": 4, "feed": 6})
    for day in days[1:]:
        kinds = kinds_requested(day, web)
        assert kinds["feed"] == 6 and kinds["news_sitemap"] == 2 and not kinds["sitemap"] + kinds["sitemap_index"], kinds
    # The hubs of the announcing sites wait a week; those of the other site are fetched daily.
    sections = [url for url in web.hub_urls() if url not in web.seed_urls]
    for day in days[1:]:
        waiting = [url for url in sections if url not in day.predicted.requested]
        assert waiting and all(web.announces(url) for url in waiting), day.day
    db = days[-1].predicted.db
    # Old news: announced, dated too long ago, never fetched.
    old = {url for url, record in db.items() if record["status"] == "unfetched" and record["announced"]}
    assert len(old) > 10, old
    # ... some of them linked by a page fetched in the week: the db's announced date holds links back too.
    linked = {link for day in days for url, outcome in day.predicted.outcomes if outcome == "fetched"
              for link in web.outlinks(url, day.day)}
    assert old & linked
    # An article announced as modified after its last fetch is fetched again before it is due.
    early = []
    for before, day in zip(days, days[1:]):
        not_due = {url for url, record in before.predicted.db.items()
                   if record["fetch_count"] and record["due_at"] > iso_utc(web.date(day.day) + DUE_SLACK)}
        early += sorted(day.predicted.requested & not_due)
    assert early and not any(web.announcement_kind(url) for url in early), early
    # Articles that only the announcements lead to are fetched.
    fetched = {url for day in days for url, outcome in day.predicted.outcomes if outcome == "fetched"}
    assert any(web.announced_only(url) for url in fetched)


def test_each_day_requests_what_the_oracle_predicts(week):
    """(requested URL, outcome) of the doc records, day by day and layer by
    layer, as for a web that announces nothing; and each document's kind."""
    web, days = week
    daily_runs.test_each_day_requests_what_the_oracle_predicts(week)
    check([set_difference(f"day {day.day}: (URL, kind) of the fetched docs", kinds,
                          {(url, web.announcement_kind(url)) for url, _ in kinds})
           for day in days for kinds in [{(doc["url"], doc.get("kind")) for doc in day.docs
                                          if doc["outcome"] == "fetched"}]])


def test_the_server_log_matches_the_oracle(week):
    daily_runs.test_the_server_log_matches_the_oracle(week)


def test_every_new_article_is_fetched_on_its_day(week):
    """Announced only, linked only (the site that announces nothing), or both."""
    web, days = week
    problems, ways = [], Counter()
    for day in days:
        outcome = {doc["requested_url"]: doc["outcome"] for doc in day.docs}
        # Day 1's web holds the articles of the days before it: its new ones are day 1's.
        for url in (url for url in web.events(day.day).published if web.version(url, day.day) == day.day):
            ways["announced only" if web.announced_only(url) else
                 "linked only" if not web.announces(url) else "both"] += 1
            if outcome.get(url) != "fetched":
                problems.append(f"day {day.day}: new article {url}: {outcome.get(url, 'not requested')}")
    assert ways["announced only"] and ways["linked only"] and ways["both"], ways
    check(problems)


def test_the_db_records_are_the_oracles(week):
    """Every URL's record: status, kind, what was announced of it, due time..."""
    daily_runs.test_the_db_holds_one_record_per_discovered_url_as_the_oracle_says(week)


def test_each_days_xml_holds_the_new_or_changed_pages_with_their_announced_dates(week):
    """No feed or sitemap; each page's headline its title, its published the date announced of it."""
    daily_runs.test_each_days_xml_holds_the_pages_new_or_changed_that_day(week)
    _, days = week
    problems, dated = [], 0
    for day in days:
        observed = {url: {"headline": page.findtext("headline"), "published": page.findtext("published")}
                    for url, page in xml_pages(day.output).items()}
        problems.append(record_differences(f"day {day.day}: the XML's fields", observed, day.predicted.xml_fields,
                                           ("headline", "published")))
        dated += sum(fields["published"] is not None for fields in day.predicted.xml_fields.values())
    assert dated > 20
    check(problems)


@pytest.mark.parametrize("rules", [{"announced_max_age_days": None},
                                   {"revisit": {"first_days": 2}},
                                   {"revisit": {**REVISIT, "feed_days": 2.0}},
                                   {"max_sitemap_nesting": 0}],
                         ids=["no age limit", "hubs daily", "feeds every other day", "no sitemap index"])
def test_an_oracle_with_another_rule_disagrees(week, rules):
    """The checks can fail: each rule changes what a week requests or keeps."""
    web, days = week
    wrong = news_oracle(web, **rules)
    predictions = [wrong.run(day.day) for day in days]
    assert any(Counter(day.requests) != predicted.answers for day, predicted in zip(days, predictions))
    assert any(record_differences("", dict(day.db), predicted.db, PREDICTED_FIELDS)
               for day, predicted in zip(days, predictions))
