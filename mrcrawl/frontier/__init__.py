"""Stage 4, frontier: the crawl db, and what each layer crawls from it.

- crawldb.py: the crawl db on disk (one record per URL ever discovered,
  partitioned by host, and an index of payload digests and content
  signatures), and the sort-merge
  that updates it with a layer's batch, sorting only the batch;
- db_update.py: what a layer tells the db (updates from its frontier, doc
  and out records), and how a db record takes one: the revisit policy, and
  the cycle filter, which queues for the next layer a URL linked on this
  layer that the db has never fetched;
- dedup.py: duplicates, which fetched page repeats another URL's content
  (or payload), decided against the db's digest index;
- generate.py: a layer's frontier read out of the db: layer 0's seeds and
  due URLs (the Generator), and the URLs the cycle filter queued for a later
  layer (the Optimizer);
- merge.py: the Merge job's rule for which of a final URL's records, one per
  layer that reached it, is kept;
- waiting.py: what waits in the db, per pay-level domain: the URLs
  deferred, by cap, and trapped, by guard (db stats and the report);
- score_spread.py: how the db's scores spread, and the URLs of the highest
  scores (db top, db stats and the report).

Imports: page, store and config.  Never fetch, and never mrjob.
"""
