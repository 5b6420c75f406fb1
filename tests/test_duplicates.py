"""Duplicates by content and by payload, over daily runs that share a crawl db.

A small web on loopback serves the same bytes under several URLs: a print
copy of an article on its own site, and copies of two other articles on a
second site.  Day 1 finds them in one run; day 2, a day later on the same db,
finds a new copy of a page fetched on day 1, an article that moved on from
the payload its print copy still shows, and a copy amended on its own.  What must hold: the db names
each duplicate's original (the shortest URL of the payload, or the one the
index held first); a duplicate gets no XML, and a page that stops being one
does; the WARC export writes it as an identical-payload-digest revisit that
refers to its original; and the digest index holds one original per payload.

The daily news web, with articles cross-posted to a second section, serves
one article under two URLs whose answers differ in a clock, an advert and a
nonce: the same content, other bytes.  Three days of crawls are checked
against the week oracle: the later URL is a duplicate of the first, in the
db and with no XML, while the WARC holds both as responses.
"""
from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path
from types import SimpleNamespace

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.cli import main as warcio_main

from crawl_support import crawl, crawl_docs, db_records, write_daily_inputs, xml_urls
from mrcrawl.db import main as db_main
from mrcrawl.export import run_exports
from mrcrawl.frontier import crawldb
from mrcrawl.frontier.crawldb import find_sorted, key_bytes, read_digest_index, read_signature_index, signature_key
from mrcrawl.frontier.dedup import (
    EMPTY_TEXT_SIGNATURE,
    ContentSeen,
    claims_from_doc,
    claims_from_out,
    content_duplicate,
    content_signature,
    duplicates_of,
    fold_claims,
    resolve,
)
from mrcrawl.frontier.db_update import fetch_part
from mrcrawl.frontier.merge import merged_record
from mrcrawl.output.warc import IDENTICAL_PAYLOAD_DIGEST, warc_date
from mrcrawl.page.charset import detect_encoding
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.protocols import Utf8JsonProtocol, decode_value, encode_value
from mrcrawl.store.records import (
    DUPLICATE,
    FETCHED,
    GONE,
    NOT_HTML,
    NOT_MODIFIED,
    encode_body,
    iso_utc,
    new_content_duplicate,
    new_doc,
    new_duplicate,
    payload_digest,
)
from mrcrawl.testweb import Host, Page, Robots, RobotsGroup, Web, generate_web
from mrcrawl.testweb.daily import FIRST_DAY, DailySpec, DailyWeb, start_daily_web
from mrcrawl.testweb.pagefaults import fault_pages
from mrcrawl.testweb.server import TestWebServer
from mrcrawl.testweb.week import PREDICTED_FIELDS, WeekOracle

DAY_1, DAY_2 = iso_utc(FIRST_DAY), iso_utc(FIRST_DAY + timedelta(days=1))
ROBOTS = Robots(200, (RobotsGroup(("*",), allow=("/",)),))


def article(title: str) -> bytes:
    text = f"{title}. " + " ".join(f"{title} reported in paragraph {n} of a long enough story." for n in range(12))
    return (f"<!DOCTYPE html><html><head><title>{title}</title></head>"
            f"<body><article><h1>{title}</h1><p>{text}</p></article></body></html>").encode()


def home(links: list[str]) -> bytes:
    items = "".join(f'<li><a href="{link}">{link}</a></li>' for link in links)
    return f"<!DOCTYPE html><html><head><title>Home</title></head><body><ul>{items}</ul></body></html>".encode()


