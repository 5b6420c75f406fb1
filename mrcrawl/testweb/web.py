"""Generate the test web: a deterministic set of hosts and pages on loopback.

    web = generate_web(seed=1, hosts=8, port=8123)
    web.page("http://127.0.0.2:8123/")   # what the server sends, what a crawler should find
    seeds(web)                            # the home pages to start a crawl from
    web.crawl_config()                    # a crawl config dict that keeps the crawl on the web

The same seed, host count and port always give the same web. See sites.py
for what each host contains.
"""

from __future__ import annotations

from .model import AGENT_TOKEN, USER_AGENT, Host, Page, Robots, RobotsGroup, Web
from .sites import MIN_HOSTS, generate

__all__ = ["AGENT_TOKEN", "USER_AGENT", "MIN_HOSTS", "Host", "Page", "Robots", "RobotsGroup", "Web",
           "generate_web", "seeds"]


def generate_web(seed: int = 1, hosts: int = 8, *, port: int, stall_seconds: float = 5.0,
                 link_farm: bool = False) -> Web:
    """Build the web for `hosts` hosts (127.0.0.2 upwards, at least MIN_HOSTS)
    all served on `port`. Slow pages stall for `stall_seconds`: keep it above
    the crawl timeout under test.  With `link_farm`, its last two hosts are
    a popular site, whose main pages every home page links, and a link farm
    of endless pages linked from the plain host's home page only (two hosts
    more than MIN_HOSTS at least; the rest of the web is the same)."""
    return generate(seed, hosts, port, stall_seconds, link_farm)


def seeds(web: Web, *, spellings: bool = False) -> list[str]:
    """The seed URLs (canonical home pages). With `spellings`, also odd and
    invalid spellings a seed file might hold, as a driver must accept them;
    `web.seed_spellings` says what each normalises to."""
    urls = list(web.seed_urls)
    if spellings:
        urls += list(web.seed_spellings)
    return urls
