"""A capped layer's per-host cap, HostCap: at most `max_urls_per_host` URLs
of one host in the layer's frontier, besides the seeds.

Map: candidate -> (host key, [order key, URL, candidate]); the host key is
the Crawler's, so all of a host's candidates reach one reducer call, sorted
by their order keys (SORT_VALUES: the keys compare as strings).  Reduce:
the first `max_urls_per_host` stay, the rest are held back, marked with the
cap (mrcrawl/frontier/caps.py).  Written as they came, order key and all: the
frontier when no topN follows, else the topN's candidates (the Crawler too
takes a host's URLs by their order keys).
"""
from mrcrawl.frontier.caps import capped_frontier, within_host_cap
from mrcrawl.mr.job import CrawlJob, JobCounter
from mrcrawl.page.urls import host_key
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRHostCap(CrawlJob):
    STEP = "hostcap"
    SEEDS = JobCounter(STEP, "seeds")
    KEPT = JobCounter(STEP, "urls kept")
    HELD_BACK = JobCounter(STEP, "urls held back")
    SUMMARY = "{KEPT} URLs within max_urls_per_host, {HELD_BACK} held back, besides {SEEDS} seeds"

    INPUT_PROTOCOL = Utf8JsonProtocol
    INTERNAL_PROTOCOL = Utf8JsonProtocol
    OUTPUT_PROTOCOL = Utf8JsonProtocol
    SORT_VALUES = True  # a host's candidates arrive in the crawl's order

    def mapper(self, url, candidate):
        yield host_key(url), [candidate["order"] or "", url, candidate]

    def reducer(self, host, ranked):
        for url, candidate in within_host_cap(ranked, self.config.max_urls_per_host):
            self.count(self.SEEDS if candidate["seed"] else self.HELD_BACK if candidate["deferred"] else self.KEPT)
            yield url, candidate

    @classmethod
    def frontier(cls, counters: dict) -> tuple[int, str]:
        """How many URLs of the frontier it wrote are to be fetched, and what they are."""
        return capped_frontier(cls.SEEDS.of(counters), cls.KEPT.of(counters), cls.HELD_BACK.of(counters))


if __name__ == "__main__":
    MRHostCap.run()