def day_web(day: int):
    """web_factory of the web as served on `day` (1 or 2)."""
    def build(port: int) -> Web:
        news, other = (Host(f"127.0.0.{n}", port, "news", ROBOTS) for n in (2, 3))
        news_links = ["/a", "/a/print", "/b", "/c"] + (["/c-again"] if day == 2 else [])
        bodies = {
            news.url("/"): home(news_links),
            news.url("/a"): article("Harbour vote" if day == 1 else "Harbour vote, corrected"),
            news.url("/a/print"): article("Harbour vote"),  # the print copy is not corrected
            news.url("/b"): article("Bridge opens"),
            news.url("/c"): article("Council budget"),
            other.url("/"): home(["/syndicated/bridge-opens", "/syndicated/council-budget"]),
            other.url("/syndicated/bridge-opens"): article("Bridge opens"),
            # A copy of /c, amended on day 2 on its own.
            other.url("/syndicated/council-budget"): article("Council budget" + ("" if day == 1 else ", amended")),
        }
        if day == 2:
            bodies[news.url("/c-again")] = article("Council budget")
        pages = [Page(url=url, kind="test", body=body, links=()) for url, body in bodies.items()]
        pages += [Page(url=host.url("/robots.txt"), kind="robots", content_type="text/plain",
                       body=host.robots.body) for host in (news, other)]
        return Web(seed=0, port=port, hosts=(news, other), pages={page.url: page for page in pages},
                   seed_urls=(news.url("/"), other.url("/")), seed_spellings={})
    return build


@pytest.fixture(scope="module")
def days(tmp_path_factory):
    """Day 1 and day 2 crawled into their own directories, with one db."""
    directory = tmp_path_factory.mktemp("duplicates")
    db = directory / "db"
    runs = {}
    port = 0
    for day, now in ((1, DAY_1), (2, DAY_2)):
        with TestWebServer(hosts=2, port=port, web_factory=day_web(day)) as server:
            port = server.port
            # Articles are due again after a day, so that day 2 fetches them all again.
            seeds, conf, _ = write_daily_inputs(server, directory, revisit={"first_days": 1}, order="bfs")
            output = directory / f"day{day}"
            assert crawl(seeds, conf, output, 2, "inline", "--db", str(db), "--now", now) == 0
            run_exports(output, ["warc"])
            runs[day] = SimpleNamespace(output=output, web=server.web, db=dict(db_records(db)))
    news, other = runs[1].web.hosts
    return SimpleNamespace(runs=runs, db=db, news=news, other=other)


def test_day_one_names_each_copy_s_original(days):
    db, news, other = days.runs[1].db, days.news, days.other
    assert (db[news.url("/a/print")]["status"], db[news.url("/a/print")]["duplicate_of"]) == (DUPLICATE, news.url("/a"))
    copy = db[other.url("/syndicated/bridge-opens")]
    assert (copy["status"], copy["duplicate_of"]) == (DUPLICATE, news.url("/b"))
    budget = db[other.url("/syndicated/council-budget")]
    assert (budget["status"], budget["duplicate_of"]) == (DUPLICATE, news.url("/c"))
    for path in ("/a", "/b", "/c"):
        assert (db[news.url(path)]["status"], db[news.url(path)]["duplicate_of"]) == (FETCHED, None)
    # A duplicate keeps its own digest and is revisited as any article is.
    assert copy["digest"] == db[news.url("/b")]["digest"] and copy["due_at"] == db[news.url("/b")]["due_at"]


def test_a_duplicate_gets_no_xml(days):
    news, other = days.news, days.other
    assert sorted(xml_urls(days.runs[1].output)) == sorted(
        [news.url("/"), other.url("/"), news.url("/a"), news.url("/b"), news.url("/c")])
    # Day 2: the corrected article is new text; the new copy of /c is a duplicate of day 1's page.
    assert news.url("/c-again") not in xml_urls(days.runs[2].output)
    assert news.url("/a") in xml_urls(days.runs[2].output)
    # The print copy is no duplicate any more: the index has never had its
    # page, which /a no longer shows, though its text is what it was on day 1.
    assert news.url("/a/print") in xml_urls(days.runs[2].output)
    # The amended copy of /c is a page of its own now.
    assert other.url("/syndicated/council-budget") in xml_urls(days.runs[2].output)


def test_day_two_finds_copies_of_earlier_runs_pages(days):
    db, news = days.runs[2].db, days.news
    again = db[news.url("/c-again")]
    assert (again["status"], again["duplicate_of"]) == (DUPLICATE, news.url("/c"))
    # /a moved on from the payload its print copy still shows: the print copy is now that payload's original.
    assert (db[news.url("/a")]["status"], db[news.url("/a/print")]["status"]) == (FETCHED, FETCHED)
    assert db[news.url("/a/print")]["duplicate_of"] is None
    copy = db[days.other.url("/syndicated/bridge-opens")]
    assert (copy["status"], copy["duplicate_of"]) == (DUPLICATE, news.url("/b"))
    amended = db[days.other.url("/syndicated/council-budget")]
    assert (amended["status"], amended["duplicate_of"]) == (FETCHED, None)


