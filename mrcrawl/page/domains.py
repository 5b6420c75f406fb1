"""The registered (pay-level) domain of a host.

The pay-level domain (PLD) is the domain a site's owner pays a registrar
for: the host's public suffix under the public suffix list's ICANN section
and one label more (news.bbc.co.uk -> bbc.co.uk, www.sina.com.cn ->
sina.com.cn).  It comes from the snapshot of the list that tldextract
ships: nothing is fetched and nothing cached on disk, so the same crawl
always gives the same domains, with no network.
"""
from __future__ import annotations

import functools
import ipaddress

import tldextract

# The public suffix list snapshot bundled with tldextract: no list is
# fetched (no URLs) and nothing is cached on disk.
_public_suffixes = tldextract.TLDExtract(cache_dir=None, suffix_list_urls=(), include_psl_private_domains=False)


@functools.lru_cache(maxsize=1 << 16)
def registered_domain(host: str) -> str | None:
    """The pay-level domain of a host name; None for IP literals and for
    names with no public suffix (localhost)."""
    try:
        ipaddress.ip_address(host)
        return None
    except ValueError:
        pass
    return _public_suffixes(host.lower()).top_domain_under_public_suffix or None


def pay_level_domain(host: str) -> str:
    """The pay-level domain a host's URLs count towards (IRLbot's PLD): its
    registered domain, or, for an IP address or a name with no public
    suffix (localhost), the host itself, a PLD of its own."""
    return registered_domain(host) or host.lower()
