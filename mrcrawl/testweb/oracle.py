"""The oracle: what a correct crawl of a test web records, layer by layer.

It walks the model breadth-first with the crawl contract's semantics and
returns, for each layer, the set of (requested URL, outcome, final URL), and
which linked URLs the trap guards catch (expected_traps), and, under caps on
a layer's frontier, which URLs each layer holds back (chosen_frontier). It reads the
canonical URLs the model records and never parses HTML or URLs the way the
crawler does (its trap guards read a URL with urllib), so it checks the
crawler rather than repeating it.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable
from urllib.parse import parse_qsl, urlsplit

from mrcrawl.config import CrawlConfig
from mrcrawl.store.records import (
    DEFERRED_BY_HOST_CAP,
    DEFERRED_BY_LAYER_CAP,
    DEFERRED_BY_PLD_BUDGET,
    TRAP_GUARDS,
    TRAPPED_BY_LENGTH,
    TRAPPED_BY_PATH_REPEATS,
    TRAPPED_BY_QUERY_PARAMS,
)

from .model import AGENT_TOKEN, Web, origin_of, path_of

Record = tuple[str, str, str]  # (requested URL, outcome, final URL)


@dataclass(frozen=True)
class Fetch:
    """What one fetch ends with."""

    outcome: str
    final_url: str  # the last URL requested (the requested one if none was)
    outlinks: tuple[str, ...] = ()  # page links, or the one redirect target


@dataclass(frozen=True)
class CrawlRules:
    url_allow: tuple[str, ...]
    url_deny: tuple[str, ...]
    obey_robots: bool
    retries: int
    timeout: float
    agent_token: str
    max_redirects: int
    allow_private_networks: bool
    max_url_length: int | None = CrawlConfig.max_url_length
    max_path_repeats: int | None = CrawlConfig.max_path_repeats
    max_query_params: int | None = CrawlConfig.max_query_params

    def passes_filters(self, url: str) -> bool:
        allowed = not self.url_allow or any(re.search(p, url) for p in self.url_allow)
        return allowed and not any(re.search(p, url) for p in self.url_deny)

    def trap(self, url: str) -> str | None:
        """The trap guard that catches a linked `url` (a config key), or None:
        too long, one path segment too often, too many query parameters."""
        if self.max_url_length is not None and len(url) > self.max_url_length:
            return TRAPPED_BY_LENGTH
        parts = urlsplit(url)
        repeats = Counter(segment for segment in parts.path.split("/") if segment)
        if self.max_path_repeats is not None and max(repeats.values(), default=0) > self.max_path_repeats:
            return TRAPPED_BY_PATH_REPEATS
        params = parse_qsl(parts.query, keep_blank_values=True)  # the non-empty &-separated fields
        if self.max_query_params is not None and len(params) > self.max_query_params:
            return TRAPPED_BY_QUERY_PARAMS
        return None


@dataclass
class History:
    """What the crawl db knows after the runs walked so far, which the next
    run starts from (walk's `after`)."""

    runs: int = 0  # runs walked; a run's number is its URLs' `first_run`
    attempted: set[str] = field(default_factory=set)
    # URL -> what the crawl's order reads of its db record: "hops", "first_run", "first_layer", "deferrals".
    records: dict[str, dict] = field(default_factory=dict)
    held_back: dict[str, str] = field(default_factory=dict)  # URL -> what held it back last, while it waits
    trapped: dict[str, str] = field(default_factory=dict)  # URL -> the guard that caught it


@dataclass
class Walk:
    """What a correct crawl of a web does on one run: its layers' records,
    and the linked URLs a trap guard caught and that no layer attempted (the
    crawl db's `trapped` URLs), with the guard."""

    layers: list[set[Record]]
    trapped: dict[str, str]
    # Each layer's frontier store: every URL of it, None for one fetched, the
    # cap (its config key) for one held back.
    frontiers: list[dict[str, str | None]] = field(default_factory=list)
    # The URLs held back and never attempted after: (the cap that held them
    # back last, how many layers in a row did), the db's `deferred` and `deferrals`.
    waiting: dict[str, tuple[str, int]] = field(default_factory=dict)
    history: History = field(default_factory=History)  # the db after this run, for the next one


def bfs_order(record: dict, run: int) -> tuple[int, int]:
    """The crawl's order `bfs` (lower first): fewer hops less deferrals, then
    the URLs found on earlier runs, then this run's by the layer that first found them."""
    return record["hops"] - record["deferrals"], 0 if record["first_run"] != run else 1 + record["first_layer"]


def expected_layers(web: Web, seeds, depth: int, **settings) -> list[set[Record]]:
    """The records a correct crawl of `web` writes on each layer: a list of at
    most `depth` sets of (requested URL, outcome, final URL); shorter when a
    frontier runs empty.  `settings` are walk()'s.

    Seeds may be canonical URLs or spellings listed in `web.seed_spellings`.
    Flaky pages are assumed fresh (never requested before on this server)."""
    return walk(web, seeds, depth, **settings).layers


def walk(web: Web, seeds, depth: int, *, url_allow=(), url_deny=(), obey_robots: bool = True,
         retries: int = 2, timeout: float = 10.0, agent_token: str = AGENT_TOKEN,
         max_redirects: int = 5, allow_private_networks: bool = True,
         max_url_length: int | None = CrawlConfig.max_url_length,
         max_path_repeats: int | None = CrawlConfig.max_path_repeats,
         max_query_params: int | None = CrawlConfig.max_query_params,
         max_urls_per_layer: int | None = None, max_urls_per_host: int | None = None,
         pld_budget: dict | None = None, pld_inlinks: dict[str, int] | None = None,
         order_value=bfs_order, after: Walk | None = None) -> Walk:
    """One run's crawl of `web` layer by layer (see expected_layers).  A link
    in scope that a trap guard catches is never fetched; a seed never meets
    the guards.  Under caps or a budget, each layer's candidates (the URLs
    linked from the layer before and never attempted, and the URLs it held
    back) are chosen from as chosen_frontier() says, in the order
    `order_value(record, run)` gives (History.records); a URL held back is
    offered again on the next layer.

    `pld_budget` ({"floor": F, "per_linking_pld": K}) gives a pay-level
    domain F + K * pld_inlinks[PLD] fetches on the run (0 for one not
    listed).  `after`: the walk of the run before, on the same db: this run
    starts from its history, its layer 0 being the seeds and the URLs that
    wait (which assumes no page fetched before is due again: revisit
    intervals longer than the runs walked, and no transient failures)."""
    if depth < 1:
        raise ValueError("depth must be at least 1")
    rules = CrawlRules(tuple(url_allow), tuple(url_deny), obey_robots, retries, timeout,
                       agent_token, max_redirects, allow_private_networks,
                       max_url_length, max_path_repeats, max_query_params)
    before = after.history if after is not None else History()
    history = History(before.runs + 1, set(before.attempted), {url: dict(record) for url, record in before.records.items()},
                      dict(before.held_back), dict(before.trapped))
    run, records, attempted, held_back = history.runs, history.records, history.attempted, history.held_back
    seeds_here = [url for url in dict.fromkeys(web.seed_spellings.get(s, s) for s in seeds)
                  if url is not None and rules.passes_filters(url)]
    for url in seeds_here:
        record = records.setdefault(url, {"hops": 0, "first_run": run, "first_layer": 0, "deferrals": 0})
        record["hops"] = 0
    frontier = sorted(set(seeds_here) | held_back.keys())
    layers: list[set[Record]] = []
    frontiers: list[dict[str, str | None]] = []
    spent: Counter = Counter()  # fetches per pay-level domain on this run, seeds not counted
    while frontier and len(layers) < depth:
        layer = len(layers)
        seeds_now = set(seeds_here) if layer == 0 else set()
        chosen = chosen_frontier(frontier, seeds_now, lambda url: order_value(records[url], run),
                                 max_urls_per_layer, max_urls_per_host,
                                 pld_allowance(pld_budget, pld_inlinks or {}), spent)
        frontiers.append(chosen)
        layer_records: set[Record] = set()
        discovered: list[str] = []
        link_hops: dict[str, int] = {}
        for url in frontier:
            if chosen[url]:
                continue
            if url not in seeds_now:
                spent[pay_level_domain_of(url)] += 1
            result = fetch(web, url, rules)
            layer_records.add((url, result.outcome, result.final_url))
            attempted.update((url, result.final_url))
            records[url]["deferrals"] = 0
            discovered.extend(result.outlinks)
            for link in result.outlinks:
                link_hops[link] = min(link_hops.get(link, records[url]["hops"] + 1), records[url]["hops"] + 1)
        layers.append(layer_records)
        for url, cap in chosen.items():
            if cap:
                records[url]["deferrals"] += 1
                held_back[url] = cap
        for url in attempted & held_back.keys():
            del held_back[url]
        for link, link_hop in link_hops.items():
            record = records.setdefault(link, {"hops": link_hop, "first_run": run, "first_layer": layer + 1,
                                               "deferrals": 0})
            record["hops"] = min(record["hops"], link_hop)
        in_scope = {u for u in discovered if rules.passes_filters(u)}
        history.trapped.update((u, guard) for u in in_scope if (guard := rules.trap(u)))
        frontier = sorted(u for u in in_scope | held_back.keys() if u not in attempted and u not in history.trapped)
    return Walk(layers, {url: guard for url, guard in history.trapped.items() if url not in attempted}, frontiers,
                {url: (cap, records[url]["deferrals"]) for url, cap in held_back.items()}, history)


def pay_level_domain_of(url: str) -> str:
    """A test web URL's pay-level domain: every host of the test web is an IP address, a PLD of its own."""
    return urlsplit(url).hostname


def pld_allowance(pld_budget: dict | None, pld_inlinks: dict[str, int]):
    """A PLD's fetches per run under `pld_budget` (None: no budget, None)."""
    if pld_budget is None:
        return None
    return lambda pld: pld_budget["floor"] + pld_budget["per_linking_pld"] * pld_inlinks.get(pld, 0)


def chosen_frontier(candidates, seeds: set[str], order_value, max_urls_per_layer: int | None,
                    max_urls_per_host: int | None, pld_allowance=None,
                    spent: Counter | None = None) -> dict[str, str | None]:
    """Each candidate of a layer of one run: None when the layer fetches it,
    else the cap (its config key) that holds it back.  The caps' contract,
    stated here independently of the crawler:
    - Seeds are never held back and count against no cap.
    - The order: `order_value(url)` (the order's value of its record), then
      the first 8 bytes of the BLAKE2b hash of the URL.
    - pld_budget: a pay-level domain's first (pld_allowance(PLD) - the
      fetches `spent` on it on the run's earlier layers) candidates in that
      order stay.
    - max_urls_per_host: of the rest, a host's first K candidates in that order stay.
    - max_urls_per_layer: of the rest, a candidate stays when the candidates
      whose (order value, first 3 hex digits of the hash) come before its
      own or equal them number at most N."""
    def key(url: str) -> tuple:
        return order_value(url), hashlib.blake2b(url.encode("utf-8"), digest_size=8).hexdigest()

    chosen: dict[str, str | None] = dict.fromkeys(candidates)
    counting = sorted((url for url in candidates if url not in seeds), key=key)
    if pld_allowance is not None:
        taken = Counter(spent or {})
        for url in counting:
            pld = pay_level_domain_of(url)
            taken[pld] += 1
            if taken[pld] > pld_allowance(pld):
                chosen[url] = DEFERRED_BY_PLD_BUDGET
        counting = [url for url in counting if chosen[url] is None]
    if max_urls_per_host is not None:
        taken = Counter()
        for url in counting:
            taken[origin_of(url)] += 1
            if taken[origin_of(url)] > max_urls_per_host:
                chosen[url] = DEFERRED_BY_HOST_CAP
        counting = [url for url in counting if chosen[url] is None]
    if max_urls_per_layer is not None:
        def cell(url: str) -> tuple:
            value, digest = key(url)
            return value, digest[:3]

        in_cell = Counter(cell(url) for url in counting)
        for url in counting:
            if sum(count for other, count in in_cell.items() if other <= cell(url)) > max_urls_per_layer:
                chosen[url] = DEFERRED_BY_LAYER_CAP
    return chosen


def expected_layers_for_config(web: Web, config: dict, seeds, depth: int) -> list[set[Record]]:
    """expected_layers() with the settings of a crawl config dict (YAML keys)."""
    return walk_for_config(web, config, seeds, depth).layers


def expected_traps_for_config(web: Web, config: dict, seeds, depth: int) -> dict[str, str]:
    """The URLs a crawl with a config dict (YAML keys) records `trapped` in
    its crawl db, each with the guard that caught it."""
    return walk_for_config(web, config, seeds, depth).trapped


def walk_for_config(web: Web, config: dict, seeds, depth: int, **more) -> Walk:
    """walk() with the settings of a crawl config dict (YAML keys), and
    walk()'s keywords that no config holds (`more`: pld_inlinks, order_value, after)."""
    # The robots.txt agent is the user agent's first token, before "/" or a space.
    agent = re.split(r"[/\s]", config["user_agent"].strip(), maxsplit=1)[0]
    guards = {key: config[key] for key in TRAP_GUARDS if key in config}  # walk() takes them by their config keys
    caps = {key: config[key] for key in (DEFERRED_BY_LAYER_CAP, DEFERRED_BY_HOST_CAP, DEFERRED_BY_PLD_BUDGET)
            if key in config}
    return walk(
        web, seeds, depth,
        url_allow=config.get("url_allow", []), url_deny=config.get("url_deny", []),
        obey_robots=config.get("obey_robots", True), retries=config.get("retries", 2),
        timeout=config.get("timeout", 10.0), agent_token=agent,
        allow_private_networks=config.get("allow_private_networks", False), **guards, **caps, **more)


def fetch(web: Web, url: str, rules: CrawlRules) -> Fetch:
    """One fetch of `url`, following same-host redirects hop by hop."""
    current, requested, redirects = url, [], 0
    while True:
        refusal = check_before_request(web, current, rules)
        if refusal:
            return Fetch(refusal, requested[-1] if requested else current)
        requested.append(current)
        page = web.page(current)
        if web.host(current) is None:  # nothing listens there
            return Fetch("network_error", current)
        if page.stall > rules.timeout:
            return Fetch("network_error", current)
        if page.flaky and rules.retries < 1:
            return Fetch("http_error", current)  # its one attempt gets the 503
        if page.is_redirect:
            target = page.redirect_to
            if origin_of(target) != origin_of(current):
                return Fetch("redirect", current, (target,))
            redirects += 1
            if redirects > rules.max_redirects or target in requested:
                return Fetch("http_error", current)
            current = target
            continue
        if 200 <= page.status < 300:
            if page.is_html:
                return Fetch("fetched", current, page.outlinks)
            return Fetch("not_html", current)
        return Fetch("http_error", current)


def check_before_request(web: Web, url: str, rules: CrawlRules) -> str | None:
    """The outcome that stops `url` from being requested, or None."""
    if not rules.allow_private_networks:
        return "blocked"  # every host of the test web is on loopback
    if rules.obey_robots:
        host = web.host(url)
        # No server answers robots.txt there: a connection failure denies all.
        if host is None or not host.robots.allows(path_of(url), rules.agent_token):
            return "robots_denied"
    if not rules.passes_filters(url):
        return "blocked"
    return None


def expected_duplicates(web: Web, layers: list[set[Record]], max_page_bytes: int | None = None) -> dict[str, str]:
    """The pages of a crawl (expected_layers) whose content another URL's
    page had before them (the crawl db's `duplicate`s, which get no XML),
    each with that URL, its original: the first URL fetched with that
    content, on an earlier layer, or on the same layer the shortest such
    URL, then the smallest.  A page's content is that of the page whose text
    it shows (Page.same_text_as), else its own payload: the body served, cut
    at max_page_bytes."""
    def content(url: str) -> bytes:
        return web.page(web.page(url).same_text_as or url).body[:max_page_bytes]
    return _repeats(layers, content)


def expected_payload_duplicates(web: Web, layers: list[set[Record]],
                                max_page_bytes: int | None = None) -> dict[str, str]:
    """The pages of a crawl whose payload (the body served, cut at
    max_page_bytes) another URL's page had before them, each with its
    original, chosen as expected_duplicates() chooses: the pages the WARC
    archive holds as identical-payload revisit records."""
    return _repeats(layers, lambda url: web.page(url).body[:max_page_bytes])


def _repeats(layers: list[set[Record]], content) -> dict[str, str]:
    originals: dict[bytes, str] = {}
    duplicates: dict[str, str] = {}
    for records in layers:
        shown: dict[bytes, set[str]] = {}
        for _, outcome, url in records:
            if outcome in ("fetched", "not_html"):
                shown.setdefault(content(url), set()).add(url)
        for key, urls in shown.items():
            original = originals.setdefault(key, min(urls, key=lambda url: (len(url), url)))
            duplicates.update((url, original) for url in urls if url != original)
    return duplicates


def outcome_counts(layers: list[set[Record]]) -> dict[str, int]:
    """How many records of each outcome the layers hold (for reports and tests)."""
    counts: dict[str, int] = {}
    for layer in layers:
        for _, outcome, _ in layer:
            counts[outcome] = counts.get(outcome, 0) + 1
    return dict(sorted(counts.items()))


def pld_indegree(web: Web, walks: Iterable[Walk]) -> dict[str, int]:
    """Each pay-level domain's in-degree over the pages the `walks` fetched:
    how many other pay-level domains have a fetched page linking to it."""
    linking: dict[str, set[str]] = {}
    for done in walks:
        for records in done.layers:
            for _, outcome, url in records:
                if outcome == "fetched":
                    source = pay_level_domain_of(url)
                    for link in web.page(url).outlinks:
                        if pay_level_domain_of(link) != source:
                            linking.setdefault(pay_level_domain_of(link), set()).add(source)
    return {pld: len(sources) for pld, sources in linking.items()}
