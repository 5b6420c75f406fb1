"""Run a command and report its CPU time and peak RSS, as the kernel counts them.

    python -m mrcrawl.bench.measure REPORT_JSON -- COMMAND [ARGS...]

The command's exit code is this process's.  Why a process of its own: Linux
counts, in a child's peak RSS, the memory of the process that started it as
it was at the moment of exec (the mm being replaced).  Started from the
benchmark, which holds a whole web's URL list, every child would show at
least the benchmark's size.  This process imports next to nothing, so the
floor it leaves in its child's figure is a bare interpreter's.
"""
import json
import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m mrcrawl.bench.measure REPORT_JSON -- COMMAND [ARGS...]", file=sys.stderr)
        return 2
    report_path, command = argv[0], argv[2:]
    process = subprocess.Popen(command)
    # Reaped here rather than by Popen.wait: wait4 also gives the rusage of
    # the child and of every descendant it waited for (peak RSS: the largest).
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = exit_code = os.waitstatus_to_exitcode(status)
    with open(report_path, "w", encoding="utf-8") as report:
        json.dump({"cpu_s": usage.ru_utime + usage.ru_stime, "user_s": usage.ru_utime, "system_s": usage.ru_stime,
                   "peak_rss_mb": usage.ru_maxrss / 1024, "exit_code": exit_code}, report)
    return exit_code if exit_code >= 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
