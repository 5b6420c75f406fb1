"""mrjob's inline and local runners, shaped for a crawl's many small jobs.

A crawl runs about three jobs per layer, most of them over a few megabytes,
so on these runners a job's fixed cost is most of its time.  mrjob's
defaults make that cost high, and this module changes four of them;
it also cleans up a file mrjob leaves.

* One wave of reduce tasks.  mrjob splits a reduce into about 2 x cores
  tasks of equal size: inline runs them one after another, local two at a
  time per core.  For the Crawler that is the wrong shape.  A layer lasts as
  long as its busiest host needs (its URLs x its delay), and a task's
  fetcher works on all of its hosts at once; tasks in waves make a layer
  last the *sum* of their busiest hosts.  So a reduce gets as many tasks as
  run at once: one inline, one per core on the local runner.  A step that
  names its reduce tasks (`mapreduce.job.reduces`: the Crawler's, which its
  layer's placement planned, frontier/placement.py) gets that many on the
  local runner, all started at once (fetch tasks wait on the network, not
  on a core), and when its keys are no more than its tasks, a task per key:
  the Crawler's keys are its tasks, so each fetches what the plan gave it,
  as on Hadoop, EMR and Spark.
* One wave of map tasks.  mrjob gives every input file at least one map
  task of its own, and splits the input into 2 x cores tasks.  The
  Optimizer reads 2L+2 stores of a few part files each, so mrjob would run
  about 20 map tasks (each a mapper, a sort and a combiner) for layer 2's
  few hundred kilobytes.  Here small files share a task, and a job has at
  most as many map tasks as run at once.  Lines are never cut or joined,
  and no job reads which file a line came from, so each record still
  reaches a mapper once; only the grouping into tasks differs.
* Tasks forked from the runner, on the local runner.  mrjob starts each
  task as a new interpreter (`python job.py --mapper`), which imports mrjob
  (0.2 s, distutils included) and the job's modules before reading a line;
  a job is at least three task waves deep (map, combine, reduce).  A child
  forked from a process that has imported all that starts in a few
  milliseconds.  The child does what the new interpreter would: it runs the
  job script as __main__ with the task's arguments, environment, working
  directory and standard streams, in a process of its own, and its exit
  status is the task's.  The runner falls back to mrjob's own way when a
  task would not run the job script directly with this interpreter (setup
  commands, another python_bin).
* Whole-file inputs read in place.  A map task that reads a file whole
  (mapper_raw: the crawl db's jobs) is started by mrjob through a shell
  script that copies the file into the task's directory first (for a db
  partition, gigabytes written only to be read once) and then starts a new
  interpreter.  A file on this machine's disk is opened where it is, and
  the task is forked as any other: a db job of 32 such tasks costs no 32
  interpreter starts.  Where mrjob's script must run anyway (setup
  commands), a file given by its absolute path is linked, not copied.
* No lock file left behind.  mrjob's task wrapper scripts lock
  `/tmp/wrapper.lock.<job key>`, a name of its own for each job, and never
  remove it.  The driver's jobs run no setup commands, unless an mrjob.conf
  adds them, but a job run on its own (the benchmark's, a test's) bootstraps
  mrjob through one: every such run would leave a file per job.  The runner
  removes its job's when the job ends.
"""
from __future__ import annotations

import ctypes
import logging
import os
import runpy
import signal
import sys
import pickle
import select
import time
import traceback
from functools import lru_cache, partial
from subprocess import CalledProcessError

from mrjob.cat import decompress, is_compressed
from mrjob.inline import InlineMRJobRunner
from mrjob.sim import SimMRJobRunner
from mrjob.util import to_lines


SORT_BUFFER = "64M"
PR_SET_PDEATHSIG = 1  # prctl(2)
# The signals that stop a crawl, held while a task's worker is forked (see _TaskWorker).
WORKER_SIGNALS = {signal.SIGINT, signal.SIGHUP, signal.SIGTERM}
TASK_END_SECONDS = 5.0  # how long a stopped worker may take to end its task before it is killed
CHUNK = 64 * 1024


def _reducer_key(line: bytes) -> bytes:
    return line.split(b"\t", 1)[0]


