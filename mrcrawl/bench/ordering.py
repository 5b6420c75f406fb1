"""The ordering scenario: which pages a crawl with a fetch budget reaches
first under each `order`, with and without a STAR budget per pay-level
domain, on a web with a power-law link graph and a link farm.

The web (OrderingWebSpec) is `pages` pages on `hosts` hosts of Zipf sizes,
each host on a loopback address of its own (so each is its own pay-level
domain: an IP address is its own PLD).  Page k of a host is /p/k.html,
page 0 its home page.  Each page links `links` pages on average (5 fewer
to 5 more): most of its own host, the rest of other hosts chosen at
random; within a host, page k is linked with weight (k + 1) ** -alpha, so
in-degrees follow a Zipf law (home pages first).  A link farm of
`farm_pages` pages on one more address (a PLD of its own) links only to
itself, ten links a page, and one link enters it: from the home page of
the first seed host, so that every crawl finds it at layer 1.  The graph
is drawn from a seed, held as arrays (about 4 bytes a link), and each page
is written when it is asked for; the farm's links are a formula, not
stored.

"Important" pages are the top 1% of the real sites' pages by PageRank over
the whole graph without the farm (damping 0.85, power iteration until the
scores move less than 1e-10 in all), computed here.

Each crawl is one `python -m mrcrawl.driver` run from the home pages of
`seeds` hosts, depth `depth`, `max_urls_per_layer` a layer, delay 0: one
per order (bfs, indegree, pagerank), with and without `pld_budget`.  One
run from a new db: the scores it orders by are the run's provisional ones
(see docs/crawl-db.md), and a PLD's in-degree is not known before the first
scoring, so the budget is its floor for every PLD.  The fetches, in the
order they were made (layer, then the doc record's fetched_at), are counted
up to the fetch budget; per crawl: the share of the important pages fetched
after each mark, the share of the fetches spent in the farm, and whether
every URL a fetched page links has a db record.
"""
from __future__ import annotations

import hashlib
import random
from array import array
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from pathlib import Path

from mrcrawl.bench.web import BenchWeb, BenchWebSpec, host_address, page_number, pages_per_host, respond_to
from mrcrawl.bench.scenarios import Sizes, row, run_measured
from mrcrawl.config import ORDERS
from mrcrawl.frontier.crawldb import read_db
from mrcrawl.store.crawl_reader import CrawlReader, read_part
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore

RUNNER = "inline"
DAMPING = 0.85
PAGERANK_TOLERANCE = 1e-10  # the L1 change of the scores at which the iteration stops
IMPORTANT_SHARE = 0.01
FARM_LINKS = 10


@dataclass(frozen=True)
class OrderingWebSpec:
    hosts: int = 1_000
    pages: int = 100_000
    farm_pages: int = 100_000
    host_size_exponent: float = 1.0  # host sizes are Zipf with this exponent
    popularity_exponent: float = 1.0  # page k of a host is linked with weight (k + 1) ** -this
    links: int = 10  # a page's links on average
    local_share: float = 0.7  # of a page's links, the share to its own host
    seed: int = 1
    latency: float = 0.0  # the server's; a crawl here is CPU-bound

    def addresses(self) -> list[str]:
        """The real hosts' addresses, then the farm's."""
        return [host_address(i) for i in range(self.hosts + 1)]

    def model(self, port: int) -> "OrderingWebModel":
        return OrderingWebModel(self, port)


@dataclass(frozen=True)
class LinkGraph:
    """The real sites' pages as numbers (host by host) and their links."""

    page_counts: list[int]
    first_page: list[int]  # of each host, and the number of pages after the last
    link_start: array  # page p's links are links[link_start[p]:link_start[p + 1]]
    links: array

    @property
    def pages(self) -> int:
        return len(self.link_start) - 1

    def out(self, page: int) -> array:
        return self.links[self.link_start[page]:self.link_start[page + 1]]

    def host_of(self, page: int) -> int:
        return bisect_right(self.first_page, page) - 1


