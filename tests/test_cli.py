"""The `mrcrawl` command: each command is its `python -m` form, every --help is
complete and is in the documentation verbatim (docs/commands.md), and what a
crawl says goes to stderr at the level -v and -q choose.

The documentation's help blocks are rewritten from the commands by running this file:
`python tests/test_cli.py` (after a change to an option, or a new command).
"""
from __future__ import annotations

import functools
import json
import os
import re
import signal
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path

import pytest

from crawl_support import write_inputs
from mrcrawl.cli import COMMANDS
from mrcrawl.testweb import start_test_web

REPO = Path(__file__).resolve().parent.parent
# The documentation: README.md and the pages of docs/ (the help blocks are in docs/commands.md).
DOCUMENTATION = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
CONSOLE_SCRIPT = Path(sys.executable).parent / "mrcrawl"  # as pip installs it ([project.scripts])
# argparse wraps help to the terminal's width: the same width here and in the documentation.
HELP_ENV = {**os.environ, "COLUMNS": "100"}
# Every help page a user can ask for: the command's, each command's, and each of their commands'.
HELP_PAGES = [(), ("crawl",), ("export",), ("report",), ("db",), ("db", "stats"), ("db", "get"), ("db", "dump"),
              ("bench",), ("testweb",), ("testweb", "serve"), ("testweb", "demo")]
MARKER = re.compile(r"^<!-- help: (mrcrawl[a-z ]*) -->$")


def page_name(page: tuple) -> str:
    return " ".join(("mrcrawl", *page))


@functools.cache
def help_of(*command: str) -> str:
    done = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=120, env=HELP_ENV, cwd=REPO)
    assert done.returncode == 0, f"{' '.join(command)} --help: exit {done.returncode}\n{done.stderr}"
    assert done.stderr == ""
    return done.stdout


def readme_helps(markdown: str) -> dict[str, str]:
    """Each help block of a page by its marker's command: the fenced block right after the marker."""
    lines, blocks = markdown.splitlines(), {}
    for number, line in enumerate(lines):
        marked = MARKER.match(line)
        if marked:
            assert lines[number + 1] == "```text", f"line {number + 2}: the help block must follow its marker"
            end = lines.index("```", number + 2)
            blocks[marked.group(1)] = "\n".join(lines[number + 2:end]) + "\n"
    return blocks


def documented_helps() -> dict[str, str]:
    """The help blocks of every page of the documentation, by their markers' commands."""
    blocks = {}
    for page in DOCUMENTATION:
        blocks.update(readme_helps(page.read_text(encoding="utf-8")))
    return blocks


# ---- one command, each the same as its python -m form -----------------------------------------

def test_mrcrawl_help_lists_every_command_with_its_line():
    listed = help_of(str(CONSOLE_SCRIPT))
    assert listed.startswith("usage: mrcrawl ")
    for name, command in COMMANDS.items():
        assert re.search(rf"^    {name} +{re.escape(command.summary)}$", listed, re.M), name
    assert help_of(sys.executable, "-m", "mrcrawl") == listed


@pytest.mark.parametrize("command", COMMANDS)
def test_each_command_prints_the_help_of_its_python_m_form(command):
    module = COMMANDS[command].module
    expected = help_of(sys.executable, "-m", module)
    assert expected.startswith(f"usage: mrcrawl {command} ")
    assert help_of(str(CONSOLE_SCRIPT), command) == expected
    assert help_of(sys.executable, "-m", "mrcrawl", command) == expected


@pytest.mark.parametrize("page", [page for page in HELP_PAGES if len(page) == 2], ids=page_name)
def test_the_commands_of_a_command_print_the_same_help_both_ways(page):
    command, inner = page
    assert help_of(str(CONSOLE_SCRIPT), command, inner) == help_of(sys.executable, "-m", COMMANDS[command].module, inner)


