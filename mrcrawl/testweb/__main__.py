"""The test web from the command line: a demo crawl, or a server to crawl.

    python -m mrcrawl.testweb demo [--depth 3] [--runner inline] [--output crawl/demo] [--resume]

serves the test web on loopback, crawls it with the real driver and jobs,
exports the WARC archive and page index, and shows where each store landed:
the whole pipeline, with no internet.  The seed file and config it crawls with
are kept beside the crawl, in <output>-inputs/.  --resume continues that crawl
(an interrupted one, or deeper with a larger --depth), serving the web on the
port its seeds name.

    python -m mrcrawl.testweb serve [--seed N] [--hosts N] [--port P] [--seconds S]
    python -m mrcrawl.testweb serve --day N [--sites N] [--seed N] [--port P] [--seconds S]

prints the seed URLs and the url_allow rule, then serves until Ctrl-C or
until --seconds have passed. --seeds-file and --config-file write a seed list
and a crawl config (JSON, which YAML reads) for a crawl of the served web.
With --day it serves the daily news web (daily.py) as it is on that day, and
prints the --now a crawl of that day gives: serving day after day on one
--port, a person crawls the days by hand into one crawl db.
"""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit

from mrcrawl.cli import invocation, run_command
from mrcrawl.interrupts import INTERRUPTED, interrupts_remembered
from mrcrawl.logs import add_verbosity_options
from mrcrawl.store.crawl_store import CrawlStore

from .daily import DailySpec, start_daily_web
from .model import Web
from .server import TestWebServer, start_test_web
from .sites import MIN_HOSTS
from .web import generate_web, seeds

PROG = "mrcrawl testweb"
DEMO = f"{PROG} demo"  # what its messages start with, as its usage line does
DEMO_OUTPUT = Path("crawl/demo")
DEMO_DEPTH = 3
DEMO_SEED, DEMO_HOSTS = 1, 8  # the web the demo crawls: start_test_web()'s default
SEEDS_NAME, CONFIG_NAME = "seeds.txt", "testweb.yaml"
SERVED_HOSTS = 8  # serve's web without --day
DAILY = DailySpec()  # serve --day's web, but for --seed and --sites: the one the daily-run tests crawl


class UsageError(Exception):
    """A bad command line or demo directory: one line on stderr, exit 2, nothing written."""


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


@dataclass(frozen=True)
class DemoPlan:
    """What a demo run will do, decided before it serves or writes anything."""

    output: Path  # the crawl directory
    inputs: Path  # the seed file and config, beside it
    depth: int
    runner: str
    web: Web | None  # the web to serve: None for a new demo, on a port the OS picks
    resume: bool  # whether the driver resumes a crawl state in `output`
    verbosity: int = 0  # the driver's -v or -q

    @property
    def seeds_file(self) -> Path:
        return self.inputs / SEEDS_NAME

    @property
    def config_file(self) -> Path:
        return self.inputs / CONFIG_NAME