@lru_cache(maxsize=2)
def link_graph(spec: OrderingWebSpec) -> LinkGraph:
    """The real sites' link graph, the same for a spec in every process."""
    counts = pages_per_host(BenchWebSpec(hosts=spec.hosts, pages=spec.pages, distribution="zipf",
                                         zipf_exponent=spec.host_size_exponent, seed=spec.seed))
    first_page = [0, *accumulate(counts)]
    popularity = list(accumulate((k + 1) ** -spec.popularity_exponent for k in range(max(counts))))
    rng = random.Random(f"ordering:{spec.seed}")
    link_start, links = array("I", [0]), array("I")

    def pick(host: int) -> int:
        return bisect_right(popularity, rng.random() * popularity[counts[host] - 1])

    for host, count in enumerate(counts):
        for page in range(count):
            targets = {}  # ordered and distinct
            for _ in range(spec.links - 5 + rng.randrange(11)):
                if rng.random() < spec.local_share:
                    if count == 1:
                        continue
                    target_host = host
                else:
                    target_host = rng.randrange(spec.hosts - 1)
                    target_host += target_host >= host  # any host but this one
                target = first_page[target_host] + min(pick(target_host), counts[target_host] - 1)
                if target != first_page[host] + page:
                    targets[target] = None
            links.extend(targets)
            link_start.append(len(links))
    return LinkGraph(counts, first_page, link_start, links)


def pagerank(graph: LinkGraph) -> list[float]:
    """PageRank of every page (damping 0.85; a page without links spreads its score over all)."""
    n = graph.pages
    inlinks: list[list[int]] = [[] for _ in range(n)]
    for page in range(n):
        for target in graph.out(page):
            inlinks[target].append(page)
    out_degree = [graph.link_start[page + 1] - graph.link_start[page] for page in range(n)]
    scores = [1.0 / n] * n
    while True:
        share = [score / degree if degree else 0.0 for score, degree in zip(scores, out_degree)]
        dangling = sum(score for score, degree in zip(scores, out_degree) if not degree)
        base = (1 - DAMPING) / n + DAMPING * dangling / n
        new = [base + DAMPING * sum(map(share.__getitem__, sources)) for sources in inlinks]
        change = sum(abs(a - b) for a, b in zip(new, scores))
        scores = new
        if change < PAGERANK_TOLERANCE:
            return scores


def important_pages(graph: LinkGraph) -> list[int]:
    """The top 1% of the pages by PageRank (ties to the lower number)."""
    scores = pagerank(graph)
    ranked = sorted(range(graph.pages), key=lambda page: (-scores[page], page))
    return ranked[:max(1, round(IMPORTANT_SHARE * graph.pages))]


