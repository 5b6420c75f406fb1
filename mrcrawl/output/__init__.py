"""Stage 5, output: what a crawl hands over.  The page XML that HtmlToXml
writes, the WARC archive and the Parquet page index (run by the export
command, mrcrawl/export.py).

Imports: fetch (the request as it was sent), frontier (the crawl db's status of
each URL, for the index), page, store and config.  Never mrjob.
"""
