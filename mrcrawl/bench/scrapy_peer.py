"""The peer in the fetch-uniform scenario: Scrapy fetching the same URL list.

    python -m mrcrawl.bench.scrapy_peer URL_FILE --concurrency 30

It runs in a process of its own (Scrapy's Twisted reactor can start only once
per process) and prints one JSON line: pages fetched, wall seconds, and the
CPU seconds of that process.  Scrapy is set up as `scrapy bench` would be for
a plain fetch: robots.txt, link following, cookies, retries and throttling
off, one request at a time per host, and the response bodies dropped.
Scrapy is an optional extra (`pip install mrcrawl[bench]`); without it this
exits 3 and the benchmark leaves the peer columns empty.
"""
from __future__ import annotations

import argparse
import json
import resource
import sys
import time

NOT_INSTALLED = 3


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.scrapy_peer", allow_abbrev=False)
    parser.add_argument("url_file")
    parser.add_argument("--concurrency", type=int, default=30)
    args = parser.parse_args(argv)
    try:
        import scrapy
        from scrapy.crawler import CrawlerProcess
    except ImportError:
        print(json.dumps({"error": "scrapy is not installed"}))
        return NOT_INSTALLED
    with open(args.url_file, encoding="utf-8") as url_file:
        urls = [line.strip() for line in url_file if line.strip()]
    pages = []

    class FetchOnly(scrapy.Spider):
        name = "fetch_only"

        async def start(self):
            for url in urls:
                yield scrapy.Request(url, dont_filter=True)

        def parse(self, response):
            pages.append(response.status)
            return ()

    process = CrawlerProcess(settings={
        "CONCURRENT_REQUESTS": args.concurrency,
        "CONCURRENT_REQUESTS_PER_DOMAIN": 1,
        "DOWNLOAD_DELAY": 0,
        "ROBOTSTXT_OBEY": False,
        "COOKIES_ENABLED": False,
        "RETRY_ENABLED": False,
        "AUTOTHROTTLE_ENABLED": False,
        "TELNETCONSOLE_ENABLED": False,
        "LOG_LEVEL": "WARNING",
        "USER_AGENT": "scrapy-peer (mrcrawl bench)",
    })
    process.crawl(FetchOnly)
    started, cpu_started = time.monotonic(), cpu_seconds()
    process.start()
    print(json.dumps({
        "pages": len(pages),
        "ok": sum(status == 200 for status in pages),
        "wall_s": time.monotonic() - started,
        "cpu_s": cpu_seconds() - cpu_started,
        "version": scrapy.__version__,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
