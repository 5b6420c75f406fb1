"""Host names to addresses: once per host per task, within the timeout.

The private-network guard and the connection must see the same answer: a
name that answers a public address to the guard and a private one to the
connection (DNS rebinding) would otherwise steer the crawler into its own
network.  So a name is looked up once, here; the guard checks the answer and
the connection connects to the address the guard checked (connection.py),
never looking the name up again.  The answer, or the failure, is kept for the
rest of the task (a reducer task crawls one layer's share of hosts).

A lookup goes to the DNS server the config names (`dns_server`), over UDP,
or else to the system resolver.  Either way it waits at most the config's
timeout: getaddrinfo has no timeout of its own, so it runs in a thread of
its own that the fetch thread stops waiting for.
"""
from __future__ import annotations

import ipaddress
import random
import socket
import struct
import threading
import time
from dataclasses import dataclass
from typing import Callable

from mrcrawl.config import dns_server_address
from mrcrawl.fetch.netguard import Address

_TYPE_A, _TYPE_AAAA, _CLASS_IN = 1, 28, 1
_RCODE_NAMES = {1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP", 5: "REFUSED"}
_MAX_ANSWER_BYTES = 4096


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


# -- a DNS server over UDP (RFC 1035) ------------------------------------------


def _ask_server(server: tuple[str, int], name: str, timeout: float) -> list[Address]:
    """A records, or AAAA records when the name has no A record."""
    deadline = time.monotonic() + timeout
    where = f"the DNS server at {_show(server)}"
    for record_type in (_TYPE_A, _TYPE_AAAA):
        addresses = _query(server, name, record_type, deadline, where)
        if addresses:
            return addresses
    raise DNSLookupError(f"DNS lookup of {name}: {where} has no address for it")


def _show(server: tuple[str, int]) -> str:
    address, port = server
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def _encode_name(name: str) -> bytes:
    try:
        labels = name.rstrip(".").encode("idna").split(b".")
    except UnicodeError:
        raise DNSLookupError(f"DNS lookup of {name}: not a valid host name") from None
    if any(not label or len(label) > 63 for label in labels):
        raise DNSLookupError(f"DNS lookup of {name}: not a valid host name")
    return b"".join(bytes([len(label)]) + label for label in labels) + b"\0"


def _query(server: tuple[str, int], name: str, record_type: int, deadline: float, where: str) -> list[Address]:
    query_id = random.getrandbits(16)  # an answer must carry it: a stray datagram is not one
    question = _encode_name(name) + struct.pack("!HH", record_type, _CLASS_IN)
    query = struct.pack("!HHHHHH", query_id, 0x0100, 1, 0, 0, 0) + question  # recursion desired
    family = socket.AF_INET6 if ":" in server[0] else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(server)  # only the server's datagrams reach this socket
            sock.send(query)
            while True:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise socket.timeout
                sock.settimeout(left)
                answer = sock.recv(_MAX_ANSWER_BYTES)
                if len(answer) >= 12 and struct.unpack("!H", answer[:2])[0] == query_id:
                    break
        except socket.timeout:
            raise DNSLookupError(f"DNS lookup of {name}: {where} gave no answer within the timeout") from None
        except OSError as error:
            raise DNSLookupError(f"DNS lookup of {name}: {where} cannot be asked ({error.strerror or error})") from None
    try:
        return _addresses_in(answer, record_type, name, where)
    except (struct.error, IndexError, ValueError):
        raise DNSLookupError(f"DNS lookup of {name}: {where} sent a malformed answer") from None


def _addresses_in(answer: bytes, record_type: int, name: str, where: str) -> list[Address]:
    _, flags, questions, answers = struct.unpack("!HHHH", answer[:8])
    rcode = flags & 0x000F
    if rcode:
        raise DNSLookupError(f"DNS lookup of {name}: {where} answered {_RCODE_NAMES.get(rcode, f'error {rcode}')}")
    if flags & 0x0200:  # truncated: the addresses would be asked again over TCP; a crawler's names fit
        raise DNSLookupError(f"DNS lookup of {name}: {where} sent a truncated answer")
    offset = 12
    for _ in range(questions):
        offset = _skip_name(answer, offset) + 4
    addresses = []
    for _ in range(answers):
        offset = _skip_name(answer, offset)
        kind, _, _, length = struct.unpack("!HHIH", answer[offset:offset + 10])
        data = answer[offset + 10:offset + 10 + length]
        offset += 10 + length
        # CNAME records come before the addresses they lead to, which the
        # server adds to the same answer; the addresses are all we need.
        if kind == record_type == _TYPE_A and length == 4:
            addresses.append(ipaddress.IPv4Address(data))
        elif kind == record_type == _TYPE_AAAA and length == 16:
            addresses.append(ipaddress.IPv6Address(data))
    return addresses


def _skip_name(message: bytes, offset: int) -> int:
    """The offset after the (possibly compressed) name at `offset`."""
    while True:
        length = message[offset]
        if length == 0:
            return offset + 1
        if length & 0xC0 == 0xC0:  # a pointer ends the name
            return offset + 2
        offset += 1 + length
