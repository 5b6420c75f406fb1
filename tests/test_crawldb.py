"""The crawl db's update, run by real mrjob runners on a real crawl's stores.

A crawl of the test web gives frontier, doc and out stores; DbBatch,
Dedup and DbUpdate fold them into a partitioned db, layer after layer,
as the driver does.  What must hold: every partition file is sorted and
holds only its partition's URLs (or digests), one record per URL ever seen
and one per payload digest fetched; a record the batch does not touch is
copied byte for byte; each record says what its last request gave; and the
db the driver kept during the crawl is the one replayed here.
"""
from __future__ import annotations

import glob
import io
import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from crawl_support import crawl, layer_docs, read_records, write_inputs
from jobs.db_batch import MRDbBatch
from jobs.db_update import MRDbUpdate
from jobs.dedup import MRDedup
from mrcrawl.config import CrawlConfig
from mrcrawl.frontier import crawldb
from mrcrawl.mr.onewave import WRAPPER_LOCK
from mrcrawl.frontier.crawldb import (
    CrawlDb,
    batch_key,
    batch_prefix,
    claim_key,
    claim_prefix,
    create_db,
    digest_partition_of,
    is_signature_key,
    key_bytes,
    lines_starting,
    merge_partition,
    partition_of,
    partition_path,
    read_db,
)
from mrcrawl.frontier.scores import new_url_score
from mrcrawl.store.crawl_reader import read_part
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import DB_FIELDS, DB_STATUSES, FETCHED, REDIRECT, UNFETCHED
from mrcrawl.testweb import start_test_web

PARTITIONS = 4
DEPTH = 2
RUN = "2026-01-05T06:00:00.000Z"
DRIVER_PARTITIONS = 16  # the driver's new db: DEFAULT_PARTITIONS


@pytest.fixture(scope="module")
def crawled(tmp_path_factory) -> Path:
    directory = tmp_path_factory.mktemp("crawldb")
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, directory)
        output = directory / "crawl"
        assert crawl(seeds, conf, output, DEPTH, "inline", "--now", RUN) == 0
    return output


def run_job(job_class, runner: str, crawl_dir: Path, layer: int, inputs: list[Path], output, *extra: str,
            partitions: int = PARTITIONS) -> None:
    args = ["-r", runner, "--output-dir", str(output), "--db-partitions", str(partitions), "--run", RUN,
            "--crawl-config", str(crawl_dir / "config.json"), "--layer", str(layer), *extra, *map(str, inputs)]
    with job_class(args=args).make_runner() as job_runner:
        job_runner.run()


def empty_db(directory: Path) -> Path:
    create_db(directory, PARTITIONS)
    return directory


