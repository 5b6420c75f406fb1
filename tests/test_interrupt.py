"""Ctrl-C: one line that says what is kept and how to go on, then a resume that finishes the crawl."""
from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys

import pytest

from crawl_support import driver_command, layer_triples, write_inputs
from mrcrawl.driver import EXIT_INTERRUPTED
from mrcrawl.testweb import expected_layers_for_config
from test_resume import wait_for_step

DEPTH = 3


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_ctrl_c_prints_one_line_and_the_printed_command_resumes(web_server, tmp_path, runner):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    # A terminal's Ctrl-C reaches every process of the foreground group:
    # the driver, mrjob's workers and the tasks they forked.
    process = subprocess.Popen(driver_command(seeds, conf, output, DEPTH, "--runner", runner, "-q"),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for_step(output, "parse/0", process)
        os.killpg(process.pid, signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    assert process.returncode == EXIT_INTERRUPTED == 130
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr  # -q: the progress before it is not said
    assert "interrupted" in lines[0] and str(output) in lines[0]
    command = shlex.split(lines[0].split("run: ", 1)[1])
    assert command[:3] == ["python", "-m", "mrcrawl.driver"] and command[-2:] == ["-q", "--resume"]

    web_server.wait_idle()
    resumed = subprocess.run([sys.executable, *command[1:]], capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=DEPTH)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    assert not list((output / ".work").glob("*")), "scratch output left behind"


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
