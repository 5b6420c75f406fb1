"""A simulated week of daily crawls sharing one crawl db, checked against the
week oracle (mrcrawl/testweb/week.py), and a day killed mid-layer and resumed.

The week: run d crawls the daily web as it is on day d, as of web.date(d)
(`--now`), `--depth 3`, into its own `--output`, on one shared `--db`; day 6
runs on the local runner, the others inline.  Articles are first revisited
after two days (`revisit: {first_days: 2}`), so 304s, refetches of updated
articles, 404s of deleted ones and growing intervals all happen within the
week; `retries: 0` makes an article that fails once a `failed` URL of the db,
retried on the next run.  Every check compares with what the server logged,
the doc records, the db and the XML, day by day, and says what differs.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from crawl_support import (
    crawl,
    crawl_docs,
    db_records,
    driver_command,
    layer_docs,
    write_daily_inputs,
    xml_urls,
)
from mrcrawl.frontier.crawldb import read_digest_index
from mrcrawl.store.records import DB_FIELDS, DB_STATUSES, OUTCOMES
from mrcrawl.testweb.daily import DailySpec, DailyWeb, start_daily_web
from mrcrawl.testweb.week import PREDICTED_FIELDS, DayPrediction, WeekOracle

SPEC = DailySpec()  # 3 sites of 3 sections and 40 articles; 4 new articles a day each, days 1 to 7
DEPTH = 3
REVISIT = {"first_days": 2}
RETRIES = 0  # a 503 ends the fetch: the URL is `failed` and retried on the next run
LOCAL_DAY = 6  # the day run on the local runner (None: every day inline); costs ~35 s more
SHOWN = 5  # differences shown per failed check

# db fields a crawl's real time sets: the time of the last request, and of the
# last change of the signature (that request's time).
REAL_TIME_FIELDS = ("fetched_at", "changed_at")


# -- reading a day ----------------------------------------------------------------------

@dataclass
class Day:
    """One run of the week, as observed, with the oracle's prediction."""

    day: int
    output: Path
    predicted: DayPrediction
    docs: list[dict]  # every layer's doc records
    requests: list[tuple[str, int | None]]  # the server's log of page requests: (URL, status)
    db: list[tuple[str, dict]]  # the db's records after the run
    xml: list[str]  # URLs of the run's XML pages
    xml_dirs: list[str]


def page_requests(server) -> list[tuple[str, int | None]]:
    """(URL, status) of every request the server logged, robots.txt excepted."""
    assert server.wait_idle(), "the server still answers requests"
    return [(f"http://{entry.address}:{entry.port}{entry.path}", entry.status)
            for entry in server.log if entry.path != "/robots.txt"]


def outcomes_of_log(requests: list[tuple[str, int | None]]) -> set[tuple[str, str]]:
    """What the server's answers make of each URL: its last answer decides."""
    last = {}
    for url, status in requests:
        last[url] = status
    named = {200: "fetched", 304: "not_modified"}
    return {(url, named.get(status, "http_error")) for url, status in last.items()}


def observe(day: int, output: Path, db: Path, server, predicted: DayPrediction) -> Day:
    return Day(day, output, predicted, crawl_docs(output), page_requests(server), db_records(db),
               xml_urls(output), sorted(path.name for path in (output / "xml").iterdir()))


# -- saying what differs ------------------------------------------------------------------

def set_difference(what: str, got, expected) -> str:
    """'' when equal, else the first few missing and unexpected members."""
    got, expected = set(got), set(expected)
    if got == expected:
        return ""
    missing, unexpected = sorted(expected - got, key=str), sorted(got - expected, key=str)
    lines = [f"{what}: {len(got)} observed, {len(expected)} expected"]
    lines += [f"  missing    {item}" for item in missing[:SHOWN]] + ([f"  ... {len(missing) - SHOWN} more missing"] if len(missing) > SHOWN else [])
    lines += [f"  unexpected {item}" for item in unexpected[:SHOWN]] + ([f"  ... {len(unexpected) - SHOWN} more unexpected"] if len(unexpected) > SHOWN else [])
    return "\n".join(lines)


