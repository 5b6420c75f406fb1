"""The `mrcrawl` command: each command is its `python -m` form, every --help is
complete and is in the documentation verbatim (docs/commands.md), and what a
crawl says goes to stderr at the level -v and -q choose.

The documentation's help blocks are rewritten from the commands by running this file:
`python tests/test_cli.py` (after a change to an option, or a new command).
"""
from __future__ import annotations

import ast
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
HELP_PAGES = [(), ("crawl",), ("export",), ("report",), ("db",), ("db", "stats"), ("db", "top"), ("db", "get"), ("db", "inlinks"),
              ("db", "dump"),
              ("inject",), ("show",), ("parsechecker",),
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


# ---- a reader that stops early ------------------------------------------------------------------

STDOUT_CLOSED = 128 + signal.SIGPIPE  # as a shell reports `cat` ended by a closed pipe
# stdout as Python buffers it when started from a shell or cron into a pipe
# (PYTHONUNBUFFERED, which may be set here, writes each print through), and unbuffered.
STDOUT_BUFFERING = {"buffered": {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"},
                    "unbuffered": {**os.environ, "PYTHONUNBUFFERED": "1"}}


def into_closed_pipe(command: list[str], buffering: str = "buffered") -> subprocess.CompletedProcess:
    """Run `command` with its stdout a pipe whose reader has already gone."""
    reading, writing = os.pipe()
    os.close(reading)
    try:
        return subprocess.run(command, stdout=writing, stderr=subprocess.PIPE, text=True, timeout=120, cwd=REPO,
                              env=STDOUT_BUFFERING[buffering])
    finally:
        os.close(writing)


@pytest.mark.parametrize("command", [None, *COMMANDS], ids=lambda command: command or "mrcrawl")
def test_every_command_ends_quietly_when_its_reader_has_gone(command):
    """What every command prints (here its --help; a db dump in
    tests/test_db_command.py) into a pipe closed early ends it as it ends
    `cat`: exit 141 and nothing on stderr, in each of its forms.  (Unbuffered,
    argparse ignores the failed write of a --help and exits 0.)"""
    words = [command] if command else []
    module = COMMANDS[command].module if command else "mrcrawl"
    for form in ([str(CONSOLE_SCRIPT), *words], [sys.executable, "-m", module]):
        ended = into_closed_pipe([*form, "--help"])
        assert (ended.returncode, ended.stderr) == (STDOUT_CLOSED, ""), form


# ---- options are never abbreviated ----------------------------------------------------------------

def parsers_built(path: Path) -> list[ast.Call]:
    """Every argparse parser a source file builds: an ArgumentParser (or a
    subclass named so) and every command's parser (add_parser)."""
    calls = [node for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))) if isinstance(node, ast.Call)]
    named = [(call, getattr(call.func, "id", getattr(call.func, "attr", ""))) for call in calls]
    return [call for call, name in named if name.endswith("ArgumentParser") or name == "add_parser"]


PROJECT_SOURCES = sorted([*(REPO / "mrcrawl").rglob("*.py"), *(REPO / "jobs").glob("*.py")])
PARSER_SOURCES = [path for path in PROJECT_SOURCES if parsers_built(path)]


def test_every_parser_the_project_builds_takes_no_abbreviation():
    """argparse takes `--scenario` for `--scenarios` unless told not to: a
    typo would then run something else than what was asked."""
    assert len(PARSER_SOURCES) >= 10  # the commands' modules and the benchmarks' at least
    for path in PARSER_SOURCES:
        for call in parsers_built(path):
            keywords = {keyword.arg: keyword.value for keyword in call.keywords}
            refused = isinstance(keywords.get("allow_abbrev"), ast.Constant) and keywords["allow_abbrev"].value is False
            assert refused, f"{path.relative_to(REPO)}:{call.lineno}: a parser without allow_abbrev=False"


def module_of(path: Path) -> str:
    name = path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    return name.removesuffix(".__main__")