@pytest.mark.parametrize("arguments, named", [([], "COMMAND"), (["crawling"], "'crawling'"), (["--crawl"], "--crawl")])
def test_no_or_an_unknown_command_is_a_usage_error_naming_it(arguments, named):
    done = subprocess.run([str(CONSOLE_SCRIPT), *arguments], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("usage: mrcrawl ")
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith("mrcrawl: error: ") and named in error


def test_version():
    done = subprocess.run([str(CONSOLE_SCRIPT), "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"mrcrawl {metadata.version('mrcrawl')}\n")


# ---- complete help, in the documentation verbatim -------------------------------------------------

@pytest.mark.parametrize("page", HELP_PAGES, ids=page_name)
def test_every_argument_and_option_has_a_help_text(page):
    """An entry of a help's argument lists is followed by its text, on its
    line or indented on the next; an entry alone is one without help."""
    lines = help_of(str(CONSOLE_SCRIPT), *page).splitlines()
    entries, in_a_list = 0, False
    for number, line in enumerate(lines):
        if line and not line[0].isspace():  # a heading ("options:") opens a list; other text does not
            in_a_list = line.endswith(":")
            continue
        entry = re.match(r"^( {2}| {4})(\S.*)$", line)
        if not (in_a_list and entry):
            continue
        entries += 1
        on_its_line = re.search(r"\S {2,}\S", entry.group(2))
        following = lines[number + 1] if number + 1 < len(lines) else ""
        on_the_next = len(following) - len(following.lstrip()) > len(entry.group(1)) + 2
        listing_commands = entry.group(2) == "COMMAND"  # the commands follow, each with its text
        assert on_its_line or on_the_next or listing_commands, f"{page_name(page)} --help: no text for {line.strip()!r}"
    assert entries >= 2


def test_the_readme_has_one_help_block_per_help_page():
    assert sorted(documented_helps()) == sorted(map(page_name, HELP_PAGES))


@pytest.mark.parametrize("page", HELP_PAGES, ids=page_name)
def test_the_readme_shows_each_help_as_the_command_prints_it(page):
    shown = documented_helps().get(page_name(page))
    assert shown == help_of(str(CONSOLE_SCRIPT), *page), \
        "the documentation's help block differs from --help: rewrite the blocks with `python tests/test_cli.py`"


# ---- what a crawl says, at each level ---------------------------------------------------------

@pytest.fixture(scope="module")
def crawls(tmp_path_factory):
    """One depth-1 crawl of the test web per level: by default, with -q, with -v."""
    directory = tmp_path_factory.mktemp("levels")
    done = {}
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, directory)
        for level in ("", "-q", "-v"):
            output = directory / f"crawl{level}"
            command = [str(CONSOLE_SCRIPT), "crawl", str(seeds), "--depth", "1", "--conf", str(conf),
                       "--output", str(output), *([level] if level else [])]
            done[level] = subprocess.run(command, capture_output=True, text=True, timeout=300)
            server.wait_idle()
    return done


def test_a_crawl_says_its_progress_on_stderr_and_nothing_on_stdout(crawls):
    run = crawls[""]
    assert run.returncode == 0, run.stderr
    assert run.stdout == ""
    said = run.stderr.splitlines()
    assert said[0].startswith("mrcrawl: crawl 'testweb' (en), depth 1, runner inline")
    assert any(re.match(r"^  crawl/0 +[\d.]+ s  3 URLs in: fetched 3", line) for line in said), run.stderr
    assert said[-2].startswith("done in ") and said[-1].startswith("report: ") and said[-1].endswith("/crawl/report.html")
    assert not [line for line in said if line.startswith("mrjob")], "mrjob's own lines without -v"


def test_quiet_says_nothing_when_all_goes_well(crawls):
    run = crawls["-q"]
    assert (run.returncode, run.stdout, run.stderr) == (0, "", "")


def test_verbose_adds_mrjobs_own_lines(crawls):
    run, default = crawls["-v"], crawls[""]
    assert run.returncode == 0, run.stderr
    mrjob_lines = [line for line in run.stderr.splitlines() if re.match(r"^mrjob(\.\w+)*: INFO: ", line)]
    assert mrjob_lines, run.stderr
    ours = lambda text: [re.sub(r"[\d.]+", "#", line) for line in text.splitlines() if line.startswith(("  crawl/", "layer "))]
    assert ours(run.stderr) == ours(default.stderr)


def test_a_failed_step_names_mrjobs_cause_even_with_q(tmp_path):
    """A Parser task fails on a store that is not JSON lines: mrjob's cause,
    read from the task's stderr, reaches the user."""
    with start_test_web(seed=1) as server:
        seeds, conf, _ = write_inputs(server, tmp_path)
        output = tmp_path / "crawl"
        command = [str(CONSOLE_SCRIPT), "crawl", str(seeds), "--depth", "1", "--conf", str(conf), "--output", str(output),
                   "--runner", "local", "-q"]
        # The run stops itself before the Parser starts (store.crawl_store.PAUSE_AT): its input is then spoilt.
        process = subprocess.Popen(command, env={**os.environ, "MRCRAWL_PAUSE_AT": "start parse/0"},
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            deadline = time.monotonic() + 120
            while Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "T":
                assert process.poll() is None and time.monotonic() < deadline, "the run did not reach parse/0"
                time.sleep(0.05)
            for part in (output / "doc" / "0").glob("part-*"):
                part.write_text("not a JSON line\n", encoding="utf-8")
            os.kill(process.pid, signal.SIGCONT)
            stdout, stderr = process.communicate(timeout=120)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
    assert process.returncode == 1 and stdout == ""
    assert "Probable cause of failure" in stderr and "ValueError: not enough values to unpack" in stderr, stderr
    failed, kept = stderr.strip().splitlines()[-2:]
    assert failed.startswith("mrcrawl: parse/0 failed: ")
    assert kept.endswith(f"then run: mrcrawl crawl {seeds} --depth 1 --conf {conf} --output {output} --runner local -q --resume")
    assert "parse/0" not in json.loads((output / "crawl.json").read_text())["done"]


# ---- rewriting the documentation's help blocks --------------------------------------------------

def rewrite_readme() -> None:
    """Put each page's --help into the documentation under its marker, where a block is already marked."""
    for document in DOCUMENTATION:
        lines = document.read_text(encoding="utf-8").splitlines()
        if not any(MARKER.match(line) for line in lines):
            continue
        for number in range(len(lines)):
            marked = MARKER.match(lines[number])
            if marked:
                end = lines.index("```", number + 2)
                try:
                    text = help_of(str(CONSOLE_SCRIPT), *marked.group(1).split()[1:]).rstrip("\n").splitlines()
                except AssertionError as error:
                    print(f"left as it was: {marked.group(1)}: {error}".splitlines()[0], file=sys.stderr)
                    continue
                lines[number + 2:end] = text
        document.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    rewrite_readme()
