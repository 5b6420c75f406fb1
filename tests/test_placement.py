"""Two-tier placement: host -> slot -> reduce task, load-aware, exact on every runner.

The reduce-task keys are checked against the real partitioners: Hadoop's
KeyFieldBasedPartitioner (from the Hadoop jars pyspark carries, called in
a JVM) configured as mrjob configures a SORT_VALUES job, and Spark's
shuffle (combineByKey, as mrjob's Spark harness runs the Crawler's
combiner).  The crawls run on the local runner, which runs a step's
planned reduce tasks as the cluster runners do.
"""
from __future__ import annotations

import json
import os
import random
from collections import defaultdict
from pathlib import Path

import pytest
from mrjob.runner import _SORT_VALUES_JOBCONF, _SORT_VALUES_PARTITIONER

from crawl_support import crawl, db_records, write_daily_inputs
from jobs.crawler import MRCrawler
from mrcrawl.frontier.crawldb import CrawlDb, partition_of
from mrcrawl.frontier.placement import (DEFAULT_SLOTS, FetchModel, Placement, SlotLoad, assign, reduce_task_key,
                                        slot_of, slots_for)
from mrcrawl.page.urls import host_key
from mrcrawl.store.crawl_state import StepName
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.testweb.daily import DailySpec, start_daily_web
from test_kill_anywhere import kill, start_paused_at
from crawl_support import driver_command

TASK_COUNTS = (1, 2, 3, 7, 16, 30, 64, 100, 256)


def test_a_host_keeps_one_slot_and_its_db_partition_is_that_slot_modulo_the_partitions():
    hosts = [f"http://host{number}.example" for number in range(5000)] + ["https://例え.jp", "http://127.0.0.1:8080"]
    assert slots_for(16) == DEFAULT_SLOTS and slots_for(10) % 10 == 0 and slots_for(10) >= DEFAULT_SLOTS
    for host in hosts:
        slot = slot_of(host, DEFAULT_SLOTS)
        assert partition_of(host + "/a/page.html", 16) == slot % 16
        assert partition_of(host + "/?q=1", 10) == slot_of(host, slots_for(10)) % 10
    # Spread: no slot of 64 holds more than twice its share of 5,000 hosts.
    per_slot = defaultdict(int)
    for host in hosts:
        per_slot[slot_of(host, 64)] += 1
    assert len(per_slot) == 64 and max(per_slot.values()) < 2 * len(hosts) / 64


@pytest.fixture(scope="module")
def spark():
    """A Spark context on a local master: its shuffle, and a JVM holding Hadoop's classes."""
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from pyspark import SparkConf, SparkContext
    context = SparkContext(conf=SparkConf().setMaster("local[1]").setAppName("placement")
                           .set("spark.ui.enabled", "false").set("spark.driver.host", "127.0.0.1"))
    yield context
    context.stop()


def test_a_reduce_task_key_reaches_its_task_through_hadoops_partitioner(spark):
    jvm = spark._jvm
    # What mrjob gives a SORT_VALUES job on Hadoop: the map output's key is its
    # first two fields (the JSON key and value), partitioned on field 1.
    assert MRCrawler.SORT_VALUES
    conf = jvm.org.apache.hadoop.mapred.JobConf()
    for name, value in _SORT_VALUES_JOBCONF.items():
        conf.set(name, str(value))
    partitioner = getattr(jvm, _SORT_VALUES_PARTITIONER)()
    partitioner.configure(conf)
    assert conf.get("mapreduce.partition.keypartitioner.options") == "-k1,1"
    value = jvm.org.apache.hadoop.io.Text("")
    for tasks in TASK_COUNTS:
        for task in range(tasks):
            key = reduce_task_key(task, tasks)
            # The key as the Crawler's protocol writes it, then a tab and a value.
            line = jvm.org.apache.hadoop.io.Text(f'{json.dumps(key)}\t["http://a.example","http://a.example",0]')
            assert partitioner.getPartition(line, value, tasks) == task, (tasks, task, key)


def test_a_reduce_task_key_reaches_its_task_through_sparks_shuffle(spark):
    for tasks in (2, 3, 7, 16):  # a Spark task per partition: a few suffice
        keyed = [(reduce_task_key(task, tasks), task) for task in range(tasks)]
        # mrjob's Spark harness shuffles the Crawler's decoded keys with combineByKey.
        grouped = spark.parallelize(keyed, 2).combineByKey(lambda task: [task], lambda tasks_, task: tasks_ + [task],
                                                           lambda one, other: one + other, numPartitions=tasks)
        for partition, pairs in enumerate(grouped.glom().collect()):
            assert all(task == partition for _, tasks_ in pairs for task in tasks_), (tasks, partition, pairs)


