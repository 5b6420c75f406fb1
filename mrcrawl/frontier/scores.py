"""Scores: each URL's PageRank and in-degree, over the links the crawl db
keeps (a fetched page's `outlinks`), computed at the start of each run so
that its layers take the most important URLs first (caps.order_value) and
the budget step knows how many domains link to each.

The graph: its nodes are the db's URLs, fetched or not, but for `trapped`
and `blocked` ones, which no run fetches (a trap would soak up score, and
a blocked URL is outside the crawl); its edges are each fetched page's
outlinks, distinct and without itself.  Every outlink is a URL of the db
(the update that stored the page's links added the URLs it links), so a
page's out-degree is the length of its list.  With n nodes and e = 0.15,

    R(p) = e/n + (1 - e) · (Σ R(q)/outdeg(q) over the pages q linking p + D/n)

where D is the score of the pages with no outlink to follow: fetched pages
with none (dangling), unfetched ones (their links are unknown), and the
shares links give to URLs that are no nodes.  D is spread over all n
nodes, so no score leaks away and the scores sum to 1.

One power iteration is two steps (plan.py): the rank job, a reduce over
the db's URL records, and the rank update, a DbFileJob that writes every
node's new `score`, `inlinks` and `inlink_hosts` into the db's next
generation, which the db commits.  An iteration starts from the scores
the db holds: the last run's (and the provisional ones of the URLs it
found, see below), or the last iteration's; a URL with none (a seed or an
injected URL never scored) starts at 1/n.  Each iteration divides by the sum of the scores it
started from, so that the sum is 1 again however many URLs the db gained
since (Nutch's OPIC instead adds cash at every fetch, and its scores grow
without bound as the crawl goes on).  The fixed point is PageRank's.

The rank job's map does not know n: a score is carried as a pair [a, b]
that stands for a + b/n (b counts the URLs that start at 1/n), and the
rank update, which knows n, resolves it.  The rank job's values:
- a node's own key (crawldb.batch_key of its URL): {"node": true};
- a link's target key: {"share": [a, b], "pages": 1, "hosts": [host]},
  the source's score over its out-degree, and where it comes from;
- TOTALS_KEY: {"nodes", "mass", "spread"}, the node count, the sum of the
  start scores and D, summed by each reduce task and written once, as its
  last line (reducer_final), which sorts after every other key;
- on the last iteration, `"~<PLD>"`: the pay-level domain of a linking
  page, for each link between two PLDs; reduced to {"pld_inlinks": N},
  the distinct PLDs linking to one (page/domains.py): the PLD in-degree
  store of the budget step (CrawlStore.pld_indegree).

A URL first seen on a run gets provisional values from its sightings as
its layers are merged (db_update.apply_update): each fetched page linking
it adds one inlink and its host, and its score is PageRank's formula
applied online (as Abiteboul's OPIC and Igloo do), so that the run's later
layers can order it:

    R(p) = e·s0 + (1 - e) · Σ R(q)/outdeg(q) over the fetched pages q linking p

R(q) is the score q's frontier entry carried, or s0 when it had none,
and s0 = 1/N is the start score of a URL new to the db, N the URLs the db
held at the run's start as its earlier runs added them (new_url_score:
db.json's counts, which a resumed run reads the same; injected URLs are
not counted).  The teleport term is added once,
when the URL first gets a score; each later sighting adds its shares.
Without it a score would shrink with every hop from the seeds, and the
URLs a cap held back from a shallower layer would always beat deeper ones:
bfs again.  A sighting carries the shares of the scored pages and, for
the unscored ones, the sum of 1/outdeg, which DbUpdate multiplies by s0
(its `--new-url-score`).  The next run's scoring replaces these values,
iterating from them.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.crawldb import URLS_ADDED, URLS_FETCHED, URLS_NOT_MODIFIED, CrawlDb, batch_key
from mrcrawl.page.domains import pay_level_domain
from mrcrawl.page.urls import host_key, host_of
from mrcrawl.store.records import BLOCKED, TRAPPED

TELEPORT = 0.15  # e: the share of a score every page gets whatever links to it (Brin and Page's 1 - d)
NOT_NODES = frozenset({TRAPPED, BLOCKED})
# The key of the rank job's totals: `~~` sorts after every `"~<PLD>"` key and every batch key.
TOTALS_KEY = "~~totals"
PLD_PREFIX = "~"
NO_SHARE = (0.0, 0.0)
# How the lines of these keys start in the rank job's output, as the stores' JSON writes them.
TOTALS_PREFIX = b'"~~'


def scores_wanted(config: CrawlConfig) -> bool:
    """Whether a crawl with this config computes scores: when its order
    reads them, or its budget reads the PLD in-degree they come with."""
    return config.order != "bfs" or config.pld_budget is not None


def earlier_runs(db: CrawlDb, run: str) -> list[dict]:
    """The counts db.json's `runs` keeps of every run before the one starting
    at `run`: the same when that run is resumed."""
    return [counts for started, counts in (db.meta().get("runs") or {}).items() if started != run]


def scoring_iterations(config: CrawlConfig, db: CrawlDb, run: str) -> int:
    """How many iterations the run starting at `run` scores with: none
    unless scores are wanted and an earlier run fetched a page."""
    if not scores_wanted(config):
        return 0
    fetched = any(counts.get(URLS_FETCHED, 0) + counts.get(URLS_NOT_MODIFIED, 0) for counts in earlier_runs(db, run))
    return config.pagerank_iterations if fetched else 0


def new_url_score(config: CrawlConfig, db: CrawlDb, run: str) -> float | None:
    """s0, the start score of a URL new to the db on the run starting at
    `run`: 1/N, N the URLs the earlier runs added (at least 1); None when
    scores are not wanted, and the run gives no provisional scores."""
    if not scores_wanted(config):
        return None
    return 1 / max(1, sum(counts.get(URLS_ADDED, 0) for counts in earlier_runs(db, run)))


def is_node(record: dict) -> bool:
    return record["status"] not in NOT_NODES


# ---- the rank job ---------------------------------------------------------------

def start_score(record: dict) -> list:
    """A node's score at the iteration's start, as [a, b] (a + b/n)."""
    return [0.0, 1.0] if record.get("score") is None else [record["score"], 0.0]


def rank_values(url: str, record: dict, partitions: int, pld_edges: bool) -> Iterator[tuple[str, object]]:
    """What the rank job's map emits for one db record (see above)."""
    if not is_node(record):
        return
    mass = start_score(record)
    links = record.get("outlinks") or []
    yield TOTALS_KEY, {"nodes": 1, "mass": mass, "spread": list(NO_SHARE) if links else mass}
    yield batch_key(url, partitions), {"node": True}
    if not links:
        return
    share = [mass[0] / len(links), mass[1] / len(links)]
    linked = {"share": share, "pages": 1, "hosts": [record["host"]]}
    for link in links:
        yield batch_key(link, partitions), linked
    if pld_edges:
        source = pay_level_domain(host_of(url))
        for link in links:
            target = pay_level_domain(host_of(link))
            if target != source:
                yield PLD_PREFIX + target, [source]


