"""Stage 4, frontier: what to crawl next.  The Optimizer's cycle filter, and
Merge's rule for which record of a URL is kept.

Imports: page, store and config.  Never fetch, and never mrjob.
"""
