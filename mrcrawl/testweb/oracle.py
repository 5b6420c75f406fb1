"""The oracle: what a correct crawl of a test web records, layer by layer.

It walks the model breadth-first with the crawl contract's semantics and
returns, for each layer, the set of (requested URL, outcome, final URL). It
reads the canonical URLs the model records and never parses HTML or URLs the
way the crawler does, so it checks the crawler rather than repeating it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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

    def passes_filters(self, url: str) -> bool:
        allowed = not self.url_allow or any(re.search(p, url) for p in self.url_allow)
        return allowed and not any(re.search(p, url) for p in self.url_deny)


def expected_layers(web: Web, seeds, depth: int, *, url_allow=(), url_deny=(), obey_robots: bool = True,
                    retries: int = 2, timeout: float = 10.0, agent_token: str = AGENT_TOKEN,
                    max_redirects: int = 5, allow_private_networks: bool = True) -> list[set[Record]]:
    """The records a correct crawl of `web` writes on each layer: a list of at
    most `depth` sets of (requested URL, outcome, final URL); shorter when a
    frontier runs empty.

    Seeds may be canonical URLs or spellings listed in `web.seed_spellings`.
    Flaky pages are assumed fresh (never requested before on this server)."""
    if depth < 1:
        raise ValueError("depth must be at least 1")
    rules = CrawlRules(tuple(url_allow), tuple(url_deny), obey_robots, retries, timeout,
                       agent_token, max_redirects, allow_private_networks)
    frontier = [url for url in dict.fromkeys(web.seed_spellings.get(s, s) for s in seeds)
                if url is not None and rules.passes_filters(url)]
    attempted: set[str] = set()
    layers: list[set[Record]] = []
    while frontier and len(layers) < depth:
        records: set[Record] = set()
        discovered: list[str] = []
        for url in frontier:
            result = fetch(web, url, rules)
            records.add((url, result.outcome, result.final_url))
            attempted.update((url, result.final_url))
            discovered.extend(result.outlinks)
        layers.append(records)
        frontier = sorted({u for u in discovered if u not in attempted and rules.passes_filters(u)})
    return layers


def expected_layers_for_config(web: Web, config: dict, seeds, depth: int) -> list[set[Record]]:
    """expected_layers() with the settings of a crawl config dict (YAML keys)."""
    # The robots.txt agent is the user agent's first token, before "/" or a space.
    agent = re.split(r"[/\s]", config["user_agent"].strip(), maxsplit=1)[0]
    return expected_layers(
        web, seeds, depth,
        url_allow=config.get("url_allow", []), url_deny=config.get("url_deny", []),
        obey_robots=config.get("obey_robots", True), retries=config.get("retries", 2),
        timeout=config.get("timeout", 10.0), agent_token=agent,
        allow_private_networks=config.get("allow_private_networks", False))


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
