"""The crawl directory: where each store lives, and what a run has finished.

    DIR/crawl.json        what this crawl is and which steps are done (crawl_state.py)
    DIR/config.json       the checked config, shipped to every job
    DIR/stats.json        per-step counters and timings
    DIR/seeds/            the run's seeds, one URL per line
    DIR/rank/<I>/         what the links give each URL on iteration I of the run's scoring (frontier/scores.py)
    DIR/rank/last/        the same of its last iteration, with each pay-level domain's PLD in-degree
    DIR/in/<L>/           frontier of layer L, one frontier entry per URL
    DIR/cand/<L>/         when the config caps a layer: its candidates, frontier entries with their order keys
    DIR/budget/<L>/       the same within pld_budget, when a cap is set too
    DIR/hostcap/<L>/      the same within max_urls_per_host, when max_urls_per_layer is set too
    DIR/hist/<L>/         the candidates counted by cell of the crawl's order, for max_urls_per_layer
    DIR/place/<L>/        which reduce task fetches each slot of layer L, and each task's expected load (one line)
    DIR/doc/<L>/          one doc record per URL attempted on layer L
    DIR/out/<L>/          one out record per doc record of layer L
    DIR/dbbatch/<L>/      what layer L tells the crawl db, one update per URL and one claim per digest or signature
    DIR/dup/<L>/          the duplicate records of the URLs fetched on layer L whose payload or content is another's
    DIR/doc/merged/       one doc record per final URL over all layers
    DIR/xml/<start time>/ one XML page per indexable fetched page
    DIR/.lock             held by the run working in DIR
    DIR/.work/<step>/     a running step's output, moved into place when it succeeds
    DIR/db/               the crawl db, unless --db puts it elsewhere (frontier/crawldb.py)

A store counts only once crawl.json lists the step that wrote it.  On local
disk a job also writes into DIR/.work/<step>/ and the directory is renamed
into place only when the job has succeeded, so a run that dies midway leaves
no half store where a reader would look.  (On HDFS or S3, see cluster_store.py,
there is no cheap rename: a step's output is removed before the step runs
again, and crawl.json alone says what is complete.)
"""
from __future__ import annotations

import json
import os
import shutil
import signal
from pathlib import Path

CRAWL_STATE = "crawl.json"
# What a run writes before crawl.json: a start that died there left these,
# and a new crawl may start over them.
STARTUP_LEFTOVERS = frozenset({".lock", ".work", "config.json", "config.json.tmp", "seeds", "db"})
# Test-only: the tests that kill a run, or fill its disk, at a chosen point
# (tests/test_kill_anywhere.py) name the point here.  A run that reaches it
# stops itself (SIGSTOP) until the test kills it or lets it go on.
PAUSE_AT = "MRCRAWL_PAUSE_AT"


def pause_point(point: str) -> None:
    """Stop this process here when PAUSE_AT names `point` (for tests only)."""
    if os.environ.get(PAUSE_AT) == point:
        os.kill(os.getpid(), signal.SIGSTOP)


