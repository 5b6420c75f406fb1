"""A layer's frontier within `pld_budget`: each pay-level domain's fetches
per run (IRLbot's STAR budgets, with BEAST's deferral).

A pay-level domain (page/domains.py) may be fetched at most

    budget = floor + per_linking_pld * pld_inlinks

times per run, seeds not counted, where pld_inlinks is its PLD in-degree:
how many other pay-level domains link to it, as the scoring step counted
them at the start of the run (its store's lines `"~<PLD>"` ->
`{"pld_inlinks": N}`; a PLD it does not list, or a run with no such store,
counts 0).  Links are cheap to make within one domain and dear to get from
others: a link farm, a site of endless generated pages that link only to
each other, has an in-degree of the few real sites that link it, and so a
small budget, however many URLs it offers.  A site that many others link
gets a large one.

The budget step (jobs/pld_budget.py) runs first among the steps that hold
a layer's candidates to the caps (caps.py), a reduce by PLD.  It reads the
layer's candidates and the run's earlier frontiers (in/0 .. in/L-1): each
entry there that was neither held back nor a seed is a fetch its PLD has
already spent this run.  A PLD's spent fetches and candidates meet in one
reducer call, the spent ones first, then the candidates in the crawl's
order (their order keys, caps.py); the first (budget - spent) candidates
that count stay, the rest are held back, their entries' `deferred` naming
`pld_budget`.  Each entry it writes carries its PLD (`pld`), which is how
the step tells an earlier frontier's entries from the layer's candidates.  A held-back URL waits in the db, unfetched, and is offered
again on the next layer and the next run (BEAST's later queues: deferred,
never dropped); each deferral ages it in the crawl's order (caps.py), and
the next run's budget is whole again.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from mrcrawl.config import PldBudget
from mrcrawl.frontier.caps import counts, held_back
from mrcrawl.page.domains import pay_level_domain
from mrcrawl.page.urls import host_of
from mrcrawl.store.records import DEFERRED_BY_PLD_BUDGET

PLD_KEY_PREFIX = "~"  # the in-degree store's keys: "~<PLD>"
PLD_INLINKS = "pld_inlinks"  # and their values' field
# The field the budget step adds to each entry it writes, its PLD: an entry
# of an earlier frontier has it, a candidate of the layer not yet.
PLD_FIELD = "pld"
FIRST = ""  # sorts before every order key: a PLD's spent fetches, and its seeds, come first


def pld_of(url: str) -> str:
    return pay_level_domain(host_of(url))


def pld_indegree(line: tuple[str, dict]) -> tuple[str, int] | None:
    """(PLD, in-degree) of a line of the in-degree store, or None for a line of another kind."""
    key, value = line
    if not key.startswith(PLD_KEY_PREFIX) or PLD_INLINKS not in value:  # the store's totals line, say
        return None
    return key[len(PLD_KEY_PREFIX):], value[PLD_INLINKS]


def allowance(budget: PldBudget, pld_inlinks: int) -> int:
    """A PLD's fetches per run under `budget`, given its PLD in-degree."""
    return budget.floor + budget.per_linking_pld * pld_inlinks


def is_spent(entry: dict) -> bool:
    """Whether an entry of one of the run's earlier frontiers spent a fetch of its PLD's budget."""
    return not entry["seed"] and not entry["deferred"]


def ranked_value(url: str, entry: dict) -> list | None:
    """What the budget step's map gives a PLD's reducer call for one entry:
    [order key, URL, candidate] for a candidate of the layer (a seed's
    order key is FIRST); for an entry of an earlier frontier (one with its
    PLD_FIELD), [FIRST, URL, None] when it spent a fetch, else None."""
    if PLD_FIELD in entry:
        return [FIRST, url, None] if is_spent(entry) else None
    return [entry["order"] or FIRST, url, entry]


def within_budget(pld: str, ranked: Iterable[list], budget: int) -> Iterator[tuple[str, dict]]:
    """One PLD's ranked values (ranked_value's, in the crawl's order, the
    spent fetches first): (URL, candidate) for each candidate, with its PLD,
    the first (budget - spent) that count as they were, the rest held back."""
    taken = 0
    for _, url, entry in ranked:
        if entry is None:
            taken += 1
            continue
        entry = {**entry, PLD_FIELD: pld}
        if counts(entry):
            if taken >= budget:
                entry = held_back(entry, DEFERRED_BY_PLD_BUDGET)
            taken += 1
        yield url, entry
