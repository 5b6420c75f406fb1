"""`mrcrawl show DIR URL`: one URL of a real crawl, its record, headers, page,
main text and outlinks, against what the crawl stored and what the server
sent.

One depth-2 crawl of a small site on loopback serves every test: a home
page; an article reached both directly and through a same-host redirect
(two doc records of one URL on layer 1, of which Merge keeps one); a page
in windows-1251; a missing page; and a link out of the crawl's scope.
"""
from __future__ import annotations

import http.server
import json
import re
import shutil
import subprocess
import sys
import threading
from pathlib import Path
from types import SimpleNamespace

import pytest

from crawl_support import PageHandler, crawl, read_records, write_config, xml_pages
from mrcrawl.show import EXIT_NOT_HELD, EXIT_OK, EXIT_USAGE, main

ARTICLE_TEXT = ("The harbour bridge reopened on Monday after two years of repairs, and the first trams crossed "
                "it at dawn.", "The city council said the work came in under budget, which few had expected.")
ARTICLE = ("<html><head><title>The bridge reopens</title></head><body><nav><a href='/'>Home</a></nav><article>"
           f"<h1>The bridge reopens</h1><p>{ARTICLE_TEXT[0]}</p><p>{ARTICLE_TEXT[1]}</p></article>"
           "<p><a href='/cyrillic.html'>Новости</a> <a href='/private/drafts.html'>drafts</a></p></body></html>"
           ).encode("utf-8")
CYRILLIC_TEXT = "Мост через гавань снова открыт после двух лет ремонта, и первые трамваи прошли по нему на рассвете."
CYRILLIC = ("<html><head><title>Новости дня</title></head><body><article><h1>Новости дня</h1>"
            f"<p>{CYRILLIC_TEXT}</p></article></body></html>").encode("windows-1251")
MISSING = b"<html><body><p>No such page here.</p></body></html>"


class ShowSite(PageHandler):
    def do_GET(self):
        if self.path == "/":
            self.send_html(b"<html><head><title>Home</title></head><body><p><a href='/news/a.html'>the bridge</a> "
                           b"<a href='/old/a.html'>the bridge, by its old address</a> "
                           b"<a href='/cyrillic.html'>news</a> <a href='/missing.html'>gone</a> "
                           b"<a href='/private/drafts.html'>drafts</a></p></body></html>")
        elif self.path == "/news/a.html":
            self.send_html(ARTICLE)
        elif self.path == "/old/a.html":
            self.send_response(301)
            self.send_header("Location", "/news/a.html")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif self.path == "/cyrillic.html":
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=windows-1251")
            self.send_header("Content-Length", str(len(CYRILLIC)))
            self.end_headers()
            self.wfile.write(CYRILLIC)
        else:
            self.send_response(404)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(MISSING)))
            self.end_headers()
            self.wfile.write(MISSING)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("show")
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), ShowSite)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        home = f"http://127.0.0.1:{server.server_address[1]}/"
        config = {"language": "en", "user_agent": "mrcrawl-test/1.0 (+http://127.0.0.1/)", "delay": 0,
                  "retries": 0, "timeout": 2, "allow_private_networks": True, "url_deny": ["/private/"]}
        seeds, conf = write_config(directory / "inputs", config, [home])
        output = directory / "crawl"
        assert crawl(seeds, conf, output, 2) == 0
    finally:
        server.shutdown()
        server.server_close()
    return SimpleNamespace(output=output, home=home, article=home + "news/a.html", old=home + "old/a.html",
                           cyrillic=home + "cyrillic.html", missing=home + "missing.html")


def show(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mrcrawl.show", *map(str, argv)], capture_output=True, text=True,
                          timeout=60)


def sections(text: str) -> tuple[list[str], dict[str, tuple[str, list[str]]]]:
    """The lines before the first section, and each section's title and
    lines, by the title's first word."""
    head, found, lines = [], {}, None
    for line in text.splitlines():
        titled = re.fullmatch(r"== (.*) ==", line)
        if titled:
            lines = []
            found[titled.group(1).split()[0]] = (titled.group(1), lines)
        else:
            (head if lines is None else lines).append(line)
    return head, found


def fields(lines: list[str]) -> dict[str, str]:
    return dict(line.split(None, 1) for line in lines)


def shown(doc: dict, name: str) -> str:
    value = doc[name]
    return value if isinstance(value, str) else json.dumps(value)


def layer_records(output: Path, layer: int, url: str) -> list[dict]:
    return [doc for key, doc in read_records(output / "doc" / str(layer)) if key == url]


def test_a_page_with_two_records_shows_the_one_merge_kept_and_lists_both(crawled):
    done = show(crawled.output, crawled.article)
    assert (done.returncode, done.stderr) == (EXIT_OK, "")
    head, found = sections(done.stdout)
    [merged] = [doc for key, doc in read_records(crawled.output / "doc" / "merged") if key == crawled.article]
    requests = sorted(doc["requested_url"] for doc in layer_records(crawled.output, 1, crawled.article))
    assert requests == [crawled.article, crawled.old]  # two requests ended on the page
    assert merged["requested_url"] == crawled.article  # Merge's rule: the smaller requested URL
    assert head[0] == f"{crawled.article}: 2 record(s) in the crawl; shown: the one Merge kept, in doc/merged"
    assert re.fullmatch(rf"  doc/1 +fetched +requested as {re.escape(crawled.article)}  <- shown", head[1])
    assert re.fullmatch(rf"  doc/1 +fetched +requested as {re.escape(crawled.old)} and redirected here", head[2])
    title, record = found["record"]
    assert title == "record (doc/merged)"
    assert fields(record) == {name: shown(merged, name) for name in fields(record)}
    assert {"url", "requested_url", "layer", "outcome", "status", "fetched_at", "encoding"} <= fields(record).keys()
    _, headers = found["headers"]
    assert headers[0] == "HTTP/1.0 200 OK" and "Content-Type: text/html" in headers
    title, page = found["page"]
    assert title == f"page (utf-8, {len(ARTICLE)} bytes)"
    assert "\n".join(page) == ARTICLE.decode("utf-8")
    assert "text" not in found and "outlinks" not in found  # only when asked


