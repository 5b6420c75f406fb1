"""mrjob's inline and local runners, with a job's reduce done in one wave.

Those runners split a reduce into about 2 x cores tasks of equal size: inline
runs them one after another, local two at a time per core.  For the Crawler
that is the wrong shape.  A layer lasts as long as its busiest host needs
(its URLs x its delay), and a task's fetcher works on all of its hosts at
once; tasks in waves make a layer last the *sum* of their busiest hosts.  So
the Crawler's reduce gets as many tasks as run at once: one inline, one per
core on the local runner.  Hadoop, EMR and Spark take --reducers instead.
"""
from __future__ import annotations

import os
from functools import lru_cache

from mrjob.inline import InlineMRJobRunner
from mrjob.sim import SimMRJobRunner, _split_records


def _reducer_key(line: bytes) -> bytes:
    return line.split(b"\t", 1)[0]


class _OneWave:
    """Mixin for a sim runner: split the sorted reducer input into one task per slot."""

    def _split_reducer_input(self, step_num):
        path = self._sorted_reducer_input_path(step_num)
        slots = 1 if isinstance(self, InlineMRJobRunner) else self._num_cores()
        split_size = max(os.stat(path).st_size // slots, 1)
        split_files = self._yield_split_fileobjs("reducer", step_num)
        tasks = 0
        with open(path, "rb") as sorted_input:
            # A key's records never straddle two splits: a host stays in one task.
            for records in _split_records(sorted_input, split_size, _reducer_key):
                with next(split_files) as split:
                    split.writelines(records)
                tasks += 1
        return tasks


@lru_cache(maxsize=None)
def one_wave_runner(runner_class: type) -> type:
    """`runner_class`, made to reduce in one wave if it is an inline or local runner."""
    if not issubclass(runner_class, SimMRJobRunner):
        return runner_class
    return type(f"OneWave{runner_class.__name__}", (_OneWave, runner_class), {})
