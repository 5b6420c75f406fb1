"""The MapReduce jobs of a crawl, as thin mrjob classes over mrcrawl.

The design's five jobs (Crawler, Parser, Optimizer, Merge, HtmlToXml), with
the crawl db's four beside them (Generator, DbBatch, Dedup, DbUpdate).  A
crawl runs the Generator once, seven jobs a layer (Crawler, Parser, DbBatch,
Dedup, DbUpdate, then the Optimizer unless it is the last layer), and Merge
and HtmlToXml after the last; mrcrawl/plan.py lays them out.  DbResort is
not a step of the crawl: the benchmark's baseline.
"""
