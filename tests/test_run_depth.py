"""run_depth.sh, the daily cron entry, crawling the loopback test web.

The script is run as cron would run it: by bash, from a directory that is
not the repository, with its seeds, output root and interpreter given by
MRCRAWL_SEEDS, MRCRAWL_ROOT and PYTHON; and, for the documented crontab line,
exactly as cron runs it, from a checkout laid out as the README's set-up
leaves one.
"""
from __future__ import annotations

import fcntl
import json
import os
import pwd
import re
import shlex
import shutil
import site
import socket
import subprocess
import sys
import venv
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from mrcrawl.testweb import start_test_web

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "run_depth.sh"
LANG = "testweb"


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1) as server:
        yield server


@pytest.fixture
def seeds(tmp_path, server) -> Path:
    """A seeds directory holding one language: the test web."""
    directory = tmp_path / "seeds"
    directory.mkdir()
    (directory / f"{LANG}.txt").write_text("\n".join(server.seeds) + "\n", encoding="utf-8")
    (directory / f"{LANG}.yaml").write_text(yaml.safe_dump(server.web.crawl_config()), encoding="utf-8")
    return directory


def zone_on_another_date() -> str:
    """A POSIX TZ twelve hours from UTC on the side where the date differs now,
    so that a directory named by local time instead of UTC would be found wrong."""
    return "XXX+12" if datetime.now(timezone.utc).hour < 12 else "XXX-12"


