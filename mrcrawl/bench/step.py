"""Run one job of a prepared crawl directory, in a process of its own.

    python -m mrcrawl.bench.step DIR fetch|parse LAYER --runner local

The benchmark measures a job this way so that the kernel's accounting of
this process and its tasks (os.wait4 in the parent) gives the job's CPU time
and peak memory and nothing else's.  It prints the step's record from
crawl.json (seconds and counters) as one JSON line, with `cpu_s`: the CPU
time the step took in this process (all of it under -r inline, where the
tasks run here; not the interpreter's start).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from mrcrawl.config import CrawlConfig
from mrcrawl.driver import RUNNERS, Crawl
from mrcrawl.progress import DEFAULT_EVERY
from mrcrawl.store.crawl_store import CrawlStore

STEPS = {"fetch": "crawl", "parse": "parse"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.step")
    parser.add_argument("crawl_dir")
    parser.add_argument("step", choices=sorted(STEPS))
    parser.add_argument("layer", type=int)
    parser.add_argument("--runner", default="inline", choices=RUNNERS)
    args = parser.parse_args(argv)
    store = CrawlStore(args.crawl_dir)
    state = store.load_state()
    config = CrawlConfig.from_json(store.read_text(store.config_path))
    options = argparse.Namespace(runner=args.runner, reducers=None, mrjob_conf=None, spark_master=None,
                                 progress_every=DEFAULT_EVERY)
    crawl = Crawl(store, state, config, options, say=lambda message: None)
    cpu_before = time.process_time()
    try:
        getattr(crawl, args.step)(args.layer)
    finally:
        crawl.close()
    cpu_s = time.process_time() - cpu_before
    print(json.dumps({**state["done"][f"{STEPS[args.step]}/{args.layer}"], "cpu_s": cpu_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
