"""--resume after a run dies midway, and the guards around an existing crawl directory."""
from __future__ import annotations

import json
import signal
import subprocess
import time

from crawl_support import crawl, driver_command, layer_triples, write_inputs
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
    assert {"merge/4", "xml/4"} <= set(done)
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
    assert "same config" in capsys.readouterr().err


def test_resume_of_a_finished_crawl_goes_deeper(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 2) == 0
    assert crawl(seeds, conf, output, 3, "inline", "--resume") == 0
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=3)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    done = json.loads((output / "crawl.json").read_text())["done"]
    assert "merge/3" in done and "optimize/1" in done
