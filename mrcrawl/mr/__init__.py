"""mr, beside the stages: what adapts mrjob to the crawl.  The one-wave local
runners, and the options the jobs take.

Imports: mrjob, config and any stage (store, page, fetch, frontier, output).
No stage imports it; jobs/ and driver.py do.
"""
