"""Stage 1, store: the crawl directory and what it holds.

- records.py: the record schema: frontier entries, doc, out and duplicate
  records, crawl db records, each defined once;
- failures.py: the kinds of failure a doc record can hold (`error_kind`),
  a closed list, with what a person reads for each and the advice for a
  crawl that fetched no page;
- protocols.py: the stores' line formats, as mrjob protocol classes that need
  no mrjob;
- crawl_store.py: the crawl directory on local disk: where each store lives,
  and a step's output moved into place only once the step has succeeded;
- cluster_store.py: the same directory on HDFS, S3 or any URI mrjob's
  filesystems reach;
- crawl_state.py: what a crawl is and how far it got (DIR/crawl.json);
- crawl_reader.py: the crawl directory as the exports and the report read it,
  one part file at a time.

Imports: config only.  cluster_store.py is the one module here that imports
mrjob (its filesystems); nothing else in the stage may.
"""
