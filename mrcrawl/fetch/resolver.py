"""Host names to addresses: once per host per task, within the timeout.

The private-network guard and the connection must see the same answer: a
name that answers a public address to the guard and a private one to the
connection (DNS rebinding) would otherwise steer the crawler into its own
network.  So a name is looked up once, here; the guard checks the answer and
the connection connects to the address the guard checked (connection.py),
never looking the name up again.  The answer, or the failure, is kept for the
rest of the task (a reducer task crawls one layer's share of hosts).

A lookup goes to the DNS server the config names (`dns_server`), asked
through dnspython, or else to the system resolver.  Either way it waits at most the config's
timeout: getaddrinfo has no timeout of its own, so it runs in a thread of
its own that the fetch thread stops waiting for.
"""
from __future__ import annotations

import ipaddress
import socket
import threading
import time
from dataclasses import dataclass
from typing import Callable

import dns.exception
import dns.name
import dns.resolver

from mrcrawl.config import dns_server_address
from mrcrawl.fetch.netguard import Address


class DNSLookupError(Exception):
    """A name that could not be turned into an address: no such name, no
    address for it, or no answer within the timeout."""


@dataclass(frozen=True)
class _Outcome:
    addresses: tuple[Address, ...] = ()
    error: str | None = None


class Resolver:
    """Looks up each name once and keeps the answer; safe for many threads.
    `on_lookup(seconds)` is told what each lookup took."""

    def __init__(self, timeout: float, dns_server: str | None = None,
                 on_lookup: Callable[[float], None] = lambda seconds: None):
        self.timeout = timeout
        self.server = dns_server_address(dns_server) if dns_server else None
        self._on_lookup = on_lookup
        self._outcomes: dict[str, _Outcome] = {}
        self._name_locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def addresses(self, name: str) -> tuple[Address, ...]:
        """The name's addresses, looked up on its first call only; raises
        DNSLookupError, that of the first call too, if there are none."""
        with self._lock:
            name_lock = self._name_locks.setdefault(name, threading.Lock())
        with name_lock:  # threads asking for the same name wait for one lookup
            outcome = self._outcomes.get(name)
            if outcome is None:
                outcome = self._outcomes[name] = self._look_up(name)
        if outcome.error is not None:
            raise DNSLookupError(outcome.error)
        return outcome.addresses

    def _look_up(self, name: str) -> _Outcome:
        started = time.monotonic()
        try:
            if self.server is not None:
                addresses = _ask_server(self.server, name, self.timeout)
            else:
                addresses = _ask_system(name, self.timeout)
            outcome = _Outcome(addresses=_unique(addresses))
        except DNSLookupError as error:
            outcome = _Outcome(error=str(error))
        self._on_lookup(time.monotonic() - started)
        return outcome


def _unique(addresses: list[Address]) -> tuple[Address, ...]:
    return tuple(dict.fromkeys(addresses))


# -- the system resolver, with a timeout --------------------------------------


def _ask_system(name: str, timeout: float) -> list[Address]:
    answer: dict = {}

    def look_up() -> None:
        try:
            answer["infos"] = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
        except (OSError, UnicodeError) as error:
            answer["error"] = error

    # A daemon thread: a lookup that never returns must not keep the task
    # from ending, and it holds nothing the fetch needs.
    lookup = threading.Thread(target=look_up, name=f"dns {name}", daemon=True)
    lookup.start()
    lookup.join(timeout)
    if lookup.is_alive():
        raise DNSLookupError(f"DNS lookup of {name} got no answer within {timeout:g}s")
    if "error" in answer:
        error = answer["error"]
        why = error.strerror if isinstance(error, OSError) and error.strerror else str(error)
        raise DNSLookupError(f"DNS lookup of {name} failed: {why}")
    addresses = [ipaddress.ip_address(info[4][0].split("%", 1)[0]) for info in answer["infos"]]
    if not addresses:
        raise DNSLookupError(f"DNS lookup of {name} found no address")
    return addresses


# -- the DNS server the config names -------------------------------------------


def _ask_server(server: tuple[str, int], name: str, timeout: float) -> list[Address]:
    """A records, or AAAA records when the name has no A record, asked of
    `server` alone (dnspython: it retries over TCP a truncated answer, and
    follows CNAMEs), all within `timeout`."""
    resolver = dns.resolver.Resolver(configure=False)  # not the system's servers or search list
    resolver.nameservers = [server[0]]
    resolver.port = server[1]
    where = f"the DNS server at {_show(server)}"
    deadline = time.monotonic() + timeout
    for record_type in ("A", "AAAA"):
        try:
            answer = resolver.resolve(dns.name.from_text(name), record_type, search=False,
                                      lifetime=max(deadline - time.monotonic(), 0.001))
        except dns.resolver.NoAnswer:
            continue
        except dns.resolver.NXDOMAIN:
            raise DNSLookupError(f"DNS lookup of {name}: {where} answered NXDOMAIN") from None
        except dns.resolver.LifetimeTimeout:
            raise DNSLookupError(f"DNS lookup of {name}: {where} gave no answer within the timeout") from None
        except dns.resolver.NoNameservers as error:
            raise DNSLookupError(f"DNS lookup of {name}: {where} failed to answer ({error})") from None
        except (dns.exception.DNSException, ValueError) as error:
            raise DNSLookupError(f"DNS lookup of {name}: {where}: {error}") from None
        return [ipaddress.ip_address(record.address) for record in answer]
    raise DNSLookupError(f"DNS lookup of {name}: {where} has no address for it")


def _show(server: tuple[str, int]) -> str:
    address, port = server
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"
