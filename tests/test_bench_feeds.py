"""The benchmark's feeds scenario at --quick's size: our feed and sitemap
parser against the libraries installed, on documents with a known answer
and on large ones.

No speed is asserted (the machine is shared); what is asserted holds on any
machine: every document was scored against its expected answer, our parser
gets every one right, each library's speed is a ratio to ours, and
feedparser's own test feeds are read with the expectations their headers
state.  The suite's feeds are written here in its layout, as a clone of it
holds them.
"""
from __future__ import annotations

import subprocess
import sys

import pytest

from mrcrawl.bench.feeds import (OURS, QUICK_FEEDS, READERS, available_readers, cases, checks_of, feeds,
                                 feeds_note, large_documents, suite_feeds)
from mrcrawl.bench.scenarios import ROW_KEYS

SUITE_FEEDS = {
    # An entry with a link and a title: both checked.
    "wellformed/rss/item_title_and_link.xml": """<!--
Description: item title and link
Expect:      not bozo and entries[0]['title'] == 'Tom &amp; Jerry' and entries[0]['link'] == 'http://www.example.com/a'
-->
<rss version="2.0"><channel><item><title>Tom &amp;amp; Jerry</title><link>http://www.example.com/a</link></item>
</channel></rss>
""",
    # A relative link, resolved against where feedparser's harness serves the file.
    "wellformed/atom10/entry_link_relative.xml": """<!--
Description: relative entry link
Expect:      not bozo and entries[0]['links'][0]['href'] == 'http://127.0.0.1:8097/tests/wellformed/atom10/b.html'
-->
<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="alternate" href="b.html"/>
<published>2004-01-01T19:48:21Z</published></entry></feed>
""",
    # A date on a linked entry.
    "wellformed/rss/item_pubDate_linked.xml": """<!--
Description: item pubDate
Expect:      not bozo and entries[0]['published_parsed'] == (2004, 1, 1, 19, 48, 21, 3, 1, 0)
-->
<rss version="2.0"><channel><item><link>http://www.example.com/c</link>
<pubDate>Thu, 01 Jan 2004 19:48:21 GMT</pubDate></item></channel></rss>
""",
    # Not counted: the entry has no link (our parser leaves such entries out),
    # a licence link is not the entry's link, and sanitizing is not our job.
    "wellformed/rss/item_title_only.xml": """<!--
Description: item title
Expect:      not bozo and entries[0]['title'] == 'Item title'
-->
<rss version="2.0"><channel><item><title>Item title</title></item></channel></rss>
""",
    "wellformed/atom10/entry_link_rel_license.xml": """<!--
Description: licence link
Expect:      not bozo and entries[0]['links'][0]['rel'] == 'license' and entries[0]['links'][0]['href'] == 'http://x.example/l'
-->
<feed xmlns="http://www.w3.org/2005/Atom"><entry><link rel="license" href="http://x.example/l"/></entry></feed>
""",
    "wellformed/sanitize/entry_title_script.xml": """<!--
Description: sanitized title
Expect:      not bozo and entries[0]['title'] == 'safe'
-->
<rss version="2.0"><channel><item><title>safe&lt;script&gt;x&lt;/script&gt;</title><link>http://e.example/</link></item>
</channel></rss>
""",
}


@pytest.fixture(scope="module")
def suite(tmp_path_factory):
    root = tmp_path_factory.mktemp("feedparser")
    for name, text in SUITE_FEEDS.items():
        path = root / "tests" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def rows(suite, tmp_path_factory):
    return feeds(QUICK_FEEDS, tmp_path_factory.mktemp("bench-feeds"), say=print, real_feeds=suite)


def rows_of(rows, name):
    return {row["runner"]: row for row in rows if row["name"] == name}