def _copy_range(source, destination, start: int, length: int) -> None:
    """Append bytes start..start+length of one open file to another, in the
    kernel where it can: splitting a job's input is then a page-cache copy,
    not a Python loop over lines (a second per job over a few hundred MB)."""
    destination.flush()  # the kernel appends at the file's offset
    while length > 0:
        try:
            copied = os.copy_file_range(source.fileno(), destination.fileno(), length, start)
        except (AttributeError, OSError):
            copied = 0
        if not copied:
            break  # not supported between these files: copy the rest through Python
        start += copied
        length -= copied
    source.seek(start)
    while length > 0:
        chunk = source.read(min(length, 16 * CHUNK))
        if not chunk:
            raise OSError(f"{source.name} ended before byte {start + length}")
        destination.write(chunk)
        start += len(chunk)
        length -= len(chunk)


def _next_line_start(source, position: int) -> int:
    """The first line start at or after `position`."""
    if position <= 0:
        return 0
    source.seek(position - 1)
    source.readline()
    return source.tell()


def _line_at(source, start: int) -> bytes:
    source.seek(start)
    return source.readline()


def _previous_line_start(source, line_start: int) -> int:
    """Where the line that ends just before `line_start` starts."""
    end = line_start - 1  # that line's newline
    while end > 0:
        begin = max(0, end - CHUNK)
        source.seek(begin)
        newline = source.read(end - begin).rfind(b"\n")
        if newline >= 0:
            return begin + newline + 1
        end = begin
    return 0


def _key_boundary(source, position: int, size: int) -> int:
    """The first line start at or after `position` where the reducer key
    changes: a key's records never straddle two splits, so a host stays in
    one task."""
    start = _next_line_start(source, position)
    if start >= size or start == 0:
        return start
    key = _reducer_key(_line_at(source, start))
    if _reducer_key(_line_at(source, _previous_line_start(source, start))) != key:
        return start
    source.seek(start)
    for line in source:
        if _reducer_key(line) != key:
            return start
        start += len(line)
    return size


def _key_end(source, start: int, size: int) -> int:
    """Where the records of the key of the line at `start` end (keys are
    sorted): a binary search over line starts, so a task per key costs a
    few reads per key, not a pass over the file."""
    prefix = _reducer_key(_line_at(source, start)) + b"\t"

    def past_key(position: int) -> bool:
        line_start = _next_line_start(source, position)
        return line_start >= size or not _line_at(source, line_start).startswith(prefix)

    low, high = start, size  # past_key(low) is false, past_key(high) true
    while high - low > 1:
        middle = (low + high) // 2
        if past_key(middle):
            high = middle
        else:
            low = middle
    return min(_next_line_start(source, high), size)


def _key_ranges(source, size: int, most: int) -> list[tuple[int, int]] | None:
    """The byte range of each key of a sorted file, or None if it has more than `most` keys."""
    ranges = []
    start = 0
    while start < size:
        if len(ranges) == most:
            return None
        end = _key_end(source, start, size)
        ranges.append((start, end))
        start = end
    return ranges


def _ends_without_newline(source, size: int) -> bool:
    source.seek(size - 1)
    return source.read(1) != b"\n"


