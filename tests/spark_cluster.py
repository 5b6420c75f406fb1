"""A Spark standalone cluster on loopback, started as the README shows it
by hand: a master and two workers, each a JVM of its own, each from its own
line of the page's block, run as written in a directory that holds the
checkout's venv; only the ports are free ones rather than the page's.
"""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from test_daily_by_hand import as_the_checkout
from test_readme_snippets import section_blocks

REPO = Path(__file__).resolve().parent.parent
PAGE = REPO / "README.md"
SECTION = "### A Spark standalone cluster on one machine"
# The page's ports, each replaced by a free one: the master's, its web UI's, the workers' web UIs'.
DOCUMENTED_PORTS = ("7077", "8080", "8081", "8082")
DOCUMENTED_MASTER = "spark://127.0.0.1:7077"
START_SECONDS = 180  # until the master shows every worker ALIVE
STOP_SECONDS = 30  # from SIGTERM to SIGKILL
# A crawl's every step is a spark-submit that starts a driver JVM and an
# executor JVM on each worker: JIT tiers and GC threads they never need
# cost them most of their start on two cores.  The test's crawl reads this
# from SPARK_CONF_DIR; the cluster itself runs as the page starts it.
SPARK_DEFAULTS = """\
spark.ui.enabled false
spark.driver.extraJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
spark.executor.extraJavaOptions -XX:TieredStopAtLevel=1 -XX:+UseSerialGC
"""


def documented_block() -> list[str]:
    """The lines of the section's first sh block: the cluster's start."""
    blocks = [code for language, _, code in section_blocks(PAGE.read_text(encoding="utf-8"), SECTION) if language == "sh"]
    assert blocks, f"{PAGE.name}: no sh block under {SECTION!r}"
    return [line for line in blocks[0].splitlines() if line.strip() and not line.lstrip().startswith("#")]


def documented_crawl() -> str:
    """The section's crawl command: the line of its blocks that runs the driver."""
    lines = [line for _, _, code in section_blocks(PAGE.read_text(encoding="utf-8"), SECTION)
             for line in code.splitlines() if " crawl " in line or "mrcrawl.driver" in line]
    assert len(lines) == 1, lines
    return lines[0]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@dataclass
class SparkCluster:
    directory: Path
    master_url: str
    web_url: str
    processes: list[subprocess.Popen] = field(default_factory=list)
    logs: list[Path] = field(default_factory=list)

    @property
    def conf_dir(self) -> Path:
        return self.directory / "conf"

    def state(self) -> dict:
        """The master's JSON: its workers and applications."""
        with urllib.request.urlopen(f"{self.web_url}/json/", timeout=10) as answer:
            return json.load(answer)

    def worker_dirs(self) -> list[Path]:
        return sorted((self.directory / "spark-work").iterdir())

    def finished_tasks(self, worker_dir: Path) -> dict[str, int]:
        """Tasks each application's executor on the worker finished, by application id, as its stderr logs them."""
        return {app.name: sum(log.read_text(encoding="utf-8", errors="replace").count("INFO Executor: Finished task ")
                              for log in app.glob("*/stderr"))
                for app in sorted(worker_dir.glob("app-*"))}

    def log_tails(self, lines: int = 30) -> str:
        tails = []
        for log in self.logs:
            text = log.read_text(encoding="utf-8", errors="replace").splitlines() if log.exists() else []
            tails.append(f"--- {log.name} ---\n" + "\n".join(text[-lines:]))
        return "\n".join(tails)

    def wait_for_workers(self, count: int) -> None:
        deadline = time.monotonic() + START_SECONDS
        seen = None
        while time.monotonic() < deadline:
            exited = [process.args for process in self.processes if process.poll() is not None]
            assert not exited, f"a cluster process exited: {exited}\n{self.log_tails()}"
            try:
                seen = self.state()
            except OSError as error:  # the master's web UI is not up yet
                seen = error
            else:
                if sum(worker["state"] == "ALIVE" for worker in seen["workers"]) == count:
                    return
            time.sleep(1)
        raise AssertionError(f"no {count} ALIVE workers after {START_SECONDS} s: {seen}\n{self.log_tails()}")

    def stop(self) -> list[int]:
        """Stop every process this cluster started, and its process group
        (the executors a worker started are in it); the ids of what was still
        alive after SIGTERM, which SIGKILL ended."""
        for process in reversed(self.processes):  # the workers, then the master
            signal_group(process.pid, signal.SIGTERM)
        killed = []
        deadline = time.monotonic() + STOP_SECONDS
        for process in reversed(self.processes):
            while group_alive(process.pid) and time.monotonic() < deadline:
                process.poll()  # reap it, so that its group can empty
                time.sleep(0.2)
            if group_alive(process.pid):
                killed.append(process.pid)
                signal_group(process.pid, signal.SIGKILL)
            process.wait(timeout=STOP_SECONDS)
        return killed


def signal_group(group: int, signum: int) -> None:
    try:
        os.killpg(group, signum)
    except ProcessLookupError:
        pass


def group_alive(group: int) -> bool:
    """Whether a process of the group is left, not counting a zombie."""
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:  # it ended meanwhile
            continue
        if int(fields[2]) == group and fields[0] != "Z":  # fields after the name: state, ppid, pgrp
            return True
    return False


def start_cluster(directory: Path, workers: int = 2) -> SparkCluster:
    """The page's cluster, started in `directory` (which holds the checkout's
    venv, and gets the workers' work dirs), on free ports, each process the
    leader of a process group of its own; waits until the master shows every
    worker ALIVE."""
    lines = documented_block()
    ports = {documented: str(free_port()) for documented in DOCUMENTED_PORTS}
    lines = [re.sub(r"\b(" + "|".join(ports) + r")\b", lambda port: ports[port.group(1)], line) for line in lines]
    environment = [line for line in lines if line.startswith("export ")]
    daemons = [line.removesuffix("&").strip() for line in lines if line.endswith("&")]
    assert len(environment) + len(daemons) == len(lines), f"{PAGE.name}: a line neither exports nor starts a daemon"
    assert len(daemons) == 1 + workers, daemons
    as_the_checkout(directory)
    cluster = SparkCluster(directory, f"spark://127.0.0.1:{ports['7077']}", f"http://127.0.0.1:{ports['8080']}")
    cluster.conf_dir.mkdir()
    (cluster.conf_dir / "spark-defaults.conf").write_text(
        SPARK_DEFAULTS + f"spark.local.dir {directory / 'driver-scratch'}\n", encoding="utf-8")
    # What the page's shell would not have: Spark's scratch space for the executors is kept beside their work dirs.
    env = {**os.environ, "SPARK_LOCAL_DIRS": str(directory / "executor-scratch")}
    try:
        for number, daemon in enumerate(daemons):
            log = directory / f"{'master' if number == 0 else f'worker-{number}'}.log"
            cluster.logs.append(log)
            with open(log, "wb") as output:
                cluster.processes.append(subprocess.Popen(
                    ["bash", "-c", "\n".join([*environment, f"exec {daemon}"])], cwd=directory, env=env,
                    stdout=output, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True))
            if number == 0:
                wait_for_port(cluster, int(ports["7077"]))
        cluster.wait_for_workers(workers)
    except BaseException:
        cluster.stop()
        raise
    return cluster


def wait_for_port(cluster: SparkCluster, port: int) -> None:
    """Until the master listens, so that the workers register at their first try."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        assert cluster.processes[0].poll() is None, f"the master exited\n{cluster.log_tails()}"
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise AssertionError(f"the master did not listen on {port} in {START_SECONDS} s\n{cluster.log_tails()}")
