"""Scores, step 2 of a PageRank iteration, RankUpdate (map only): every
node's new score and in-degree, written into the db's next generation.

Map (one task per db partition file, read whole): a URL partition's
records, each node with its score, `inlinks` and `inlink_hosts` from the
Rank job's lines of its partition (found as DbUpdate finds a batch's) and
the Rank job's totals; every other partition file is copied as it was
(mrcrawl/frontier/scores.py).
"""
from mrcrawl.frontier.crawldb import batch_prefix, join_sorted, merge_partition, partition_number, sorted_updates
from mrcrawl.frontier.scores import TOTALS_PREFIX, is_node, ranked, read_totals
from mrcrawl.mr.job import DbFileJob, JobCounter
from mrcrawl.store.protocols import LineChunkProtocol, Utf8JsonProtocol


class MRRankUpdate(DbFileJob):
    STEP = "rankupdate"
    SCORED = JobCounter(STEP, "urls scored")
    URLS = JobCounter(STEP, "urls")  # URL records written
    SUMMARY = "{SCORED} of {URLS} URLs in the db scored"

    OUTPUT_PROTOCOL = LineChunkProtocol

    def mapper_raw(self, partition_path, partition_uri):
        partition = partition_number(partition_uri)
        with open(partition_path, "rb") as stored:
            if partition >= self.partitions:  # a digest (or link) partition: no scores there
                yield from ((None, chunk) for chunk in merge_partition(stored, [], None))
                return
            lines = Utf8JsonProtocol()
            totals = read_totals(lines.read(line.rstrip(b"\r\n"))[1] for line in self.batch_lines(TOTALS_PREFIX))
            links = sorted_updates(self.batch_lines(batch_prefix(partition)))
            scored = written = 0
            for line, link in join_sorted(stored, links):
                if line is None:
                    continue  # no record: nothing links a URL the db does not hold
                url, record = lines.read(line)
                written += 1
                if is_node(record):
                    scored += 1
                    yield None, lines.write(url, ranked(record, link[2] if link else None, totals))
                else:
                    yield None, line
        self.count(self.SCORED, scored)
        self.count(self.URLS, written)

    @classmethod
    def run_counts(cls, counters: dict) -> dict[str, int]:
        """What db.json keeps of the update for its run: nothing, for no URL was added or fetched."""
        return {}


if __name__ == "__main__":
    MRRankUpdate.run()
