"""mr, beside the stages: what adapts mrjob to the crawl.

- job.py: the two kinds of job, as base classes: CrawlJob (told the crawl's
  context, run in one wave of tasks) and DbFileJob (reads whole db partition
  files; a Spark step of its own on Spark), and the counters a job owns;
- launcher.py: the one place that turns a step into an mrjob run: the
  runner's settings, the package zip, the jobs' command lines, the counters;
- onewave.py: mrjob's inline and local runners, shaped for a crawl's many
  small jobs (one wave of tasks, forked tasks, whole files read in place);
- progress.py: what a running job's tasks have reported so far.

Imports: mrjob, config and any stage (store, page, fetch, frontier, output).
No stage imports it; jobs/ and the modules beside the driver do.
"""