def test_the_digest_index_holds_one_original_per_payload(days, capsys):
    originals = dict(read_digest_index(days.db))
    records = days.runs[2].db
    day_one = {url: doc["fetched_at"] for url, doc in ((doc["url"], doc) for doc in crawl_docs(days.runs[1].output))}
    news = days.news
    # The original of each payload fetched is the URL that first showed it, at that fetch.
    assert originals[records[news.url("/c")]["digest"]] == {"url": news.url("/c"), "fetched_at": day_one[news.url("/c")]}
    assert originals[records[news.url("/a/print")]["digest"]]["url"] == news.url("/a/print")
    assert originals[records[news.url("/a")]["digest"]]["url"] == news.url("/a")
    # Every digest the db's records hold has its original, and the index nothing else but
    # the payloads earlier fetches showed (the hubs' of day 1, whose pages moved on, released).
    assert {record["digest"] for record in records.values() if record["digest"]} <= set(originals)
    assert {original["url"] for original in originals.values()} <= set(records)
    # The db reader counts them.
    assert db_main(["stats", str(days.db), "--now", DAY_2]) == 0
    assert f"; {len(originals)} payload digests in the digest index" in capsys.readouterr().out.splitlines()[0]


def test_the_warc_writes_a_duplicate_as_an_identical_payload_revisit(days):
    news, other = days.news, days.other
    revisits = {}
    for day, run in days.runs.items():
        for path in sorted((run.output / "warc").iterdir()):
            with pytest.raises(SystemExit) as check:
                warcio_main(["check", str(path)])
            assert check.value.code == 0
            with open(path, "rb") as stream:
                for record in ArchiveIterator(stream):
                    if record.rec_type == "revisit":
                        revisits[(day, record.rec_headers.get_header("WARC-Target-URI"))] = record.rec_headers
    assert set(revisits) == {(1, news.url("/a/print")), (1, other.url("/syndicated/bridge-opens")),
                             (1, other.url("/syndicated/council-budget")),
                             (2, other.url("/syndicated/bridge-opens")), (2, news.url("/c-again"))}
    original_fetch = {doc["url"]: doc["fetched_at"] for doc in crawl_docs(days.runs[1].output)}
    for (day, url), headers in revisits.items():
        original = days.runs[day].db[url]["duplicate_of"]
        assert headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD_DIGEST
        assert headers.get_header("WARC-Refers-To-Target-URI") == original
        assert headers.get_header("WARC-Refers-To-Date") == warc_date(original_fetch[original])
        assert headers.get_header("WARC-Payload-Digest") == days.runs[day].db[original]["digest"]


# ---- the rules, one case each --------------------------------------------------


def fetched_doc(url: str, body: bytes, known_digest: str | None = None, requested: str | None = None,
                known_signature: str | None = None) -> dict:
    known = {"digest": known_digest, "signature": known_signature} if known_digest else None
    doc = new_doc(requested or url, 0, {"hops": 1, "known": known})
    doc.update(url=url, outcome=FETCHED, status=200, body=encode_body(body), headers=[])
    return doc


def claims(doc: dict) -> dict:
    return dict(claims_from_doc(doc, fetch_part(doc)))


def test_a_fetch_claims_its_payload_and_releases_the_one_it_moved_on_from():
    old, new = payload_digest(b"old"), payload_digest(b"new")
    first = fetched_doc("http://h/a", b"new")
    assert claims(first) == {new: {"claims": [["http://h/a", first["fetched_at"]]], "releases": []}}
    doc = fetched_doc("http://h/a", b"new", known_digest=old)
    found = claims(doc)
    assert found[new]["claims"] == [["http://h/a", doc["fetched_at"]]] and found[old] == {"claims": [], "releases": ["http://h/a"]}
    assert set(claims(fetched_doc("http://h/a", b"old", known_digest=old))) == {old}  # the same payload: no release
    gone = fetched_doc("http://h/a", b"", known_digest=old)
    gone.update(outcome=GONE, status=404, body=None)
    assert claims(gone) == {old: {"claims": [], "releases": ["http://h/a"]}}
    for outcome, status in ((NOT_MODIFIED, 304), ("http_error", 503), ("network_error", None)):
        unchanged = fetched_doc("http://h/a", b"", known_digest=old)
        unchanged.update(outcome=outcome, status=status, body=None)
        assert claims(unchanged) == {}, outcome  # the earlier page stands, or may yet


