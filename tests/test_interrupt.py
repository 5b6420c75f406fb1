"""Ctrl-C, SIGTERM and SIGHUP: one line that says what is kept and how to go
on, an exit status that names the signal, no process left behind, then a
resume with the printed command that finishes the crawl."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from crawl_support import driver_command, layer_triples, write_inputs
from mrcrawl.driver import EXIT_INTERRUPTED
from mrcrawl.testweb import expected_layers_for_config
from test_resume import wait_for_step
from test_testweb import DEMO_INPUTS, assert_demo_crawl_matches_the_oracle, checkout_env, demo_command, files_under

DEPTH = 3
REPO = Path(__file__).resolve().parents[1]


def environment_as_set_up() -> dict:
    """This environment, with no venv active: the interpreter is not on PATH,
    as after the README's set-up.  A hint must then name it by its path."""
    venv_bin = os.path.dirname(sys.executable)
    path = [entry for entry in os.environ.get("PATH", "").split(os.pathsep)
            if entry and os.path.abspath(entry) != venv_bin]
    return {**os.environ, "PATH": os.pathsep.join(path or [os.defpath])}


def process_fields(pid: int) -> list[str] | None:
    """/proc/PID/stat's fields after the command's name (state, ppid, pgrp,
    session, ...), or None when the process is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None


def session_processes(session: int) -> dict[int, list[str]]:
    """Every process of a session, zombies included, by pid."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = process_fields(int(entry.name))
            if fields and int(fields[3]) == session:
                found[int(entry.name)] = fields
    return found


def wait_for_a_task(driver: subprocess.Popen, limit: float = 60.0) -> None:
    """Until a task forked from one of the local runner's workers runs: a
    grandchild of the driver."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        workers = {pid for pid, fields in session_processes(driver.pid).items() if int(fields[1]) == driver.pid}
        if any(int(fields[1]) in workers for fields in session_processes(driver.pid).values()):
            return
        assert driver.poll() is None, "the crawl ended before a task ran"
        time.sleep(0.02)
    raise AssertionError(f"no task ran within {limit}s")


def assert_no_process_left(session: int, limit: float = 10.0) -> None:
    """No process of the crawl's session is left, running or unreaped."""
    deadline = time.monotonic() + limit
    while session_processes(session) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not session_processes(session), session_processes(session)


def signal_name(signum: int) -> str:
    return {signal.SIGINT: "Ctrl-C (SIGINT)"}.get(signum, signal.Signals(signum).name)