class OrderingWebModel:
    """The web's pages for one port: URLs, links and bodies."""

    def __init__(self, spec: OrderingWebSpec, port: int):
        self.spec = spec
        self.port = port
        self.graph = link_graph(spec)
        self.addresses = spec.addresses()
        self.farm_address = self.addresses[-1]
        self._host_index = {address: i for i, address in enumerate(self.addresses)}

    def url(self, page: int) -> str:
        host = self.graph.host_of(page)
        return f"http://{self.addresses[host]}:{self.port}/p/{page - self.graph.first_page[host]}.html"

    def farm_url(self, page: int) -> str:
        return f"http://{self.farm_address}:{self.port}/p/{page}.html"

    def seeds(self, count: int) -> list[str]:
        """The home pages of the first `count` hosts (whose sizes are in a random order)."""
        return [self.url(self.graph.first_page[host]) for host in range(count)]

    def page_of(self, url: str) -> int | None:
        """The real page a URL of this web names; None for the farm's and any other."""
        address, _, path = url.removeprefix("http://").partition("/")
        host = self._host_index.get(address.rsplit(":", 1)[0])
        if host is None or host == self.spec.hosts:
            return None
        number = page_number(f"/{path}", self.graph.page_counts[host])
        return None if number is None else self.graph.first_page[host] + number

    def is_farm(self, url: str) -> bool:
        return url.startswith(f"http://{self.farm_address}:")

    def farm_links(self, page: int) -> list[str]:
        """A farm page's links: FARM_LINKS other farm pages, from a hash of its number."""
        pages = self.spec.farm_pages
        targets = []
        for number in range(FARM_LINKS):
            digest = hashlib.blake2b(f"{page}:{number}".encode("ascii"), digest_size=8).digest()
            targets.append((page + 1 + int.from_bytes(digest, "big") % (pages - 1)) % pages)
        return [self.farm_url(target) for target in dict.fromkeys(targets)]

    def links(self, page: int) -> list[str]:
        links = [self.url(target) for target in self.graph.out(page)]
        if page == self.graph.first_page[0]:
            links.append(self.farm_url(0))  # the one way into the farm
        return links

    def respond(self, address: str, path: str) -> tuple[int, bytes, bytes]:
        """(status, content type, body) for a request to `address`."""
        return respond_to(self._host_index.get(address), path, self._pages_of, self._body)

    def _pages_of(self, host: int) -> int:
        return self.spec.farm_pages if host == self.spec.hosts else self.graph.page_counts[host]

    def _body(self, host: int, number: int) -> bytes:
        farm = host == self.spec.hosts
        links = self.farm_links(number) if farm else self.links(self.graph.first_page[host] + number)
        return page_body(f"Host {host} page {number}", links)


def page_body(title: str, links: list[str]) -> bytes:
    items = "".join(f'<li><a href="{url}">Story {number}</a></li>\n' for number, url in enumerate(links))
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>{title}</title></head>\n'
            f"<body>\n<h1>{title}</h1>\n<p>The city council said on monday that a new plan for public transport "
            f"would be presented next month after residents complained about delays.</p>\n<ul>\n{items}</ul>\n"
            "</body></html>\n").encode("utf-8")


# ---- the crawls ---------------------------------------------------------------------------

def crawl_config(directory: Path, order: str, layer_cap: int, budget: tuple[int, int] | None) -> Path:
    path = directory / "ordering.yaml"
    pld_budget = "null" if budget is None else f"{{floor: {budget[0]}, per_linking_pld: {budget[1]}}}"
    path.write_text(
        "name: ordering\nlanguage: en\nuser_agent: 'mrcrawl-bench/0.1'\nthreads: 30\ndelay: 0\nretries: 1\n"
        f"max_urls_per_layer: {layer_cap}\norder: {order}\npld_budget: {pld_budget}\n"
        "allow_private_networks: true\nurl_allow: ['^http://127[.]']\n", encoding="utf-8")
    return path


def fetch_sequence(crawl_dir: Path) -> list[str]:
    """The URLs the crawl requested, in the order it requested them: layer by
    layer, and by fetched_at within a layer (one per doc record)."""
    reader = CrawlReader(crawl_dir)
    requested = []
    for layer in reader.layers:
        docs = [doc for part in reader.doc_parts(layer) for _, doc in read_part(part)]
        docs.sort(key=lambda doc: (doc["fetched_at"] or "", doc["requested_url"]))
        requested += [doc["requested_url"] for doc in docs]
    return requested


def unrecorded_links(crawl_dir: Path) -> tuple[int, int]:
    """(how many distinct URLs the fetched pages link, how many of them have no db record)."""
    reader = CrawlReader(crawl_dir)
    linked = set()
    for layer in reader.layers:
        if reader.has_outlinks(layer):
            for _, out in reader.out_records(layer):
                linked.update(out["outlinks"])
    recorded = {url for url, _ in read_db(Path(CrawlState.load(CrawlStore(crawl_dir)).db))}
    return len(linked), len(linked - recorded)


