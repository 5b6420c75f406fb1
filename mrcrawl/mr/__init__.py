"""mr, beside the stages: what adapts mrjob to the crawl.  The one-wave local
runners and the options every job takes.

Imports: mrjob, store and config.  Only jobs/ and driver.py import it.
"""
