"""Stage 3, fetch: the Crawler reducer's engine.  The fetcher with its feeder
and per-host queues, the HTTP connection, robots.txt, the resolver that looks
each host up once, and the guard that keeps requests off private networks.

Imports: page, store and config.  Never mrjob.
"""
