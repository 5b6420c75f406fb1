"""Broken announcements in a whole crawl: the issue's hostile feeds and sitemaps.

An announce fault server (mrcrawl/testweb/announcefaults.py) serves a
truncated sitemap, feeds with a wrong Content-Type, a sitemap of 10 MB, a
sitemap index that lists itself, a chain of 20 nested indexes, a billion
laughs and an external entity naming a local file that holds a secret.
The seed file lists them, and the real driver crawls them in a process of
its own (inline runner, WARC and index export).  Per case the checks are
the doc record (outcome, kind, error, entries), the records of the next
layers (what was followed) and the server's log (what was requested, how
often); then every file the run wrote, and what it printed, is searched for
the secret and for an expanded entity.
"""
from __future__ import annotations

import secrets
import subprocess
import sys
from collections import Counter
from types import SimpleNamespace

import pytest
import yaml

from crawl_support import crawl_docs, warc_records_for, xml_pages
from mrcrawl.driver import EXIT_OK
from mrcrawl.page.announce import FEED, SITEMAP, SITEMAP_INDEX
from mrcrawl.store.failures import FailureKind
from mrcrawl.store.records import FETCHED, body_bytes
from mrcrawl.testweb import USER_AGENT
from mrcrawl.testweb.announcefaults import (
    ARTICLES, BIG, BIG_CUT, BIG_FRESH, FEED_AS_HTML, FEED_AS_TEXT, LAUGH, LAUGHS, NESTED, OLD_DATE, SEEDS,
    SELF_INDEX, SELF_SITEMAP, TRUNCATED, XXE, XXE_DTD, announce_fault_server, big_entry, truncated_entries,
)
from test_export import read_warc_files
from test_proxy_credentials import run_driver, written_texts

DEPTH = 4  # layers 0-3: the nested chain's bound (2) shows on layer 3, where a third index would be fetched
MAX_NESTING = 2  # max_sitemap_nesting's default

# The pages each layer fetches: the seeds; what they announce; what the
# announcements of layer 1 announce; nothing more.
LAYERS = (
    set(SEEDS),
    {path for case in (TRUNCATED, FEED_AS_TEXT, FEED_AS_HTML, BIG, LAUGHS, XXE) for path in ARTICLES[case]}
    | {SELF_SITEMAP, NESTED[1]},
    {*ARTICLES[SELF_SITEMAP], NESTED[2]},
)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("announcefaults")
    secret = f"secret-{secrets.token_hex(12)}"
    secret_file = directory / "secret.txt"
    secret_file.write_text(secret + "\n", encoding="utf-8")
    with announce_fault_server(secret_file) as server:
        config = {"name": "announcefaults", "language": "en", "user_agent": USER_AGENT, "threads": 4,
                  "delay": 0.02, "timeout": 2.0, "retries": 1, "max_page_bytes": BIG_CUT,
                  "url_allow": [server.url_allow], "obey_robots": True, "allow_private_networks": True}
        conf = directory / "crawl.yaml"
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
        seeds = directory / "seeds.txt"
        seeds.write_text("# feeds and sitemaps only\n" + "".join(server.url(path) + "\n" for path in SEEDS),
                         encoding="utf-8")
        output = directory / "crawl"
        result = run_driver(seeds, conf, output, directory, DEPTH, "--runner", "inline", "--export", "warc,index")
        server.wait_idle()
        docs = crawl_docs(output) if (output / "doc").is_dir() else []
        return SimpleNamespace(
            directory=directory, secret=secret, secret_file=secret_file, server=server, log=server.log,
            result=result, output=output, docs=docs, url=server.url,
            xml=xml_pages(output) if (output / "xml").is_dir() else {},
            warc=read_warc_files(output / "warc") if (output / "warc").is_dir() else {})


def path_of(crawled, url: str) -> str:
    assert url.startswith(crawled.server.origin), url
    return url[len(crawled.server.origin):]


def the_doc(crawled, path: str, kind: str) -> dict:
    """The one record of an announcement: fetched, body kept, of `kind`."""
    docs = [doc for doc in crawled.docs if doc["requested_url"] == crawled.url(path)]
    assert len(docs) == 1, f"{path}: {len(docs)} records"
    doc, = docs
    assert (doc["outcome"], doc["status"], doc["kind"]) == (FETCHED, 200, kind), (path, doc["error"])
    # Kept whole (or as far as max_page_bytes) in the record and in the WARC.
    sent = crawled.server.pages[path].body[:BIG_CUT]
    assert body_bytes(doc) == sent, path
    response, = warc_records_for(crawled.warc, crawled.url(path))["response"]
    assert response.payload.endswith(sent), path
    return doc


