"""Duplicates by payload digest, over two daily runs that share a crawl db.

A small web on loopback serves the same bytes under several URLs: a print
copy of an article on its own site, and a copy of another article on a
second site.  Day 1 finds them in one run; day 2, a day later on the same db,
finds a new copy of a page fetched on day 1, and an article that moved on
from the payload its print copy still shows.  What must hold: the db names
each duplicate's original (the shortest URL of the payload, or the one the
index held first); a duplicate gets no XML; the WARC export writes it as an
identical-payload-digest revisit that refers to its original; and the
digest index holds one original per payload.
"""
from __future__ import annotations

from datetime import timedelta
from types import SimpleNamespace

import pytest
from warcio.archiveiterator import ArchiveIterator
from warcio.cli import main as warcio_main

from crawl_support import crawl, crawl_docs, db_records, write_daily_inputs, xml_urls
from mrcrawl.db import main as db_main
from mrcrawl.export import run_exports
from mrcrawl.frontier import crawldb
from mrcrawl.frontier.crawldb import find_sorted, key_bytes, read_digest_index
from mrcrawl.frontier.dedup import claims_from_doc, duplicates_of, fold_claims, resolve
from mrcrawl.frontier.db_update import fetch_part
from mrcrawl.output.warc import IDENTICAL_PAYLOAD_DIGEST, warc_date
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import (
    DUPLICATE,
    FETCHED,
    GONE,
    NOT_MODIFIED,
    encode_body,
    iso_utc,
    new_doc,
    payload_digest,
)
from mrcrawl.testweb import Host, Page, Robots, RobotsGroup, Web
from mrcrawl.testweb.daily import FIRST_DAY
from mrcrawl.testweb.server import TestWebServer

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
            other.url("/"): home(["/syndicated/bridge-opens"]),
            other.url("/syndicated/bridge-opens"): article("Bridge opens"),
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
            seeds, conf, _ = write_daily_inputs(server, directory, revisit={"first_days": 1})
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


def test_day_two_finds_copies_of_earlier_runs_pages(days):
    db, news = days.runs[2].db, days.news
    again = db[news.url("/c-again")]
    assert (again["status"], again["duplicate_of"]) == (DUPLICATE, news.url("/c"))
    # /a moved on from the payload its print copy still shows: the print copy is now that payload's original.
    assert (db[news.url("/a")]["status"], db[news.url("/a/print")]["status"]) == (FETCHED, FETCHED)
    assert db[news.url("/a/print")]["duplicate_of"] is None
    copy = db[days.other.url("/syndicated/bridge-opens")]
    assert (copy["status"], copy["duplicate_of"]) == (DUPLICATE, news.url("/b"))


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
                             (2, other.url("/syndicated/bridge-opens")), (2, news.url("/c-again"))}
    original_fetch = {doc["url"]: doc["fetched_at"] for doc in crawl_docs(days.runs[1].output)}
    for (day, url), headers in revisits.items():
        original = days.runs[day].db[url]["duplicate_of"]
        assert headers.get_header("WARC-Profile") == IDENTICAL_PAYLOAD_DIGEST
        assert headers.get_header("WARC-Refers-To-Target-URI") == original
        assert headers.get_header("WARC-Refers-To-Date") == warc_date(original_fetch[original])
        assert headers.get_header("WARC-Payload-Digest") == days.runs[day].db[original]["digest"]


# ---- the rules, one case each --------------------------------------------------


def fetched_doc(url: str, body: bytes, known_digest: str | None = None, requested: str | None = None) -> dict:
    doc = new_doc(requested or url, 0, {"hops": 1, "known": {"digest": known_digest} if known_digest else None})
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
