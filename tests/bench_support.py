"""Running `python -m mrcrawl.bench --quick` as a test's fixture does."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def quick_bench(directory: Path, scenarios: str, timeout: float, options: tuple[str, ...] = ()) -> tuple[str, dict]:
    """`python -m mrcrawl.bench --quick --scenarios SCENARIOS --json ... OPTIONS`: its output and its JSON report."""
    report = directory / "bench.json"
    result = subprocess.run([sys.executable, "-m", "mrcrawl.bench", "--quick", "--scenarios", scenarios,
                             "--json", str(report), *options], capture_output=True, text=True, timeout=timeout)
    assert result.returncode == 0, result.stderr[-3000:]
    return result.stdout, json.loads(report.read_text(encoding="utf-8"))