def counter_difference(what: str, got: Counter, expected: Counter) -> str:
    if got == expected:
        return ""
    lines = [f"{what}: {sum(got.values())} observed, {sum(expected.values())} expected"]
    lines += [f"  missing    {key} x{count}" for key, count in (expected - got).most_common(SHOWN)]
    lines += [f"  unexpected {key} x{count}" for key, count in (got - expected).most_common(SHOWN)]
    return "\n".join(lines)


def record_differences(what: str, got: dict[str, dict], expected: dict[str, dict], fields) -> str:
    """The first few (URL, field) whose values differ, of the URLs both hold."""
    differing = [(url, name, got[url].get(name), expected[url].get(name))
                 for url in sorted(set(got) & set(expected)) for name in fields
                 if got[url].get(name) != expected[url].get(name)]
    if not differing:
        return ""
    lines = [f"{what}: {len(differing)} field(s) differ (observed != expected)"]
    lines += [f"  {url} {name}: {seen!r} != {wanted!r}" for url, name, seen, wanted in differing[:SHOWN]]
    return "\n".join(lines)


def check(problems: list[str], shown: int = 8) -> None:
    """Fail with the first `shown` of the problems found, if any."""
    problems = [problem for problem in problems if problem]
    more = [f"... and {len(problems) - shown} more problems"] if len(problems) > shown else []
    assert not problems, "\n" + "\n".join(problems[:shown] + more)


# -- the week -------------------------------------------------------------------------------

def run_day(server, seeds: Path, conf: Path, output: Path, db: Path, depth: int, day: int, runner: str = "inline",
            *extra: str) -> int:
    server.set_day(day)  # also makes the day's fail-once articles fail again
    server.clear_log()
    return crawl(seeds, conf, output, depth, runner, "--db", str(db), "--now", server.web.date_iso(day), *extra)


@pytest.fixture(scope="module")
def week(tmp_path_factory) -> tuple[DailyWeb, list[Day]]:
    """The week's runs, each observed right after it ran."""
    directory = tmp_path_factory.mktemp("week")
    days = []
    with start_daily_web(SPEC) as server:
        web = server.web
        seeds, conf, config = write_daily_inputs(server, directory, revisit=REVISIT, order="bfs", retries=RETRIES)
        oracle = WeekOracle(web, DEPTH, retries=RETRIES, revisit=config["revisit"])
        db = directory / "db"
        for day in web.days:
            output = directory / f"day{day}"
            runner = "local" if day == LOCAL_DAY else "inline"
            started = time.monotonic()
            status = run_day(server, seeds, conf, output, db, DEPTH, day, runner)
            assert status == 0, f"day {day} ({runner}): the driver exited {status}"
            days.append(observe(day, output, db, server, oracle.run(day)))
            print(f"day {day} ({runner}): {time.monotonic() - started:.1f} s")
    return web, days


def test_the_week_exercises_the_revisit_policy(week):
    """The scenario is worth checking: the oracle foresees every kind of revisit."""
    web, days = week
    outcomes = Counter(outcome for day in days for _, outcome in day.predicted.outcomes)
    answers = Counter(status for day in days for (_, status), count in day.predicted.answers.items() for _ in range(count))
    statuses = Counter(record["status"] for record in days[-1].predicted.db.values())
    xml_days = Counter(url for day in days for url in day.predicted.xml)
    refetched = [url for url, count in xml_days.items() if count > 1]
    assert outcomes["not_modified"] > 50 and outcomes["fetched"] > 200, outcomes
    assert answers[304] and answers[404] and answers[503], answers  # revisits, deletions, failures
    assert statuses["gone"] and statuses["unfetched"] and statuses["not_modified"], statuses
    assert any(day.predicted.db[url]["status"] == "failed" for day in days for url in day.predicted.db)
    assert refetched, "no updated article is refetched"
    assert set(outcomes) <= set(OUTCOMES) and set(statuses) <= set(DB_STATUSES)