def parts(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-*"))


def update(db: Path, crawl_dir: Path, layer: int, runner: str, scratch: Path, batch_sorted: bool = True) -> Path:
    """One layer's update of the db, as the driver runs it: DbBatch, Dedup, DbUpdate, commit.
    `batch_sorted`: as the driver says on every runner but Spark."""
    batch, duplicates = scratch / f"batch-{layer}", scratch / f"dup-{layer}"
    layer_stores = [crawl_dir / store / str(layer) for store in ("in", "doc", "out")]
    crawl_db = CrawlDb(CrawlStore(db))
    partitions = crawl_db.partitions  # PARTITIONS, or the driver's for a db a crawl made
    run_job(MRDbBatch, runner, crawl_dir, layer, [part for store in layer_stores for part in parts(store)], batch,
            partitions=partitions)
    batch_parts = [arg for part in parts(batch) for arg in ("--batch-part", str(part))]
    batch_parts += ["--batch-sorted"] if batch_sorted else []
    run_job(MRDedup, runner, crawl_dir, layer, crawl_db.digest_files(), duplicates, *batch_parts, partitions=partitions)
    duplicate_parts = [arg for part in parts(duplicates) for arg in ("--duplicates-part", str(part))]
    # The start score of the run's new URLs, as the driver gives it (frontier/scores.py).
    config = CrawlConfig.from_dict(json.loads((crawl_dir / "config.json").read_text()))
    start = new_url_score(config, crawl_db, RUN)
    scoring = ["--new-url-score", repr(start)] if start is not None else []
    run_job(MRDbUpdate, runner, crawl_dir, layer, crawl_db.files(), crawl_db.next_dir(), *batch_parts, *duplicate_parts,
            *scoring, partitions=partitions)
    crawl_db.commit(f"{RUN} dbupdate/{layer}")
    return db


def partition_lines(db: Path, digests: bool = False) -> dict[int, list[bytes]]:
    """The lines of each URL partition file (or each digest partition file)."""
    crawl_db = CrawlDb(CrawlStore(db))
    files = parts(Path(crawl_db.current_dir()))
    # URL, digest and link partitions (the link store's own tests: tests/test_link_store.py)
    assert [part.name for part in files] == [f"part-{n:05d}" for n in range(3 * crawl_db.partitions)]
    chosen = crawl_db.digest_files() if digests else crawl_db.partition_files()
    return {n: Path(part).read_bytes().splitlines() for n, part in enumerate(chosen)}


def check_digests(db: Path) -> dict[str, dict]:
    """The digest index's originals by payload digest, after checking its
    layout (its content signatures' too)."""
    originals = {}
    lines_of = partition_lines(db, digests=True)
    for partition, lines in lines_of.items():
        keys = [line.split(b"\t", 1)[0] for line in lines]
        assert keys == sorted(keys), f"digest partition {partition} is not sorted"
        for line in lines:
            digest, original = json.loads(line.split(b"\t", 1)[0]), json.loads(line.split(b"\t", 1)[1])
            assert digest not in originals and digest_partition_of(digest, len(lines_of)) == partition
            originals[digest] = original
    return {digest: original for digest, original in originals.items() if not is_signature_key(digest)}


def check_db(db: Path) -> dict[str, dict]:
    """The db's records by URL, after checking the layout every update must keep."""
    records = {}
    lines_of = partition_lines(db)
    for partition, lines in lines_of.items():
        keys = [line.split(b"\t", 1)[0] for line in lines]
        assert keys == sorted(keys), f"partition {partition} is not sorted"
        for url, record in read_part(partition_path(db, partition)):
            assert url not in records, f"{url} is stored twice"
            assert partition_of(url, len(lines_of)) == partition
            assert set(record) == set(DB_FIELDS) and record["status"] in DB_STATUSES
            records[url] = record
    return records


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_layers_fold_into_a_sorted_partitioned_db(crawled, runner, tmp_path):
    db = empty_db(tmp_path / "db-empty")
    seen: set[str] = set()
    wrapper_locks = set(glob.glob(WRAPPER_LOCK.format(job_key="*")))
    for layer in range(DEPTH):
        before = partition_lines(db)
        db = update(db, crawled, layer, runner, tmp_path)
        # These jobs run as a user would run one (mrjob bootstrapped into a
        # setup wrapper script): the lock file each job's wrapper takes is gone.
        assert set(glob.glob(WRAPPER_LOCK.format(job_key="*"))) <= wrapper_locks
        records = check_db(db)
        docs = layer_docs(crawled, layer)
        touched = {doc["requested_url"] for doc in docs} | {doc["url"] for doc in docs}
        touched |= {url for url, _ in read_records(crawled / "in" / str(layer))}
        touched |= {link for _, out in read_records(crawled / "out" / str(layer)) for link in out["outlinks"]}
        seen |= touched
        # One record per URL ever seen, and nothing else.
        assert set(records) == seen
        # What the batch did not touch is copied as the bytes it was.
        after = {line for lines in partition_lines(db).values() for line in lines}
        untouched = {line for lines in before.values() for line in lines
                     if line.split(b"\t", 1)[0].decode()[1:-1] not in touched}
        assert untouched <= after
        for doc in docs:
            record = records[doc["url"]]
            assert record["fetched_at"] == doc["fetched_at"] and record["first_run"] == RUN
            if doc["outcome"] == FETCHED:
                assert record["status"] == FETCHED and record["digest"] and record["signature"]
                assert record["due_at"] > RUN and record["hub"] is not None
            if doc["url"] != doc["requested_url"]:
                assert records[doc["requested_url"]]["status"] == REDIRECT
    # Each payload fetched has one original: a URL fetched with it.
    fetched = {(record["digest"], url) for url, record in records.items() if record["digest"]}
    originals = check_digests(db)
    assert set(originals) == {digest for digest, _ in fetched}
    assert all((digest, original["url"]) in fetched for digest, original in originals.items())
    # Links of the last layer are known and not yet fetched.
    assert any(record["status"] == UNFETCHED and record["first_layer"] == DEPTH for record in records.values())
    # The seeds are marked, and hubs by their pages: the test web's home pages are seeds.
    assert {url for url, record in records.items() if record["seed"]} == {url for url, _ in read_records(crawled / "in" / "0")}


def test_the_driver_keeps_the_db_it_replays(crawled, tmp_path):
    """The db the crawl kept in crawl/db holds what the replay of its layers gives."""
    db = empty_db(tmp_path / "db")
    for layer in range(DEPTH):
        update(db, crawled, layer, "inline", tmp_path)
    assert dict(read_db(crawled / "db")) == check_db(db)
    meta = json.loads((crawled / "db" / "db.json").read_text())
    assert meta["partitions"] == DRIVER_PARTITIONS and meta["applied"] == f"{RUN} dbupdate/{DEPTH - 1}"
    # Each update commits one generation and drops the one before.
    assert sorted(path.name for path in (crawled / "db").iterdir() if path.name.startswith("gen-")) == [f"gen-{DEPTH:06d}"]


@pytest.fixture(scope="module")
def db(crawled, tmp_path_factory) -> Path:
    scratch = tmp_path_factory.mktemp("db")
    db = empty_db(scratch / "db-empty")
    for layer in range(DEPTH):
        update(db, crawled, layer, "inline", scratch)
    return db


def test_a_batch_read_whole_updates_the_db_as_one_read_by_binary_search(db, crawled, tmp_path):
    """Without --batch-sorted (Spark's unsorted reduce output), each task
    tests every batch line: the db and its digest index come out the same."""
    scanned = empty_db(tmp_path / "db")
    for layer in range(DEPTH):
        update(scanned, crawled, layer, "inline", tmp_path, batch_sorted=False)
    assert partition_lines(scanned) == partition_lines(db)
    assert partition_lines(scanned, digests=True) == partition_lines(db, digests=True)


def reader(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mrcrawl.db", *args], capture_output=True, text=True, timeout=60)


def test_stats_counts_statuses_hosts_and_due_urls(db):
    records = check_db(db)
    now = "2026-01-06T06:00:00.000Z"
    result = reader("stats", str(db), "--now", now)
    assert result.returncode == 0, result.stderr
    due = sum(1 for record in records.values() if record["due_at"] and record["due_at"] <= now)
    hosts = Counter(record["host"] for record in records.values())
    payloads = len(check_digests(db))
    assert result.stdout.splitlines()[0] == (f"{db}: {len(records)} URLs, {len(hosts)} hosts, {due} due at {now}; "
                                             f"{payloads} payload digests in the digest index")
    for status, count in Counter(record["status"] for record in records.values()).items():
        assert f"  {status:<14} {count:>10}" in result.stdout.splitlines()
    for host, count in hosts.items():
        assert any(line.startswith(f"{host:<40} {count:>8}  ") for line in result.stdout.splitlines()), host


def test_get_reads_one_record_or_says_it_is_not_there(db):
    records = check_db(db)
    url = sorted(records)[len(records) // 2]
    found = reader("get", str(db), url)
    assert found.returncode == 0 and json.loads(found.stdout) == records[url]
    missing = reader("get", str(db), url + "-not-crawled")
    assert missing.returncode == 1 and "not in" in missing.stderr


def test_dump_jsonl_and_parquet_by_status(db, tmp_path):
    import pyarrow.parquet as pq

    records = check_db(db)
    fetched = reader("dump", str(db), "--status", FETCHED)
    assert fetched.returncode == 0
    dumped = [json.loads(line) for line in fetched.stdout.splitlines()]
    assert dumped and dumped == [record for record in records.values() if record["status"] == FETCHED]
    parquet = tmp_path / "db.parquet"
    assert reader("dump", str(db), "--format", "parquet", "-o", str(parquet)).returncode == 0
    table = pq.read_table(parquet)
    assert table.column_names == list(DB_FIELDS) and table.to_pylist() == list(records.values())


def test_the_reader_refuses_what_is_not_a_db(tmp_path):
    result = reader("stats", str(tmp_path))
    assert result.returncode == 2 and "holds no crawl db (no db.json)" in result.stderr
    result = reader("get", str(tmp_path / "absent"), "http://127.0.0.2/")
    assert result.returncode == 2 and f"{tmp_path / 'absent'}: no such directory" in result.stderr
    create_db(tmp_path / "db", 2)
    partition_path(tmp_path / "db", 1).unlink()
    result = reader("dump", str(tmp_path / "db"))
    assert result.returncode == 2 and "part-00001 is missing" in result.stderr
    assert reader("dump", str(tmp_path / "db"), "--format", "parquet").returncode == 2


@pytest.mark.parametrize("stored_count, new_count, touched_count", [(0, 3, 0), (1, 0, 1), (5, 2, 0), (300, 40, 60), (300, 0, 300)])
def test_the_merge_places_each_update_by_binary_search(stored_count, new_count, touched_count, monkeypatch):
    """merge_partition against a plain merge of dicts: every record once, in
    key order, updates applied, untouched lines as they were."""
    import random

    monkeypatch.setattr(crawldb, "MERGE_BLOCK_BYTES", 1000)  # many blocks, and updates at their edges
    rng = random.Random(stored_count * 1000 + new_count)
    urls = sorted({f"http://127.0.0.2/{rng.randrange(10**6)}/{'x' * rng.randrange(40)}" for _ in range(stored_count + new_count)})
    rng.shuffle(urls)
    stored_urls, new_urls = urls[:stored_count], urls[stored_count:]
    stored = {url: {"n": 0, "url": url} for url in stored_urls}
    lines = sorted(Utf8JsonProtocol().write(url, record) for url, record in stored.items())
    touched = rng.sample(stored_urls, min(touched_count, len(stored_urls)))
    updates = sorted((key_bytes(url), url, {"bump": 1}) for url in touched + new_urls)

    def apply(record, url, update):
        return {"n": (record or {"n": 10})["n"] + update["bump"], "url": url}

    partition_file = io.BytesIO(b"".join(line + b"\n" for line in lines))
    merged = b"\n".join(merge_partition(partition_file, updates, apply))
    expected = {**stored, **{url: apply(stored.get(url), url, {"bump": 1}) for url in touched + new_urls}}
    assert merged.split(b"\n") == (sorted(Utf8JsonProtocol().write(url, record) for url, record in expected.items()) or [b""])


@pytest.mark.parametrize("shape", ["every partition", "one partition", "empty", "no last newline"])
def test_a_sorted_batch_file_yields_a_partitions_lines_by_binary_search(shape, tmp_path):
    """lines_starting on a sorted batch part file, against a test of every line."""
    import random

    rng = random.Random(shape)
    partitions = 5
    keys = {f"{rng.randrange(10**6)}/{'y' * rng.randrange(30)}" for _ in range(0 if shape == "empty" else 400)}
    lines = [Utf8JsonProtocol().write(batch_key(f"http://127.0.0.{rng.randrange(1, 9)}/{key}", partitions), {"seen": 1})
             for key in keys]
    lines += [Utf8JsonProtocol().write(claim_key(f"sha1:{key}", partitions), {"urls": []}) for key in keys]
    if shape == "one partition":
        lines = [line for line in lines if line.startswith((batch_prefix(3), claim_prefix(3)))]
    lines.sort()  # a reduce task writes its keys in byte order: the claims ("#...) first
    body = b"".join(line + b"\n" for line in lines)
    if shape == "no last newline":
        body = body[:-1]
    path = tmp_path / "part-00000"
    path.write_bytes(body)
    for prefix in [batch_prefix(n) for n in range(partitions + 1)] + [claim_prefix(n) for n in range(partitions + 1)]:
        found = list(lines_starting(path, prefix, sorted_by_key=True))
        assert found == list(lines_starting(path, prefix, sorted_by_key=False))
        assert [line.rstrip(b"\n") for line in found] == [line for line in lines if line.startswith(prefix)]
