"""What waits in the crawl db, per pay-level domain: the URLs deferred, by
what deferred them (a cap or the layer's time limit, records.DEFERRALS), and
the URLs trapped, by the guard that caught them (records.TRAP_GUARDS).

`mrcrawl db stats` and the crawl report show it.  A host's URLs count
towards its pay-level domain (page/domains.py), an IP address being a PLD of
its own.  Only counts are kept, a few per PLD, never the URLs; and
`waiting_in` reads the db one partition file at a time, passing over
without decoding it every record that waits for nothing (its `deferred` is
null), nearly every record of a db.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from mrcrawl.frontier.crawldb import CrawlDb
from mrcrawl.page.domains import pay_level_domain
from mrcrawl.page.urls import host_of
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import DEFERRALS, TRAP_GUARDS, TRAPPED

# How a stored record that waits for nothing spells its `deferred`: the
# stores' JSON is compact, and a quote inside a string is escaped, so these
# bytes occur in a line only as that field.
WAITS_FOR_NOTHING = b'"deferred":null'


@dataclass
class Waiting:
    """The URLs of one pay-level domain that wait."""

    deferred: Counter = field(default_factory=Counter)  # by the cap or limit that deferred them (DEFERRALS)
    trapped: Counter = field(default_factory=Counter)  # by the guard that caught them (TRAP_GUARDS)

    @property
    def urls(self) -> int:
        return self.deferred.total() + self.trapped.total()

    def why(self) -> list[tuple[str, int]]:
        """(reason or guard, URLs), deferrals first, each in its declared order."""
        return ([(reason, self.deferred[reason]) for reason in _in_order(self.deferred, DEFERRALS)]
                + [(guard, self.trapped[guard]) for guard in _in_order(self.trapped, TRAP_GUARDS)])


def _in_order(counts: Counter, declared: tuple[str, ...]) -> list[str]:
    """The keys of `counts`: the declared ones in their order, then any other (a newer version's) by name."""
    return [key for key in declared if counts[key]] + sorted(key for key in counts if key not in declared)


class WaitingTally:
    """Counts, per pay-level domain, the records given to `add` that wait."""

    def __init__(self):
        self.by_pld: dict[str, Waiting] = {}

    def add(self, record: dict) -> None:
        why = record.get("deferred")
        if not why:
            return
        waiting = self.by_pld.setdefault(pay_level_domain(host_of(record["host"])), Waiting())
        (waiting.trapped if record["status"] == TRAPPED else waiting.deferred)[why] += 1

    def ranked(self) -> list[tuple[str, Waiting]]:
        """The PLDs with the most URLs waiting first, then by name."""
        return sorted(self.by_pld.items(), key=lambda item: (-item[1].urls, item[0]))

    @property
    def deferred(self) -> int:
        return sum(waiting.deferred.total() for waiting in self.by_pld.values())

    @property
    def trapped(self) -> int:
        return sum(waiting.trapped.total() for waiting in self.by_pld.values())

    def reasons(self) -> list[str]:
        """Every reason and guard some PLD's URLs wait for, in Waiting.why()'s order."""
        every = Waiting()
        for waiting in self.by_pld.values():
            every.deferred.update(waiting.deferred)
            every.trapped.update(waiting.trapped)
        return [why for why, _ in every.why()]


def waiting_in(directory: str | Path) -> WaitingTally:
    """What waits in the crawl db at `directory` (local disk)."""
    tally = WaitingTally()
    lines = Utf8JsonProtocol()
    for part in CrawlDb(CrawlStore(directory)).partition_files():
        with open(part, "rb") as stored:
            for line in stored:
                if WAITS_FOR_NOTHING not in line and line.strip():
                    tally.add(lines.read(line.rstrip(b"\r\n"))[1])
    return tally
