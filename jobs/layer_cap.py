"""A capped layer's topN, its second pass, LayerCap (map only): at most
`max_urls_per_layer` URLs in the layer's frontier, besides the seeds.

Each task reads the whole histogram LayerHistogram wrote (`--histogram-part`,
small) and finds the threshold, the cell at which the running count of the
candidates passes the cap: the same cell in every task.  Map: each
candidate, as a frontier entry, held back when it counts and its cell is
not before the threshold (mrcrawl/frontier/caps.py).
"""
from functools import cached_property

from mrcrawl.frontier.caps import capped_frontier, threshold, within_layer_cap
from mrcrawl.mr.job import CrawlJob, JobCounter, lines_of
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import DEFERRED_BY_LAYER_CAP


class MRLayerCap(CrawlJob):
    STEP = "layercap"
    SEEDS = JobCounter(STEP, "seeds")
    KEPT = JobCounter(STEP, "urls kept")
    HELD_BACK = JobCounter(STEP, "urls held back")  # by max_urls_per_layer
    HELD_BEFORE = JobCounter(STEP, "urls held back before")  # by pld_budget or max_urls_per_host, before this step
    SUMMARY = ("{KEPT} URLs within max_urls_per_layer, {HELD_BACK} held back "
               "(and {HELD_BEFORE} by the steps before), besides {SEEDS} seeds")

    INPUT_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--histogram-part", action="append", default=[],
                          help="a part file of the histogram LayerHistogram wrote (repeat for each)")

    @cached_property
    def cut(self) -> str | None:
        """The threshold cell, or None when every candidate fits."""
        protocol = Utf8JsonProtocol()
        cells = (protocol.read(line.rstrip(b"\r\n")) for line in lines_of(self.options.histogram_part) if line.strip())
        return threshold(cells, self.config.max_urls_per_layer)

    def mapper(self, url, candidate):
        before = candidate["deferred"]
        entry = within_layer_cap(candidate, self.cut)
        if entry["seed"]:
            self.count(self.SEEDS)
        elif before:
            self.count(self.HELD_BEFORE)
        else:
            self.count(self.HELD_BACK if entry["deferred"] == DEFERRED_BY_LAYER_CAP else self.KEPT)
        yield url, entry

    @classmethod
    def frontier(cls, counters: dict) -> tuple[int, str]:
        """How many URLs of the frontier it wrote are to be fetched, and what they are."""
        held_back = cls.HELD_BACK.of(counters) + cls.HELD_BEFORE.of(counters)
        return capped_frontier(cls.SEEDS.of(counters), cls.KEPT.of(counters), held_back)


if __name__ == "__main__":
    MRLayerCap.run()
