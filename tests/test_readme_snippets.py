"""The "Reading the outputs" snippets of the documentation run as written on the demo's crawl.

The demo runs for real from a scratch directory, as a user runs it from the
checkout, and every fenced block of the section is taken from the
documentation (README.md and docs/*.md, where docs/outputs.md holds it) and
run there as it stands: a snippet added to the section is run too.
"""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from mrcrawl.testweb import expected_layers_for_config, generate_web, seeds
from test_testweb import checkout_env, demo_port, run_demo

REPO = Path(__file__).resolve().parent.parent
DOCUMENTATION = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]  # each page opens with a "# " heading
SECTION = "### Reading the outputs"
DEMO_DEPTH = 3  # the demo's default
# How each language's blocks run, as written, from the directory the demo ran in.
RUNNERS = {
    "python": lambda code: ([sys.executable, "-c", code], None),
    "sql": lambda code: ([sys.executable, "-c", "import duckdb, sys; duckdb.sql(sys.stdin.read()).show()"], code),
}
ILLUSTRATIONS = {"xml"}  # blocks that show a format rather than code to run
LEADING_URL = re.compile(r"^https?://\S+", re.M)  # a URL that opens a line: the page the line is about


def section_blocks(markdown: str, heading: str) -> list[tuple[str, str, str]]:
    """(language, label, code) of every fenced block under `heading`, up to the
    next heading of its level or above; the label is the bold phrase that last
    opened a paragraph, for the test's name."""
    level = len(heading) - len(heading.lstrip("#"))
    blocks, inside, fence, label = [], False, None, "top"
    for line in markdown.splitlines():
        if fence is not None:  # inside a fenced block: a "# comment" there is no heading
            if line.strip().startswith("```"):
                if inside:
                    blocks.append((language, label, "\n".join(fence) + "\n"))
                fence = None
            else:
                fence.append(line)
        elif line.strip().startswith("```"):
            language, fence = line.strip()[3:].strip(), []
        elif line.startswith("#"):
            depth = len(line) - len(line.lstrip("#"))
            if line.strip() == heading:
                inside = True
            elif inside and depth <= level:
                break
        elif bold := re.match(r"\*\*(.+?)\*\*", line):
            label = bold.group(1)
    return blocks


BLOCKS = section_blocks("\n".join(page.read_text(encoding="utf-8") for page in DOCUMENTATION), SECTION)
RUNNABLE = [block for block in BLOCKS if block[0] not in ILLUSTRATIONS]


def test_the_section_is_found_and_every_block_in_it_can_be_run():
    languages = [language for language, _, _ in BLOCKS]
    assert languages.count("python") >= 4, languages
    assert set(languages) <= set(RUNNERS) | ILLUSTRATIONS, f"no way to run {set(languages) - set(RUNNERS) - ILLUSTRATIONS}"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The directory the demo ran in, what it printed, and every URL its crawl attempted."""
    cwd = tmp_path_factory.mktemp("reader")
    done = run_demo(cwd)
    assert done.returncode == 0, done.stderr
    web = generate_web(seed=1, port=demo_port(cwd))
    layers = expected_layers_for_config(web, web.crawl_config(), seeds(web), depth=DEMO_DEPTH)
    attempted = {url for layer in layers for requested, _, final in layer for url in (requested, final)}
    return cwd, done.stdout, web, attempted


@pytest.mark.parametrize("language, label, code", RUNNABLE,
                         ids=[f"{language}-{label}" for language, label, _ in RUNNABLE])
def test_snippet_runs_as_written_on_the_demo_crawl(demo, language, label, code):
    cwd, demo_stdout, web, attempted = demo
    if language == "python":  # it names the crawl directory first, as the demo prints it
        first_line = code.splitlines()[0]
        assert re.fullmatch(r'crawl = "[^"]+"', first_line), first_line
        assert first_line in demo_stdout
    command, stdin = RUNNERS[language](code)
    done = subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=120, cwd=cwd, env=checkout_env())
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    printed = done.stdout
    assert any(host.address in printed for host in web.hosts), f"nothing about the test web:\n{printed}"
    urls = set(LEADING_URL.findall(printed))
    assert urls <= attempted, f"not URLs the crawl attempted: {sorted(urls - attempted)[:5]}"
    if language == "python":
        assert urls, f"no line about a page of the crawl:\n{printed}"