def _sum(pairs: Iterable) -> list:
    total = [0.0, 0.0]
    for a, b in pairs:
        total[0] += a
        total[1] += b
    return total


def fold_totals(values: Iterable[dict]) -> dict:
    values = list(values)
    return {"nodes": sum(value["nodes"] for value in values), "mass": _sum(value["mass"] for value in values),
            "spread": _sum(value["spread"] for value in values)}


def fold_rank(values: Iterable[dict]) -> dict:
    """A URL's rank values folded into one: whether it is a node, and what links give it."""
    folded = {"node": False, "share": [0.0, 0.0], "pages": 0, "hosts": set()}
    for value in values:
        folded["node"] = folded["node"] or bool(value.get("node"))
        if "share" in value:
            folded["share"] = _sum([folded["share"], value["share"]])
            folded["pages"] += value["pages"]
            folded["hosts"].update(value["hosts"])
    return {**folded, "hosts": sorted(folded["hosts"])}


def fold_pld_sources(values: Iterable[list]) -> list:
    return sorted({source for sources in values for source in sources})


def is_pld_key(key: str) -> bool:
    return key.startswith(PLD_PREFIX) and key != TOTALS_KEY


def link_totals(url_key: str, folded: dict) -> tuple[str, dict] | None:
    """The rank job's output line of a URL from its folded values: what its
    links give a node; None for a node no link reaches.  A URL that is no
    node gives the shares it got to the spread (lost_share)."""
    if not folded["node"] or not folded["pages"]:
        return None
    return url_key, {"share": folded["share"], "inlinks": folded["pages"], "inlink_hosts": len(folded["hosts"])}


