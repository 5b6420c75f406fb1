"""The local runners' input splitting (mrcrawl/mr/onewave.py) and Merge's choice
of record, on real files and real mrjob runners."""
from __future__ import annotations

import gzip
import json
import os
import sys
from pathlib import Path

import pytest

from jobs.merge import MRMerge
from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.merge import best_stored_record
from mrcrawl.mr.launcher import package_root
from mrcrawl.mr.onewave import _copy_range, _key_boundary, _next_line_start, _previous_line_start
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import FETCHED, HTTP_ERROR, encode_body, new_doc

_records = Utf8JsonProtocol()


def sorted_file(tmp_path: Path, keys: list[str]) -> tuple[Path, list[bytes]]:
    lines = [_records.write(key, {"n": number, "pad": "x" * (number % 7) * 100}) + b"\n"
             for number, key in enumerate(keys)]
    path = tmp_path / "sorted"
    path.write_bytes(b"".join(lines))
    return path, lines


def test_line_starts_forward_and_back(tmp_path):
    path, lines = sorted_file(tmp_path, ["a", "b", "c"])
    starts = [0, len(lines[0]), len(lines[0]) + len(lines[1])]
    with open(path, "rb") as source:
        assert _next_line_start(source, 0) == 0
        assert _next_line_start(source, 1) == starts[1]
        assert _next_line_start(source, starts[1]) == starts[1]
        assert _next_line_start(source, starts[1] + 1) == starts[2]
        assert _previous_line_start(source, starts[2]) == starts[1]
        assert _previous_line_start(source, starts[1]) == 0


def test_a_key_boundary_never_splits_a_key(tmp_path):
    keys = ["a"] * 5 + ["b"] * 300 + ["c"] * 5
    path, lines = sorted_file(tmp_path, keys)
    size = path.stat().st_size
    starts = [sum(map(len, lines[:number])) for number in range(len(lines) + 1)]
    with open(path, "rb") as source:
        for position in range(0, size + 1, 97):
            boundary = _key_boundary(source, position, size)
            assert boundary in starts and boundary >= position or boundary == size
            line = starts.index(boundary) if boundary < size else len(keys)
            # Every line before the boundary has another key than every line after it.
            assert 0 < line < len(keys) or boundary in (0, size)
            if 0 < line < len(keys):
                assert keys[line - 1] != keys[line]
        # A boundary inside b's run goes past all of b, one at b's first line stays.
        assert _key_boundary(source, starts[100], size) == starts[305]
        assert _key_boundary(source, starts[5], size) == starts[5]


def test_copy_range_appends_exact_bytes(tmp_path):
    source_path = tmp_path / "source"
    source_path.write_bytes(bytes(range(256)) * 1000)
    target = tmp_path / "target"
    with open(source_path, "rb") as source, open(target, "wb") as destination:
        destination.write(b"head")
        _copy_range(source, destination, 1000, 50_000)
        destination.write(b"tail")
    assert target.read_bytes() == b"head" + source_path.read_bytes()[1000:51_000] + b"tail"


def doc_line(url: str, layer: int, outcome: str, requested: str | None = None) -> bytes:
    doc = new_doc(requested or url, layer)
    doc.update(url=url, outcome=outcome, body=encode_body(b"<p>" + url.encode() * 50) if outcome == FETCHED else None)
    return _records.write(url, doc)


def test_best_stored_record_decodes_only_to_choose():
    only = doc_line("http://a.test/", 1, HTTP_ERROR)
    assert best_stored_record([only]) is only
    fetched_late = doc_line("http://a.test/", 2, FETCHED, "http://a.test/old")
    error_early = doc_line("http://a.test/", 0, HTTP_ERROR)
    fetched_early_b = doc_line("http://a.test/", 1, FETCHED, "http://a.test/b")
    fetched_early_a = doc_line("http://a.test/", 1, FETCHED, "http://a.test/a")
    candidates = [fetched_late, error_early, fetched_early_b, fetched_early_a]
    for order in (candidates, candidates[::-1], candidates[1:] + candidates[:1]):
        values = [line.split(b"\t", 1)[1] for line in order]
        # A fetched page, then the earliest layer, then the requested URL decides.
        assert best_stored_record(values) == fetched_early_a.split(b"\t", 1)[1]


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_merge_over_awkward_part_files(tmp_path, runner):
    """Map input cut across files that lack a final newline, are empty or are
    gzipped; reduce input cut between keys, with one URL in every layer."""
    stores = tmp_path / "doc"
    urls = [f"http://h{number % 7}.test/p/{number}" for number in range(400)]
    layers = {
        0: [doc_line(url, 0, FETCHED) for url in urls[:150]] + [doc_line("http://dup.test/", 0, HTTP_ERROR)],
        1: [doc_line(url, 1, FETCHED) for url in urls[150:300]] + [doc_line("http://dup.test/", 1, FETCHED)],
        2: [doc_line(url, 2, HTTP_ERROR) for url in urls[300:]] + [doc_line("http://dup.test/", 2, FETCHED)],
    }
    inputs = []
    for layer, lines in layers.items():
        directory = stores / str(layer)
        directory.mkdir(parents=True)
        (directory / "part-00000").write_bytes(b"\n".join(lines[:60]))  # no final newline
        (directory / "part-00001").write_bytes(b"")
        if layer == 1:
            with gzip.open(directory / "part-00002.gz", "wb") as part:
                part.write(b"\n".join(lines[60:]) + b"\n")
        else:
            (directory / "part-00002").write_bytes(b"\n".join(lines[60:]) + b"\n")
        inputs.append(f"{directory}/part-*")
    output = tmp_path / "merged"
    config = tmp_path / "config.json"  # a CrawlJob is told the crawl's config, as the launcher tells it
    config.write_text(CrawlConfig(language="en", user_agent="mrcrawl-test/1.0").to_json(), encoding="utf-8")
    args = ["-r", runner, "--output-dir", str(output), "--python-bin", sys.executable, "--crawl-config", str(config)]
    if runner == "local":
        args += ["--no-bootstrap-mrjob", "--cmdenv", f"PYTHONPATH={package_root()}"]
    with MRMerge(args=args + inputs).make_runner() as job_runner:
        job_runner.run()
    parts = sorted(output.glob("part-*"))
    assert len(parts) == (1 if runner == "inline" else os.cpu_count())  # one reduce task per slot
    merged = {}
    for part in parts:
        for line in part.read_bytes().splitlines():
            url, doc = _records.read(line)
            assert url not in merged, f"{url} twice"
            merged[url] = doc
    assert set(merged) == set(urls) | {"http://dup.test/"}
    assert merged["http://dup.test/"]["outcome"] == FETCHED and merged["http://dup.test/"]["layer"] == 1
    for number, url in enumerate(urls):
        assert merged[url]["layer"] == number // 150 and merged[url]["requested_url"] == url
    assert json.dumps(merged[urls[0]]["body"]) == json.dumps(encode_body(b"<p>" + urls[0].encode() * 50))
