"""A budgeted layer's first cap step, PldBudget: at most `pld_budget`'s
fetches per pay-level domain per run, besides the seeds.

Input: the layer's candidates, and the run's earlier frontiers (in/0 ..
in/L-1), whose entries this step gave their PLD.  Map: a candidate -> (its
PLD, [order key, URL, candidate]); an earlier frontier entry that spent a
fetch -> (its PLD, ["", URL, null]).
A PLD's values reach one reducer call sorted (SORT_VALUES: the keys compare
as strings), its spent fetches first.  Each task reads the PLD in-degree
store (`--pld-part`, the scoring step's lines "~<PLD>" -> {"pld_inlinks": N}).
Reduce: the first (budget - spent) candidates that count stay, the rest are
held back, marked `pld_budget` (mrcrawl/frontier/budgets.py).  Written as
they came, order key and all: the frontier when no cap follows, else the
caps' candidates.
"""
from functools import cached_property

from mrcrawl.frontier.budgets import allowance, pld_indegree, pld_of, ranked_value, within_budget
from mrcrawl.frontier.caps import capped_frontier
from mrcrawl.mr.job import CrawlJob, JobCounter, lines_of
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRPldBudget(CrawlJob):
    STEP = "pldbudget"
    SEEDS = JobCounter(STEP, "seeds")
    KEPT = JobCounter(STEP, "urls kept")
    HELD_BACK = JobCounter(STEP, "urls held back")
    SPENT = JobCounter(STEP, "fetches spent on earlier layers")
    PLDS = JobCounter(STEP, "pay-level domains")
    SUMMARY = ("{KEPT} URLs within pld_budget, {HELD_BACK} held back, besides {SEEDS} seeds "
               "({SPENT} fetches spent on earlier layers, {PLDS} pay-level domains)")

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    SORT_VALUES = True  # a PLD's spent fetches, then its candidates in the crawl's order

    def configure_args(self):
        super().configure_args()
        self.add_file_arg("--pld-part", action="append", default=[],
                          help="a part file of the PLD in-degree store the scoring step wrote (repeat for each)")

    @cached_property
    def pld_inlinks(self) -> dict[str, int]:
        """Each PLD's in-degree the scoring step counted; a PLD not listed has none."""
        protocol = Utf8JsonProtocol()
        lines = (pld_indegree(protocol.read(line.rstrip(b"\r\n")))
                 for line in lines_of(self.options.pld_part) if line.strip())
        return dict(line for line in lines if line is not None)

    def mapper(self, url, entry):
        value = ranked_value(url, entry)
        if value is not None:
            if value[2] is None:
                self.count(self.SPENT)
            yield pld_of(url), value

    def reducer(self, pld, ranked):
        self.count(self.PLDS)
        budget = allowance(self.config.pld_budget, self.pld_inlinks.get(pld, 0))
        for url, candidate in within_budget(pld, ranked, budget):
            self.count(self.SEEDS if candidate["seed"] else self.HELD_BACK if candidate["deferred"] else self.KEPT)
            yield url, candidate

    @classmethod
    def frontier(cls, counters: dict) -> tuple[int, str]:
        """How many URLs of the frontier it wrote are to be fetched, and what they are."""
        return capped_frontier(cls.SEEDS.of(counters), cls.KEPT.of(counters), cls.HELD_BACK.of(counters))


if __name__ == "__main__":
    MRPldBudget.run()