def test_each_day_requests_what_the_oracle_predicts(week):
    """(requested URL, outcome) of the doc records, day by day and layer by layer."""
    _, days = week
    problems = []
    for day in days:
        requested = Counter(doc["requested_url"] for doc in day.docs)
        repeated = [url for url, count in requested.items() if count > 1]
        problems.append(f"day {day.day}: several doc records for {repeated[:SHOWN]}" if repeated else "")
        observed = {(doc["requested_url"], doc["outcome"]) for doc in day.docs}
        problems.append(set_difference(f"day {day.day}: (requested URL, outcome) of the doc records", observed, day.predicted.outcomes))
        for layer, expected in enumerate(day.predicted.layers):
            observed = {(doc["requested_url"], doc["outcome"]) for doc in layer_docs(day.output, layer)}
            problems.append(set_difference(f"day {day.day}, layer {layer}", observed, set(expected.items())))
        deeper = len(day.predicted.layers)
        if (day.output / "doc" / str(deeper)).exists():
            problems.append(f"day {day.day}: a layer {deeper} was crawled; the oracle's frontier was empty there")
    check(problems)


def test_the_server_log_matches_the_oracle(week):
    """What the server answered each day: every request (retries and 304s
    included) and, from the last answer per URL, the outcome."""
    _, days = week
    problems = []
    for day in days:
        problems.append(counter_difference(f"day {day.day}: (URL, status) of the page requests", Counter(day.requests), day.predicted.answers))
        problems.append(set_difference(f"day {day.day}: outcomes from the server log", outcomes_of_log(day.requests), day.predicted.outcomes))
    check(problems)


def test_every_new_article_within_reach_is_fetched_on_the_day_it_appears(week):
    web, days = week
    problems, checked = [], 0
    for day in days:
        outcome = {doc["requested_url"]: doc["outcome"] for doc in day.docs}
        reachable = web.reachable(day.day, DEPTH)
        for url in web.events(day.day).published:
            if url not in reachable:
                continue
            checked += 1
            # Its first request of the day answers 503; with no retry, the fetch fails that day.
            expected = "http_error" if web.fails_once(url, day.day) and RETRIES == 0 else "fetched"
            if outcome.get(url) != expected:
                problems.append(f"day {day.day}: new article {url}: {outcome.get(url, 'not requested')}, expected {expected}")
    assert checked >= len(web.seed_urls) * SPEC.new_per_day * len(days) // 2
    check(problems[:SHOWN])


def test_an_article_unchanged_since_day_one_is_requested_at_most_twice_more(week):
    web, days = week
    first = {doc["requested_url"] for doc in days[0].docs if doc["outcome"] == "fetched"}
    unchanged = sorted(url for url in first if url.endswith(".html") and all(
        web.exists(url, day.day) and web.version(url, day.day) == web.version(url, 1)
        and not web.fails_once(url, day.day) for day in days))
    assert len(unchanged) > 20
    later = Counter(url for day in days[1:] for url, _ in day.requests)
    too_often = [f"{url}: {later[url]} requests on days 2-{days[-1].day}" for url in unchanged if later[url] > 2]
    never = [url for url in unchanged if later[url] == 0]
    assert not too_often, "\n".join(too_often[:SHOWN])
    assert not never, f"{len(never)} unchanged articles never revisited, e.g. {never[:SHOWN]}"


def test_every_request_has_a_recorded_outcome(week):
    """No page request of a day lacks a doc record of that day's crawl."""
    _, days = week
    problems = []
    for day in days:
        recorded = {url for doc in day.docs for url in (doc["requested_url"], doc["url"])}
        unrecorded = sorted({url for url, _ in day.requests} - recorded)
        problems.append(f"day {day.day}: {len(unrecorded)} requested URLs without a doc record: {unrecorded[:SHOWN]}" if unrecorded else "")
        problems.append("" if all(doc["outcome"] in OUTCOMES for doc in day.docs) else f"day {day.day}: an unknown outcome")
    check(problems)