def main(argv: list[str] | None = None) -> int:
    try:
        args = parse_args(argv)
        plan = plan_demo(args) if args.command == "demo" else None
    except UsageError as error:
        print(error, file=sys.stderr)
        return 2
    if plan:
        return run_demo(plan)
    return serve(args)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = _ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.epilog = f"`{PROG} COMMAND --help` gives a command's options."
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    serve = commands.add_parser("serve", help="serve the test web on 127.0.0.2 and up", allow_abbrev=False,
                                description="Serve the test web on 127.0.0.2 and up, or with --day the daily "
                                            "news web as it is on that day, print its seed URLs and url_allow "
                                            "rule, and serve until Ctrl-C or --seconds have passed.")
    serve.add_argument("--seed", type=int, default=1, metavar="N", help="generation seed (default: 1)")
    serve.add_argument("--hosts", type=int, metavar="N",
                       help=f"number of hosts, at least {MIN_HOSTS} (default: {SERVED_HOSTS})")
    serve.add_argument("--day", type=int, metavar="N",
                       help=f"serve the daily news web as it is on day N, 1 to {DAILY.days}; a crawl of it gives "
                            "the --now printed (default: the test web, which has no days)")
    serve.add_argument("--sites", type=int, metavar="N",
                       help=f"with --day: number of news sites (default: {DAILY.sites})")
    serve.add_argument("--port", type=int, default=0, metavar="P",
                       help="serve on port P of every address (default: a free one)")
    serve.add_argument("--seconds", type=float, default=3600, metavar="S", help="stop after this long (default: 3600)")
    serve.add_argument("--seeds-file", metavar="FILE", help="write the seed URLs here, one per line (default: none)")
    serve.add_argument("--config-file", metavar="FILE",
                       help="write a crawl config for this web here, as JSON, which YAML reads (default: none)")
    demo = commands.add_parser(
        "demo", help="crawl the test web with the real pipeline and show the stores", allow_abbrev=False,
        description="Serve the test web on loopback, crawl it with the real driver and jobs, export the WARC "
                    "archive and page index, and show where each store landed. The seed file and config are "
                    "kept beside the crawl, in <output>-inputs/.")
    demo.add_argument("--depth", type=int, default=DEMO_DEPTH, metavar="N",
                      help=f"layers to crawl (default: {DEMO_DEPTH})")
    demo.add_argument("--runner", default="inline", choices=("inline", "local"), help="mrjob runner (default: inline)")
    demo.add_argument("--output", type=Path, default=DEMO_OUTPUT, metavar="DIR",
                      help=f"crawl directory (default: {DEMO_OUTPUT})")
    demo.add_argument("--resume", action="store_true",
                      help="continue the demo crawl in --output: after an interruption, or deeper "
                           "(default: start a new one)")
    add_verbosity_options(demo)
    args = parser.parse_args(argv)
    # The driver checks --depth too, but only once the demo has served the web and written its inputs.
    if args.command == "demo" and args.depth < 1:
        demo.error(f"--depth: must be at least 1, got {args.depth}")
    if args.command == "serve":
        for problem in serve_problems(args):
            serve.error(problem)
    return args


def serve_problems(args: argparse.Namespace) -> list[str]:
    """What is wrong with serve's options, as the command line names them."""
    problems = []
    if args.day is None:
        if args.sites is not None:
            problems.append("--sites: only with --day, which serves the daily news web; the test web has --hosts")
        if args.hosts is not None and args.hosts < MIN_HOSTS:
            problems.append(f"--hosts must be at least {MIN_HOSTS}")
    else:
        if args.hosts is not None:
            problems.append("--hosts: not with --day; the daily news web has --sites")
        if not 1 <= args.day <= DAILY.days:
            problems.append(f"--day: the daily news web has days 1 to {DAILY.days}, got {args.day}")
        try:
            daily_spec(args)
        except ValueError as error:
            problems.append(f"--sites: {error}")
    if not 0 <= args.port <= 65535:
        problems.append(f"--port: must be 1 to 65535 (or 0 for a free one), got {args.port}")
    if args.seconds <= 0:
        problems.append("--seconds must be positive")
    return problems


def daily_spec(args: argparse.Namespace) -> DailySpec:
    """serve --day's web: the daily-run tests' own, with the seed and sites asked for."""
    return replace(DAILY, seed=args.seed, sites=DAILY.sites if args.sites is None else args.sites)