def entry_paths(crawled, doc: dict) -> list[str]:
    return [path_of(crawled, entry[0]) for entry in doc["entries"]]


def fetched_under(crawled, directory: str) -> dict[str, int]:
    """The layer of each page fetched under `directory` (the announcements' own docs included)."""
    return {path_of(crawled, doc["requested_url"]): doc["layer"] for doc in crawled.docs
            if path_of(crawled, doc["requested_url"]).startswith(directory)}


def assert_malformed(doc: dict, words: str) -> None:
    """The record names the fault: its kind, and `words` in its error."""
    assert doc["error_kind"] == FailureKind.MALFORMED, doc["error_kind"]
    assert doc["error"] and words in doc["error"].lower(), doc["error"]


# ---- the run ------------------------------------------------------------------


def test_the_run_exits_0_and_fetches_each_layer_s_announced_pages(crawled):
    assert crawled.result.returncode == EXIT_OK, crawled.result.stderr[-3000:]
    by_layer = [{path_of(crawled, doc["requested_url"]) for doc in crawled.docs if doc["layer"] == layer}
                for layer in range(DEPTH)]
    assert by_layer == [*LAYERS, set()]
    assert all(doc["outcome"] == FETCHED for doc in crawled.docs), [
        (doc["requested_url"], doc["outcome"], doc["error"]) for doc in crawled.docs if doc["outcome"] != FETCHED]


def test_each_url_is_requested_once_and_no_dtd_ever(crawled):
    requested = Counter(entry.path for entry in crawled.log if entry.path != "/robots.txt")
    assert requested == Counter(set().union(*LAYERS))
    assert not any(XXE_DTD in entry.path for entry in crawled.log)


# ---- the cases, one by one --------------------------------------------------


def test_a_truncated_sitemap_keeps_and_follows_the_entries_before_the_cut(crawled):
    doc = the_doc(crawled, TRUNCATED, SITEMAP)
    assert_malformed(doc, "premature end")
    assert entry_paths(crawled, doc) == list(truncated_entries()[:-1])
    assert fetched_under(crawled, "/truncated/") == {TRUNCATED: 0, **dict.fromkeys(ARTICLES[TRUNCATED], 1)}


@pytest.mark.parametrize("path, content_type", [(FEED_AS_TEXT, "text/plain"), (FEED_AS_HTML, "text/html")])
def test_a_feed_with_a_wrong_content_type_is_recognised_by_its_content(crawled, path, content_type):
    doc = the_doc(crawled, path, FEED)
    assert (doc["content_type"], doc["error"], doc["error_kind"]) == (content_type, None, None)
    assert entry_paths(crawled, doc) == list(ARTICLES[path])
    directory = path.rsplit("/", 1)[0] + "/"
    assert fetched_under(crawled, directory) == {path: 0, **dict.fromkeys(ARTICLES[path], 1)}
    # The pages have no title: the XML takes the feed's.
    headlines = [crawled.xml[crawled.url(article)].findtext("headline") for article in ARTICLES[path]]
    assert headlines == [entry[3] for entry in doc["entries"]] and all(headlines), headlines


def test_a_sitemap_of_10_mb_is_cut_at_max_page_bytes_and_keeps_the_entries_before(crawled):
    doc = the_doc(crawled, BIG, SITEMAP)
    assert doc["truncated"] is True
    assert_malformed(doc, "cut at max_page_bytes")
    sent = crawled.server.pages[BIG].body
    assert len(sent) > 9 * BIG_CUT
    before_cut = sent[:BIG_CUT]
    # The cut falls inside a URL: the half URL is no entry.
    assert b"</loc>" not in before_cut.rsplit(b"<loc>", 1)[1]
    whole = before_cut.count(b"</url>")
    assert entry_paths(crawled, doc) == [big_entry(number) for number in range(whole)]
    assert [entry[2][:10] for entry in doc["entries"][BIG_FRESH:]] == [OLD_DATE] * (whole - BIG_FRESH)
    # Only the recent ones are followed; nothing else under /big/ is requested.
    assert fetched_under(crawled, "/big/") == {BIG: 0, **dict.fromkeys(ARTICLES[BIG], 1)}
    assert {entry.path for entry in crawled.log if entry.path.startswith("/big/")} == {BIG, *ARTICLES[BIG]}