def test_the_db_holds_one_record_per_discovered_url_as_the_oracle_says(week):
    _, days = week
    problems = []
    for day in days:
        urls = Counter(url for url, _ in day.db)
        repeated = [url for url, count in urls.items() if count > 1]
        problems.append(f"day {day.day}: several db records for {repeated[:SHOWN]}" if repeated else "")
        records = dict(day.db)
        problems.append(set_difference(f"day {day.day}: the db's URLs", records, day.predicted.db))
        problems.append("" if all(record["url"] == url and set(record) == set(DB_FIELDS) for url, record in day.db)
                        else f"day {day.day}: a record whose url is not its key, or without the db's fields")
        problems.append(record_differences(f"day {day.day}: db records", records, day.predicted.db, PREDICTED_FIELDS))
    check(problems)


def test_each_days_xml_holds_the_pages_new_or_changed_that_day(week):
    web, days = week
    problems = []
    for day in days:
        start = f"{web.date(day.day):%Y_%m_%d_%H_%M_%S}"
        problems.append("" if day.xml_dirs == [start] else f"day {day.day}: xml/ holds {day.xml_dirs}, expected [{start}]")
        repeated = [url for url, count in Counter(day.xml).items() if count > 1]
        problems.append(f"day {day.day}: pages in the XML twice: {repeated[:SHOWN]}" if repeated else "")
        problems.append(set_difference(f"day {day.day}: the XML's pages", day.xml, day.predicted.xml))
    check(problems)


def test_an_oracle_with_another_policy_disagrees(week):
    """The checks can fail: a wrong policy, or a wrong retry count, predicts other requests."""
    web, days = week
    for wrong in (WeekOracle(web, DEPTH, retries=RETRIES, revisit={**REVISIT, "first_days": 3}),
                  WeekOracle(web, DEPTH, retries=RETRIES + 1, revisit=REVISIT),
                  WeekOracle(web, DEPTH, retries=RETRIES, revisit={**REVISIT, "grow": 1.0})):
        predictions = [wrong.run(day.day) for day in days]
        assert any(Counter(day.requests) != predicted.answers for day, predicted in zip(days, predictions))
        assert any(record_differences("", dict(day.db), predicted.db, PREDICTED_FIELDS)
                   for day, predicted in zip(days, predictions))


# -- a day killed mid-layer, then resumed ----------------------------------------------------

KILL_DEPTH = 2  # day 2's layer 1 then holds what day 1's last layer linked: ~60 URLs to kill amid
KILL_RETRIES = 1  # a 503 is retried at once: fail-once articles end alike however the kill falls


