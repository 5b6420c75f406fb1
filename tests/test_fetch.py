"""The fetcher on its own: a real Fetcher fed many URLs, without mrjob."""
from collections import Counter

from mrcrawl.config import CrawlConfig
from mrcrawl.fetch import URLS_IN_MEMORY, Fetcher
from mrcrawl.hostqueue import SPILL_BATCH


def test_memory_stays_bounded_however_many_urls_are_fed():
    # Loopback hosts with the private-network guard on: every URL is settled
    # as `blocked` without a request, so this measures the queues alone.
    config = CrawlConfig(language="en", user_agent="mrcrawl-test/1.0", threads=4, delay=0.0)
    fetcher = Fetcher(config, layer=0)
    total = 3 * URLS_IN_MEMORY
    hosts = 50
    outcomes = Counter()
    peak = 0
    for host in range(hosts):
        for n in range(total // hosts):
            fetcher.add(f"http://127.0.1.{host}:8000/page/{n}")
            peak = max(peak, fetcher._memory.used)
            outcomes.update(doc["outcome"] for doc in fetcher.completed())
    outcomes.update(doc["outcome"] for doc in fetcher.finish())
    assert outcomes == {"blocked": total}
    assert peak <= URLS_IN_MEMORY + config.threads * SPILL_BATCH
    assert fetcher.stats["requests"] == 0
