"""What one politeness queue is: a host, or under `politeness: ip` an address.

With `politeness: host` (the default) each host (scheme://name:port) is a
queue of its own, with its own clock.  With `politeness: ip` the hosts
whose names resolve to one address are one queue, as IRLbot keeps
politeness per IP as well as per host: a server that hosts many names sees
one request at a time from the crawl, `delay` apart, however many of its
names the frontier holds.

Two places must agree on a host's address.  The queue's key (PolitenessKeys)
decides which reduce task fetches the host (frontier/placement.py places a
queue by its key's slot), so that every host of one address is fetched by
one task; in that task the fetcher puts the hosts whose own lookup finds
one address on one shared clock (HostScheduler.share_clock).  Both take the
address the connection connects to: the first of the lookup's answer
(connect_addresses).  A name whose first address changes between the two
lookups (round-robin DNS) keeps politeness within its task, and across
tasks only as far as the two answers agree.

A host keeps its own key, and its own clock, when no address is known for
it: its name does not resolve (the fetcher records the DNS error), or it is
reached through a proxy that looks names up itself (`proxy` with
`allow_private_networks`), which this machine never looks up.
"""
from __future__ import annotations

from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.netguard import Address, address_literal
from mrcrawl.fetch.resolver import DNSLookupError, Resolver
from mrcrawl.page.urls import host_key, host_of

POLITENESS_BY_ADDRESS = "ip"


def connect_addresses(name: str, config: CrawlConfig, resolver: Resolver) -> tuple[Address, ...] | None:
    """The addresses of host name `name` (or address literal) that the
    fetcher judges, the first being the one its connection connects to;
    None when this machine looks nothing up (a `proxy` with
    `allow_private_networks` looks the name up itself).  Raises
    DNSLookupError when the name has no address."""
    literal = address_literal(name)
    if literal is not None:
        return (literal,)
    if config.proxy and config.allow_private_networks:
        return None
    return resolver.addresses(name)


class PolitenessKeys:
    """The politeness queue of a URL under the config's `politeness`: its
    host key, or under `ip` the address its host's connection would go to.
    Each host is looked up once per instance, within the config's timeout,
    by the config's `dns_server` (or the system resolver)."""

    def __init__(self, config: CrawlConfig):
        self.config = config
        self.by_address = config.politeness == POLITENESS_BY_ADDRESS
        self.resolver = Resolver(config.timeout, config.dns_server)
        self._queues: dict[str, str] = {}  # host key -> queue key

    def of(self, url: str) -> str:
        """The key of the queue that fetches `url` (a canonical URL)."""
        key = host_key(url)
        if not self.by_address:
            return key
        queue = self._queues.get(key)
        if queue is None:
            queue = self._queues[key] = self._address_of(key) or key
        return queue

    def _address_of(self, key: str) -> str | None:
        try:
            addresses = connect_addresses(host_of(key), self.config, self.resolver)
        except DNSLookupError:
            return None
        return str(addresses[0]) if addresses else None
