"""Layer 0's frontier, Generator (map only): the run's seeds and the db's due URLs.

Map (one task per db partition file, read whole): the partition's seeds,
and every URL of the partition whose revisit is due at the run's start,
each with a frontier entry (its rank, and the validators and signature of
its last fetch).  See mrcrawl/frontier/generate.py.  When the config caps
a layer, these are layer 0's candidates, each with its order key, which
the steps of mrcrawl/frontier/caps.py then hold to the caps.
"""
from mrcrawl.frontier.caps import FrontierCaps
from mrcrawl.frontier.crawldb import partition_number, partition_of
from mrcrawl.frontier.generate import announcing_hosts, layer_zero
from mrcrawl.mr.job import DbFileJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MRGenerator(DbFileJob):
    STEP = "generate"
    SEEDS = JobCounter(STEP, "seeds")
    DUE_URLS = JobCounter(STEP, "due urls")
    SUMMARY = "{SEEDS} seeds and {DUE_URLS} due URLs for layer 0"

    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_raw(self, partition_path, partition_uri):
        partition = partition_number(partition_uri)
        seeds = [url for url in self.seed_urls() if partition_of(url, self.partitions) == partition]
        hub_days = self.config.revisit.announcing_hub_days
        with open(partition_path, "rb") as stored:
            announcing = announcing_hosts(stored) if hub_days else set()
            stored.seek(0)
            for url, entry in layer_zero(stored, seeds, self.options.run, ordered=bool(FrontierCaps.of(self.config)),
                                         order=self.config.order, announcing=announcing,
                                         announcing_hub_days=hub_days):
                self.count(self.SEEDS if entry["seed"] else self.DUE_URLS)
                yield url, entry

    @classmethod
    def frontier(cls, counters: dict) -> tuple[int, str]:
        """How many URLs the frontier it wrote holds, and what they are."""
        seeds, due = cls.SEEDS.of(counters), cls.DUE_URLS.of(counters)
        return seeds + due, f"{seeds} seeds + {due} due"


if __name__ == "__main__":
    MRGenerator.run()
