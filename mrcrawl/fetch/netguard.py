"""The private-network guard: a crawler must not be steered into the LAN.

A hostile page can link to http://10.0.0.1/admin or to a name that resolves
to 127.0.0.1; fetching those would turn the crawler into a probe of its own
network.  Unless the config allows it, a host whose literal address or any
resolved address is loopback, private, link-local, reserved, multicast or
unspecified is refused, unless the address is in one of the config's
`allow_networks`.

The guard judges addresses, not names: the fetcher looks a name up once
(resolver.py) and connects to the address judged here, so a name cannot
answer one address to the guard and another to the connection.
"""
from __future__ import annotations

import ipaddress
from typing import Iterable

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ipv4_number(part: str) -> int:
    """One part of a dotted IPv4 address as a URL parser reads it:
    0x... hex, 0... octal, else decimal; ValueError if it is none of those."""
    if part[:2] in ("0x", "0X"):
        return int(part[2:] or "0", 16)
    if len(part) > 1 and part.startswith("0"):
        return int(part[1:], 8)
    if not part.isdigit():
        raise ValueError(part)
    return int(part)


def _ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    """`host` as an IPv4 address in any form browsers and inet_aton take:
    127.0.0.1, 2130706433, 017700000001, 0x7f.1, 127.1 (the last part fills
    the bytes the others leave).  None if it is not one."""
    parts = host.removesuffix(".").split(".")
    if not 1 <= len(parts) <= 4:
        return None
    try:
        numbers = [_ipv4_number(part) for part in parts]
    except ValueError:
        return None
    *leading, last = numbers
    if any(number > 255 for number in leading) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for index, number in enumerate(leading):
        value += number << (8 * (3 - index))
    return ipaddress.IPv4Address(value)


def address_literal(host: str) -> Address | None:
    """The address `host` (a URL's host, with or without IPv6 brackets)
    spells, or None if it is a name.  Every spelling that would connect
    somewhere counts: a host the guard took for a name would be looked up
    as one, and the system resolver reads 0x7f.1 as 127.0.0.1."""
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return _ipv4_literal(host)


def _unmapped(address: Address) -> Address:
    """An IPv4-mapped IPv6 address (::ffff:10.0.0.1) as the IPv4 address it
    reaches; any other address as it is."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        return address.ipv4_mapped
    return address


def _forbidden(address: Address) -> bool:
    address = _unmapped(address)
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )


def _allowed(address: Address, networks: Iterable[Network]) -> bool:
    address = _unmapped(address)
    return any(address.version == network.version and address in network for network in networks)


def blocked_reason(host: str, addresses: Iterable[Address], allowed_networks: Iterable[Network] = ()) -> str | None:
    """Why `host`, whose address or looked-up addresses are `addresses`, may
    not be fetched, or None if every one of them is public or allowed."""
    allowed_networks = tuple(allowed_networks)
    literal = address_literal(host) is not None
    for address in addresses:
        if _forbidden(address) and not _allowed(address, allowed_networks):
            if literal:
                return f"{host} is a non-public address"
            return f"{host} resolves to non-public address {address}"
    return None

