"""A crawl that achieves nothing says why and does not exit 0; a bad --output is one line."""
from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path

import yaml

from crawl_support import crawl, crawl_docs, write_inputs
from mrcrawl.driver import EXIT_NOTHING_FETCHED, EXIT_USAGE
from mrcrawl.store.failures import FailureKind, no_page_advice


def closed_port() -> int:
    """A loopback port that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.2", 0))
        return probe.getsockname()[1]


def write_unanswered_inputs(directory: Path) -> tuple[Path, Path]:
    """A seed file of three URLs on two hosts where nothing listens, and a config for them."""
    port = closed_port()
    seeds = directory / "seeds.txt"
    seeds.write_text(f"http://127.0.0.2:{port}/\nhttp://127.0.0.2:{port}/news\nhttp://127.0.0.3:{port}/\n")
    conf = directory / "dead.yaml"
    conf.write_text(yaml.safe_dump({"language": "en", "user_agent": "mrcrawl-test/1.0 (+http://127.0.0.1/)",
                                    "allow_private_networks": True, "delay": 0, "retries": 1, "timeout": 1}))
    return seeds, conf


def test_seeds_nobody_answers_exit_non_zero_naming_the_cause(tmp_path, capsys):
    seeds, conf = write_unanswered_inputs(tmp_path)
    output = tmp_path / "crawl"

    assert crawl(seeds, conf, output, 2) == EXIT_NOTHING_FETCHED
    said = capsys.readouterr()
    assert said.out == ""  # the run's progress and its end are said on stderr
    line = said.err.strip().splitlines()[-1]
    assert line.startswith("mrcrawl: no page fetched: ")
    # Each URL's robots.txt was refused: the URLs fail with the kind of what
    # kept robots.txt from being read, and the advice is that kind's.
    assert line.endswith(f"{FailureKind.REFUSED.label} (3 of 3 URLs); {no_page_advice(FailureKind.REFUSED, str(conf))}")
    # The step's summary counts what was sent apart from what never left the
    # machine, and names the error's kind with its count.
    assert "0 requests sent, 4 could not connect" in said.err
    assert re.search(rf"^ +3 × {re.escape(FailureKind.REFUSED.label)}$", said.err, re.M)
    counters = json.loads((output / "stats.json").read_text())["crawl/0"]["counters"]
    assert counters["error"] == {"refused": 3}
    assert {(doc["outcome"], doc["error_kind"]) for doc in crawl_docs(output)} == {("robots_denied", "refused")}
    assert all("robots.txt unreachable (NewConnectionError" in doc["error"] and "Connection refused" in doc["error"]
               for doc in crawl_docs(output))


def test_seeds_blocked_by_the_private_network_guard_name_the_key_that_allows_them(web_server, tmp_path, capsys):
    seeds, conf, _ = write_inputs(web_server, tmp_path, allow_private_networks=False)
    assert crawl(seeds, conf, tmp_path / "crawl", 1, "inline", "-q") == EXIT_NOTHING_FETCHED
    [line] = capsys.readouterr().err.strip().splitlines()  # -q: the error alone
    assert FailureKind.BLOCKED_PRIVATE.label in line
    assert f"set allow_private_networks: true in {conf}" in line
    assert not web_server.log  # nothing was requested


def test_an_output_that_is_a_file_is_one_line_and_exit_2(web_server, tmp_path):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    taken = tmp_path / "taken"
    taken.write_text("a file\n")
    command = [sys.executable, "-m", "mrcrawl.driver", str(seeds), "--depth", "1", "--conf", str(conf), "--output", str(taken)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == EXIT_USAGE
    assert result.stderr.strip().splitlines() == [f"--output {taken}: exists and is not a directory"]
    assert taken.read_text() == "a file\n"
