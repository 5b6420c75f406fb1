"""The same crawl on every runner: inline and local give equivalent stores
(Spark's, on a standalone cluster, are compared in test_spark_cluster.py)."""
from __future__ import annotations

import tempfile

import pytest
from lxml import etree

from crawl_support import crawl, read_records, write_inputs
from mrcrawl.store.records import NETWORK_ERROR
from mrcrawl.testweb import start_test_web

DEPTH = 3
# What legitimately differs between two crawls of one web: when things
# happened, and the Date header the server stamps on each response.
TIMING_FIELDS = ("fetched_at", "timestamp", "headers")
# Spark sums the link shares of a URL's score in the order its shuffle
# delivers them, so a score may differ from another runner's in its last
# bits: scores are compared to this many significant digits.
SCORE_DIGITS = 12


def rounded(value):
    """A JSON value with its every float to SCORE_DIGITS significant digits."""
    if isinstance(value, float):
        return float(f"{value:.{SCORE_DIGITS}g}")
    if isinstance(value, dict):
        return {key: rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [rounded(item) for item in value]
    return value


def comparable(record: dict) -> str:
    kept = {key: rounded(value) for key, value in record.items() if key not in TIMING_FIELDS}
    if record.get("outcome") == NETWORK_ERROR:
        kept["error"] = record["error"].split(":", 1)[0]  # the exception type; its text names sockets
    return repr(sorted(kept.items()))


def stores_of(output, depth: int) -> dict:
    """Every store of a crawl, in a form that ignores order, timing and the last bits of scores."""
    stores = {}
    for name in [f"doc/{layer}" for layer in range(depth)] + [f"out/{layer}" for layer in range(depth)] + ["doc/merged"]:
        stores[name] = sorted(f"{key}\t{comparable(value)}" for key, value in read_records(output / name))
    for layer in range(depth):
        stores[f"in/{layer}"] = sorted(f"{key}\t{rounded(entry)}" for key, entry in read_records(output / "in" / str(layer)))
    pages = {}
    for part in next((output / "xml").iterdir()).glob("part-*"):
        for line in part.read_text(encoding="utf-8").splitlines():
            url, xml = line.split("\t", 1)
            page = etree.fromstring(xml.encode("utf-8"))
            del page.attrib["fetched_at"]
            if "score" in page.attrib:
                page.attrib["score"] = repr(rounded(float(page.attrib["score"])))
            pages[url] = etree.tostring(page, encoding="unicode")
    stores["xml"] = pages
    return stores


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1) as server:
        yield server


@pytest.fixture(scope="module")
def inline_stores(server, tmp_path_factory):
    return crawl_with(server, tmp_path_factory.mktemp("inline"), "inline", DEPTH)


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
    assert crawl_with(server, tmp_path, "local", DEPTH) == inline_stores
    assert not list(temp_dir.iterdir())  # daily runs must not pile up leftovers

