"""--resume after a run dies midway, and the guards around an existing crawl directory."""
from __future__ import annotations

import json
import re
import signal
import subprocess
import time

from crawl_support import crawl, driver_command, layer_docs, layer_triples, read_records, write_inputs
from mrcrawl.testweb import expected_layers_for_config

DEPTH = 4


def wait_for_step(output, step: str, process, limit: float = 120.0) -> None:
    state = output / "crawl.json"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if state.exists() and step in json.loads(state.read_text())["done"]:
            return
        assert process.poll() is None, "the crawl ended before it could be interrupted"
        time.sleep(0.02)
    raise AssertionError(f"{step} not done within {limit}s")


def snapshot(directory):
    return {part.name: (part.stat().st_ino, part.stat().st_mtime_ns) for part in directory.glob("part-*")}


def test_resume_after_a_killed_run_equals_an_uninterrupted_crawl(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    process = subprocess.Popen(driver_command(seeds, conf, output, DEPTH), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for_step(output, "parse/1", process)
        process.send_signal(signal.SIGKILL)  # no chance to tidy up
    finally:
        process.wait(timeout=30)
    finished_before = set(json.loads((output / "crawl.json").read_text())["done"])
    kept = {layer: snapshot(output / "doc" / str(layer)) for layer in (0, 1)}

    assert crawl(seeds, conf, output, DEPTH, "inline", "--resume") == 0

    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=DEPTH)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    for layer, parts in kept.items():  # finished layers were not fetched again
        assert snapshot(output / "doc" / str(layer)) == parts
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert finished_before < set(done)
    assert {"merge/0-3", "xml/0-3"} <= set(done)
    assert len(list((output / "xml").iterdir())) == 1
    assert not list((output / ".work").glob("*")), "scratch output left behind"


def test_existing_crawl_without_resume_is_refused_and_untouched(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 1) == 0
    state = (output / "crawl.json").read_bytes()
    capsys.readouterr()
    assert crawl(seeds, conf, output, 1) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "--resume" in error[0] and str(output) in error[0]
    assert (output / "crawl.json").read_bytes() == state


def test_resume_with_another_config_is_refused(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 1) == 0
    _, other_conf, _ = write_inputs(web_server, tmp_path, delay=0.2)
    capsys.readouterr()
    assert crawl(seeds, other_conf, output, 2, "inline", "--resume") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "same config" in error[0]
    assert "delay (0.05 in the crawl, 0.2 here)" in error[0]  # the key that changed, with both values


def test_resume_of_a_finished_crawl_goes_deeper(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 2) == 0
    assert crawl(seeds, conf, output, 3, "inline", "--resume") == 0
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=3)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert "merge/0-2" in done and "optimize/1" in done


def stored_bytes(output) -> dict:
    """Every file a finished step stored, by path: what no later run may lose."""
    return {str(path.relative_to(output)): path.read_bytes()
            for store in ("in", "doc", "out", "xml") for path in (output / store).rglob("part-*")}


def test_a_smaller_depth_keeps_the_deeper_crawl(web_server, tmp_path, capsys):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 3) == 0
    stored = stored_bytes(output)
    assert sum(1 for name in stored if name.startswith("xml/"))
    capsys.readouterr()

    assert crawl(seeds, conf, output, 1, "inline", "--resume") == 0
    said = capsys.readouterr().err
    assert "already has depth 3" in said and "nothing was left to fetch" in said
    assert stored_bytes(output) == stored
    assert crawl(seeds, conf, output, 3, "inline", "--resume") == 0
    assert stored_bytes(output) == stored
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=3)
    merged = {doc["url"] for _, doc in read_records(output / "doc" / "merged")}
    assert merged == {final for layer in expected for _, _, final in layer}
    assert json.loads((output / "crawl.json").read_text())["depth"] == 3


def test_the_summary_counts_this_run_and_names_the_merged_layers(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 2) == 0
    first = capsys.readouterr().err
    assert "merge/0-1" in first and "xml/0-1" in first  # a depth-2 crawl has layers 0 and 1
    assert crawl(seeds, conf, output, 3, "inline", "--resume") == 0
    said = capsys.readouterr().err
    fetched_on_layer_2 = sum(doc["outcome"] == "fetched" for doc in layer_docs(output, 2))
    summary = re.search(r"this run fetched (\d+) pages \(([\d.]+) pages/s\)", said)
    assert summary and int(summary.group(1)) == fetched_on_layer_2 > 0
    seconds = float(re.search(r"done in ([\d.]+) s", said).group(1))
    # Both figures are printed to one decimal: the rate may be rounded up
    # by 0.05, the seconds down by 0.05.
    assert float(summary.group(2)) <= fetched_on_layer_2 / max(seconds - 0.05, 0.01) + 0.05


def test_resume_refuses_a_directory_without_a_crawl(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    missing, empty, foreign = tmp_path / "typo", tmp_path / "empty", tmp_path / "foreign"
    empty.mkdir()
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    for directory in (missing, empty, foreign):
        capsys.readouterr()
        assert crawl(seeds, conf, directory, 1, "inline", "--resume") == 2
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and "--resume" in error[0] and str(directory) in error[0]
    assert not missing.exists() and not list(empty.iterdir())
    assert [path.name for path in foreign.iterdir()] == ["notes.txt"]


def test_a_new_crawl_refuses_a_directory_of_other_files(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine\n")
    assert crawl(seeds, conf, foreign, 1) == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "notes.txt" in error[0]
    assert [path.name for path in foreign.iterdir()] == ["notes.txt"]


def test_resume_with_other_seeds_is_refused(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 1) == 0
    state = (output / "crawl.json").read_bytes()
    other = tmp_path / "other-seeds.txt"
    other.write_text("\n".join(web_server.seeds[1:]) + "\n", encoding="utf-8")
    capsys.readouterr()
    assert crawl(other, conf, output, 2, "inline", "--resume") == 2
    error = capsys.readouterr().err.strip().splitlines()
    assert len(error) == 1 and "other-seeds.txt" in error[0] and "1 missing" in error[0]
    assert (output / "crawl.json").read_bytes() == state