def test_the_original_is_the_index_s_else_the_shortest_claimant():
    claim = fold_claims([{"claims": [["http://h/long-name", "t2"]], "releases": []},
                         {"claims": [["http://h/b", "t3"], ["http://h/a", "t4"]], "releases": []},
                         {"claims": [["http://h/b", "t1"]], "releases": []}])
    assert claim["claims"] == [["http://h/a", "t4"], ["http://h/b", "t1"], ["http://h/long-name", "t2"]]
    assert resolve(None, claim) == {"url": "http://h/a", "fetched_at": "t4"}
    kept = {"url": "http://h/zz-first", "fetched_at": "t0"}
    assert resolve(kept, claim) == kept
    assert [url for url, _ in duplicates_of("d", kept, claim)] == ["http://h/a", "http://h/b", "http://h/long-name"]
    released = {"claims": claim["claims"], "releases": ["http://h/zz-first"]}
    assert resolve(kept, released) == {"url": "http://h/a", "fetched_at": "t4"}
    assert resolve(kept, {"claims": [], "releases": ["http://h/zz-first"]}) is None
    assert resolve(kept, {"claims": [["http://h/zz-first", "t9"]], "releases": ["http://h/zz-first"]}) == kept


def test_a_parser_task_reads_no_text_for_a_page_that_cannot_be_its_content_s_original():
    """Whatever the order the pages come in, a page ContentSeen says needs
    no text is never the original resolve() picks among the same claimants."""
    import random

    urls = [f"http://h/{name}" for name in ("a", "b", "zz", "long-name", "c?x=1", "b/1")]
    for seed in range(50):
        chance = random.Random(seed)
        pages = [(chance.choice(urls), chance.choice(("s1", "s2"))) for _ in range(8)]
        seen = ContentSeen()
        skipped = [(url, signature) for url, signature in pages
                   if not seen.needs_text(url, {"signature": signature, "hub": False})]
        for url, signature in skipped:
            claim = fold_claims([{"claims": [[claimant, "t"]], "releases": []}
                                 for claimant, shown in pages if shown == signature])
            assert resolve(None, claim)["url"] != url
    # A hub, and a page without text, are compared by payload: no guess.
    seen = ContentSeen()
    assert seen.needs_text("http://h/a", {"signature": "s", "hub": True})
    assert seen.needs_text("http://h/b", {"signature": "s", "hub": True})
    assert seen.needs_text("http://h/a", {"signature": EMPTY_TEXT_SIGNATURE, "hub": False})
    assert seen.needs_text("http://h/b", {"signature": EMPTY_TEXT_SIGNATURE, "hub": False})
    # A task that has seen more signatures than it keeps forgets them: it reads texts again.
    small = ContentSeen(limit=2)
    for signature in ("s1", "s2", "s3"):
        assert small.needs_text("http://h/a", {"signature": signature, "hub": False})
    assert small.needs_text("http://h/b", {"signature": "s1", "hub": False})


@pytest.mark.parametrize("block_bytes", [64, crawldb.MERGE_BLOCK_BYTES])  # many blocks, and one
def test_find_sorted_finds_each_key_in_one_pass(tmp_path, monkeypatch, block_bytes):
    monkeypatch.setattr(crawldb, "MERGE_BLOCK_BYTES", block_bytes)
    lines = Utf8JsonProtocol()
    keys = [f"sha1:{n:04d}" for n in range(0, 2000, 2)]
    path = tmp_path / "part-00000"
    path.write_bytes(b"".join(lines.write(key, {"url": key}) + b"\n" for key in keys))
    asked = (0, 1, 2, 999, 1000, 1998, 1999, 5000)
    with open(path, "rb") as stored:
        found = {item[1]: record for item, record in find_sorted(stored, sorted((key_bytes(f"sha1:{n:04d}"), n) for n in asked))}
    assert found == {n: ({"url": f"sha1:{n:04d}"} if n % 2 == 0 and n < 2000 else None) for n in asked}