def zipf_loads(slots: int, rng: random.Random) -> list[SlotLoad]:
    """40,000 queues of Zipf sizes, capped at 100 URLs (a layer's max_urls_per_host), in random slots."""
    sizes = defaultdict(list)
    for rank in range(1, 40001):
        sizes[rng.randrange(slots)].append(max(1, min(100, 20000 // rank)))
    return [SlotLoad(slot, sum(queues), len(queues), max(queues)) for slot, queues in sizes.items()]


def test_longest_expected_time_first_comes_close_to_the_bound_where_the_hash_does_not():
    rng = random.Random(7)
    model = FetchModel(delay=1.0, threads=30)
    loads = zipf_loads(4096, rng)
    for tasks in (4, 16, 64):
        placement = assign(loads, tasks, 4096, model)
        assert sorted(placement.task_of) == sorted(load.slot for load in loads)
        assert sum(placement.urls) == sum(load.urls for load in loads)
        bound = max(max(model.floor(load.biggest) for load in loads), sum(model.work(load.urls) for load in loads) / tasks)
        assert max(placement.expected_seconds) <= 1.1 * bound, (tasks, max(placement.expected_seconds), bound)
        hashed = [0.0] * tasks
        floors = [0.0] * tasks
        for load in loads:
            hashed[load.slot % tasks] += model.work(load.urls)
            floors[load.slot % tasks] = max(floors[load.slot % tasks], model.floor(load.biggest))
        if bound > model.floor(100):  # the threads' work sets the bound, not the biggest queue
            assert max(map(max, zip(hashed, floors))) > max(placement.expected_seconds), tasks
        assert Placement.from_json(json.loads(json.dumps(placement.to_json()))).task_of == placement.task_of


# ---- crawls ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def daily_web():
    with start_daily_web(DailySpec(seed=31, sites=6, articles=12)) as server:
        yield server


def plans(output: Path) -> dict[int, Placement]:
    """Each layer's placement, from its store."""
    return {int(directory.name): Placement.read(directory.glob("part-*")) for directory in (output / "place").iterdir()}


def task_loads(output: Path) -> dict[int, dict[int, dict[str, int]]]:
    """Each layer's reduce tasks' load, as the Crawler counted it."""
    done = json.loads((output / "crawl.json").read_text())["done"]
    return {StepName.parse(name).layer: MRCrawler.TASK_LOAD.of(step["counters"])
            for name, step in done.items() if name.startswith(MRCrawler.STEP + "/")}


def assert_fetched_as_planned(output: Path, tasks: int) -> None:
    """Every layer ran the planned tasks, each fetching exactly its slots' URLs."""
    planned, loads = plans(output), task_loads(output)
    assert planned and sorted(planned) == sorted(loads)
    for layer, placement in planned.items():
        assert placement.tasks == tasks
        fetched = {task: load["urls"] for task, load in loads[layer].items() if load.get("urls")}
        assert fetched == {task: urls for task, urls in enumerate(placement.urls) if urls}, layer
        assert all(load["busy ms"] > 0 for load in loads[layer].values() if load.get("urls"))


def partition_urls(db: Path) -> dict[int, set[str]]:
    by_partition = defaultdict(set)
    partitions = CrawlDb(CrawlStore(db)).partitions
    for url, _ in db_records(db):
        by_partition[partition_of(url, partitions)].add(url)
    return by_partition


def test_changing_reducers_between_runs_moves_no_db_record_and_each_slot_goes_where_its_plan_says(daily_web, tmp_path):
    daily_web.set_day(1)
    seeds, conf, _ = write_daily_inputs(daily_web, tmp_path, order="bfs")
    db = tmp_path / "db"
    day1, day2 = tmp_path / "day1", tmp_path / "day2"
    assert crawl(seeds, conf, day1, 2, "local", "--db", str(db), "--now", daily_web.web.date_iso(1), "--reducers", "2") == 0
    assert_fetched_as_planned(day1, 2)
    meta = json.loads((db / "db.json").read_text())
    assert meta["slots"] == DEFAULT_SLOTS
    before = partition_urls(db)
    # Each record is in the partition file of its host's slot.
    for partition, part in enumerate(CrawlDb(CrawlStore(db)).partition_files()):
        for line in Path(part).read_text(encoding="utf-8").splitlines():
            assert slot_of(host_key(json.loads(line.split("\t")[0])), DEFAULT_SLOTS) % meta["partitions"] == partition

    daily_web.set_day(2)
    assert crawl(seeds, conf, day2, 2, "local", "--db", str(db), "--now", daily_web.web.date_iso(2), "--reducers", "3") == 0
    assert_fetched_as_planned(day2, 3)
    after = partition_urls(db)
    assert all(urls <= after[partition] for partition, urls in before.items())
    assert json.loads((db / "db.json").read_text())["slots"] == DEFAULT_SLOTS


def test_a_resumed_crawl_step_fetches_by_the_plan_its_layer_began_with(daily_web, tmp_path):
    daily_web.set_day(1)
    seeds, conf, _ = write_daily_inputs(daily_web, tmp_path, order="bfs")
    output = tmp_path / "crawl"
    command = driver_command(seeds, conf, output, 2, "--runner", "local", "--now", daily_web.web.date_iso(1),
                             "--reducers", "3")
    # Stopped once the placement is recorded, as the Crawler starts.
    kill(start_paused_at(command, f"start {MRCrawler.STEP}/0", tmp_path / "said.log"))
    assert crawl(seeds, conf, output, 2, "local", "--resume", "--now", daily_web.web.date_iso(1), "--reducers", "2") == 0
    planned, loads = plans(output), task_loads(output)
    assert planned[0].tasks == 3 and planned[1].tasks == 2
    assert sorted(task for task, load in loads[0].items() if load.get("urls")) == \
        [task for task, urls in enumerate(planned[0].urls) if urls]
    assert len([urls for urls in planned[0].urls if urls]) >= 2  # the layer's hosts were spread
