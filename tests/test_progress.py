"""Live progress while a step runs: plain lines without a terminal, a redrawn bar on one."""
from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import struct
import subprocess
import termios
import time
from collections import Counter

import pytest

from crawl_support import driver_command, frontier, web_agent_token, write_inputs
from mrcrawl.page.urls import host_key
from mrcrawl.progress import BAR_WIDTH
from mrcrawl.testweb import expected_layers_for_config, start_test_web

DEPTH = 2
# Layer 1's busiest host of the test web has 13 URLs: at this delay the layer
# takes over 5 s, long enough for several progress lines.
DELAY = 0.4
EVERY = 0.5
CRAWL_TIMEOUT = 240
LINE = re.compile(r"^crawl/1: (\d+)/(\d+) pages; [\d.]+ pages/s(?:; (?P<outcomes>[a-z_]+ \d+(?:, [a-z_]+ \d+)*))?"
                  r"(?:; \d+ hosts? busy)?(?:; ETA (?P<eta>\d+) s \((?:politeness bound|at the rate so far)\))?"
                  r"; (?P<elapsed>\d+) s elapsed$")


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1) as server:
        yield server


def crawl_args(server, directory, *extra: str) -> tuple[list[str], dict]:
    server.reset_flaky()
    seeds, conf, config = write_inputs(server, directory, delay=DELAY)
    return driver_command(seeds, conf, directory / "crawl", DEPTH, *extra), config


def layer_bound(server, config: dict, layer: int) -> float:
    """The oracle's politeness bound of a layer: its busiest host's URLs x that host's delay."""
    records = expected_layers_for_config(server.web, config, server.seeds, DEPTH)[layer]
    per_host = Counter(host_key(url) for url, _, _ in records)
    bounds = []
    for origin, urls in per_host.items():
        crawl_delay = server.web.host(origin + "/").robots.crawl_delay(web_agent_token())
        bounds.append(urls * max(config["delay"], min(crawl_delay or 0.0, config["max_crawl_delay"])))
    return max(bounds)


@pytest.fixture(scope="module", params=["inline", "local"])
def piped_crawl(request, server, tmp_path_factory):
    """A crawl whose stderr is a pipe, with a progress line every EVERY seconds."""
    directory = tmp_path_factory.mktemp(f"piped-{request.param}")
    command, config = crawl_args(server, directory, "--runner", request.param, "--progress-every", str(EVERY))
    done = subprocess.run(command, capture_output=True, text=True, timeout=CRAWL_TIMEOUT)
    assert done.returncode == 0, done.stderr
    return directory / "crawl", config, done.stderr.splitlines()


def test_plain_lines_follow_the_crawl_step(server, piped_crawl):
    output, config, stderr = piped_crawl
    lines = [line for line in stderr if line.startswith("crawl/1:")]
    parsed = [LINE.match(line) for line in lines]
    assert lines and all(parsed), "\n".join(line for line, match in zip(lines, parsed) if not match) or stderr
    done = [int(match[1]) for match in parsed]
    totals = {int(match[2]) for match in parsed}
    frontier_size = len(frontier(output, 1))
    # Several lines while the step ran, counts that only grow, ending at the frontier.
    assert len(lines) >= 4 and any(0 < count < frontier_size for count in done)
    assert done == sorted(done) and done[-1] == frontier_size and totals == {frontier_size}
    counters = json.loads((output / "stats.json").read_text())["crawl/1"]["counters"]
    final = dict((name, int(count)) for name, count in (pair.split(" ") for pair in parsed[-1]["outcomes"].split(", ")))
    assert final == counters["outcome"]
    # No ETA is below what politeness still demands: by `elapsed` seconds into the
    # step, a host of N URLs has had at most elapsed / delay + 1 of them fetched.
    bound = layer_bound(server, config, 1)
    assert bound >= 10 * DELAY
    etas = [(int(match["eta"]), int(match["elapsed"])) for match in parsed if match["eta"] and int(match[1]) > 0]
    assert len(etas) >= 3, lines
    for eta, elapsed in etas:
        # The line rounds both to whole seconds: 1 s of margin, and one delay for the request in flight.
        assert eta >= bound - DELAY - (elapsed + 0.5) - 1, (eta, elapsed, bound, lines)


def run_on_a_terminal(command: list[str], columns: int) -> str:
    """Run `command` with a pseudo-terminal `columns` wide as its stderr; what it wrote there."""
    controller, terminal = pty.openpty()
    # A new pseudo-terminal is 0 columns wide; a terminal window has a size.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24 if columns else 0, columns, 0, 0))
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=terminal)
    os.close(terminal)
    seen = b""
    deadline = time.monotonic() + CRAWL_TIMEOUT
    try:
        while time.monotonic() < deadline:
            if select.select([controller], [], [], 1.0)[0]:
                try:
                    chunk = os.read(controller, 65536)
                except OSError:  # the crawl ended and closed the terminal
                    break
                if not chunk:
                    break
                seen += chunk
            elif process.poll() is not None:
                break
        assert process.wait(timeout=30) == 0, seen.decode(errors="replace")[-2000:]
    finally:
        os.close(controller)
        if process.poll() is None:
            process.kill()
    return seen.decode("utf-8", errors="replace")


def test_a_terminal_sees_a_redrawn_bar(server, tmp_path):
    command, config = crawl_args(server, tmp_path, "--runner", "inline")
    layer_urls = len(expected_layers_for_config(server.web, config, server.seeds, DEPTH)[1])
    text = run_on_a_terminal(command, columns=120)
    draws = re.findall(rf"\rcrawl/1: +\d+%\|([^|]*)\| (\d+)/{layer_urls} pages, [\d.]+ pages/s", text)
    # The bar is drawn over itself, in place, several times while the layer runs, and counts up.
    assert len(draws) >= 4, text[-2000:]
    counts = [int(count) for _, count in draws]
    assert counts == sorted(counts) and counts[-1] > counts[0]
    # The count is shown once, and the bar keeps its width whatever follows it.
    assert not re.search(r"\d+/\d+, \d+/\d+ pages", text), text[-2000:]
    assert {len(bar) for bar, _ in draws} == {BAR_WIDTH}, draws


def test_a_terminal_with_no_size_sees_the_plain_lines(server, tmp_path):
    """A pseudo-terminal a program makes has no size until it is given one:
    a bar there would be drawn 0 characters wide, and show nothing."""
    command, config = crawl_args(server, tmp_path, "--runner", "inline", "--progress-every", str(EVERY))
    text = run_on_a_terminal(command, columns=0)
    lines = [line for line in text.replace("\r\n", "\n").split("\n") if line.startswith("crawl/1:")]
    assert len(lines) >= 4 and all(LINE.match(line) for line in lines), text[-2000:]
    layer_urls = len(expected_layers_for_config(server.web, config, server.seeds, DEPTH)[1])
    assert int(LINE.match(lines[-1])[1]) == layer_urls
    assert "\r" not in text.replace("\r\n", "\n")  # nothing drawn over itself
