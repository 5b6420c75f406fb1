"""`mrcrawl inject DB SEEDS`: URLs added to a crawl db without crawling, on a
real web on loopback, with the real DbUpdate job and the real crawl after it.

A crawl of the web's home page fetches it and the page it links, and
learns of a page beyond its depth; then an inject of the home page, that
page beyond, and a page no page links; then a crawl of the home page alone
fetches both injected pages the db had never fetched on its first layer,
and the home page's record kept its history through the inject.
"""
from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
import yaml

from crawl_support import crawl, db_records, layer_docs
from mrcrawl import inject
from mrcrawl.store.records import FETCHED, UNFETCHED, iso_utc
from mrcrawl.testweb import AGENT_TOKEN, Host, Page, Robots, RobotsGroup, Web
from mrcrawl.testweb.server import TestWebServer

CONSOLE_SCRIPT = Path(sys.executable).parent / "mrcrawl"
FIRST_CRAWL = datetime(2026, 1, 5, 6, tzinfo=timezone.utc)
INJECTED_AT = FIRST_CRAWL + timedelta(hours=1)
SECOND_CRAWL = FIRST_CRAWL + timedelta(hours=2)  # before anything the first crawl fetched is due again


def page(host: Host, path: str, *links: str) -> Page:
    anchors = "".join(f'<p><a href="{link}">{link}</a></p>' for link in links)
    body = f"<!DOCTYPE html><html><head><title>{path}</title></head><body><p>The page {path}.</p>{anchors}</body></html>"
    return Page(url=host.url(path), kind="test", body=body.encode(), links=tuple(host.url(link) for link in links))


def build(port: int) -> Web:
    host = Host("127.0.0.2", port, "inject", Robots(200, (RobotsGroup(("*",), allow=("/",)),)))
    pages = [page(host, "/", "/linked"), page(host, "/linked", "/beyond"), page(host, "/beyond"),
             page(host, "/orphan")]  # no page links /orphan
    return Web(seed=0, port=port, hosts=(host,), pages={p.url: p for p in pages}, seed_urls=(pages[0].url,),
               seed_spellings={})


def write_config(directory: Path, web: Web) -> Path:
    conf = directory / "web.yaml"
    config = web.crawl_config(delay=0.0)
    conf.write_text(yaml.safe_dump({**config, "user_agent": f"{AGENT_TOKEN}/1.0"}), encoding="utf-8")
    return conf


def records(db: Path) -> dict[str, dict]:
    return dict(db_records(db))


@pytest.fixture(scope="module")
def injected(tmp_path_factory):
    directory = tmp_path_factory.mktemp("inject")
    db = directory / "db"
    with TestWebServer(hosts=1, web_factory=build) as server:
        web = server.web
        home, beyond, orphan = (web.hosts[0].url(path) for path in ("/", "/beyond", "/orphan"))
        conf = write_config(directory, web)
        seeds = directory / "seeds.txt"
        seeds.write_text(home + "\n", encoding="utf-8")
        assert crawl(seeds, conf, directory / "first", 2, "inline", "--db", str(db),
                     "--now", FIRST_CRAWL.isoformat()) == 0
        before = records(db)
        injections = directory / "inject.txt"
        injections.write_bytes(
            f"# pages to crawl next\n{home}\n{beyond}  nutch.score=2.0  # found beyond the depth\n".encode()
            + b"http://127.0.0.2/caf\xe9\n"  # Latin-1, not UTF-8
            + f"http://elsewhere.example/\n{orphan}\n".encode())
        done = subprocess.run([str(CONSOLE_SCRIPT), "inject", str(db), str(injections), "--conf", str(conf),
                               "--now", INJECTED_AT.isoformat()], capture_output=True, text=True, timeout=120)
        after = records(db)
        again = subprocess.run([sys.executable, "-m", "mrcrawl.inject", str(db), str(injections), "--conf", str(conf),
                                "--now", INJECTED_AT.isoformat(), "--runner", "local"],
                               capture_output=True, text=True, timeout=120)
        after_again = records(db)
        server.clear_log()
        assert crawl(seeds, conf, directory / "second", 1, "inline", "--db", str(db),
                     "--now", SECOND_CRAWL.isoformat()) == 0
        server.wait_idle()
        requested = [entry.path for entry in server.log]
    return dict(db=db, home=home, beyond=beyond, orphan=orphan, before=before, done=done, after=after, again=again,
                after_again=after_again, second=directory / "second", requested=requested)


def test_the_first_crawl_left_the_page_beyond_its_depth_unfetched(injected):
    assert injected["before"][injected["home"]]["status"] == FETCHED
    assert injected["before"][injected["beyond"]]["status"] == UNFETCHED
    assert injected["before"][injected["beyond"]]["due_at"] is None
    assert injected["orphan"] not in injected["before"]


