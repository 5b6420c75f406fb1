"""Scores, step 1 of a PageRank iteration, Rank: what each URL's links give it.

Map: each db URL record (the db's URL partition files, read line by line)
-> a node's own mark, each fetched page's share of its score to each of
its outlinks (keyed as the crawl db's batch is, by the target's
partition), the node count, the start scores' sum and the spread (D); on
the last iteration also the pay-level domains linking across domains.
Combine and reduce: sum the shares and count the distinct linking pages
and hosts of each URL; a URL that is no node gives what it got to the
spread; the PLD in-degree of each pay-level domain; each reduce task writes
its totals as its last line (mrcrawl/frontier/scores.py).
"""
from mrcrawl.frontier.scores import (
    TOTALS_KEY,
    fold_pld_sources,
    fold_rank,
    fold_totals,
    is_pld_key,
    link_totals,
    lost_share,
    rank_values,
)
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRRank(CrawlJob):
    STEP = "rank"
    NODES = JobCounter(STEP, "urls ranked")  # the graph's nodes
    LINKED = JobCounter(STEP, "urls linked")  # nodes some fetched page links
    PLDS = JobCounter(STEP, "domains linked")  # pay-level domains another links (last iteration only)
    SUMMARY = "{NODES} URLs ranked, {LINKED} of them linked from fetched pages; {PLDS} pay-level domains linked"

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def configure_args(self):
        super().configure_args()
        self.add_passthru_arg("--pld-indegree", action="store_true",
                              help="also write each pay-level domain's PLD in-degree (the run's last iteration)")

    def mapper(self, url, record):
        yield from rank_values(url, record, self.partitions, self.options.pld_indegree)

    def combiner(self, key, values):
        yield key, self._folded(key, values)

    def reducer_init(self):
        self.totals = None

    def reducer(self, key, values):
        folded = self._folded(key, values)
        if key == TOTALS_KEY:
            self._add_totals(folded)
        elif is_pld_key(key):
            self.count(self.PLDS)
            yield key, {"pld_inlinks": len(folded)}
        else:
            self.count(self.NODES, folded["node"])
            line = link_totals(key, folded)
            if line is not None:
                self.count(self.LINKED)
                yield line
            lost = lost_share(folded)
            if any(lost):
                self._add_totals({"nodes": 0, "mass": [0.0, 0.0], "spread": lost})

    def _add_totals(self, totals: dict) -> None:
        self.totals = totals if self.totals is None else fold_totals([self.totals, totals])

    def reducer_final(self):
        # Last: the key sorts after every other, so the task's output stays sorted.
        if self.totals is not None:
            yield TOTALS_KEY, self.totals

    @staticmethod
    def _folded(key, values):
        if key == TOTALS_KEY:
            return fold_totals(values)
        return fold_pld_sources(values) if is_pld_key(key) else fold_rank(values)


if __name__ == "__main__":
    MRRank.run()
