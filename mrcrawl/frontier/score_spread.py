"""What the crawl db's scores look like (a record's `score`, its PageRank):
the URLs of the highest scores, and how the scores spread.

`mrcrawl db top` and `db stats` print them, and the crawl report draws them.
A db may hold far more URLs than memory, so the partition files are read
one line at a time; a record's score is read from its line's bytes, and the
record is decoded only when its score enters the top N, a heap of N
entries, the most held at once (Nutch's `readdb -topN` holds as many).

The spread is counted in buckets of a score's ratio to the mean score (the
sum of the scores over n, the URLs scored): a bucket holds the ratios from
a power of two to twice it.  PageRank's scores sum to 1, so the ratio is
score × n: 1 is the score every URL would have if links gave none more
weight than another.  The mean is known at the end of a pass, so the
buckets take a second one.
"""
from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

from mrcrawl.frontier.crawldb import CrawlDb
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol

# How a stored db record spells its score's key: the stores' JSON is
# compact, and a quote inside a string is escaped, so these bytes occur in
# a line only as that key, which no record holds twice.
SCORE_KEY = b'"score":'
NOT_SCORED = b"null"

_lines = Utf8JsonProtocol()


def score_in(line: bytes) -> float | None:
    """The score of a stored db record line, None when it has none, read
    from the line's bytes without decoding the record."""
    start = line.find(SCORE_KEY)
    if start < 0:
        return None
    start += len(SCORE_KEY)
    ends = [end for end in (line.find(b",", start), line.find(b"}", start)) if end >= 0]
    value = line[start:min(ends)]
    return None if value == NOT_SCORED else float(value)


@dataclass(frozen=True)
class ScoredUrl:
    """One URL of the top N, with what its db record says of its links."""

    score: float
    url: str
    status: str
    inlinks: int | None  # distinct pages linking to it, as scoring counted them; None: not counted
    inlink_hosts: int | None

    def __lt__(self, other: ScoredUrl) -> bool:
        """Ranks below `other`: a lower score, or the same and a later URL."""
        return (self.score, other.url) < (other.score, self.url)

    def as_json(self) -> dict:
        return {"score": self.score, "url": self.url, "status": self.status, "inlinks": self.inlinks,
                "inlink_hosts": self.inlink_hosts}


class TopScores:
    """The `count` highest scores offered, in a heap whose root is the
    lowest kept: a score below it is passed over undecoded."""

    def __init__(self, count: int):
        self.count = count
        self._heap: list[ScoredUrl] = []

    def offer(self, score: float, line: bytes) -> None:
        if len(self._heap) == self.count and score < self._heap[0].score:
            return
        url, record = _lines.read(line)
        entry = ScoredUrl(score, url, record["status"], record.get("inlinks"), record.get("inlink_hosts"))
        if len(self._heap) < self.count:
            heapq.heappush(self._heap, entry)
        elif self._heap[0] < entry:
            heapq.heapreplace(self._heap, entry)

    def ranked(self) -> list[ScoredUrl]:
        """The highest score first; equal scores by URL."""
        return sorted(self._heap, reverse=True)


@dataclass
class ScoreSpread:
    """How the scores of a db spread, and its top URLs."""

    urls: int = 0  # every record read
    scored: int = 0  # those with a score
    total: float = 0.0  # the sum of their scores
    top: list[ScoredUrl] = field(default_factory=list)
    # URLs per bucket: `power` counts the ratios to the mean score from
    # 2**power to twice that; None counts the scores of 0.
    buckets: dict[int | None, int] = field(default_factory=dict)

    @property
    def mean(self) -> float:
        return self.total / self.scored if self.scored else 0.0

    def ratio(self, score: float) -> float:
        """`score` over the mean score: score × n when the scores sum to 1."""
        return score * self.scored / self.total if self.total > 0 else 0.0

    def ranked_buckets(self) -> list[tuple[int | None, int]]:
        """(bucket, URLs) from the lowest bucket to the highest, each power of
        two between the first and the last that hold any given, empty or not,
        so that a chart of them is to scale; the zero bucket first, if any."""
        powers = [power for power in self.buckets if power is not None]
        ranked = [(None, self.buckets[None])] if self.buckets.get(None) else []
        if powers:
            ranked += [(power, self.buckets.get(power, 0)) for power in range(min(powers), max(powers) + 1)]
        return ranked


def bucket_of(ratio: float) -> int | None:
    """The bucket of a ratio to the mean score: the power of two at or below it, None for 0."""
    if ratio <= 0:
        return None
    return math.frexp(ratio)[1] - 1  # ratio = m * 2**e, 0.5 <= m < 1: 2**(e-1) <= ratio < 2**e


def bucket_label(power: int | None) -> str:
    """A bucket's ratios, as a reader writes them: 0, 1/4–1/2, 1–2, 8–16."""
    if power is None:
        return "0"
    return f"{_power_of_two(power)}–{_power_of_two(power + 1)}"


def _power_of_two(power: int) -> str:
    return f"{2 ** power:,}" if power >= 0 else f"1/{2 ** -power:,}"


def scored_lines(directory: str | Path) -> Iterator[tuple[float | None, bytes]]:
    """(score or None, line) of every record of the crawl db at `directory`
    (local disk), partition by partition."""
    for part in CrawlDb(CrawlStore(directory)).partition_files():
        with open(part, "rb") as stored:
            for line in stored:
                line = line.rstrip(b"\r\n")
                if line:
                    yield score_in(line), line


def top_scored(directory: str | Path, count: int) -> list[ScoredUrl]:
    """The `count` URLs of the highest scores in the db, highest first, equal scores by URL."""
    top = TopScores(count)
    for score, line in scored_lines(directory):
        if score is not None:
            top.offer(score, line)
    return top.ranked()


def score_spread(directory: str | Path, top: int) -> ScoreSpread:
    """How the db's scores spread, with its `top` URLs of the highest scores:
    two passes over the db."""
    spread = ScoreSpread()
    highest = TopScores(top)
    for score, line in scored_lines(directory):
        spread.urls += 1
        if score is not None:
            spread.scored += 1
            spread.total += score
            highest.offer(score, line)
    spread.top = highest.ranked()
    if spread.scored:
        for score, _ in scored_lines(directory):
            if score is not None:
                bucket = bucket_of(spread.ratio(score))
                spread.buckets[bucket] = spread.buckets.get(bucket, 0) + 1
    return spread