def test_the_requested_url_of_a_redirect_shows_that_requests_record(crawled):
    done = show(crawled.output, crawled.old)
    assert done.returncode == EXIT_OK
    head, found = sections(done.stdout)
    assert head[0] == (f"{crawled.old}: 1 record(s) in the crawl; shown: the record of this request; "
                       "Merge kept another request's record of its page")
    title, record = found["record"]
    assert title == "record (doc/1)"
    assert fields(record)["requested_url"] == crawled.old and fields(record)["url"] == crawled.article
    assert fields(record)["redirect_from"] == crawled.old


def test_text_and_links_are_those_the_crawl_stored(crawled, capsys):
    """--text: the <content> of the page's XML; --links: its out record's outlinks."""
    assert main([str(crawled.output), crawled.article, "--text", "--links"]) == EXIT_OK
    _, found = sections(capsys.readouterr().out)
    _, text = found["main"]
    stored = xml_pages(crawled.output)[crawled.article]
    assert "\n".join(text) == stored.findtext("content") == "\n".join(ARTICLE_TEXT)
    [merged] = [doc for key, doc in read_records(crawled.output / "doc" / "merged") if key == crawled.article]
    [out] = [out for key, out in read_records(crawled.output / "out" / "1")
             if key == crawled.article and out["timestamp"] == merged["fetched_at"]]
    title, links = found["outlinks"]
    assert title == f"outlinks ({len(out['outlinks'])} links in the crawl's scope, out/1)"
    assert links == out["outlinks"] == [crawled.home, crawled.cyrillic]  # /private/ is out of scope


def test_a_page_in_another_charset_is_decoded_with_the_records(crawled, capsys):
    assert main([str(crawled.output), crawled.cyrillic, "--text"]) == EXIT_OK
    _, found = sections(capsys.readouterr().out)
    encoding = fields(found["record"][1])["encoding"]
    assert encoding in ("windows-1251", "cp1251")
    title, page = found["page"]
    assert title == f"page ({encoding}, {len(CYRILLIC)} bytes)"
    assert "\n".join(page) == CYRILLIC.decode("windows-1251")
    assert found["main"][1] == [CYRILLIC_TEXT]


def test_a_failed_url_shows_its_answer(crawled, capsys):
    assert main([str(crawled.output), crawled.missing, "--text", "--links"]) == EXIT_OK
    _, found = sections(capsys.readouterr().out)
    assert fields(found["record"][1])["outcome"] == "http_error"
    assert found["headers"][1][0] == "HTTP/1.0 404 Not Found"
    assert "\n".join(found["page"][1]) == MISSING.decode()
    assert found["main"][1] == ["(no main text: no page was fetched)"]
    assert found["outlinks"][1] == []


def test_the_url_is_put_in_canonical_form_as_the_crawl_put_it(crawled):
    spelled = crawled.article.replace("http://", "HTTP://").replace("/news/", "/news/./") + "#top"
    done = show(crawled.output, spelled)
    assert done.returncode == EXIT_OK
    assert done.stdout.startswith(f"{crawled.article}: 2 record(s)")


def test_before_merge_the_record_merges_rule_keeps_is_shown(crawled, tmp_path, capsys):
    """A crawl stopped before Merge has no doc/merged: the rule picks among the layers' records."""
    copy = shutil.copytree(crawled.output, tmp_path / "unmerged")
    shutil.rmtree(copy / "doc" / "merged")
    assert main([str(copy), crawled.article]) == EXIT_OK
    head, found = sections(capsys.readouterr().out)
    assert head[0].endswith("shown: the one Merge would keep (the crawl has not run Merge: there is no doc/merged)")
    assert found["record"][0] == "record (doc/1)"
    assert fields(found["record"][1])["requested_url"] == crawled.article


def snapshot(directory: Path) -> dict[str, tuple[int, int]]:
    return {str(path.relative_to(directory)): (path.stat().st_size, path.stat().st_mtime_ns)
            for path in sorted(directory.rglob("*"))}


def test_a_url_the_crawl_does_not_hold_and_bad_input_are_one_line(crawled, tmp_path):
    before = snapshot(crawled.output)
    nowhere = crawled.home + "nowhere.html"
    done = show(crawled.output, nowhere)
    assert (done.returncode, done.stdout) == (EXIT_NOT_HELD, "")
    assert done.stderr == (f"mrcrawl show: {nowhere}: not in the crawl in {crawled.output} "
                           "(no doc record on layers 0-1)\n")
    done = show(crawled.output, "ftp://127.0.0.1/file")
    assert (done.returncode, done.stderr) == (EXIT_USAGE,
                                              "mrcrawl show: ftp://127.0.0.1/file: not an absolute http(s) URL\n")
    done = show(tmp_path, crawled.article)
    assert (done.returncode, done.stderr) == (EXIT_USAGE, f"mrcrawl show: {tmp_path}: holds no crawl (no crawl.json)\n")
    done = show(crawled.output)
    assert done.returncode == EXIT_USAGE and done.stderr.endswith("the following arguments are required: URL\n")
    assert snapshot(crawled.output) == before and list(tmp_path.iterdir()) == []
