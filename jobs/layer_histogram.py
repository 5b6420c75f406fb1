"""A capped layer's topN, its first pass, LayerHistogram: the layer's
candidates counted by cell of the crawl's order, a small store.

Map: each candidate that counts against `max_urls_per_layer` (no seed, not
held back by the per-host cap) -> (its cell, 1).  Combine and reduce: the
count of each cell (mrcrawl/frontier/caps.py).  The histogram holds one
line per cell that holds a candidate: 4,096 cells per order value at most.
"""
from mrcrawl.frontier.caps import histogram_cell
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRLayerHistogram(CrawlJob):
    STEP = "histogram"
    COUNTED = JobCounter(STEP, "urls counted")
    CELLS = JobCounter(STEP, "cells")
    SUMMARY = "{COUNTED} URLs counted in {CELLS} cells of the crawl's order"

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper(self, url, candidate):
        cell = histogram_cell(candidate)
        if cell is not None:
            self.count(self.COUNTED)
            yield cell, 1

    def combiner(self, cell, counts):
        yield cell, sum(counts)

    def reducer(self, cell, counts):
        self.count(self.CELLS)
        yield cell, sum(counts)


if __name__ == "__main__":
    MRLayerHistogram.run()