class CrawlStore:
    """A crawl directory on local disk."""

    def __init__(self, root: str | Path):
        self.root = self.root_path(root)
        self.state_path = self.join(CRAWL_STATE)
        self.config_path = self.join("config.json")
        self.stats_path = self.join("stats.json")
        self.work_dir = self.join(".work")
        self.lock_path = self.join(".lock")

    @staticmethod
    def root_path(root: str | Path):
        return Path(root)

    def join(self, *parts: str):
        return self.root.joinpath(*parts)

    def seeds(self):
        return self.join("seeds")

    def rank(self, iteration: int, last: bool = False):
        """The store of a scoring iteration's Rank step; the last one's is pld_indegree()."""
        return self.pld_indegree() if last else self.join("rank", str(iteration))

    def pld_indegree(self):
        """The run's PLD in-degree store: the last scoring iteration's, `"~<PLD>"` -> {"pld_inlinks": N}."""
        return self.join("rank", "last")

    def db_batch(self, layer: int):
        return self.join("dbbatch", str(layer))

    def duplicates(self, layer: int):
        return self.join("dup", str(layer))

    def frontier(self, layer: int):
        return self.join("in", str(layer))

    def candidates(self, layer: int):
        return self.join("cand", str(layer))

    def budgeted(self, layer: int):
        return self.join("budget", str(layer))

    def host_capped(self, layer: int):
        return self.join("hostcap", str(layer))

    def histogram(self, layer: int):
        return self.join("hist", str(layer))

    def placement(self, layer: int):
        return self.join("place", str(layer))

    def docs(self, layer: int):
        return self.join("doc", str(layer))

    def outlinks(self, layer: int):
        return self.join("out", str(layer))

    def merged(self):
        return self.join("doc", "merged")

    def xml(self, started_at: str):
        return self.join("xml", started_at)

    @staticmethod
    def part_file(directory, number: int = 0):
        return f"{directory}/part-{number:05d}"

    def parts(self, directory) -> list:
        return sorted(Path(directory).glob("part-*"))

    def has_records(self, directory) -> bool:
        return any(part.stat().st_size > 0 for part in self.parts(directory))

    def holds_crawl(self) -> bool:
        return self.state_path.exists()

    def make_root(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)

    def entries(self) -> set[str] | None:
        """The names in the crawl directory, or None when there is none.
        Raises NotADirectoryError when the path names something else."""
        if not self.root.exists():
            return None
        if not self.root.is_dir():
            raise NotADirectoryError(str(self.root))
        return {path.name for path in self.root.iterdir()}

    def links(self) -> list[Path]:
        """The symbolic links anywhere in the directory, which the crawler
        refuses: a write through one could land outside the directory."""
        found = []
        if self.root.is_dir():
            # os.walk enters no linked directory: it lists it among the names.
            for directory, subdirectories, files in os.walk(self.root):
                found += [Path(directory, name) for name in subdirectories + files if Path(directory, name).is_symlink()]
        return sorted(found)

    def link_refusal(self) -> str | None:
        """Why the directory is refused, when it holds a symbolic link (links())."""
        links = self.links()
        if not links:
            return None
        return (f"{self.root}: {links[0]} is a symbolic link (to {os.readlink(links[0])}); the crawler writes only "
                "inside its crawl directory and crawl db, and follows no link out of them: replace the link with "
                "what it points to")

    # ---- small files -------------------------------------------------------

    def read_text(self, path) -> str:
        return Path(path).read_text(encoding="utf-8")

    def write_text(self, path, text: str, private: bool = False) -> None:
        """Replace a small file whole: readers see the old or the new one.
        A private file (one that may hold a secret) is readable by its owner only."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(path.name + ".tmp")
        temporary.unlink(missing_ok=True)  # a leftover's mode would stay; and a link there is not followed
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
        with open(descriptor, "w", encoding="utf-8") as written:
            written.write(text)
        os.replace(temporary, path)

    def write_json(self, path, data) -> None:
        self.write_text(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")

    # ---- step outputs ------------------------------------------------------

    def begin_output(self, step: str, final):
        """Where a step's job writes; pass it to commit() once the job succeeded."""
        return self.scratch(step)

    def scratch(self, step: str) -> Path:
        """An empty, not yet created directory under DIR/.work/."""
        scratch = self.work_dir / step.replace("/", "-")
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.parent.mkdir(parents=True, exist_ok=True)
        return scratch

    def commit(self, written, final) -> None:
        """Put a finished step's output in place of any earlier one."""
        self.remove(final)
        pause_point(f"replacing {Path(written).name}")  # the scratch directory, named by its step
        Path(final).parent.mkdir(parents=True, exist_ok=True)
        os.replace(written, final)

    def remove(self, directory) -> None:
        """Delete a directory and all it holds, if it exists."""
        shutil.rmtree(directory, ignore_errors=True)
