"""The three days by hand of docs/crawl-db.md, run as written, checked
against the daily web's oracle.

Every command of the section's blocks is taken from the page and run in
order from a scratch directory, as a person types them: a `mrcrawl testweb
serve` runs in the background, as in a terminal of its own, until the next
one, when it gets the Ctrl-C the page tells the person to give it; every
other command runs to its end and must succeed.  Then each day's crawl is
compared with what WeekOracle predicts of a series of daily crawls of that
web: the pages it fetched, the counts its `done in` line gives, and the db's
statuses as `db stats` prints them.
"""
from __future__ import annotations

import re
import shlex
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import yaml

from crawl_support import crawl_docs, xml_urls
from mrcrawl import driver
from mrcrawl.testweb import __main__ as testweb_command
from mrcrawl.testweb.daily import DailyWeb
from mrcrawl.testweb.week import WeekOracle
from test_readme_snippets import section_blocks
from test_testweb import checkout_env, ctrl_c, start_serving

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "docs" / "crawl-db.md"
SECTION = "### Three days by hand, on the daily test web"
COMMAND = ".venv/bin/mrcrawl"  # as the README's set-up installs it, run from the checkout
SERVE, CRAWL, DB_STATS = (COMMAND, "testweb", "serve"), (COMMAND, "crawl"), (COMMAND, "db", "stats")
DONE = re.compile(r"^done in .*: this run fetched (\d+) pages .*, (\d+) not modified;", re.M)


def documented_commands() -> list[list[str]]:
    """The words of every command of the section, in order."""
    blocks = section_blocks(PAGE.read_text(encoding="utf-8"), SECTION)
    return [shlex.split(line) for language, _, code in blocks if language == "sh"
            for line in code.splitlines() if line.strip() and not line.lstrip().startswith("#")]


def person_env() -> dict:
    """A shell of a person who set the checkout up as the README says."""
    return checkout_env()


def as_the_checkout(directory: Path) -> Path:
    """`directory`, holding the venv at .venv as the checkout does, for the
    commands to run from as written."""
    (directory / ".venv").symlink_to(Path(sys.executable).parent.parent, target_is_directory=True)
    return directory


@dataclass
class Served:
    words: list[str]
    process: subprocess.Popen
    printed: str  # its stdout up to the line that says it serves


@dataclass
class Crawled:
    """One crawl of the walk-through, and the day its server served."""

    args: object  # the crawl command's options, as the driver reads them
    served: Served
    day: int
    output: str  # stdout and stderr


def run_as_written(commands: list[list[str]], cwd: Path) -> tuple[list[Crawled], list[str]]:
    """Run the walk-through; its crawls, and what each `db stats` printed."""
    crawls, stats, served = [], [], None
    try:
        for words in commands:
            if tuple(words[:3]) == SERVE:
                if served:
                    ctrl_c(served.process)
                served = Served(words, *start_serving(words, cwd, person_env()))
                continue
            done = subprocess.run(words, cwd=cwd, env=person_env(), capture_output=True, text=True, timeout=300)
            assert done.returncode == 0, f"{shlex.join(words)} exited {done.returncode}:\n{done.stderr}"
            if tuple(words[:2]) == CRAWL:
                assert served, f"{shlex.join(words)}: no server runs"
                day = testweb_command.parse_args(served.words[2:]).day
                crawls.append(Crawled(driver.parse_args(words[2:]), served, day, done.stdout + done.stderr))
            elif tuple(words[:3]) == DB_STATS:
                stats.append(done.stdout)
    finally:
        if served:
            ctrl_c(served.process)
    return crawls, stats


def printed_statuses(stats: str) -> Counter:
    """The counts under `db stats`' status heading."""
    block = stats.split("\nstatus\n", 1)[1].split("\n\n", 1)[0]
    return Counter({status: int(count) for status, count in (line.split() for line in block.splitlines())})


def test_the_three_days_by_hand_run_as_written_and_fetch_what_the_oracle_says(tmp_path):
    commands = documented_commands()
    assert sum(tuple(words[:3]) == SERVE for words in commands) == 3, commands
    crawls, stats = run_as_written(commands, as_the_checkout(tmp_path))

    assert [crawl.day for crawl in crawls] == [1, 2, 3]
    served = [testweb_command.parse_args(crawl.served.words[2:]) for crawl in crawls]
    assert len({args.port for args in served}) == 1 and served[0].port, "one fixed port, every day"
    assert len({crawl.args.db for crawl in crawls}) == 1  # the days share one crawl db...
    assert len({crawl.args.output for crawl in crawls}) == 3  # ...and each has its own directory
    web = DailyWeb(testweb_command.daily_spec(served[0]), served[0].port)
    config = yaml.safe_load((tmp_path / crawls[0].args.conf).read_text(encoding="utf-8"))
    [depth] = {crawl.args.depth for crawl in crawls}
    oracle = WeekOracle(web, depth, retries=config["retries"], revisit=config.get("revisit"))
    shown = []
    for crawl in crawls:
        day = crawl.day
        assert crawl.args.now == web.date(day) and f"--now {web.date_iso(day)}" in crawl.served.printed
        output = tmp_path / crawl.args.output
        assert output.name == f"{web.date(day):%Y-%m-%d}"  # the day's directory
        predicted = oracle.run(day)
        docs = crawl_docs(output)
        assert {(doc["requested_url"], doc["outcome"]) for doc in docs} == predicted.outcomes, f"day {day}"
        xml = xml_urls(output)
        assert len(xml) == len(set(xml)) and set(xml) == predicted.xml, f"day {day}"
        if day > 1:  # day 1's web holds articles beyond the depth; a later day's new ones are all linked
            fetched = {doc["requested_url"] for doc in docs if doc["outcome"] == "fetched"}
            assert set(web.events(day).published) <= fetched, f"day {day}: a new article was not fetched"
            assert not set(xml) & set(web.hub_urls()), f"day {day}: a hub is in xml/"
        [counts] = DONE.findall(crawl.output)
        outcomes = Counter(outcome for _, outcome in predicted.outcomes)
        assert tuple(map(int, counts)) == (outcomes["fetched"], outcomes["not_modified"]), f"day {day}"
        shown.append(int(counts[0]))
    assert shown[1] < shown[0] / 2 and shown[2] < shown[0] / 2, shown  # far fewer pages than day 1
    [last_stats] = stats
    assert printed_statuses(last_stats) == Counter(record["status"] for record in predicted.db.values())
