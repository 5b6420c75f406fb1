"""Run one job of a prepared crawl directory, in a process of its own.

    python -m mrcrawl.bench.step DIR crawl LAYER --runner local
    python -m mrcrawl.bench.step DIR score --runner local

The benchmark measures a job this way so that the kernel's accounting of
this process and its tasks (os.wait4 in the parent) gives the job's CPU time
and peak memory and nothing else's.  It runs the step as a crawl
runs it (plan.py, pipeline.py) and prints the step's record from
crawl.json (seconds and counters) as one JSON line, with `cpu_s`: the CPU
time the step took in this process (all of it under -r inline, where the
tasks run here; not the interpreter's start).  `score` runs a run's scoring
steps instead, the config's pagerank_iterations of them (plan.scoring_steps),
and prints their seconds summed and each one's counters.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from jobs.crawler import MRCrawler
from jobs.placement import MRPlacement
from mrcrawl.crawl_dir import crawl_db
from mrcrawl.config import CrawlConfig
from mrcrawl.mr.launcher import RUNNERS, Launcher, RunnerSettings
from mrcrawl.pipeline import Pipeline
from mrcrawl.plan import layer_steps, scoring_steps
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore

SCORE = "score"
STEPS = (MRCrawler.STEP, SCORE)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.step", allow_abbrev=False)
    parser.add_argument("crawl_dir")
    parser.add_argument("step", choices=STEPS)
    parser.add_argument("layer", type=int, nargs="?", default=0)
    parser.add_argument("--runner", default="inline", choices=RUNNERS)
    args = parser.parse_args(argv)
    store = CrawlStore(args.crawl_dir)
    state = CrawlState.load(store)
    settings = RunnerSettings(args.runner)
    if args.step == SCORE:
        iterations = CrawlConfig.from_dict(state.config).pagerank_iterations
        steps = scoring_steps(store, iterations, settings.sorts_reduce_output)
    else:
        # The Crawler fetches by its layer's placement: the placement step runs first, unmeasured.
        needed = (MRPlacement.STEP, args.step) if args.step == MRCrawler.STEP else (args.step,)
        steps = [step for step in layer_steps(store, args.layer, last=True, batch_sorted=settings.sorts_reduce_output,
                                              reduce_tasks=settings.reduce_tasks) if step.job.STEP in needed]
    cpu_before = time.process_time()
    with Launcher(settings) as launcher:
        pipeline = Pipeline(store, state, crawl_db(state.db), launcher, say=lambda message: None)
        for step in steps:
            pipeline.run_step(step)
    cpu_s = time.process_time() - cpu_before
    measured = [step for step in steps if step.job.STEP == args.step] or steps  # the score: all its steps
    done = [state.done[step.name].to_json() for step in measured]
    # One step's record as it is; several steps' seconds summed, and each one's counters.
    print(json.dumps({**done[0], "seconds": sum(record["seconds"] for record in done),
                      "counters": done[0]["counters"] if len(done) == 1 else [record["counters"] for record in done],
                      "cpu_s": cpu_s}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
