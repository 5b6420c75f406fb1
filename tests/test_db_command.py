"""`mrcrawl db` as an operator runs it: given the crawl directory rather than
its db, given a URL as a person types it, and piped into a reader that stops
reading early (`| head`).

What the commands read out of a db is checked against the db itself in
tests/test_crawldb.py.
"""
from __future__ import annotations

import json
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from crawl_support import crawl, write_inputs
from mrcrawl.bench.db_update import NewsDb, article_url, write_db
from mrcrawl.testweb import start_test_web
from test_cli import CONSOLE_SCRIPT, STDOUT_BUFFERING, STDOUT_CLOSED, into_closed_pipe

NOW = "2026-01-06T06:00:00.000Z"


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    """A depth-1 crawl of the test web whose db is not in the crawl
    directory (--db): only its crawl.json says where the db is."""
    directory = tmp_path_factory.mktemp("db-command")
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, directory)
        output, db = directory / "crawl", directory / "shared-db"
        assert crawl(seeds, conf, output, 1, "inline", "--db", str(db)) == 0
        return SimpleNamespace(output=output, db=db, seeds=list(server.seeds))


def db_command(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(CONSOLE_SCRIPT), "db", *args], capture_output=True, text=True, timeout=120)


def test_every_db_command_given_a_crawl_directory_reads_the_db_its_crawl_json_names(crawled):
    assert not (crawled.output / "db").exists()
    for command in (["stats", "--now", NOW], ["dump"], ["get", crawled.seeds[0]]):
        from_the_db = db_command(command[0], str(crawled.db), *command[1:])
        from_the_crawl = db_command(command[0], str(crawled.output), *command[1:])
        assert from_the_db.returncode == 0 and from_the_db.stdout, from_the_db.stderr
        assert (from_the_crawl.returncode, from_the_crawl.stderr) == (0, ""), command
        assert from_the_crawl.stdout == from_the_db.stdout, command
        if command[0] == "stats":  # which names the db it read
            assert from_the_crawl.stdout.startswith(f"{crawled.db}: ")


def test_a_crawl_directory_whose_crawl_json_is_unreadable_is_refused(tmp_path):
    directory = tmp_path / "crawl"
    directory.mkdir()
    (directory / "crawl.json").write_text("{}\n", encoding="utf-8")
    refused = db_command("stats", str(directory))
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr.startswith(f"mrcrawl db: {directory / 'crawl.json'}: ") and refused.stderr.count("\n") == 1


def test_get_finds_a_url_in_any_spelling_the_crawl_puts_in_canonical_form(crawled):
    """The seed http://127.0.0.2:PORT/ as a person may type it: without its
    trailing slash, in capitals, with a fragment; the db holds it once."""
    seed = crawled.seeds[0]
    assert seed.endswith("/") and seed.startswith("http://127.0.0.2:")
    stored = db_command("get", str(crawled.db), seed)
    assert stored.returncode == 0 and json.loads(stored.stdout)["url"] == seed
    for typed in (seed.rstrip("/"), seed.upper(), seed + "#top", seed + "?"):
        found = db_command("get", str(crawled.db), typed)
        assert (found.returncode, found.stdout, found.stderr) == (0, stored.stdout, ""), typed
    missing = db_command("get", str(crawled.db), seed + "never-linked")
    assert (missing.returncode, missing.stdout) == (1, "")
    assert missing.stderr == f"mrcrawl db: {seed}never-linked: not in {crawled.db}\n"
    refused = db_command("get", str(crawled.db), "mailto:someone@127.0.0.2")
    assert (refused.returncode, refused.stdout) == (2, "")
    assert refused.stderr == "mrcrawl db: get: mailto:someone@127.0.0.2: not an absolute http or https URL\n"


# ---- a reader that stops early --------------------------------------------------------------------

@pytest.fixture(scope="module")
def large_db(tmp_path_factory) -> Path:
    """A db of 2,000 news articles written as the crawler keeps them: about
    2 MB of dump, many times what a pipe holds."""
    db = tmp_path_factory.mktemp("large-db") / "db"
    write_db(db, NewsDb(urls=2000, urls_per_host=100, fetches=0, new_urls=0, partitions=4), NOW)
    return db


@pytest.mark.parametrize("buffering", STDOUT_BUFFERING)
def test_a_dump_piped_into_head_ends_quietly(large_db, buffering):
    """`mrcrawl db dump DB | head -1`: head takes its line and goes; the
    dump, still writing, ends with no traceback, as `cat` would."""
    dump = subprocess.Popen([str(CONSOLE_SCRIPT), "db", "dump", str(large_db)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=STDOUT_BUFFERING[buffering])
    head = subprocess.run(["head", "-1"], stdin=dump.stdout, capture_output=True, timeout=120)
    dump.stdout.close()  # head's is now the one reading end
    said = dump.stderr.read().decode()
    assert dump.wait(timeout=120) == STDOUT_CLOSED, said
    assert said == ""
    assert json.loads(head.stdout)["url"].startswith("https://www.news")


@pytest.mark.parametrize("buffering", STDOUT_BUFFERING)
@pytest.mark.parametrize("command", [["stats", "--now", NOW], ["get", article_url(0, 0)], ["dump"]],
                         ids=lambda command: command[0])
def test_every_db_command_ends_quietly_when_its_reader_has_gone(large_db, command, buffering):
    """Whatever a command prints, small or large, it meets a reader that
    closed the pipe before reading: exit 141 (as a shell reports `cat` ended
    by SIGPIPE), and nothing on stderr."""
    ended = into_closed_pipe([str(CONSOLE_SCRIPT), "db", command[0], str(large_db), *command[1:]], buffering)
    assert (ended.returncode, ended.stderr) == (STDOUT_CLOSED, "")
