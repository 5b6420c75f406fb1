"""Stage 2, page: reading one page.  URLs, charsets, HTML parsing, links,
main text and metadata, and the page's own robots directives.

Imports: store (the record schema) and config.  Never mrjob.
"""