def run_depth(tmp_path: Path, seeds: Path, *args: str, script: Path = SCRIPT, cwd: Path | None = None,
              python: str | None = sys.executable) -> subprocess.CompletedProcess:
    """Run the script from `cwd` (default: tmp_path), with PYTHON=`python`, or with no PYTHON if None."""
    env = dict(os.environ, MRCRAWL_SEEDS=str(seeds), MRCRAWL_ROOT=str(tmp_path / "crawl"), TZ=zone_on_another_date())
    env.pop("PYTHONPATH", None)  # the script must find the project by itself
    env.pop("PYTHON", None)
    if python is not None:
        env["PYTHON"] = python
    return subprocess.run(["bash", str(script), *args], cwd=cwd or tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def utc_day() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def dated_dir(tmp_path: Path, lang: str, days: set[str]) -> Path:
    """The one dated crawl directory of `lang`, its date one of `days` (a run may pass midnight)."""
    [found] = [tmp_path / "crawl" / lang / day for day in sorted(days) if (tmp_path / "crawl" / lang / day).is_dir()]
    return found


def done_steps(crawl: Path) -> set[str]:
    return set(json.loads((crawl / "crawl.json").read_text(encoding="utf-8"))["done"])


def finished(crawl: Path) -> bool:
    """Whether the crawl ran to its merge and XML steps (whatever layers their names count)."""
    return {"merge", "xml"} <= {step.split("/")[0] for step in done_steps(crawl)}


def test_one_language_crawls_into_its_utc_dated_directory_then_resumes_the_same_day(tmp_path, seeds):
    before = utc_day()
    first = run_depth(tmp_path, seeds, LANG, "1", "--", "--export", "index")
    days = {before, utc_day()}
    assert first.returncode == 0, first.stderr
    crawl = dated_dir(tmp_path, LANG, days)
    assert first.stdout == f"{LANG}: ok ({crawl})\n" and first.stderr == ""
    assert {"crawl/0", "parse/0"} <= done_steps(crawl) and finished(crawl)
    assert not {"crawl/1", "parse/1"} & done_steps(crawl)  # depth 1
    assert any(part.stat().st_size for part in (crawl / "doc" / "0").glob("part-*"))
    assert list((crawl / "index").glob("*.parquet"))  # the extra driver arguments reached the driver
    log = crawl.with_name(crawl.name + ".log")
    text = log.read_text(encoding="utf-8")
    assert f"mrcrawl: crawl '{LANG}'" in text and "exit status 0" in text  # the driver's output went to the log

    second = run_depth(tmp_path, seeds, LANG, "1")
    assert second.returncode == 0, second.stderr
    assert dated_dir(tmp_path, LANG, days | {utc_day()}) == crawl
    rerun = log.read_text(encoding="utf-8")[len(text):]
    # Without --resume the driver would refuse a directory holding a crawl.
    assert rerun.splitlines()[0].endswith(f"run_depth.sh: {LANG}, depth 1, --resume")
    assert re.search(r"^  crawl/0 +already done$", rerun, re.M) and "exit status 0" in rerun


@pytest.mark.parametrize("now_args, day, run", [
    # Late on the 5th in New York is the 6th in UTC: the directory is named by the UTC date.
    (["--now", "2026-01-05T23:30:00-05:00"], "2026-01-06", "2026-01-06T04:30:00"),
    (["--now=2024-02-29T06:00:00Z"], "2024-02-29", "2024-02-29T06:00:00"),
])
def test_the_days_directory_follows_the_drivers_now(tmp_path, seeds, now_args, day, run):
    crawl = tmp_path / "crawl" / LANG / day
    first = run_depth(tmp_path, seeds, LANG, "1", "--", *now_args)
    assert first.returncode == 0, first.stderr
    assert first.stdout == f"{LANG}: ok ({crawl})\n"
    assert sorted(path.name for path in crawl.parent.iterdir()) == [".lock", day, f"{day}.log", "db"]  # no other day
    assert json.loads((crawl / "crawl.json").read_text(encoding="utf-8"))["run"].startswith(run)
    assert finished(crawl)
    # The same day again resumes it: the driver takes the same --now with --resume.
    again = run_depth(tmp_path, seeds, LANG, "1", "--", *now_args)
    assert again.returncode == 0, again.stderr
    assert again.stdout == first.stdout
    assert crawl.with_name(f"{day}.log").read_text(encoding="utf-8").count(", --resume") == 1


def test_all_names_the_language_that_failed_and_still_crawls_the_others(tmp_path, seeds):
    (seeds / "broken.txt").write_text("http://127.0.0.2/\n", encoding="utf-8")
    (seeds / "broken.yaml").write_text("name: broken\nlanguage: [unclosed\n", encoding="utf-8")
    before = utc_day()
    result = run_depth(tmp_path, seeds, "all", "1")
    days = {before, utc_day()}

    assert result.returncode == 1
    assert "broken: FAILED with status 2" in result.stderr and result.stderr.splitlines()[-1] == "failed: broken"
    assert "broken.yaml" in result.stderr  # the end of its log says what is wrong
    assert LANG not in result.stderr
    # "broken" sorts first: its failure did not stop the good language.
    crawl = dated_dir(tmp_path, LANG, days)
    assert result.stdout == f"{LANG}: ok ({crawl})\n"
    assert finished(crawl)


def test_a_language_whose_lock_is_held_is_not_started(tmp_path, seeds):
    lock_path = tmp_path / "crawl" / LANG / ".lock"
    lock_path.parent.mkdir(parents=True)
    before = utc_day()
    with open(lock_path, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # as a running crawl of the language holds it
        result = run_depth(tmp_path, seeds, LANG, "1")
    assert result.returncode == 1
    assert f"{LANG}: FAILED: not started, another run of {LANG} holds {lock_path}" in result.stderr
    assert result.stderr.splitlines()[-1] == f"failed: {LANG}"
    # Nothing was crawled or logged.
    assert sorted(path.name for path in lock_path.parent.iterdir()) == [".lock"], (before, utc_day())


@pytest.mark.parametrize("args, message", [
    ([], "usage: "),
    (["nosuch"], "no {seeds}/nosuch.yaml"),
    (["../seeds/testweb"], "is not a language name"),
    ([LANG, "0"], "depth: must be a whole number of at least 1"),
    ([LANG, "1", "--runner", "local"],
     "{script}: --runner is misplaced: driver options go after --, as in: {script} testweb 1 -- --runner local"),
    ([LANG, "--runner=local", "--", "-q"],
     "--runner=local is misplaced: driver options go after --, as in: {script} testweb -- --runner=local -q"),
    (["--runner", "local", LANG], "--runner is misplaced: the language comes first"),
    ([LANG, "1", "--", "--now", "yesterday"], "argument --now: not an ISO 8601 time: 'yesterday'"),
    ([LANG, "1", "--", "--now"], "argument --now: expected one argument"),
])
def test_bad_usage_exits_2_and_crawls_nothing(tmp_path, seeds, args, message):
    result = run_depth(tmp_path, seeds, *args)
    assert result.returncode == 2
    assert message.format(seeds=seeds, script=SCRIPT) in result.stderr
    assert not (tmp_path / "crawl").exists()


def make_venv(directory: Path, *, with_dependencies: bool) -> Path:
    """A virtual environment made as `python3 -m venv` makes it; its python.

    with_dependencies gives it the packages of the interpreter running these
    tests, through a .pth file, where the README's set-up would `pip install`
    them (which needs the network).  Without, it is a venv made and never
    installed into."""
    venv.create(directory, symlinks=True, with_pip=False)
    if with_dependencies:
        [site_packages] = directory.glob("lib/python*/site-packages")
        package_dirs = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
        (site_packages / "test-dependencies.pth").write_text(
            "".join(f"import site; site.addsitedir({path!r})\n" for path in package_dirs), encoding="utf-8")
    return directory / "bin" / "python"


def make_checkout(directory: Path, *, venv_with_dependencies: bool) -> Path:
    """A checkout of the project outside the repository, as the README's set-up
    leaves one: the script, the source it runs, and a venv in .venv."""
    directory.mkdir()
    shutil.copy2(SCRIPT, directory / SCRIPT.name)
    for source in ("mrcrawl", "jobs"):
        (directory / source).symlink_to(REPO / source, target_is_directory=True)
    make_venv(directory / ".venv", with_dependencies=venv_with_dependencies)
    return directory


@pytest.fixture
def checkout(tmp_path) -> Path:
    return make_checkout(tmp_path / "checkout", venv_with_dependencies=True)


def cron_environment(home: Path, seeds: Path, root: Path) -> dict[str, str]:
    """The environment cron gives a job: no PYTHON, no venv on PATH, no
    PYTHONPATH; plus the crontab's MRCRAWL_ variables."""
    return {"HOME": str(home), "LOGNAME": pwd.getpwuid(os.getuid()).pw_name, "SHELL": "/bin/sh",
            "PATH": "/usr/bin:/bin", "MRCRAWL_SEEDS": str(seeds), "MRCRAWL_ROOT": str(root)}


def documented_crontab_command(text: str) -> str:
    """The command of the crontab line(s) for /srv/mrcrawl that `text` documents: one, however often shown."""
    [command] = set(re.findall(r"^[#\s]*(?:\S+ ){5} (/srv/mrcrawl/run_depth\.sh .+)$", text, re.M))
    return command


def test_the_documented_crontab_line_crawls_with_crons_bare_environment(tmp_path, seeds, checkout):
    command = documented_crontab_command(SCRIPT.read_text(encoding="utf-8"))
    documentation = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    assert command == documented_crontab_command("\n".join(page.read_text(encoding="utf-8") for page in documentation))
    home = tmp_path / "home"
    home.mkdir()
    before = utc_day()
    # cron runs the command with /bin/sh from $HOME; the checkout stands in for /srv/mrcrawl.
    result = subprocess.run(["/bin/sh", "-c", command.replace("/srv/mrcrawl", shlex.quote(str(checkout)))],
                            cwd=home, env=cron_environment(home, seeds, tmp_path / "crawl"),
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    crawl = dated_dir(tmp_path, LANG, {before, utc_day()})
    assert result.stdout == f"{LANG}: ok ({crawl})\n" and result.stderr == ""
    assert {"crawl/0", "crawl/1", "crawl/2"} <= done_steps(crawl) and finished(crawl)  # depth 3
    assert ", runner local, " in crawl.with_name(crawl.name + ".log").read_text(encoding="utf-8")


def test_with_no_python_the_checkouts_venv_is_tried_and_one_without_the_dependencies_exits_2(tmp_path, seeds):
    checkout = make_checkout(tmp_path / "checkout", venv_with_dependencies=False)
    home = tmp_path / "home"
    home.mkdir()
    result = subprocess.run([str(checkout / SCRIPT.name), LANG, "1"], cwd=home,
                            env=cron_environment(home, seeds, tmp_path / "crawl"),
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert line.startswith(f"{checkout / SCRIPT.name}: PYTHON is unset: {checkout}/.venv/bin/python cannot import mrjob")
    assert "No module named 'mrjob'" in line and ".venv/bin/pip install -e" in line  # and how to mend it
    assert not (tmp_path / "crawl").exists()


def test_a_relative_python_is_found_beside_the_script_when_called_from_elsewhere(tmp_path, seeds, checkout):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    before = utc_day()
    result = run_depth(tmp_path, seeds, LANG, "1", script=checkout / SCRIPT.name, cwd=elsewhere,
                       python=".venv/bin/python")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"{LANG}: ok ({dated_dir(tmp_path, LANG, {before, utc_day()})})\n"


def test_a_relative_python_is_looked_for_first_where_the_script_is_called_from(tmp_path, seeds, checkout):
    # Both the calling directory and the checkout have a .venv/bin/python:
    # the calling directory's, a venv with nothing installed, is the one tried.
    caller = tmp_path / "caller"
    make_venv(caller / ".venv", with_dependencies=False)
    result = run_depth(tmp_path, seeds, LANG, "1", script=checkout / SCRIPT.name, cwd=caller, python=".venv/bin/python")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert f": PYTHON=.venv/bin/python: {caller}/.venv/bin/python cannot import mrjob" in line
    assert not (tmp_path / "crawl").exists()


@pytest.mark.parametrize("python, problem", [
    ("no/such/python", "neither {caller}/no/such/python nor {checkout}/no/such/python exists"),
    ("no-such-python3", "no such command on PATH"),
    ("/no/such/python", "/no/such/python cannot import mrjob and mrcrawl"),
])
def test_a_python_that_is_not_there_exits_2_naming_it(tmp_path, seeds, checkout, python, problem):
    caller = tmp_path / "caller"
    caller.mkdir()
    result = run_depth(tmp_path, seeds, LANG, "1", script=checkout / SCRIPT.name, cwd=caller, python=python)
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert f": PYTHON={python}: {problem.format(caller=caller, checkout=checkout)}" in line
    assert not (tmp_path / "crawl").exists()


@pytest.mark.parametrize("option", ["-h", "--help"])
def test_help_prints_the_arguments_environment_and_exit_statuses(tmp_path, seeds, option):
    result = run_depth(tmp_path, seeds, option)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout.startswith("usage: run_depth.sh <lang|all> [depth] [-- extra driver args]\n")
    for topic in ("MRCRAWL_SEEDS", "MRCRAWL_ROOT", "PYTHON", "Exit status: 0 ", "1 when", "2 on bad usage"):
        assert topic in result.stdout
    assert not (tmp_path / "crawl").exists()


def test_an_unknown_language_is_named_with_the_languages_there_are(tmp_path, seeds):
    (seeds / "other.txt").write_text("http://127.0.0.2/\n", encoding="utf-8")
    (seeds / "other.yaml").write_text("name: other\n", encoding="utf-8")
    (seeds / "noseeds.yaml").write_text("name: noseeds\n", encoding="utf-8")  # a config alone is no language
    for name, missing in [("nosuch", "nosuch.yaml"), ("noseeds", "noseeds.txt")]:
        result = run_depth(tmp_path, seeds, name, "1")
        assert result.returncode == 2
        assert result.stderr.splitlines() == [
            f"{SCRIPT}: unknown language '{name}': no {seeds / missing}; "
            f"the languages in {seeds} (a <lang>.txt and a <lang>.yaml) are: other {LANG}"]
    assert not (tmp_path / "crawl").exists()


def closed_loopback_port(host: str) -> int:
    """A port on `host` that nothing listens on (it was free a moment ago)."""
    with socket.socket() as probe:
        probe.bind((host, 0))
        return probe.getsockname()[1]


def test_a_language_whose_crawl_fetched_no_page_counts_as_failed(tmp_path, seeds, server):
    port = closed_loopback_port("127.0.0.2")
    (seeds / "unreachable.txt").write_text(f"http://127.0.0.2:{port}/\n", encoding="utf-8")
    config = server.web.crawl_config(name="unreachable", url_allow=[rf"^http://127\.0\.0\.2:{port}/"])
    (seeds / "unreachable.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    result = run_depth(tmp_path, seeds, "unreachable", "1")
    assert result.returncode == 1, result.stdout
    assert "unreachable: FAILED with status " in result.stderr
    assert result.stderr.splitlines()[-1] == "failed: unreachable"
    # The end of the log it shows holds the driver's one line naming the cause.
    assert any(line.strip().startswith("mrcrawl: no page fetched: ") for line in result.stderr.splitlines()), result.stderr
