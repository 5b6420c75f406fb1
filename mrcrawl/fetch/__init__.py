"""Stage 3, fetch: the Crawler reducer's engine, from a layer's frontier
entries to its doc records.

- fetcher.py: one task's URLs fetched with many threads, politely: the
  feeder, the fetch threads, redirects and retries, one doc record per URL;
- hostqueue.py: the per-host queues, spilled to local disk, and the scheduler
  that hands a host to one thread at a time when its politeness clock allows;
- politeness.py: what a politeness queue is, a host or (`politeness: ip`)
  the address its hosts share, as the Crawler keys its URLs by it;
- connection.py: one host's HTTP connection, and the request line and headers
  the crawler sends (the WARC export rebuilds each request with them);
- robots.py: what a site's robots.txt lets the crawler fetch;
- resolver.py: each host looked up once per task, within the timeout;
- netguard.py: the guard that keeps requests off private networks;
- exception_kinds.py: the failure kind (store/failures.py) of an exception
  the HTTP client or the resolver raised, by its class.

Imports: page, store and config.  Never mrjob.
"""
