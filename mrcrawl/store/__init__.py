"""Stage 1, store: the crawl directory and what it holds.  The record schema
(records.py), the stores' line protocols, the crawl directory on local disk
and on HDFS or S3, and the reader the exports share.

Imports: config only.  cluster_store.py is the one module here that imports
mrjob (its filesystems); nothing else in the stage may.
"""