def lost_share(folded: dict) -> list:
    """What links gave a URL that is no node: spread over every node."""
    return folded["share"] if not folded["node"] else list(NO_SHARE)


# ---- the rank update -------------------------------------------------------------

def resolved(pair, nodes: int) -> float:
    return pair[0] + pair[1] / nodes


def read_totals(values: Iterable[dict]) -> dict:
    """The rank job's totals, from every reduce task's line: nodes, the
    start scores' sum and D, as numbers."""
    totals = fold_totals(values)
    nodes = totals["nodes"]
    return {"nodes": nodes, "mass": resolved(totals["mass"], nodes) if nodes else 0.0,
            "spread": resolved(totals["spread"], nodes) if nodes else 0.0}


def ranked(record: dict, links: dict | None, totals: dict) -> dict:
    """A node's record after one iteration: its score, inlinks and inlink_hosts
    from what links gave it (`links`, the rank job's line, or None) and the totals."""
    nodes = totals["nodes"]
    received = resolved(links["share"], nodes) if links else 0.0
    score = TELEPORT / nodes + (1 - TELEPORT) * (received + totals["spread"] / nodes) / totals["mass"]
    return {**record, "score": score, "inlinks": links["inlinks"] if links else 0,
            "inlink_hosts": links["inlink_hosts"] if links else 0}


# ---- provisional values of a URL first seen on this run ------------------------------------------

def sighting(url: str, out: dict) -> dict:
    """What a fetched page's out record tells each URL it links (but itself):
    one linking page, its host, and its share of the page's score: in
    `share` when the page had one, else 1/outdeg in `unscored`, which
    take_sightings multiplies by s0."""
    links = sum(1 for link in out["outlinks"] if link != url)
    score = out.get("score")
    share = 1 / links if links else 0.0
    return {"pages": 1, "hosts": [host_key(url)], "share": 0.0 if score is None else score * share,
            "unscored": share if score is None else 0.0}


def fold_sightings(before: dict | None, sighted: dict) -> dict:
    if before is None:
        return sighted
    return {"pages": before["pages"] + sighted["pages"], "hosts": sorted({*before["hosts"], *sighted["hosts"]}),
            "share": before["share"] + sighted["share"], "unscored": before["unscored"] + sighted["unscored"]}


def take_sightings(record: dict, linked: dict, new_score: float | None) -> None:
    """A URL first seen on this run: its provisional in-degree and score,
    with a layer's sightings added; `new_score` is s0 (new_url_score), None
    when the run gives no provisional scores."""
    record["inlinks"] = (record.get("inlinks") or 0) + linked["pages"]
    record["inlink_hosts"] = (record.get("inlink_hosts") or 0) + len(linked["hosts"])
    if new_score is None:
        return
    received = (1 - TELEPORT) * (linked["share"] + new_score * linked["unscored"])
    # The teleport term once, with the first sighting that gives the URL a score.
    record["score"] = received + (TELEPORT * new_score if record.get("score") is None else record["score"])
