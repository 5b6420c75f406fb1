"""The `pagerank` order on a db's first run: under a topN, a layer takes the
URLs the fetched pages link most (their provisional scores, as the oracle
below computes them from the test web's model), and the popular site's main
pages, which every other site's home page links, come first.
"""
from __future__ import annotations

import subprocess
from types import SimpleNamespace

import pytest
import yaml

from crawl_support import driver_command, layer_docs, read_records, write_inputs
from mrcrawl.frontier.scores import TELEPORT
from mrcrawl.store.records import DEFERRED_BY_LAYER_CAP, FETCHED
from mrcrawl.testweb.server import TestWebServer
from mrcrawl.testweb.sites import POPULAR_PAGES
from mrcrawl.testweb.web import generate_web
from test_scores import linking, model_links

HOSTS = 10  # the test web's 8, a popular site and a link farm
TOPN = 5
NOW = "2026-03-02T06:00:00Z"


def farm_web(port: int):
    return generate_web(1, HOSTS, port=port, link_farm=True)


@pytest.fixture(scope="module")
def first_run(tmp_path_factory):
    """One run, two layers deep, of the web with the popular site, with a topN, ordered by PageRank."""
    directory = tmp_path_factory.mktemp("order")
    with TestWebServer(hosts=HOSTS, web_factory=farm_web) as server:
        seeds, conf, config = write_inputs(server, directory)
        config = {**config, "order": "pagerank", "max_urls_per_layer": TOPN}
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
        output = directory / "crawl"
        run = subprocess.run(driver_command(seeds, conf, output, 2, "--db", str(directory / "db"), "--now", NOW),
                             capture_output=True, text=True)
        assert run.returncode == 0, run.stderr
        yield SimpleNamespace(web=server.web, config=config, output=output, seeds=set(server.seeds))


def provisional_scores(first_run) -> dict[str, float]:
    """The oracle: each URL that layer 0's fetched pages link, with the score
    a db's first run gives it, e·s0 + (1 − e)·Σ s0 / outdeg(q) over the pages
    q linking it, where s0 = 1 (the db held no URL) stands for every
    unscored page's score."""
    fetched = {doc["url"] for doc in layer_docs(first_run.output, 0) if doc["outcome"] == FETCHED}
    links = {page: model_links(first_run.web, first_run.config, page) for page in fetched}
    return {url: TELEPORT + (1 - TELEPORT) * sum(1 / len(links[page]) for page in pages)
            for url, pages in linking(links).items()}


def test_a_capped_layer_takes_the_urls_of_the_highest_provisional_scores(first_run):
    predicted = provisional_scores(first_run)
    entries = {url: entry for url, entry in read_records(first_run.output / "in" / "1") if not entry["seed"]}
    assert len(entries) > TOPN  # the cap had a choice to make
    for url, entry in entries.items():
        assert entry["score"] == pytest.approx(predicted[url], rel=1e-9), url
    kept = [predicted[url] for url, entry in entries.items() if not entry["deferred"]]
    held = [predicted[url] for url, entry in entries.items() if entry["deferred"] == DEFERRED_BY_LAYER_CAP]
    assert 0 < len(kept) <= TOPN and held
    assert min(kept) >= max(held) - 1e-12, (sorted(kept), sorted(held)[-5:])


def test_the_popular_sites_main_pages_come_first(first_run):
    popular = first_run.web.role("popular")
    main_pages = {popular.url(path) for path in POPULAR_PAGES} - first_run.seeds
    entries = dict(read_records(first_run.output / "in" / "1"))
    assert main_pages and main_pages <= set(entries)
    assert all(not entries[url]["deferred"] for url in main_pages)
    assert main_pages <= {doc["requested_url"] for doc in layer_docs(first_run.output, 1)}
