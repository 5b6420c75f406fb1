"""Stage 5, output: what a crawl hands over.

- pagexml.py: one fetched page as one line of XML, what HtmlToXml writes;
- warc.py: the WARC archive, every HTTP response as received;
- pageindex.py: the Parquet page index, one row per attempted URL.

The export command (mrcrawl/export.py) writes the archive and the index.

Imports: fetch (the request as it was sent), frontier (the crawl db's status of
each URL, for the index), page, store and config.  Never mrjob.
"""