def out(signature: str | None, hub: bool | None = False) -> dict:
    """An out record of a page the Parser judged so."""
    return {"outlinks": [], "type": 0, "layer": 0, "timestamp": "t1", "hops": 1, "signature": signature, "hub": hub}


def test_a_page_claims_its_content_unless_it_is_a_hub_or_has_no_text():
    assert dict(claims_from_out(out("abc"), "http://h/a")) == {
        signature_key("abc"): {"claims": [["http://h/a", "t1"]], "releases": []}}
    assert content_signature(out("abc")) == "abc"
    for judged in (out("abc", hub=True), out(EMPTY_TEXT_SIGNATURE), out(None, hub=None)):
        # A hub's content is its links; a page without text, or not read, says nothing to compare.
        assert content_signature(judged) is None and list(claims_from_out(judged, "http://h/a")) == []


def test_a_fetch_that_moves_on_from_its_payload_releases_its_content_too():
    old, html_page = payload_digest(b"old"), b"<p>a new text</p>"
    moved_on = claims(fetched_doc("http://h/a", html_page, known_digest=old, known_signature="abc"))
    released = {"claims": [], "releases": ["http://h/a"]}
    assert moved_on[old] == released and moved_on[signature_key("abc")] == released
    # The same bytes: the same content, nothing released.
    same = payload_digest(html_page)
    assert set(claims(fetched_doc("http://h/a", html_page, known_digest=same, known_signature="abc"))) == {same}
    # A page that is not HTML has its digest for a signature: it held no content signature.
    assert set(claims(fetched_doc("http://h/a", html_page, known_digest=old, known_signature=old))) == {same, old}


def test_a_page_is_a_duplicate_by_content_when_it_has_a_content_signature_else_by_payload():
    by_payload = new_duplicate({"url": "http://h/a", "fetched_at": "t0"}, payload_digest(b"page"))
    by_content = new_content_duplicate({"url": "http://h/b", "fetched_at": "t0"}, "abc")
    article, hub = {"signature": "abc", "hub": False}, {"signature": "abc", "hub": True}
    assert content_duplicate([by_payload, by_content], article) == by_content
    # Its bytes are another URL's, its content its own: it is its content's original.
    assert content_duplicate([by_payload], article) is None
    assert content_duplicate([by_payload, by_content], hub) == by_payload
    assert content_duplicate([by_payload], None) == by_payload  # not HTML
    assert content_duplicate([], article) is None and content_duplicate([], None) is None


def test_merge_marks_a_page_by_its_content_or_by_its_payload_when_it_has_no_content_signature():
    article = b"<html><body><h1>Harbour vote</h1><p>The council voted for the ferry.</p></body></html>"
    links = b"<html><body><ul><li><a href='/1'>First</a></li><li><a href='/2'>Second</a></li></ul></body></html>"
    original = {"url": "http://h/first", "fetched_at": "t0"}

    def merged(body: bytes, *duplicates: dict, outcome: str = FETCHED) -> str | None:
        doc = fetched_doc("http://h/page", body)
        doc["outcome"] = outcome
        stored = [encode_value(doc), *(encode_value(duplicate) for duplicate in duplicates)]
        return decode_value(merged_record(stored, 0.5))["duplicate_of"]

    by_content = new_content_duplicate(original, "abc")
    assert merged(article, new_duplicate(original, payload_digest(article)), by_content) == "http://h/first"
    assert merged(article, new_duplicate(original, payload_digest(article))) is None
    assert merged(links, new_duplicate(original, payload_digest(links))) == "http://h/first"  # a hub
    pdf = b"%PDF-1.4"
    assert merged(pdf, new_duplicate(original, payload_digest(pdf)), outcome=NOT_HTML) == "http://h/first"
    assert merged(article) is None


# ---- what the test webs serve is duplicated where their models say -------------------