def serve(args: argparse.Namespace) -> int:
    try:
        server = start_served_web(args)
    except OSError as error:
        taken = "is in use" if error.errno == errno.EADDRINUSE else f"cannot be bound ({error.strerror})"
        print(f"{PROG} serve: port {args.port} {taken} on 127.0.0.2 and up; stop what serves there "
              "(an earlier serve?), or give another --port", file=sys.stderr)
        return 2
    try:
        web = server.web
        if args.day is None:
            print(f"test web: seed {args.seed}, {len(web.hosts)} hosts, {len(web.pages)} URLs, port {server.port}")
        else:
            print(f"daily news web: seed {args.seed}, {web.spec.sites} sites, day {args.day} of {web.spec.days}, "
                  f"port {server.port}")
            print(f"crawl it as of day {args.day}: --now {web.date_iso(args.day)}")
        print("seeds:")
        for url in server.seeds:
            print(f"  {url}")
        for rule in web.crawl_config()["url_allow"]:
            print(f"url_allow: {rule}")
        if args.seeds_file:
            with open(args.seeds_file, "w", encoding="utf-8") as out:
                out.write("".join(f"{url}\n" for url in server.seeds))
        if args.config_file:
            with open(args.config_file, "w", encoding="utf-8") as out:
                json.dump(web.crawl_config(), out, indent=2)
                out.write("\n")
        print(f"serving for up to {args.seconds:g} s; Ctrl-C stops", flush=True)
        time.sleep(args.seconds)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()
        print(f"stopped after {len(server.log)} requests", file=sys.stderr)
    return 0


def start_served_web(args: argparse.Namespace) -> TestWebServer:
    """serve's web, serving; raises OSError when --port cannot be bound."""
    if args.day is not None:
        return start_daily_web(daily_spec(args), day=args.day, port=args.port)
    return start_test_web(seed=args.seed, hosts=args.hosts or SERVED_HOSTS, port=args.port)


def plan_demo(args: argparse.Namespace) -> DemoPlan:
    """Check the demo's arguments and directories; raise UsageError if it cannot run."""
    output: Path = args.output
    absolute = Path(os.path.abspath(output))
    if absolute.parent == absolute:
        raise UsageError(f"{DEMO}: --output {output}: name a directory below the root")
    # The inputs live beside the crawl directory, which the driver wants to itself.
    inputs = absolute.with_name(absolute.name + "-inputs")
    inputs = inputs if output.is_absolute() else Path(os.path.relpath(inputs))
    plan = DemoPlan(output, inputs, args.depth, args.runner, web=None, resume=False, verbosity=args.verbosity)
    if args.resume:
        return plan_resume(plan)
    if plan.seeds_file.exists():
        raise UsageError(f"{DEMO}: {output} already holds a demo crawl; continue it with "
                         f"`{resume_command(plan)}`, or give another --output")
    for path in (output, inputs):
        if path.exists() and not (path.is_dir() and not any(path.iterdir())):
            raise UsageError(f"{DEMO}: --output {output}: {path} exists and is not an empty directory; "
                             f"give another --output")
    return plan


def plan_resume(plan: DemoPlan) -> DemoPlan:
    """The demo crawl to continue: the web its saved inputs were written for,
    on their port, and whether the driver has a crawl state to resume."""
    if not (plan.seeds_file.is_file() and plan.config_file.is_file()):
        raise UsageError(f"{DEMO} --resume: {plan.output} holds no demo crawl to continue "
                         f"({plan.seeds_file} or {plan.config_file} is missing)")
    saved_seeds = [line.strip() for line in plan.seeds_file.read_text(encoding="utf-8").splitlines() if line.strip()]
    try:
        port = urlsplit(saved_seeds[0]).port
    except (IndexError, ValueError):
        port = None
    if not port:
        raise UsageError(f"{DEMO} --resume: {plan.seeds_file}: names no test web port; it is not a seed file the demo wrote")
    web = generate_web(DEMO_SEED, DEMO_HOSTS, port=port)
    try:
        saved_config = json.loads(plan.config_file.read_text(encoding="utf-8"))
    except ValueError:
        saved_config = None
    if saved_seeds != seeds(web) or saved_config != web.crawl_config():
        raise UsageError(f"{DEMO} --resume: {plan.inputs}: not the seeds and config this version of the test web "
                         f"has on port {port}; start a new demo with another --output")
    # A run stopped before the driver wrote its state starts the crawl afresh, with the same inputs.
    return replace(plan, web=web, resume=CrawlStore(plan.output).holds_crawl())


