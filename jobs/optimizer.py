"""Job 3, Optimizer (map only): the next layer's frontier, read from the crawl db.

In the thesis the Optimizer was the cycle filter: it dropped every URL
linked on a layer that the layer had already fetched.  With the crawl db the
filter itself runs in DbUpdate, against every run and layer: a URL linked
on this layer that the db had never fetched was queued there for the next
layer.  What is left for the Optimizer is to read those marks out.  Map (one
task per db partition file, read whole): every URL queued for the next
layer, with its frontier entry.  When the config caps a layer, these are
the next layer's candidates, each with its order key, which the steps of
mrcrawl/frontier/caps.py then hold to the caps.
"""
from mrcrawl.frontier.caps import FrontierCaps
from mrcrawl.frontier.generate import queued_for
from mrcrawl.mr.job import DbFileJob, JobCounter
from mrcrawl.store.protocols import Utf8JsonProtocol


class MROptimizer(DbFileJob):
    STEP = "optimize"
    NEW_URLS = JobCounter(STEP, "new urls")
    SUMMARY = "{NEW_URLS} new URLs for the next layer"

    OUTPUT_PROTOCOL = Utf8JsonProtocol

    def mapper_raw(self, partition_path, partition_uri):
        with open(partition_path, "rb") as stored:
            for url, entry in queued_for(stored, self.options.run, self.layer + 1,
                                         ordered=bool(FrontierCaps.of(self.config)), order=self.config.order):
                self.count(self.NEW_URLS)
                yield url, entry

    @classmethod
    def frontier(cls, counters: dict) -> tuple[int, str]:
        """How many URLs the frontier it wrote holds, and what they are."""
        new = cls.NEW_URLS.of(counters)
        return new, str(new)


if __name__ == "__main__":
    MROptimizer.run()