CROSS_POSTED = DailySpec(sites=2, sections=3, articles=12, new_share=0.25, updated_share=0.3, deleted_share=0.0,
                         fail_once_share=0.0, cross_posted_share=0.5, latest=4, related=1, days=3)


def content_key(url: str, body: bytes, content_type: str | None) -> str:
    """What the crawler compares a fetched page by: its content signature, else its payload."""
    doc = new_doc(url, 0)
    doc.update(outcome=FETCHED, status=200, body=encode_body(body), encoding=detect_encoding(body, content_type))
    return content_signature(out_record(doc, UrlFilter([], []), 0.5)) or payload_digest(body)


def assert_duplicates_as_modelled(pages: dict[str, tuple[bytes, str | None, bytes]]) -> int:
    """`pages`: URL -> (body, Content-Type, the body of the page whose text it
    shows, as its model says).  The crawler's groups of pages of one content
    are the model's; returns how many pages repeat another's."""
    crawler: dict[str, set[bytes]] = {}
    model: dict[bytes, set[str]] = {}
    for url, (body, content_type, text_of) in pages.items():
        key = content_key(url, body, content_type)
        crawler.setdefault(key, set()).add(text_of)
        model.setdefault(text_of, set()).add(key)
    assert all(len(keys) == 1 for keys in (*crawler.values(), *model.values()))
    return len(pages) - len(crawler)


def test_the_test_webs_pages_are_one_another_s_duplicates_only_where_their_models_say():
    for seed in (1, 2, 3):
        web = generate_web(seed=seed, port=8123)
        html_pages = {url: page for url, page in web.pages.items() if page.status == 200 and page.is_html}
        assert assert_duplicates_as_modelled({url: (page.body, page.content_type, page.body)
                                              for url, page in html_pages.items()}) >= 1  # /deep/dir/ twice
    faults = fault_pages("http://127.0.0.40:8123")
    assert_duplicates_as_modelled({path: (page.body, page.content_type, page.body) for path, page in faults.items()})
    daily = DailyWeb(CROSS_POSTED, 8123)
    for day in daily.days:
        served = {url: daily.page(url, day) for url in daily.existing(day) if not url.endswith("/robots.txt")}
        copies = assert_duplicates_as_modelled({
            url: (page.body, page.content_type, served[page.same_text_as or url].body) for url, page in served.items()})
        assert copies >= 3 and all(page.body != served[page.same_text_as].body
                                   for page in served.values() if page.same_text_as)


# ---- one article under two sections' URLs, over three days ------------------------


WEEK_DEPTH = 3
WEEK_REVISIT = {"first_days": 1}  # every article is due again the next day: its duplicates are judged again


def warc_types(output: Path) -> dict[str, list[str]]:
    """The types of the WARC records of each target URL."""
    types: dict[str, list[str]] = {}
    for path in sorted((output / "warc").iterdir()):
        with open(path, "rb") as stream:
            for record in ArchiveIterator(stream):
                target = record.rec_headers.get_header("WARC-Target-URI")
                if target:
                    types.setdefault(target, []).append(record.rec_type)
    return types


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    """The cross-posted daily web crawled on days 1 to 3 into one db, each
    day with its oracle's prediction."""
    directory = tmp_path_factory.mktemp("cross-posted")
    db = directory / "db"
    runs = {}
    with start_daily_web(CROSS_POSTED) as server:
        web = server.web
        seeds, conf, config = write_daily_inputs(server, directory, revisit=WEEK_REVISIT, order="bfs")
        oracle = WeekOracle(web, WEEK_DEPTH, retries=config["retries"], revisit=config["revisit"])
        for day in web.days:
            server.set_day(day)
            output = directory / f"day{day}"
            assert crawl(seeds, conf, output, WEEK_DEPTH, "inline", "--db", str(db), "--now", web.date_iso(day)) == 0
            run_exports(output, ["warc"])
            docs = crawl_docs(output)
            runs[day] = SimpleNamespace(
                output=output, predicted=oracle.run(day), docs=docs, db=dict(db_records(db)), xml=xml_urls(output),
                warc=warc_types(output),
                layer_of={doc["url"]: doc["layer"] for doc in docs if doc["outcome"] == FETCHED})
    return SimpleNamespace(web=web, runs=runs, db=db)


