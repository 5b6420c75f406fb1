"""Serve the test web from the command line, e.g. for a demo crawl:

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
    args = parser.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