def test_a_sitemap_index_that_lists_itself_is_fetched_once(crawled):
    doc = the_doc(crawled, SELF_INDEX, SITEMAP_INDEX)
    assert (doc["error"], doc["error_kind"]) == (None, None)
    assert entry_paths(crawled, doc) == [SELF_INDEX, SELF_SITEMAP]
    sitemap = the_doc(crawled, SELF_SITEMAP, SITEMAP)
    assert entry_paths(crawled, sitemap) == list(ARTICLES[SELF_SITEMAP])
    assert fetched_under(crawled, "/self/") == {SELF_INDEX: 0, SELF_SITEMAP: 1, **dict.fromkeys(ARTICLES[SELF_SITEMAP], 2)}
    assert [entry.path for entry in crawled.log].count(SELF_INDEX) == 1


def test_a_chain_of_20_nested_indexes_is_followed_max_sitemap_nesting_deep(crawled):
    for level in range(MAX_NESTING + 1):
        doc = the_doc(crawled, NESTED[level], SITEMAP_INDEX)
        assert doc["layer"] == level
        assert entry_paths(crawled, doc) == [NESTED[level + 1]]  # read, though the last is not followed
        assert (doc["announced"] or {}).get("nesting", 0) == level
    assert fetched_under(crawled, "/nested/") == {NESTED[level]: level for level in range(MAX_NESTING + 1)}
    assert {entry.path for entry in crawled.log if entry.path.startswith("/nested/")} == set(NESTED[:MAX_NESTING + 1])


def test_a_billion_laughs_expands_nothing(crawled):
    doc = the_doc(crawled, LAUGHS, FEED)
    # The entity's first reference is a fault: the item before it is kept.
    assert_malformed(doc, "entity amplification")
    assert entry_paths(crawled, doc) == list(ARTICLES[LAUGHS])
    assert fetched_under(crawled, "/laughs/") == {LAUGHS: 0, **dict.fromkeys(ARTICLES[LAUGHS], 1)}


def test_an_external_entity_loads_no_file_and_no_dtd(crawled):
    doc = the_doc(crawled, XXE, FEED)
    assert (doc["error"], doc["error_kind"]) == (None, None)
    # The entity is left out: of a title that is nothing else, and of a
    # link, which is then no URL to follow.
    assert doc["entries"] == [[crawled.url(ARTICLES[XXE][0]), *doc["entries"][0][1:3], None, "en"]]
    assert fetched_under(crawled, "/xxe/") == {XXE: 0, **dict.fromkeys(ARTICLES[XXE], 1)}


def test_nothing_written_or_printed_holds_the_secret_or_an_expansion(crawled):
    # Every file of the run (records, db, XML, WARC, index, logs, mrjob's
    # scratch), gzip inflated and Parquet read, and what the run printed.
    files = [(path, text) for path, text in written_texts(crawled.directory) if path != crawled.secret_file]
    assert len(files) > 20 and any(crawled.url(XXE) in text for _, text in files)
    texts = [*files, ("stdout", crawled.result.stdout), ("stderr", crawled.result.stderr)]
    assert [str(where) for where, text in texts if crawled.secret in text] == []
    # The least expansion (of lol1) is ten laughs; base64 bodies could hold two by chance.
    assert [str(where) for where, text in texts if LAUGH * 10 in text] == []
    assert not any(crawled.secret in entry.path for entry in crawled.log)


def test_parsechecker_shows_a_feed_s_kind_entries_and_no_xml(tmp_path):
    secret_file = tmp_path / "secret.txt"
    secret_file.write_text("nothing\n", encoding="utf-8")
    with announce_fault_server(secret_file) as server:
        config = {"name": "check", "language": "en", "user_agent": USER_AGENT, "delay": 0.0,
                  "url_allow": [server.url_allow], "allow_private_networks": True}
        conf = tmp_path / "check.yaml"
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
        done = subprocess.run([sys.executable, "-m", "mrcrawl.parsechecker", server.url(FEED_AS_TEXT), "--conf",
                               str(conf)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert "kind             feed" in lines and "content_type     text/plain" in lines
    entries = [server.url(path) for path in ARTICLES[FEED_AS_TEXT]]
    assert f"== entries: {len(entries)} in scope, 0 trapped (trap guards), 0 out of scope (url_allow, url_deny) ==" \
        in lines
    assert [line.removeprefix("in   ") for line in lines if line.startswith("in   ")] == entries
    assert "charset      none (a feed: XML declares its own)" in lines
    assert lines[-1] == "(none: a feed is no page of the index)"
