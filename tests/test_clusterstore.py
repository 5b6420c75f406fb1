"""The crawl directory through mrjob's filesystems, on file:/// URIs (what HDFS and S3 roots take)."""
import json

from mrcrawl.store.cluster_store import ClusterCrawlStore, is_cluster_path
from mrcrawl.store.crawl_state import CrawlState, StepName


def test_uris_are_cluster_paths_and_local_paths_are_not(tmp_path):
    assert is_cluster_path("hdfs://namenode/crawl/zh") and is_cluster_path("s3://bucket/crawl")
    assert is_cluster_path(tmp_path.as_uri())
    assert not is_cluster_path(str(tmp_path)) and not is_cluster_path("crawl/zh")


def test_paths_keep_their_scheme():
    store = ClusterCrawlStore("hdfs://namenode/crawl/zh/")
    assert store.frontier(2) == "hdfs://namenode/crawl/zh/in/2"
    assert store.state_path == "hdfs://namenode/crawl/zh/crawl.json"
    assert store.part_file(store.docs(0)) == "hdfs://namenode/crawl/zh/doc/0/part-00000"


def test_state_files_and_step_outputs_through_the_filesystem(tmp_path):
    store = ClusterCrawlStore((tmp_path / "crawl").as_uri())
    assert not store.holds_crawl()
    store.make_root()
    state = CrawlState(config={}, seeds="/seeds.txt", seeds_count=1, run="2026-01-02T03:04:05.000Z",
                       started_at="2026_01_02_03_04_05", db="/db")
    state.record(StepName("crawl", 0), 1.5, {"crawl": {"urls in": 3}})
    state.save(store)
    assert store.holds_crawl() and CrawlState.load(store) == state
    state.done.clear()
    state.save(store)  # replaced whole, not appended to
    assert json.loads((tmp_path / "crawl" / "crawl.json").read_text())["done"] == {}

    docs = store.docs(0)
    assert store.parts(docs) == [] and not store.has_records(docs)
    written = store.begin_output("crawl/0", docs)
    store.write_text(store.part_file(written, 0), "")
    store.write_text(store.part_file(written, 1), '"http://a/"\t{}\n')
    (tmp_path / "crawl" / "doc" / "0" / "_SUCCESS").touch()
    store.commit(written, docs)
    assert [part.rsplit("/", 1)[1] for part in store.parts(docs)] == ["part-00000", "part-00001"]
    assert store.has_records(docs)

    # Running the step again starts from nothing: an interrupted run's parts go.
    store.begin_output("crawl/0", docs)
    assert store.parts(docs) == []
