"""mrcrawl: a MapReduce batch web crawler.  Its folders follow the crawl's data:

    seeds -> in/ -> fetch -> doc/ -> parse -> out/ -> frontier -> in/ ... -> merge -> xml/, warc/, index/

Stages, lowest first: store, page, fetch, frontier, output; beside them mr,
the mrjob glue.  A module imports config.py and modules of its own stage or a
lower one, never a higher one.  At the top: config.py (which imports nothing
of the package), the commands driver.py and export.py, and the tools
testweb/ and bench/.
"""
