"""The same crawl on every runner: inline, local and Spark give equivalent stores."""
from __future__ import annotations

import re
import tempfile

import pytest
from lxml import etree

from crawl_support import crawl, read_records, write_inputs
from mrcrawl.store.records import NETWORK_ERROR
from mrcrawl.testweb import start_test_web

DEPTH = 3
# At depth 2 every job of a crawl runs (each layer's, the Optimizer's between
# two layers, Merge and HtmlToXml); on Spark each is a spark-submit of its own.
SPARK_DEPTH = 2
# What legitimately differs between two crawls of one web: when things
# happened, and the Date header the server stamps on each response.
TIMING_FIELDS = ("fetched_at", "timestamp", "headers")


def comparable(record: dict) -> str:
    kept = {key: value for key, value in record.items() if key not in TIMING_FIELDS}
    if record.get("outcome") == NETWORK_ERROR:
        kept["error"] = record["error"].split(":", 1)[0]  # the exception type; its text names sockets
    return repr(sorted(kept.items()))


def stores_of(output, depth: int) -> dict:
    """Every store of a crawl, in a form that ignores order and timing."""
    stores = {}
    for name in [f"doc/{layer}" for layer in range(depth)] + [f"out/{layer}" for layer in range(depth)] + ["doc/merged"]:
        stores[name] = sorted(f"{key}\t{comparable(value)}" for key, value in read_records(output / name))
    for layer in range(depth):
        parts = (output / "in" / str(layer)).glob("part-*")
        stores[f"in/{layer}"] = sorted(line for part in parts for line in part.read_text(encoding="utf-8").splitlines())
    pages = {}
    for part in next((output / "xml").iterdir()).glob("part-*"):
        for line in part.read_text(encoding="utf-8").splitlines():
            url, xml = line.split("\t", 1)
            page = etree.fromstring(xml.encode("utf-8"))
            del page.attrib["fetched_at"]
            pages[url] = etree.tostring(page, encoding="unicode")
    stores["xml"] = pages
    return stores


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1) as server:
        yield server


@pytest.fixture(scope="module")
def inline_stores(server, tmp_path_factory):
    """The inline crawl's stores at a depth, each crawled once."""
    crawled = {}

    def at_depth(depth: int) -> dict:
        if depth not in crawled:
            crawled[depth] = crawl_with(server, tmp_path_factory.mktemp("inline"), "inline", depth)
        return crawled[depth]
    return at_depth


def crawl_with(server, directory, runner: str, depth: int, *extra: str) -> dict:
    server.reset_flaky()  # each crawl meets the flaky pages' first failure
    seeds, conf, _ = write_inputs(server, directory)
    assert crawl(seeds, conf, directory / "crawl", depth, runner, *extra) == 0
    return stores_of(directory / "crawl", depth)


@pytest.fixture
def temp_dir(tmp_path, monkeypatch):
    """The temporary directory the crawl's runners see: it must be left empty."""
    directory = tmp_path / "temp"
    directory.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(directory))
    return directory


def test_local_runner_equals_inline(server, inline_stores, tmp_path, temp_dir):
    assert crawl_with(server, tmp_path, "local", DEPTH) == inline_stores(DEPTH)
    assert not list(temp_dir.iterdir())  # daily runs must not pile up leftovers


def test_spark_runner_equals_inline(server, inline_stores, tmp_path, temp_dir, capsys):
    spark_stores = crawl_with(server, tmp_path, "spark", SPARK_DEPTH, "--spark-master", "local[2]", "--reducers", "2",
                              "--progress-every", "5")
    assert spark_stores == inline_stores(SPARK_DEPTH)
    assert not list(temp_dir.iterdir())  # daily runs must not pile up leftovers
    said = capsys.readouterr().err.splitlines()
    # While a step runs, the progress lines show Spark's finished tasks, as spark-submit logs them.
    assert any(re.match(r"\w+/[\d-]+: stage [\d.]+: \d+/\d+ tasks; \d+ s elapsed$", line) for line in said), said
    # Spark's and Hadoop's own warnings, which mrjob relays, are hidden without -v.
    assert not [line for line in said if line.startswith("mrjob")], said