def resume_command(plan: DemoPlan) -> str:
    """The command that continues this demo crawl, in the form this one was run."""
    command = f"{invocation('testweb')} demo --resume"
    if plan.depth != DEMO_DEPTH:
        command += f" --depth {plan.depth}"
    if plan.output != DEMO_OUTPUT:
        command += f" --output {shlex.quote(str(plan.output))}"
    return command


def verbosity_options(verbosity: int) -> list[str]:
    """The -v or -q that give `verbosity`."""
    return ["-q"] if verbosity < 0 else ["-v"] * verbosity


def run_demo(plan: DemoPlan) -> int:
    from mrcrawl import driver  # the demo runs the real driver, jobs and all

    same_web = {"port": plan.web.port, "web_factory": lambda port: plan.web} if plan.web else {}
    try:
        server = start_test_web(DEMO_SEED, DEMO_HOSTS, **same_web)
    except OSError as error:
        if plan.web and error.errno == errno.EADDRINUSE:
            print(f"{DEMO} --resume: port {plan.web.port} is in use on 127.0.0.2 and up; the demo crawl in "
                  f"{plan.output} needs it (its seeds and url_allow name it): free it and run again", file=sys.stderr)
            return driver.EXIT_USAGE
        raise
    try:
        # Ctrl-C, SIGTERM or SIGHUP outside the driver's own handling of them (interrupts.py) ends the demo as
        # inside it: one line, and the signal's exit status.
        with interrupts_remembered(), server:
            if not plan.web:
                plan.inputs.mkdir(parents=True, exist_ok=True)
                plan.seeds_file.write_text("".join(f"{url}\n" for url in server.seeds), encoding="utf-8")
                plan.config_file.write_text(json.dumps(server.web.crawl_config(), indent=2) + "\n", encoding="utf-8")
            print(f"test web: {len(server.web.hosts)} hosts on 127.0.0.2 and up, port {server.port}; "
                  f"inputs in {plan.inputs}")
            status = driver.main([str(plan.seeds_file), "--depth", str(plan.depth), "--conf", str(plan.config_file),
                                  "--output", str(plan.output), "--runner", plan.runner, "--export", "warc,index",
                                  *(["--resume"] if plan.resume else []), *verbosity_options(plan.verbosity)],
                                 resume_hint=resume_command(plan))  # the demo serves the web again; the driver alone would not
            server.wait_idle()
            requests = len(server.log)
    except KeyboardInterrupt:
        print(f"{DEMO}: interrupted by {INTERRUPTED.name}; to continue this demo crawl, run: {resume_command(plan)}",
              file=sys.stderr)
        return INTERRUPTED.exit_status
    if status != driver.EXIT_OK:
        return status
    print(f"\nthe server answered {requests} requests. The stores:")
    for store in ("in", "doc", "out", "xml"):
        for directory in sorted(path for path in (plan.output / store).iterdir() if path.is_dir()):
            parts = sorted(directory.glob("part-*"))
            lines = sum(part.read_bytes().count(b"\n") for part in parts)
            print(f"  {directory}  {lines} lines in {len(parts)} part file(s)")
    for export in ("warc", "index"):
        print(f"  {plan.output / export}  {sum(1 for _ in (plan.output / export).iterdir())} file(s)")
    print(f"\nthe crawl is in {plan.output}; the README's \"Reading the outputs\" snippets read it "
          f"when they start with: crawl = {json.dumps(str(plan.output))}")
    print(f"deeper: {resume_command(replace(plan, depth=plan.depth + 1))}")
    return 0


if __name__ == "__main__":
    sys.exit(run_command(main))
