"""The crawl directory: where each store lives, and what a run has finished.

    DIR/crawl.json        what this crawl is and which steps are done (for --resume)
    DIR/config.json       the checked config, shipped to every job
    DIR/stats.json        per-step counters and timings
    DIR/in/<L>/           frontier of layer L, one URL per line
    DIR/doc/<L>/          one doc record per URL attempted on layer L
    DIR/out/<L>/          one out record per doc record of layer L
    DIR/doc/merged/       one doc record per final URL over all layers
    DIR/xml/<start time>/ one XML page per indexable fetched page

A job writes into DIR/.work/<step>/ and the directory is renamed into place
only when the job has succeeded, and only then is the step marked done, so a
run that dies midway leaves every finished store whole and no half store.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

STATE_FORMAT = 1


class CrawlStore:
    def __init__(self, root: str | Path):
        self.root = Path(root)
        self.state_path = self.root / "crawl.json"
        self.config_path = self.root / "config.json"
        self.stats_path = self.root / "stats.json"
        self.work_dir = self.root / ".work"
        self.lock_path = self.root / ".lock"

    def frontier(self, layer: int) -> Path:
        return self.root / "in" / str(layer)

    def docs(self, layer: int) -> Path:
        return self.root / "doc" / str(layer)

    def outlinks(self, layer: int) -> Path:
        return self.root / "out" / str(layer)

    def merged(self) -> Path:
        return self.root / "doc" / "merged"

    def xml(self, started_at: str) -> Path:
        return self.root / "xml" / started_at

    @staticmethod
    def parts(directory: Path) -> list[Path]:
        return sorted(directory.glob("part-*"))

    def has_records(self, directory: Path) -> bool:
        return any(part.stat().st_size > 0 for part in self.parts(directory))

    def holds_crawl(self) -> bool:
        return self.state_path.exists()

    # ---- state -----------------------------------------------------------

    def load_state(self) -> dict:
        return json.loads(self.state_path.read_text(encoding="utf-8"))

    def save_state(self, state: dict) -> None:
        write_json_atomically(self.state_path, state)

    # ---- step outputs ----------------------------------------------------

    def scratch(self, step: str) -> Path:
        """An empty directory for a job to write; see commit()."""
        scratch = self.work_dir / step.replace("/", "-")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.parent.mkdir(parents=True, exist_ok=True)
        return scratch

    def commit(self, scratch: Path, final: Path) -> None:
        """Put a finished job's output in place of any earlier one."""
        if final.exists():
            shutil.rmtree(final)
        final.parent.mkdir(parents=True, exist_ok=True)
        os.replace(scratch, final)


def write_json_atomically(path: Path, data) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)
