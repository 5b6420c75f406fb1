"""The private-network guard: a crawler must not be steered into the LAN.

A hostile page can link to http://10.0.0.1/admin or to a name that resolves
to 127.0.0.1; fetching those would turn the crawler into a probe of its own
network.  Unless the config allows it, a host whose literal address or any
resolved address is loopback, private, link-local, reserved, multicast or
unspecified is refused.
"""
from __future__ import annotations

import ipaddress
import socket


def _forbidden(address: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return (
        address.is_loopback
        or address.is_private
        or address.is_link_local
        or address.is_reserved
        or address.is_multicast
        or address.is_unspecified
    )


def blocked_reason(host: str) -> str | None:
    """Why `host` may not be fetched, or None if it is a public address.

    A name that does not resolve is not blocked here: the fetch will fail
    with a network error, which is the honest outcome for it.
    """
    try:
        literal = ipaddress.ip_address(host)
    except ValueError:
        literal = None
    if literal is not None:
        return f"{host} is a non-public address" if _forbidden(literal) else None
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError):
        return None
    for info in infos:
        address = ipaddress.ip_address(info[4][0].split("%", 1)[0])
        if _forbidden(address):
            return f"{host} resolves to non-public address {address}"
    return None