class _OneWave:
    """Mixin for a sim runner: split map and reduce input into one task per slot."""

    def _slots(self) -> int:
        return 1 if isinstance(self, InlineMRJobRunner) else self._num_cores()

    def _split_mapper_input(self, input_paths, step_num):
        input_paths = list(input_paths)
        if step_num == 0 and self._uses_input_manifest():
            return super()._split_mapper_input(input_paths, step_num)
        total = sum(os.stat(path).st_size for path in input_paths)
        split_size = max(-(-total // self._slots()), 1)  # rounded up, as for the reduce
        split_files = self._yield_split_fileobjs("mapper", step_num)
        splits = []
        split = None

        def room() -> int:
            nonlocal split
            if split is None:
                split = next(split_files)
                splits.append(dict(file=path, start=0, length=0))
            return split_size - splits[-1]["length"]

        def written(length: int) -> None:
            nonlocal split
            splits[-1]["length"] += length
            if splits[-1]["length"] >= split_size:
                split.close()
                split = None

        for path in input_paths:
            with open(path, "rb") as source:
                if is_compressed(path):
                    for line in to_lines(decompress(source, path)):
                        room()
                        if not line.endswith(b"\n"):
                            line += b"\n"  # a file's last line stays a line of its own
                        split.write(line)
                        written(len(line))
                    continue
                size = os.stat(path).st_size
                start = 0
                while start < size:
                    # Whole lines, at least enough to fill the split.
                    end = min(_next_line_start(source, start + room()), size)
                    _copy_range(source, split, start, end - start)
                    length = end - start
                    if end == size and _ends_without_newline(source, size):
                        split.write(b"\n")  # a file's last line stays a line of its own
                        length += 1
                    written(length)
                    start = end
        if split is not None:
            split.close()
        if not splits:  # no input at all: one task, as mrjob runs one
            next(split_files).close()
            splits.append(dict(file=input_paths[0] if input_paths else "", start=0, length=0))
        return splits

    def _manifest_download_commands(self):
        # Checked in order before mrjob's own, which end with `cp`.
        return [("/*", "ln -s"), *super()._manifest_download_commands()]

    def _reduce_tasks(self, step_num) -> int:
        """As many reduce tasks as run at once; on the local runner, a step
        that names its reduce tasks (the Crawler's, by its layer's placement:
        frontier/placement.py) gets that many, all run at once."""
        named = self._jobconf_for_step(step_num).get("mapreduce.job.reduces")
        if named and not isinstance(self, InlineMRJobRunner):
            return int(named)
        return self._slots()

    def _split_reducer_input(self, step_num):
        path = self._sorted_reducer_input_path(step_num)
        size = os.stat(path).st_size
        tasks = self._reduce_tasks(step_num)
        with open(path, "rb") as sorted_input:
            # No more keys than tasks (the Crawler's keys are its tasks): a task per key.
            ranges = _key_ranges(sorted_input, size, tasks) if tasks > 1 else None
            if ranges is None:
                ends = [_key_boundary(sorted_input, -(-size * task // tasks), size) for task in range(1, tasks)]
                bounds = sorted({0, size, *ends})
                ranges = list(zip(bounds, bounds[1:]))
            ranges = ranges or [(0, 0)]  # an empty input still gets one task
            # The first task's input stays where the sort wrote it; only the
            # others are copied out (the sorted file is as big as the job's
            # map output, and inline has one task: nothing is copied).
            for task_num, (start, end) in enumerate(ranges[1:], start=1):
                with open(self._reducer_split_path(step_num, task_num), "wb") as split:
                    _copy_range(sorted_input, split, start, end - start)
        first = self._reducer_split_path(step_num, 0)
        os.link(path, first)
        os.truncate(first, ranges[0][1])
        return len(ranges)

    def _reducer_split_path(self, step_num, task_num):
        split_path = self._task_input_path("reducer", step_num, task_num)
        self.fs.mkdir(os.path.dirname(split_path))
        return split_path


WRAPPER_LOCK = "/tmp/wrapper.lock.{job_key}"  # where mrjob 0.7.4's wrapper scripts lock, whatever TMPDIR says


class _ForkedTasks:
    """Mixin for the local runner: run each task in a child of a worker, not a new interpreter."""

    def _run(self):
        try:
            super()._run()
        finally:
            try:
                os.remove(WRAPPER_LOCK.format(job_key=self._job_key))
            except FileNotFoundError:
                pass  # the job ran no wrapper script

    def _sort_bin(self):
        # GNU sort holds all of its input in memory when it fits, so the
        # shuffle's memory would grow with the job; a fixed buffer keeps it
        # flat (Hadoop's mapreduce.task.io.sort.mb plays this part), and sort
        # merges runs from disk at the same speed.
        command = super()._sort_bin()
        return command if self._opts["sort_bin"] else [*command, "-S", SORT_BUFFER]

    _reducers_at_once = 0  # while a reduce runs: its tasks, which run in one wave (_OneWave._reduce_tasks)

    def _run_reducers(self, step_num, num_reducer_tasks):
        self._reducers_at_once = num_reducer_tasks
        try:
            super()._run_reducers(step_num, num_reducer_tasks)
        finally:
            self._reducers_at_once = 0

    def _run_multiple(self, funcs, num_processes=None):
        # mrjob runs the tasks in a multiprocessing Pool.  A pool's idle
        # worker holds the pool's queue lock while it waits for work, so a
        # worker that a signal ends (SIGTERM to every process of the crawl,
        # as systemd and `timeout` send it) leaves the lock held, and the
        # pool then hangs the driver as it ends.  Here each task's function
        # runs in a process forked for it, a core's worth at a time, which
        # shares no lock with the driver: it ends when its task does, and
        # a stopping signal ends it with its task (_TaskWorker).
        from mrjob.local import _pickle_safe

        waiting = list(funcs)
        running: dict[int, _TaskWorker] = {}  # by the read end of its pipe
        at_once = max(self._num_cores(), self._reducers_at_once)
        try:
            while waiting or running:
                while waiting and len(running) < at_once:
                    worker = _TaskWorker.start(partial(_pickle_safe, waiting.pop(0)))
                    running[worker.pipe] = worker
                ready, _, _ = select.select(list(running), [], [])
                for pipe in ready:
                    if running[pipe].read():
                        running.pop(pipe).end()  # raises what the task's function raised
        finally:
            for worker in running.values():  # a task failed, or the driver was stopped: the others end
                worker.stop()

    def _invoke_task_func(self, task_type, step_num, task_num):
        if self._reads_whole_file(task_type, step_num):
            # mrjob runs such a task through a shell script that copies (here:
            # links) the file named on its input line, then starts the job's
            # script with the file's path and URI.  A file on this machine's
            # disk needs neither: the task opens it where it is, as the inline
            # runner has it do, and is forked as any other.
            path = self._whole_local_file(step_num, task_num)
            if path is None:
                return super()._invoke_task_func(task_type, step_num, task_num)
            command = self._script_args_for_step(step_num, task_type) + [path, path]
        else:
            command = self._substep_args(step_num, task_type)
        script = self._working_dir_mgr.name("file", self._script_path)
        if command[:2] != [sys.executable, script]:
            return super()._invoke_task_func(task_type, step_num, task_num)
        return partial(_run_forked_task, task_type, step_num, task_num, command[1:], self._num_steps())

    def _reads_whole_file(self, task_type, step_num) -> bool:
        step = self._get_step(step_num)
        return (task_type == "mapper" and step_num == 0 and self._uses_input_manifest()
                and step["mapper"]["type"] == "script" and "pre_filter" not in step["mapper"])

    def _whole_local_file(self, step_num, task_num) -> str | None:
        """The file a whole-file map task reads (its input is one line:
        offset, then the file's URI), if it is a path on this machine."""
        with open(self._task_input_path("mapper", step_num, task_num), encoding="utf-8") as manifest:
            uri = manifest.readline().rstrip("\r\n").split("\t")[-1]
        return uri if os.path.isabs(uri) and os.path.isfile(uri) else None


class _TaskWorker:
    """A process forked to run one task's function (_run_multiple); the
    driver reads what it raised from a pipe, which closes when it ends."""

    def __init__(self, pid: int, pipe: int):
        self.pid = pid
        self.pipe = pipe
        self.raised = bytearray()  # the pickled exception its function raised, if any

    @classmethod
    def start(cls, func) -> "_TaskWorker":
        reader, writer = os.pipe()
        # The stopping signals are held until the worker has its handlers:
        # one that came between the fork and them would print its traceback.
        signal.pthread_sigmask(signal.SIG_BLOCK, WORKER_SIGNALS)
        try:
            pid = os.fork()
            if pid == 0:
                os.close(reader)
                _exit_as_worker(func, writer)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_SIGNALS)
        os.close(writer)
        return cls(pid, reader)

    def read(self) -> bool:
        """Read what the worker wrote; True once it has closed its pipe (it has ended)."""
        chunk = os.read(self.pipe, CHUNK)
        self.raised += chunk
        return not chunk

    def end(self) -> None:
        """Reap the ended worker; raise what its task's function raised."""
        os.close(self.pipe)
        _, status = os.waitpid(self.pid, 0)
        if self.raised:
            raise pickle.loads(bytes(self.raised))
        if status:
            raise RuntimeError(f"a task's worker process ended with status {os.waitstatus_to_exitcode(status)}")

    def stop(self) -> None:
        """End the worker and its task, and reap it: SIGTERM, then SIGKILL if it lingers."""
        os.close(self.pipe)
        try:
            os.kill(self.pid, signal.SIGTERM)
            deadline = time.monotonic() + TASK_END_SECONDS
            while os.waitpid(self.pid, os.WNOHANG) == (0, 0):
                if time.monotonic() > deadline:
                    os.kill(self.pid, signal.SIGKILL)
                    os.waitpid(self.pid, 0)
                    return
                time.sleep(0.01)
        except ChildProcessError:
            pass  # reaped already


# The task the worker process runs now (its pid), for the worker's SIGTERM handler; None between tasks.
_worker_task: int | None = None


def _exit_as_worker(func, raised_pipe: int) -> None:
    """In a forked worker: run the task's function, write what it raised to
    the pipe, and exit.  Ctrl-C and SIGHUP, which a terminal sends to every
    process of the crawl, are left to the driver (the task stops on Ctrl-C
    by itself); SIGTERM ends the task, reaps it, and ends the worker."""
    status = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, _end_worker)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, WORKER_SIGNALS)  # held by _TaskWorker.start
        try:
            func()
        except BaseException as error:
            status = 1
            written = memoryview(pickle.dumps(error))
            while written:
                written = written[os.write(raised_pipe, written):]
    finally:
        os._exit(status)  # not sys.exit: the atexit hooks are the driver's


def _end_worker(signum, frame) -> None:
    """A worker's SIGTERM: end its task and reap it, where it would otherwise
    stay a zombie (a container's first process often reaps nothing), then end."""
    try:
        if _worker_task is not None:
            os.kill(_worker_task, signal.SIGTERM)
            os.waitpid(_worker_task, 0)
    except (ProcessLookupError, ChildProcessError):
        pass  # the task had ended, and been reaped, as the signal came
    finally:
        os._exit(128 + signal.SIGTERM)


def _run_forked_task(task_type, step_num, task_num, argv, num_steps, stdin, stdout, stderr, wd, env):
    """Run `python *argv` as a child of this process; raise as mrjob does if it fails."""
    global _worker_task
    sys.stdout.flush()  # or the child could write this process's pending output
    sys.stderr.flush()
    # SIGTERM is held until the task is known, so that the worker's handler ends it (_end_worker).
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    try:
        pid = os.fork()
        if pid == 0:
            _exit_as_task(argv, stdin, stdout, stderr, wd, env)
        _worker_task = pid
    finally:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
    status = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    _worker_task = None
    if status:
        from mrjob.local import _TaskFailedException

        raise _TaskFailedException(
            reason=str(CalledProcessError(status, [sys.executable, *argv])),
            step_num=step_num, num_steps=num_steps, task_type=task_type, task_num=task_num,
        )


def _exit_as_task(argv, stdin, stdout, stderr, wd, env):
    """In the forked child: become `python *argv` run in `wd` with `env`, and exit with its status."""
    status = 1
    try:
        # The worker ignores Ctrl-C, but a task must stop on it; SIGTERM
        # ends a task at once; and a task whose worker was terminated must
        # not go on fetching on its own.
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})  # held by _run_forked_task
        _die_with_parent()
        for stream, fd in ((stdin, 0), (stdout, 1), (stderr, 2)):
            os.dup2(stream.fileno(), fd)
        sys.stdin = open(0, "r", closefd=False)
        sys.stdout = open(1, "w", closefd=False)
        sys.stderr = open(2, "w", errors="backslashreplace", closefd=False)
        os.chdir(wd)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = list(argv)
        sys.path.insert(0, os.path.dirname(os.path.realpath(argv[0])))
        # A new interpreter has no logging handlers: warnings go to its stderr.
        logging.root.handlers.clear()
        logging.root.setLevel(logging.WARNING)
        runpy.run_path(argv[0], run_name="__main__")
        status = 0
    except SystemExit as exit:
        status = _exit_status(exit)
    except KeyboardInterrupt:
        status = 128 + signal.SIGINT  # quietly: the driver says what happened
    except BaseException:
        traceback.print_exc()
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        finally:
            # Not sys.exit: the atexit hooks are the parent's (its temporary
            # directories, among others), not this task's.
            os._exit(status)


def _die_with_parent() -> None:
    """Ask Linux to end this process when its parent ends (elsewhere, nothing)."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    except (AttributeError, OSError):
        pass


def _exit_status(exit: SystemExit) -> int:
    if exit.code is None:
        return 0
    if isinstance(exit.code, int):
        return exit.code
    print(exit.code, file=sys.stderr)
    return 1


@lru_cache(maxsize=None)
def one_wave_runner(runner_class: type) -> type:
    """`runner_class`, shaped as this module says if it is an inline or local runner."""
    if not issubclass(runner_class, SimMRJobRunner):
        return runner_class
    # mrjob.local imports pyspark when it can (0.2 s), which neither the
    # inline runner nor a cluster's tasks need.  A local runner class means
    # mrjob has imported it already, so the check need not import it.
    local = sys.modules.get("mrjob.local")
    is_local = local is not None and issubclass(runner_class, local.LocalMRJobRunner)
    mixins = (_ForkedTasks, _OneWave) if is_local else (_OneWave,)
    return type(f"OneWave{runner_class.__name__}", (*mixins, runner_class), {})
