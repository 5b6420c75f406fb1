"""`mrcrawl.crawl()`, the crawl from Python: the same run as the command, its
result read from what it returns, and bad input refused before anything is
written."""
from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone

import pytest

import mrcrawl
from crawl_support import read_records, write_inputs
from mrcrawl.config import load_config
from mrcrawl.store.records import FETCHED, NOT_MODIFIED
from mrcrawl.testweb import start_test_web

DEPTH = 2
NOW = datetime(2026, 1, 5, 6, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    directory = tmp_path_factory.mktemp("api")
    with start_test_web(seed=3) as server:
        seeds, conf, _ = write_inputs(server, directory)
        output = directory / "crawl"
        result = mrcrawl.crawl(seeds, DEPTH, conf, output=str(output), now=NOW, export=("index",))
        again = mrcrawl.crawl(seeds, DEPTH, conf, output=str(output), resume=True)
        from_urls = mrcrawl.crawl(list(server.seeds), 1, load_config(conf), output=str(directory / "urls"))
    return result, again, from_urls, output


def test_a_crawl_returns_its_status_totals_and_stores(crawled):
    result, _, _, output = crawled
    assert result.status == 0 and result.ending is None
    assert (result.output, result.db) == (str(output), str(output / "db"))
    # The totals are every crawl step's outcomes, as stats.json counts them, and each doc store holds.
    docs = [doc for layer in range(DEPTH) for _, doc in read_records(output / "doc" / str(layer))]
    assert result.totals == Counter(doc["outcome"] for doc in docs)
    stats = json.loads((output / "stats.json").read_text(encoding="utf-8"))
    assert result.totals == sum((Counter(stats[f"crawl/{layer}"]["counters"]["outcome"]) for layer in range(DEPTH)),
                                Counter())
    assert result.pages == result.totals[FETCHED] + result.totals[NOT_MODIFIED] > 0
    assert result.stores == {"pages": str(output / "doc" / "merged"), "xml": str(output / "xml" / "2026_01_05_06_00_00"),
                             "index": str(output / "index")}
    assert any(part.stat().st_size for part in (output / "xml" / "2026_01_05_06_00_00").glob("part-*"))
    assert list((output / "index").glob("*.parquet"))


def test_a_resume_of_a_finished_crawl_runs_nothing_again_and_says_the_same(crawled):
    result, again, _, _ = crawled
    assert again.status == 0 and again.totals == result.totals
    assert set(again.stores) == {"pages", "xml"}


def test_seeds_may_be_a_list_of_urls_and_the_config_a_checked_config(crawled):
    _, _, from_urls, _ = crawled
    assert from_urls.status == 0 and from_urls.totals[FETCHED] > 0


@pytest.mark.parametrize("keywords, says", [
    ({"depth": 0}, "--depth: must be at least 1, got 0"),
    ({"runner": "yarn"}, "--runner yarn: unknown"),
    ({"export": ("pdf",)}, "--export pdf: unknown"),
])
def test_bad_arguments_raise_usage_error_and_write_nothing(tmp_path, keywords, says):
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.2:9/\n", encoding="utf-8")
    conf = tmp_path / "c.yaml"
    conf.write_text("language: en\nuser_agent: mrcrawl-test/1.0\n", encoding="utf-8")
    arguments = {"depth": 1, **keywords}
    with pytest.raises(mrcrawl.UsageError, match=says):
        mrcrawl.crawl(seeds, arguments.pop("depth"), conf, output=str(tmp_path / "out"), **arguments)
    assert not (tmp_path / "out").exists()


def test_a_bad_config_raises_config_error_naming_the_key(tmp_path):
    conf = tmp_path / "c.yaml"
    conf.write_text("language: en\nuser_agent: mrcrawl-test/1.0\ndealy: 2\n", encoding="utf-8")
    with pytest.raises(mrcrawl.ConfigError, match="dealy: unknown key"):
        mrcrawl.crawl(["http://127.0.0.2:9/"], 1, conf, output=str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()