def test_inject_adds_new_urls_and_makes_never_fetched_ones_due(injected):
    done = injected["done"]
    assert done.returncode == 0, done.stderr
    assert done.stdout == ""
    due = iso_utc(INJECTED_AT)
    orphan, beyond = injected["after"][injected["orphan"]], injected["after"][injected["beyond"]]
    assert (orphan["status"], orphan["due_at"], orphan["hops"], orphan["fetch_count"]) == (UNFETCHED, due, 0, 0)
    assert (beyond["status"], beyond["due_at"], beyond["hops"]) == (UNFETCHED, due, 0)
    assert {key: value for key, value in beyond.items() if key not in ("due_at", "hops")} == {
        key: value for key, value in injected["before"][injected["beyond"]].items() if key not in ("due_at", "hops")}


def test_inject_leaves_a_fetched_url_as_it_was(injected):
    home = injected["home"]
    assert injected["after"][home] == injected["before"][home]
    # Nothing else the db held changed either.
    assert {url: record for url, record in injected["after"].items() if url not in (injected["orphan"], injected["beyond"])} \
        == {url: record for url, record in injected["before"].items() if url != injected["beyond"]}


def test_inject_reads_seed_lines_and_says_what_it_dropped_with_line_numbers(injected):
    said = injected["done"].stderr.splitlines()
    assert any(line.endswith(":3: ignored the metadata nutch.score of " + injected["beyond"]
                             + ": the crawl uses no seed metadata") for line in said), said
    assert any(line.endswith(":4: skipped: not UTF-8 text") for line in said), said
    assert any(line.endswith(":5: skipped http://elsewhere.example/: outside url_allow/url_deny") for line in said), said
    assert said[-1].startswith("inject: 3 URLs from ") and "1 added" in said[-1] and "2 the db held already" in said[-1]


def test_a_second_inject_of_the_same_urls_changes_nothing(injected):
    assert injected["again"].returncode == 0, injected["again"].stderr
    assert injected["after_again"] == injected["after"]


def test_the_next_crawl_fetches_the_injected_urls_on_its_first_layer(injected):
    fetched = {doc["url"]: doc["outcome"] for doc in layer_docs(injected["second"], 0)}
    assert fetched == {injected["home"]: FETCHED, injected["orphan"]: FETCHED, injected["beyond"]: FETCHED}
    assert "/orphan" in injected["requested"] and "/beyond" in injected["requested"]
    assert "/linked" not in injected["requested"]  # fetched by the first crawl, and not yet due
    crawled = records(injected["db"])
    assert crawled[injected["orphan"]]["status"] == FETCHED and crawled[injected["orphan"]]["fetch_count"] == 1


# ---- the db's lock, and an inject that dies midway ----------------------------------------------

def write_inputs(tmp_path: Path) -> tuple[Path, Path]:
    conf = tmp_path / "c.yaml"
    conf.write_text("language: en\nuser_agent: mrcrawl-test/1.0\nurl_allow: ['^http://127\\.0\\.0\\.2:9/']\n",
                    encoding="utf-8")
    seeds = tmp_path / "urls.txt"
    seeds.write_text("http://127.0.0.2:9/a\nhttp://127.0.0.2:9/b\n", encoding="utf-8")
    return seeds, conf


def test_an_inject_into_a_db_in_use_is_refused(tmp_path):
    seeds, conf = write_inputs(tmp_path)
    db = tmp_path / "db"
    db.mkdir()
    with open(db / ".lock", "w") as held:  # the lock a running crawl holds
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        status = inject.main([str(db), str(seeds), "--conf", str(conf)])
    assert status == inject.EXIT_USAGE
    assert sorted(path.name for path in db.iterdir()) == [".lock"]


def test_an_inject_killed_before_its_commit_leaves_the_db_as_it_was(tmp_path):
    seeds, conf = write_inputs(tmp_path)
    db = tmp_path / "db"
    assert inject.main([str(db), str(seeds), "--conf", str(conf), "--now", "2026-01-05T06:00:00Z"]) == inject.EXIT_OK
    meta, stored = (db / "db.json").read_text(), records(db)
    seeds.write_text("http://127.0.0.2:9/c\n", encoding="utf-8")
    command = [sys.executable, "-m", "mrcrawl.inject", str(db), str(seeds), "--conf", str(conf)]
    process = subprocess.Popen(command, env={**os.environ, "MRCRAWL_PAUSE_AT": "written inject"},
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 120
        while Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
            assert process.poll() is None and time.monotonic() < deadline, process.stderr.read()
            time.sleep(0.05)
        assert (db / "gen-000002").is_dir()  # the next generation, written and not committed
    finally:
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    assert (db / "db.json").read_text() == meta and records(db) == stored
    assert inject.main([str(db), str(seeds), "--conf", str(conf)]) == inject.EXIT_OK
    assert set(records(db)) == {"http://127.0.0.2:9/a", "http://127.0.0.2:9/b", "http://127.0.0.2:9/c"}
    # The killed run's generation was written again, and committed.
    assert sorted(path.name for path in db.iterdir() if path.name.startswith("gen-")) == ["gen-000002"]
    assert json.loads((db / "db.json").read_text())["applied"] is None  # no crawl update applied yet