def crawl_row(model: OrderingWebModel, important: set[int], crawl_dir: Path, order: str, star: bool, runner: str,
              measured, marks: tuple[int, ...]) -> dict:
    requested = fetch_sequence(crawl_dir)
    counted = requested[:max(marks)]
    pages = [model.page_of(url) for url in counted]
    important_at = {}
    for mark in marks:
        reached = {page for page in pages[:mark] if page in important}
        important_at[str(mark)] = len(reached) / len(important)
    farm = sum(model.is_farm(url) for url in counted)
    linked, unrecorded = unrecorded_links(crawl_dir)
    return row(f"ordering {order}{' STAR' if star else ''}", runner, pages=len(counted), wall_s=measured.wall_s,
               cpu_ms_per_page=1000 * measured.cpu_s / max(len(requested), 1), peak_rss_mb=measured.peak_rss_mb,
               order=order, star=star, fetches=len(requested), important=len(important),
               important_at=important_at, farm_fetches=farm, farm_share=farm / max(len(counted), 1),
               linked_urls=linked, unrecorded_links=unrecorded)


def ordering(sizes: Sizes, work: Path, runner: str, say) -> list[dict]:
    spec = OrderingWebSpec(hosts=sizes.ordering_hosts, pages=sizes.ordering_pages,
                           farm_pages=sizes.ordering_pages)
    say(f"ordering: a {spec.pages:,}-page web on {spec.hosts:,} hosts and a {spec.farm_pages:,}-page link farm; "
        "its PageRank")
    important = set(important_pages(link_graph(spec)))
    marks = sizes.ordering_marks
    rows = []
    with BenchWeb(spec) as web:
        seeds = web.model.seeds(sizes.ordering_seeds)
        for star in (False, True):
            for order in ORDERS:
                budget = sizes.ordering_budget if star else None
                directory = work / f"ordering-{order}-{'star' if star else 'plain'}"
                directory.mkdir(parents=True, exist_ok=True)
                seed_file = directory / "seeds.txt"
                seed_file.write_text("".join(url + "\n" for url in seeds), encoding="utf-8")
                conf = crawl_config(directory, order, sizes.ordering_layer_cap, budget)
                say(f"ordering: order {order}, pld_budget {budget or 'none'}: {len(seeds)} seeds, depth "
                    f"{sizes.ordering_depth}, {sizes.ordering_layer_cap:,} URLs a layer, {runner}")
                measured = run_measured(["-m", "mrcrawl.driver", str(seed_file), "--depth", str(sizes.ordering_depth),
                                         "--conf", str(conf), "--runner", runner,
                                         "--output", str(directory / "crawl")])
                rows.append(crawl_row(web.model, important, directory / "crawl", order, star, runner, measured, marks))
    first = str(marks[0])
    for ours in rows:
        bfs = next(other for other in rows if other["order"] == "bfs" and other["star"] == ours["star"])
        ours["ratio_to_bfs"] = (ours["important_at"][first] / bfs["important_at"][first]
                                if bfs["important_at"][first] else None)
    return rows


def meets_target(row: dict) -> bool:
    """pagerank reaches 1.5x bfs's share of the important pages at the first
    mark; with a budget the farm has at most 2% of the fetches; every linked
    URL has a db record."""
    if row["unrecorded_links"]:
        return False
    if row["order"] == "pagerank" and not (row["ratio_to_bfs"] or 0) >= 1.5:
        return False
    return not row["star"] or row["farm_share"] <= 0.02


def ordering_note(row: dict) -> str:
    shares = ", ".join(f"{share:.1%} after {int(mark):,}" for mark, share in row["important_at"].items())
    ratio = "-" if row["ratio_to_bfs"] is None else f"{row['ratio_to_bfs']:.2f}×"
    return (f"{row['name']}: {row['fetches']:,} fetches; important pages ({row['important']:,}) fetched: {shares} "
            f"({ratio} bfs's at the first); farm {row['farm_fetches']:,} fetches ({row['farm_share']:.1%}); "
            f"{row['unrecorded_links']:,} of {row['linked_urls']:,} linked URLs without a db record")
