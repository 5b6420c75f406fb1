"""Run one job of a prepared crawl directory, in a process of its own.

    python -m mrcrawl.bench.step DIR crawl|parse LAYER --runner local

The benchmark measures a job this way so that the kernel's accounting of
this process and its tasks (os.wait4 in the parent) gives the job's CPU time
and peak memory and nothing else's.  It runs the step as a crawl
runs it (plan.py, pipeline.py) and prints the step's record from
crawl.json (seconds and counters) as one JSON line, with `cpu_s`: the CPU
time the step took in this process (all of it under -r inline, where the
tasks run here; not the interpreter's start).
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from jobs.crawler import MRCrawler
from jobs.parser import MRParser
from mrcrawl.crawl_dir import crawl_db
from mrcrawl.mr.launcher import RUNNERS, Launcher, RunnerSettings
from mrcrawl.pipeline import Pipeline
from mrcrawl.plan import layer_steps
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore

STEPS = (MRCrawler.STEP, MRParser.STEP)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.step", allow_abbrev=False)
    parser.add_argument("crawl_dir")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("layer", type=int)
    parser.add_argument("--runner", default="inline", choices=RUNNERS)
    args = parser.parse_args(argv)
    store = CrawlStore(args.crawl_dir)
    state = CrawlState.load(store)
    settings = RunnerSettings(args.runner)
    [step] = [step for step in layer_steps(store, args.layer, last=True, batch_sorted=settings.sorts_reduce_output)
              if step.job.STEP == args.step]
    cpu_before = time.process_time()
    with Launcher(settings) as launcher:
        Pipeline(store, state, crawl_db(state.db), launcher, say=lambda message: None).run_step(step)
    cpu_s = time.process_time() - cpu_before
    print(json.dumps({**state.done[step.name].to_json(), "cpu_s": cpu_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
