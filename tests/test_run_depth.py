"""run_depth.sh, the daily cron entry, crawling the loopback test web.

The script is run as cron would run it: by bash, from a directory that is
not the repository, with its seeds, output root and interpreter given by
MRCRAWL_SEEDS, MRCRAWL_ROOT and PYTHON.
"""
from __future__ import annotations

import fcntl
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from mrcrawl.testweb import start_test_web

SCRIPT = Path(__file__).resolve().parents[1] / "run_depth.sh"
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


def run_depth(tmp_path: Path, seeds: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, MRCRAWL_SEEDS=str(seeds), MRCRAWL_ROOT=str(tmp_path / "crawl"), PYTHON=sys.executable,
               TZ=zone_on_another_date())
    env.pop("PYTHONPATH", None)  # the script must find the project by itself
    return subprocess.run(["bash", str(SCRIPT), *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=120)


def utc_day() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def dated_dir(tmp_path: Path, lang: str, days: set[str]) -> Path:
    """The one dated crawl directory of `lang`, its date one of `days` (a run may pass midnight)."""
    [found] = [tmp_path / "crawl" / lang / day for day in sorted(days) if (tmp_path / "crawl" / lang / day).is_dir()]
    return found


def done_steps(crawl: Path) -> set[str]:
    return set(json.loads((crawl / "crawl.json").read_text(encoding="utf-8"))["done"])


def test_one_language_crawls_into_its_utc_dated_directory_then_resumes_the_same_day(tmp_path, seeds):
    before = utc_day()
    first = run_depth(tmp_path, seeds, LANG, "1", "--", "--export", "index")
    days = {before, utc_day()}
    assert first.returncode == 0, first.stderr
    crawl = dated_dir(tmp_path, LANG, days)
    assert first.stdout == f"{LANG}: ok ({crawl})\n" and first.stderr == ""
    assert done_steps(crawl) == {"crawl/0", "parse/0", "merge/1", "xml/1"}
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
    assert "xml/1" in done_steps(crawl)


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
    ([LANG, "1", "--runner", "local"], "usage: "),
])
def test_bad_usage_exits_2_and_crawls_nothing(tmp_path, seeds, args, message):
    result = run_depth(tmp_path, seeds, *args)
    assert result.returncode == 2
    assert message.format(seeds=seeds) in result.stderr
    assert not (tmp_path / "crawl").exists()
