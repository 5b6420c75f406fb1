"""The test web from the command line: a demo crawl, or a server to crawl.

    python -m mrcrawl.testweb demo [--depth 3] [--runner inline] [--output DIR]

serves the test web on loopback, crawls it with the real driver and jobs,
and shows where each store landed: the whole pipeline, with no internet.

    python -m mrcrawl.testweb serve [--seed N] [--hosts N] [--seconds S]

prints the seed URLs and the url_allow rule, then serves until Ctrl-C or
until --seconds have passed. --seeds-file and --config-file write a seed list
and a crawl config (JSON, which YAML reads) for a crawl of the served web.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from datetime import datetime
from pathlib import Path

from .server import start_test_web
from .sites import MIN_HOSTS


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.testweb", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    serve = commands.add_parser("serve", help="serve the test web on 127.0.0.2 and up")
    serve.add_argument("--seed", type=int, default=1, help="generation seed (default 1)")
    serve.add_argument("--hosts", type=int, default=8, help=f"number of hosts, at least {MIN_HOSTS} (default 8)")
    serve.add_argument("--seconds", type=float, default=3600, help="stop after this long (default 3600)")
    serve.add_argument("--seeds-file", help="write the seed URLs here, one per line")
    serve.add_argument("--config-file", help="write a crawl config for this web here")
    demo = commands.add_parser("demo", help="crawl the test web with the real pipeline and show the stores")
    demo.add_argument("--depth", type=int, default=3, help="layers to crawl (default 3)")
    demo.add_argument("--runner", default="inline", choices=("inline", "local"), help="mrjob runner (default inline)")
    demo.add_argument("--output", help="crawl directory (default: crawl/demo-<time>)")
    args = parser.parse_args(argv)
    if args.command == "demo":
        return run_demo(args.depth, args.runner, args.output)
    if args.hosts < MIN_HOSTS:
        parser.error(f"--hosts must be at least {MIN_HOSTS}")
    if args.seconds <= 0:
        parser.error("--seconds must be positive")

    server = start_test_web(seed=args.seed, hosts=args.hosts)
    try:
        web = server.web
        print(f"test web: seed {args.seed}, {len(web.hosts)} hosts, {len(web.pages)} URLs, port {server.port}")
        print("seeds:")
        for url in server.seeds:
            print(f"  {url}")
        print(f"url_allow: {web.url_allow}")
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


def run_demo(depth: int, runner: str, output: str | None) -> int:
    from mrcrawl import driver  # the demo runs the real driver, jobs and all

    output_dir = Path(output or f"crawl/demo-{datetime.now():%Y%m%d-%H%M%S}")
    inputs = output_dir.with_name(output_dir.name + "-inputs")
    inputs.mkdir(parents=True, exist_ok=True)
    with start_test_web(seed=1) as server:
        seeds = inputs / "seeds.txt"
        seeds.write_text("".join(f"{url}\n" for url in server.seeds), encoding="utf-8")
        conf = inputs / "testweb.yaml"
        conf.write_text(json.dumps(server.web.crawl_config(), indent=2) + "\n", encoding="utf-8")
        print(f"test web: {len(server.web.hosts)} hosts on 127.0.0.2 and up, port {server.port}; inputs in {inputs}")
        status = driver.main([str(seeds), "--depth", str(depth), "--conf", str(conf), "--output", str(output_dir), "--runner", runner])
        server.wait_idle()
        requests = len(server.log)
    if status == 0:
        print(f"\nthe server answered {requests} requests. The stores:")
        for store in ("in", "doc", "out", "xml"):
            for directory in sorted(path for path in (output_dir / store).iterdir() if path.is_dir()):
                parts = sorted(directory.glob("part-*"))
                lines = sum(part.read_bytes().count(b"\n") for part in parts)
                print(f"  {directory}  {lines} lines in {len(parts)} part file(s)")
    return status


if __name__ == "__main__":
    sys.exit(main())
