"""mrcrawl: a MapReduce batch web crawler.  Its folders follow the crawl's data:

    seeds -> in/ -> fetch -> doc/ -> parse -> out/ -> frontier -> in/ ... -> merge -> xml/, warc/, index/

Stages, lowest first: store, page, fetch, frontier, output; beside them mr,
the mrjob glue.  A module imports config.py and modules of its own stage or a
lower one, never a higher one.  At the top: config.py (which imports nothing
of the package), logs.py (where the commands' messages go), the commands
driver.py, export.py and db.py, the tools testweb/ and bench/, and cli.py,
the `mrcrawl` command that runs each of them.
"""