@pytest.mark.parametrize("page", HELP_PAGES, ids=page_name)
def test_every_command_refuses_an_abbreviated_option(page):
    done = subprocess.run([str(CONSOLE_SCRIPT), *page, "--hel"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "", f"{page_name(page)} --hel was taken for --help"


@pytest.mark.parametrize("module", [module_of(path) for path in PARSER_SOURCES])
def test_every_module_with_a_parser_refuses_an_abbreviated_option(module):
    done = subprocess.run([sys.executable, "-m", module, "--hel"], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert done.returncode == 2 and done.stdout == "", f"python -m {module} --hel was taken for --help"


# ---- hints name the program that ran, as it runs from where it ran ----------------------------------

def path_without(directory: Path) -> str:
    return os.pathsep.join(entry for entry in os.environ.get("PATH", "").split(os.pathsep)
                           if entry and os.path.abspath(entry) != str(directory)) or os.defpath


def path_with(directory: Path) -> str:
    return os.pathsep.join([str(directory), path_without(directory)])


VENV_BIN = Path(sys.executable).parent
INTERPRETER = Path(sys.executable).name
# How the demo was run, from where, with which PATH; and how its hint must begin.
# The set-up's venv is not active, as after the README's set-up, but where it is said to be.
RUN_AS = {
    "the script by its path below the current directory": (
        lambda cwd: [os.path.relpath(CONSOLE_SCRIPT, cwd), "testweb"], "venv's parent", path_without(VENV_BIN),
        lambda cwd: f"{os.path.relpath(CONSOLE_SCRIPT, cwd)} testweb"),
    "the script by its path from elsewhere": (
        lambda cwd: [str(CONSOLE_SCRIPT), "testweb"], "elsewhere", path_without(VENV_BIN),
        lambda cwd: f"{CONSOLE_SCRIPT} testweb"),
    "the script on PATH (an active venv)": (
        lambda cwd: ["mrcrawl", "testweb"], "elsewhere", path_with(VENV_BIN), lambda cwd: "mrcrawl testweb"),
    "the module, by the interpreter's path": (
        lambda cwd: [sys.executable, "-m", "mrcrawl.testweb"], "elsewhere", path_without(VENV_BIN),
        lambda cwd: f"{sys.executable} -m mrcrawl.testweb"),
    "python -m mrcrawl, the interpreter on PATH": (
        lambda cwd: [INTERPRETER, "-m", "mrcrawl", "testweb"], "elsewhere", path_with(VENV_BIN),
        lambda cwd: f"{INTERPRETER} -m mrcrawl testweb"),
}


@pytest.mark.parametrize("way", RUN_AS)
def test_a_hint_names_the_program_that_ran_as_it_runs_from_there(tmp_path, way):
    command, where, search_path, expected = RUN_AS[way]
    cwd = VENV_BIN.parent.parent if where == "venv's parent" else tmp_path
    output = tmp_path / "demo"
    (tmp_path / "demo-inputs").mkdir()
    (tmp_path / "demo-inputs" / "seeds.txt").write_text("http://127.0.0.2:9/\n", encoding="utf-8")
    environment = {**os.environ, "PATH": search_path}
    # A second demo into the same directory is refused with the command that continues the first.
    refused = subprocess.run([*command(cwd), "demo", "--output", str(output)], cwd=cwd, env=environment,
                             capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2, refused.stderr
    hint = refused.stderr.split("continue it with `", 1)[1].split("`", 1)[0]
    assert hint == f"{expected(cwd)} demo --resume --output {output}"
    # The hint runs as printed, from there: the demo answers it (its inputs are no demo's), not the shell.
    ran = subprocess.run(["bash", "-c", hint], cwd=cwd, env=environment, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 2 and ran.stderr.startswith("mrcrawl testweb demo --resume: "), ran.stderr


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
        process = subprocess.Popen(command, env={**os.environ, "MRCRAWL_PAUSE_AT": "start parse/0",
                                                 "PATH": path_without(VENV_BIN)},
                                   cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
    # The script by its path: it is not on PATH, and not below the directory the run started in.
    assert kept.endswith(f"then run: {CONSOLE_SCRIPT} crawl {seeds} --depth 1 --conf {conf} --output {output} "
                         "--runner local -q --resume")
    assert "parse/0" not in json.loads((output / "crawl.json").read_text())["done"]


# ---- rewriting the documentation's help blocks --------------------------------------------------

def rewrite_readme() -> None:
    """Put each page's --help into the documentation under its marker, where a block is already marked."""
    for document in DOCUMENTATION:
        lines = document.read_text(encoding="utf-8").splitlines()
        if not any(MARKER.match(line) for line in lines):
            continue
        for number in reversed(range(len(lines))):  # from the end: a block's new length moves none still to do
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