def pairs_fetched(week, day: int) -> list[tuple[str, str]]:
    """(article, copy) of each cross-posted article both of whose URLs answered 200 on `day`."""
    run = week.runs[day]
    return [(week.web.page(url, day).same_text_as, url) for url in sorted(run.layer_of)
            if week.web.page(url, day).same_text_as in run.layer_of]


def test_each_day_is_crawled_as_the_oracle_says(week):
    """The requests, every db record (its status, duplicate_of and validators
    among the fields compared) and the XML, day by day."""
    for day, run in week.runs.items():
        assert {(doc["requested_url"], doc["outcome"]) for doc in run.docs} == run.predicted.outcomes, day
        assert set(run.db) == set(run.predicted.db), day
        for url, predicted in run.predicted.db.items():
            assert {field: run.db[url][field] for field in PREDICTED_FIELDS} == predicted, (day, url)
        assert sorted(run.xml) == sorted(run.predicted.xml), day


def test_the_days_hold_duplicates_of_a_page_of_the_same_layer_an_earlier_layer_and_an_earlier_day(week):
    kinds = Counter()
    for day, run in week.runs.items():
        for url, layer in run.layer_of.items():
            original = run.db[url]["duplicate_of"]
            if original is not None:
                kinds["an earlier day" if original not in run.layer_of else
                      "an earlier layer" if run.layer_of[original] < layer else "the same layer"] += 1
    assert kinds["the same layer"] and kinds["an earlier layer"] and kinds["an earlier day"], kinds


def test_the_url_fetched_later_is_a_duplicate_of_the_first(week):
    checked = 0
    for day, run in week.runs.items():
        for article, copy in pairs_fetched(week, day):
            if run.db[article]["fetch_count"] == run.db[copy]["fetch_count"] == 1:  # both new today
                first, later = sorted((article, copy), key=lambda url: (run.layer_of[url], len(url), url))
                assert (run.db[first]["status"], run.db[first]["duplicate_of"]) == (FETCHED, None)
                assert (run.db[later]["status"], run.db[later]["duplicate_of"]) == (DUPLICATE, first)
                assert first in run.xml and later not in run.xml
                checked += 1
    assert checked >= 3


def test_an_article_under_two_urls_is_in_the_xml_once(week):
    web, indexed, pairs = week.web, Counter(), 0
    for day, run in week.runs.items():
        indexed.update((web.page(url, day).same_text_as or url, web.version(url, day)) for url in run.xml)
        pairs += len(pairs_fetched(week, day))
    assert pairs >= 10 and indexed and max(indexed.values()) == 1


def test_the_warc_holds_both_urls_of_an_article_as_responses(week):
    for day, run in week.runs.items():
        for article, copy in pairs_fetched(week, day):
            for url in (article, copy):
                assert sorted(run.warc[url]) == ["metadata", "request", "response"], (day, url)


def test_a_duplicate_keeps_no_validators_and_is_fetched_whole_again(week):
    refetched = 0
    for day, run in week.runs.items():
        duplicates = [record for record in run.db.values() if record["status"] == DUPLICATE]
        assert duplicates and all(record["etag"] is None and record["last_modified"] is None for record in duplicates)
        before = week.runs.get(day - 1)
        for doc in run.docs if before else ():
            if before.db.get(doc["requested_url"], {}).get("status") == DUPLICATE:
                assert doc["outcome"] == FETCHED and not doc["known"]["etag"], (day, doc["url"])
                refetched += 1
    assert refetched


def test_the_digest_index_holds_each_content_s_original_beside_the_payloads(week):
    db = week.runs[max(week.runs)].db
    payloads, contents = dict(read_digest_index(week.db)), dict(read_signature_index(week.db))
    assert payloads and all(digest.startswith("sha1:") for digest in payloads)
    originals = {url: record for url, record in db.items()
                 if record["status"] in (FETCHED, NOT_MODIFIED) and not record["hub"]}
    assert originals and all(contents[record["signature"]]["url"] == url for url, record in originals.items())
    assert {original["url"] for original in contents.values()} <= set(originals)