def wait_for(condition, process, what: str, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        assert process.poll() is None, f"the crawl ended before {what}"
        assert time.monotonic() < deadline, f"no {what} within {limit}s"
        time.sleep(0.005)


def done_steps(output: Path) -> dict:
    try:
        return json.loads((output / "crawl.json").read_text())["done"]
    except (OSError, ValueError, KeyError):
        return {}  # not written yet, or being replaced


def comparable(records: list[tuple[str, dict]]) -> dict[str, dict]:
    return {url: {name: value for name, value in record.items() if name not in REAL_TIME_FIELDS} for url, record in records}


def test_a_day_killed_mid_layer_and_resumed_equals_an_uninterrupted_day(tmp_path):
    with start_daily_web(SPEC) as server:
        web = server.web
        seeds, conf, config = write_daily_inputs(server, tmp_path, revisit=REVISIT, retries=KILL_RETRIES)
        oracle = WeekOracle(web, KILL_DEPTH, retries=KILL_RETRIES, revisit=config["revisit"])
        db, copied = tmp_path / "db", tmp_path / "db-copy"
        assert run_day(server, seeds, conf, tmp_path / "day1", db, KILL_DEPTH, 1) == 0
        oracle.run(1)
        shutil.copytree(db, copied)
        predicted = oracle.run(2)
        layer_one = len(predicted.layers[1])
        assert layer_one >= 30

        # Day 2, killed once its layer 1 has had a few answers.
        killed = tmp_path / "day2"
        server.set_day(2)
        server.clear_log()
        args = ("--db", str(db), "--now", web.date_iso(2))
        with open(tmp_path / "killed.log", "wb") as said:
            process = subprocess.Popen(driver_command(seeds, conf, killed, KILL_DEPTH, "--runner", "inline", *args),
                                       stdout=said, stderr=subprocess.STDOUT, start_new_session=True)
            try:
                wait_for(lambda: "optimize/0" in done_steps(killed), process, "the end of layer 0")
                before = len(server.log)
                wait_for(lambda: len(server.log) >= before + 5, process, "layer 1's requests")
                os.killpg(process.pid, signal.SIGKILL)
            finally:
                if process.poll() is None:
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)
        assert server.wait_idle()
        done = done_steps(killed)
        assert "optimize/0" in done and "crawl/1" not in done, sorted(done)
        answered_before = page_requests(server)
        layer_zero = len(predicted.layers[0])
        assert layer_zero < len(answered_before) < layer_zero + layer_one, "not killed amid layer 1"

        assert crawl(seeds, conf, killed, KILL_DEPTH, "inline", *args, "--resume") == 0
        resumed_requests = page_requests(server)
        resumed_db = db_records(db)

        # The same day from a copy of day 1's db, without a kill.
        clean = tmp_path / "day2-clean"
        assert run_day(server, seeds, conf, clean, copied, KILL_DEPTH, 2) == 0
        clean_requests = page_requests(server)
        clean_db = db_records(copied)

    problems = [record_differences("resumed db vs uninterrupted db", comparable(resumed_db), comparable(clean_db),
                                   [name for name in DB_FIELDS if name not in REAL_TIME_FIELDS]),
                set_difference("resumed db's URLs vs uninterrupted", comparable(resumed_db), comparable(clean_db))]
    for layer in range(KILL_DEPTH):
        pairs = [{(doc["requested_url"], doc["outcome"]) for doc in layer_docs(output, layer)} for output in (killed, clean)]
        problems.append(set_difference(f"layer {layer}: (requested URL, outcome) resumed vs uninterrupted", *pairs))
        problems.append(set_difference(f"layer {layer}: resumed vs the oracle", pairs[0], set(predicted.layers[layer].items())))
    problems.append(set_difference("the XML's pages, resumed vs uninterrupted", xml_urls(killed), xml_urls(clean)))
    problems.append(counter_difference("the uninterrupted day's requests vs the oracle", Counter(clean_requests), predicted.answers))
    problems.append(record_differences("the uninterrupted db vs the oracle", dict(clean_db), predicted.db, PREDICTED_FIELDS))
    # The digest index too: each payload's original (its fetch time is a real time).
    originals = [{digest: original["url"] for digest, original in read_digest_index(directory)}
                 for directory in (db, copied)]
    problems.append(set_difference("the digest index's (digest, original), resumed vs uninterrupted",
                                   set(originals[0].items()), set(originals[1].items())))
    assert originals[0], "the digest index is empty"
    meta = [json.loads((directory / "db.json").read_text()) for directory in (db, copied)]
    problems.append("" if meta[0] == meta[1] else f"db.json: {meta[0]} resumed, {meta[1]} uninterrupted")
    check(problems)
    # The killed layer was fetched again on resume, all of it; no finished layer was.
    before_kill = {url for url, _ in answered_before if url in predicted.layers[1]}
    after_kill = {url for url, _ in resumed_requests[len(answered_before):]}
    assert before_kill and before_kill <= after_kill, "the killed layer's requests were not redone"
    assert after_kill == set(predicted.layers[1]), set_difference("requested on resume vs layer 1", after_kill, predicted.layers[1])
