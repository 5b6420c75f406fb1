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
from urllib.parse import parse_qsl, urlsplit

from mrcrawl.config import CrawlConfig
from mrcrawl.store.records import (
    DEFERRED_BY_HOST_CAP,
    DEFERRED_BY_LAYER_CAP,
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
class Walk:
    """What a correct crawl of a web does: its layers' records, and the
    linked URLs a trap guard caught and that no layer attempted (the crawl
    db's `trapped` URLs), with the guard."""

    layers: list[set[Record]]
    trapped: dict[str, str]
    # Each layer's frontier store: every URL of it, None for one fetched, the
    # cap (its config key) for one held back.
    frontiers: list[dict[str, str | None]] = field(default_factory=list)
    # The URLs held back and never attempted after: (the cap that held them
    # back last, how many layers in a row did), the db's `deferred` and `deferrals`.
    waiting: dict[str, tuple[str, int]] = field(default_factory=dict)


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
         max_urls_per_layer: int | None = None, max_urls_per_host: int | None = None) -> Walk:
    """The crawl of `web` layer by layer (see expected_layers).  A link in
    scope that a trap guard catches is never fetched; a seed never meets the
    guards.  Under caps, each layer's candidates (the URLs linked from the
    layer before and never attempted, and the URLs it held back) are chosen
    from as chosen_frontier() says; a URL held back is offered again on the
    next layer."""
    if depth < 1:
        raise ValueError("depth must be at least 1")
    rules = CrawlRules(tuple(url_allow), tuple(url_deny), obey_robots, retries, timeout,
                       agent_token, max_redirects, allow_private_networks,
                       max_url_length, max_path_repeats, max_query_params)
    frontier = [url for url in dict.fromkeys(web.seed_spellings.get(s, s) for s in seeds)
                if url is not None and rules.passes_filters(url)]
    attempted: set[str] = set()
    trapped: dict[str, str] = {}
    layers: list[set[Record]] = []
    frontiers: list[dict[str, str | None]] = []
    hops, first_layer = dict.fromkeys(frontier, 0), dict.fromkeys(frontier, 0)
    deferrals: Counter = Counter()
    held_back: dict[str, str] = {}  # URL -> the cap that held it back last
    while frontier and len(layers) < depth:
        layer = len(layers)
        seeds_here = set(frontier) if layer == 0 else set()
        chosen = chosen_frontier(frontier, seeds_here, hops, first_layer, deferrals,
                                 max_urls_per_layer, max_urls_per_host)
        frontiers.append(chosen)
        records: set[Record] = set()
        discovered: list[str] = []
        link_hops: dict[str, int] = {}
        for url in frontier:
            if chosen[url]:
                continue
            result = fetch(web, url, rules)
            records.add((url, result.outcome, result.final_url))
            attempted.update((url, result.final_url))
            discovered.extend(result.outlinks)
            for link in result.outlinks:
                link_hops[link] = min(link_hops.get(link, hops[url] + 1), hops[url] + 1)
        layers.append(records)
        for url, cap in chosen.items():
            if cap:
                deferrals[url] += 1
                held_back[url] = cap
        for url in attempted & held_back.keys():
            del held_back[url]
        for link, link_hop in link_hops.items():
            hops[link] = min(hops.get(link, link_hop), link_hop)
            first_layer.setdefault(link, layer + 1)
        in_scope = {u for u in discovered if rules.passes_filters(u)}
        trapped.update((u, guard) for u in in_scope if (guard := rules.trap(u)))
        frontier = sorted(u for u in in_scope | held_back.keys() if u not in attempted and u not in trapped)
    return Walk(layers, {url: guard for url, guard in trapped.items() if url not in attempted}, frontiers,
                {url: (cap, deferrals[url]) for url, cap in held_back.items()})


def chosen_frontier(candidates, seeds: set[str], hops: dict[str, int], first_layer: dict[str, int],
                    deferrals: Counter, max_urls_per_layer: int | None,
                    max_urls_per_host: int | None) -> dict[str, str | None]:
    """Each candidate of a layer of one run: None when the layer fetches it,
    else the cap (its config key) that holds it back.  The caps' contract,
    stated here independently of the crawler:
    - Seeds are never held back and count against neither cap.
    - The order: fewer hops less deferrals first, then the layer that first
      found the URL, then the first 8 bytes of the BLAKE2b hash of the URL.
    - max_urls_per_host: a host's first K candidates in that order stay.
    - max_urls_per_layer: of the rest, a candidate stays when the candidates
      whose (hops less deferrals, layer, first 3 hex digits of the hash) come
      before its own or equal them number at most N."""
    def key(url: str) -> tuple:
        digest = hashlib.blake2b(url.encode("utf-8"), digest_size=8).hexdigest()
        return hops[url] - deferrals[url], first_layer[url], digest

    chosen: dict[str, str | None] = dict.fromkeys(candidates)
    counting = sorted((url for url in candidates if url not in seeds), key=key)
    if max_urls_per_host is not None:
        taken: Counter = Counter()
        for url in counting:
            taken[origin_of(url)] += 1
            if taken[origin_of(url)] > max_urls_per_host:
                chosen[url] = DEFERRED_BY_HOST_CAP
        counting = [url for url in counting if chosen[url] is None]
    if max_urls_per_layer is not None:
        def cell(url: str) -> tuple:
            aged, found, digest = key(url)
            return aged, found, digest[:3]

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


def walk_for_config(web: Web, config: dict, seeds, depth: int) -> Walk:
    """walk() with the settings of a crawl config dict (YAML keys)."""
    # The robots.txt agent is the user agent's first token, before "/" or a space.
    agent = re.split(r"[/\s]", config["user_agent"].strip(), maxsplit=1)[0]
    guards = {key: config[key] for key in TRAP_GUARDS if key in config}  # walk() takes them by their config keys
    caps = {key: config[key] for key in (DEFERRED_BY_LAYER_CAP, DEFERRED_BY_HOST_CAP) if key in config}
    return walk(
        web, seeds, depth,
        url_allow=config.get("url_allow", []), url_deny=config.get("url_deny", []),
        obey_robots=config.get("obey_robots", True), retries=config.get("retries", 2),
        timeout=config.get("timeout", 10.0), agent_token=agent,
        allow_private_networks=config.get("allow_private_networks", False), **guards, **caps)


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