def test_every_reader_is_scored_on_every_case_in_the_table_shape(rows):
    readers, _ = available_readers()
    assert OURS in {reader.name for reader in readers}
    scored = rows_of(rows, "feeds cases")
    assert list(scored) == [reader.name for reader in readers]
    expected_entries = sum(len(case.expected) for case in cases())
    for row in rows:
        assert set(ROW_KEYS) <= set(row), row["name"]
        assert row["name"].startswith("feeds ") and feeds_note(row).startswith(row["name"])
    for row in scored.values():
        assert row["documents"] == len(cases()) and row["entries"] == expected_entries == row["links"]


def test_ours_reads_every_case_right(rows):
    ours = rows_of(rows, "feeds cases")[OURS]
    assert ours["documents_read"] == ours["documents"] and ours["entries_found"] == ours["entries"]
    assert (ours["links_right"], ours["dates_right"], ours["titles_right"]) == (
        ours["links"], ours["dates"], ours["titles"])
    assert ours["dates"] > 0 and ours["titles"] > 0 and ours["failed"] == []


def test_a_feed_library_reads_no_sitemap_and_lxml_plain_no_feed(rows):
    scored = rows_of(rows, "feeds cases")
    if "feedparser" in scored:
        assert "sitemap" in scored["feedparser"]["failed"] and "rss2" not in scored["feedparser"]["failed"]
    assert {"rss2", "rss1", "atom"} <= set(scored["lxml-plain"]["failed"])
    assert "sitemap" not in scored["lxml-plain"]["failed"]


def test_feedparsers_suite_counts_the_checks_on_linked_entries_only(suite, rows):
    feeds_read = suite_feeds(suite)
    assert sorted(feed.name for feed in feeds_read) == ["wellformed/atom10/entry_link_relative.xml",
                                                        "wellformed/rss/item_pubDate_linked.xml",
                                                        "wellformed/rss/item_title_and_link.xml"]
    ours = rows_of(rows, "feeds real")[OURS]
    assert (ours["documents"], ours["links"], ours["titles"], ours["dates"]) == (3, 2, 1, 1)
    assert (ours["links_right"], ours["titles_right"], ours["dates_right"]) == (2, 1, 1)


def test_an_expectation_is_read_as_the_crawler_compares():
    url = "http://127.0.0.1:8097/tests/x.xml"
    (link,) = checks_of("entries[0]['link'] == entries[1]['link'] == '/y'", url)[:1]
    assert (link.entry, link.field, link.expected) == (0, "link", "http://127.0.0.1:8097/y")
    (title,) = checks_of("not bozo and entries[0]['title_detail']['value'] == '&#38; <b>x</b>'", url)
    assert title.expected == "& x"
    (date,) = checks_of("entries[0]['updated_parsed'] == (2003, 12, 31, 10, 14, 55, 2, 365, 0)", url)
    assert date.expected == "2003-12-31T10:14:55Z"
    assert checks_of("feed['title'] == 'x'", url) == [] and checks_of("not valid python ((", url) == []


def test_speed_rows_give_each_reader_as_a_ratio_to_ours(rows):
    for document in large_documents(QUICK_FEEDS):
        timed = rows_of(rows, f"feeds speed {document.name}")
        assert timed[OURS]["ratio_to_peer"] == 1.0
        for row in timed.values():
            # Only a reader that read the document has a row, and it read it right.
            assert row["pages"] == row["entries"] == len(document.expected) == row["links_right"]
            assert row["pages_per_s"] > 0
            assert row["ratio_to_peer"] == pytest.approx(row["pages_per_s"] / timed[OURS]["pages_per_s"])
        assert ("lxml-plain" in timed) == ("sitemap" in document.name)


def test_the_command_runs_the_scenario_and_refuses_a_directory_that_is_no_suite(suite, tmp_path):
    result = subprocess.run([sys.executable, "-m", "mrcrawl.bench", "--quick", "--scenarios", "feeds",
                             "--real-feeds", str(suite)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "feeds cases" in result.stdout and "feeds real" in result.stdout and "feeds speed" in result.stdout
    refused = subprocess.run([sys.executable, "-m", "mrcrawl.bench", "--scenarios", "feeds",
                              "--real-feeds", str(tmp_path)], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--real-feeds" in refused.stderr and "feedparser" in refused.stderr
    assert len(READERS) == 5