def crawl_in_the_background(web_server, directory: Path, runner: str, **options) -> tuple[subprocess.Popen, Path, dict]:
    """The driver crawling the test web with -q, run from `directory` with no
    venv active, in a session of its own: the process, its output, its config."""
    seeds, conf, config = write_inputs(web_server, directory)
    output = directory / "crawl"
    process = subprocess.Popen(driver_command(seeds, conf, output, DEPTH, "--runner", runner, "-q"), cwd=directory,
                               env=environment_as_set_up(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               start_new_session=True, **options)
    return process, output, config


def stop(process: subprocess.Popen, *steps, timeout: float = 60) -> tuple[str, str]:
    """Each of `steps` (a waiting, then a signal sent) done to the process,
    then its stdout and stderr once it has ended; killed if it has not."""
    try:
        for step in steps:
            step(process)
        return process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def during_layer_1(process: subprocess.Popen, output: Path, runner: str) -> None:
    """Until layer 1's fetch runs, in a task of its own on the local runner."""
    wait_for_step(output, "optimize/0", process)
    if runner == "local":
        wait_for_a_task(process)
    else:
        time.sleep(0.5)


def resume_as_printed(line: str, directory: Path, environment: dict) -> list[str]:
    """Run the command a stopped run's last line gives, from where the run ran; the command."""
    command = shlex.split(line.split("run: ", 1)[1])
    resumed = subprocess.run(command, cwd=directory, env=environment, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    return command


def assert_the_whole_crawl(web_server, config: dict, output: Path) -> None:
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=DEPTH)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_ctrl_c_prints_one_line_and_the_printed_command_resumes(web_server, tmp_path, runner):
    process, output, config = crawl_in_the_background(web_server, tmp_path, runner)
    # A terminal's Ctrl-C reaches every process of the foreground group:
    # the driver, mrjob's workers and the tasks they forked.
    _, stderr = stop(process, lambda process: wait_for_step(output, "parse/0", process),
                     send_to("everyone", signal.SIGINT))
    assert process.returncode == EXIT_INTERRUPTED == 130
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # -q: the progress before it is not said
    assert lines[0].startswith("mrcrawl: interrupted by Ctrl-C (SIGINT); ") and str(output) in lines[0]

    web_server.wait_idle()
    command = resume_as_printed(lines[0], tmp_path, environment_as_set_up())
    # The interpreter that ran, by a path that works from where it ran: it is not on PATH.
    assert command[:3] == [sys.executable, "-m", "mrcrawl.driver"] and command[-2:] == ["-q", "--resume"]
    assert_the_whole_crawl(web_server, config, output)
    assert not list((output / ".work").glob("*")), "scratch output left behind"


# (runner, signal, sent to): "driver" is a plain `kill` of the driver's
# process; "everyone" is the whole crawl, as systemd and `timeout` send it.
STOPS = [("inline", signal.SIGTERM, "driver"), ("local", signal.SIGTERM, "driver"),
         ("local", signal.SIGTERM, "everyone"), ("local", signal.SIGHUP, "everyone")]


def send_to(whom: str, signum: int):
    """What sends `signum` to the process started alone ("driver"), or to every process of its session."""
    if whom == "everyone":
        return lambda process: os.killpg(process.pid, signum)
    return lambda process: process.send_signal(signum)


@pytest.mark.parametrize("runner, signum, sent_to", STOPS, ids=lambda value: getattr(value, "name", value))
def test_sigterm_and_sighup_stop_a_crawl_as_ctrl_c_does(web_server, tmp_path, runner, signum, sent_to):
    process, output, config = crawl_in_the_background(web_server, tmp_path, runner)
    _, stderr = stop(process, lambda process: during_layer_1(process, output, runner), send_to(sent_to, signum))
    assert process.returncode == 128 + signum, stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # no traceback from a worker or a task
    said = f"mrcrawl: interrupted by {signal_name(signum)}; the finished steps are kept in {output}; to go on, run: "
    assert lines[0].startswith(said)
    assert_no_process_left(process.pid)
    assert "crawl/1" not in (output / "crawl.json").read_text()

    web_server.wait_idle()
    command = resume_as_printed(lines[0], tmp_path, environment_as_set_up())
    assert command[:3] == [sys.executable, "-m", "mrcrawl.driver"] and command[-2:] == ["-q", "--resume"]
    assert_the_whole_crawl(web_server, config, output)


def test_a_signal_the_crawl_was_started_ignoring_stays_ignored(web_server, tmp_path):
    """Under `nohup` a closed terminal's SIGHUP must not stop the crawl, nor its tasks."""
    process, output, config = crawl_in_the_background(
        web_server, tmp_path, "local", preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    _, stderr = stop(process, lambda process: during_layer_1(process, output, "local"),
                     send_to("everyone", signal.SIGHUP), timeout=300)
    assert (process.returncode, stderr) == (0, "")
    assert_the_whole_crawl(web_server, config, output)


def test_the_demo_passes_sigterm_on_and_resumes(tmp_path):
    process = subprocess.Popen(demo_command(), cwd=tmp_path, env=checkout_env(), text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    _, stderr = stop(process, lambda process: wait_for_step(tmp_path / "crawl" / "demo", "optimize/0", process),
                     send_to("driver", signal.SIGTERM))
    assert process.returncode == 143, stderr
    assert "Traceback" not in stderr
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("mrcrawl: interrupted by SIGTERM; ")
    assert last.endswith(f"to go on, run: {shlex.quote(sys.executable)} -m mrcrawl.testweb demo --resume")
    inputs = files_under(tmp_path / DEMO_INPUTS)

    resume_as_printed(last, tmp_path, checkout_env())
    assert files_under(tmp_path / DEMO_INPUTS) == inputs
    assert_demo_crawl_matches_the_oracle(tmp_path, depth=3)


def two_languages(server, directory: Path) -> Path:
    """A seeds directory of two languages, aa and bb, both the test web."""
    seeds = directory / "seeds"
    seeds.mkdir()
    for lang in ("aa", "bb"):
        (seeds / f"{lang}.txt").write_text("\n".join(server.seeds) + "\n", encoding="utf-8")
        (seeds / f"{lang}.yaml").write_text(yaml.safe_dump(server.web.crawl_config()), encoding="utf-8")
    return seeds


def utc_day() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%d")


def todays_crawl(root: Path, lang: str, process: subprocess.Popen, started_on: str, limit: float = 60.0) -> Path:
    """The crawl directory run_depth.sh makes for `lang` on the UTC day it
    started (a run may pass midnight), once it holds a crawl."""
    deadline = time.monotonic() + limit
    while True:
        made = [root / lang / day for day in {started_on, utc_day()} if (root / lang / day / "crawl.json").exists()]
        if made:
            return made[0]
        assert process.poll() is None and time.monotonic() < deadline, f"{lang}'s crawl did not start"
        time.sleep(0.05)


@pytest.mark.parametrize("sent_to", ["everyone", "driver"])
def test_run_depth_passes_sigterm_on_and_starts_no_other_language(web_server, tmp_path, sent_to):
    environment = {**environment_as_set_up(), "MRCRAWL_SEEDS": str(two_languages(web_server, tmp_path)),
                   "MRCRAWL_ROOT": str(tmp_path / "crawl"), "PYTHON": sys.executable}
    started_on = utc_day()
    script = subprocess.Popen(["bash", str(REPO / "run_depth.sh"), "all", str(DEPTH), "--", "--runner", "local"],
                              cwd=tmp_path, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              start_new_session=True)
    crawls = []

    def during_aas_layer_1(script):
        crawls.append(todays_crawl(tmp_path / "crawl", "aa", script, started_on))
        wait_for_step(crawls[0], "optimize/0", script)

    def to_the_driver_alone(script):  # a plain kill of the driver; "everyone": systemd's stop, timeout
        [driver] = [pid for pid, fields in session_processes(script.pid).items() if int(fields[1]) == script.pid]
        os.kill(driver, signal.SIGTERM)

    stdout, stderr = stop(script, during_aas_layer_1,
                          send_to("everyone", signal.SIGTERM) if sent_to == "everyone" else to_the_driver_alone)
    [crawl] = crawls
    assert script.returncode == 143, stderr
    assert stdout == "" and "Traceback" not in stderr
    assert stderr.startswith(f"aa: STOPPED with status 143, see {crawl}.log; "), stderr
    assert "mrcrawl: interrupted by SIGTERM; " in stderr
    assert stderr.strip().splitlines()[-1] == "stopped by a signal: exit status 143; not started: bb"
    assert not (tmp_path / "crawl" / "bb").exists()
    assert_no_process_left(script.pid)

    if sent_to == "everyone":  # running the script again resumes the day's crawl
        again = subprocess.run(["bash", str(REPO / "run_depth.sh"), "aa", str(DEPTH)], cwd=tmp_path, env=environment,
                               capture_output=True, text=True, timeout=300)
        assert again.returncode == 0, again.stderr
        assert "run_depth.sh: aa, depth 3, --resume" in (crawl.parent / f"{crawl.name}.log").read_text()


# A Ctrl-C that lands in a finalizer, where Python cannot raise it: the
# finalizer sends the signal to its own process and waits for the handler.
CTRL_C_IN_A_FINALIZER = """
import gc, os, signal, sys, time
from mrcrawl.interrupts import INTERRUPTED, interrupts_remembered

class ClosesOnCollect:
    def __del__(self):
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.5)  # the handler runs here, inside __del__

with interrupts_remembered():
    try:
        ClosesOnCollect()
        gc.collect()
        time.sleep(5)
        print("not raised")
    except KeyboardInterrupt:
        print("raised", INTERRUPTED.is_set())
"""


def test_ctrl_c_inside_a_finalizer_is_raised_in_the_main_flow_and_not_printed():
    ran = subprocess.run([sys.executable, "-c", CTRL_C_IN_A_FINALIZER], capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip() == "raised True"
    assert ran.stderr == ""
