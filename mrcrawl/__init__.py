"""mrcrawl: a MapReduce batch web crawler.  Its folders follow the crawl's data:

    seeds -> in/ -> fetch -> doc/ -> parse -> out/ -> frontier -> in/ ... -> merge -> xml/, warc/, index/

Stages, lowest first: store, page, fetch, frontier, output; beside them mr,
the mrjob glue.  A module imports config.py and modules of its own stage or a
lower one, never a higher one.  At the top: config.py (which imports nothing
of the package), logs.py (where the commands' messages go), a crawl's plan
(plan.py), how its steps are run (pipeline.py), its directory (crawl_dir.py),
its seeds (seeds.py), Ctrl-C and the like (interrupts.py) and its progress display
(progress.py); the commands driver.py, export.py, db.py and inject.py, the tools
testweb/ and bench/, and cli.py, the `mrcrawl` command that runs each of them.

From Python, as requests has `requests.get`:

    import mrcrawl
    result = mrcrawl.crawl("seeds/zh.txt", 3, "seeds/zh.yaml", output="crawl/zh")
    result.status, result.totals, result.stores

`mrcrawl.crawl` is the driver's (driver.py), imported on first use: a task
that imports a stage of the package loads neither the driver nor mrjob.
"""

# What `import mrcrawl` offers, and the module each name comes from.
_PUBLIC = {"crawl": "mrcrawl.driver", "CrawlResult": "mrcrawl.driver", "UsageError": "mrcrawl.crawl_dir",
           "ConfigError": "mrcrawl.config"}
__all__ = list(_PUBLIC)


def __getattr__(name: str):
    if name not in _PUBLIC:
        raise AttributeError(f"module 'mrcrawl' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(_PUBLIC[name]), name)
