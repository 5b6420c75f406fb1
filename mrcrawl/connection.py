"""What the crawler sends: one host's HTTP connection, and its request line and headers.

The fetcher talks to hosts through urllib3, the HTTP engine under requests.
requests adds a session layer (cookie jar, hooks, environment settings,
re-preparing every request) that costs about 0.3 ms of CPU per page, as much
as urllib3's whole exchange; the crawler needs none of it.  Cookies are not
kept, as in Nutch: a crawler's requests then do not depend on the order in
which a host's pages were fetched, and the WARC export can rebuild each
request exactly from this module (warc.request_message).
"""
from __future__ import annotations

import certifi
import urllib3
from urllib3.util import make_headers, parse_url

from .config import CrawlConfig

# The codings urllib3 can undo here (gzip and deflate, and br or zstd when
# their packages are installed), as requests would advertise them.
ACCEPT_ENCODING = make_headers(accept_encoding=True)["accept-encoding"]
HTTP_DEFAULT_PORTS = {"http": 80, "https": 443}


def request_target(url: str, proxy: str | None) -> str:
    """The request line's target: the path and query, or through a proxy the
    absolute URL of a plain-http request (https is tunnelled with CONNECT)."""
    parts = parse_url(url)
    if proxy and parts.scheme == "http":
        return parts.url
    return parts.request_uri


def host_header(url: str) -> str:
    parts = parse_url(url)
    if parts.port is None or parts.port == HTTP_DEFAULT_PORTS.get(parts.scheme):
        return parts.host
    return f"{parts.host}:{parts.port}"


def request_headers(config: CrawlConfig, url: str) -> dict[str, str]:
    """Every header of the GET for `url`, in the order they are sent."""
    return {
        "Host": host_header(url),
        "User-Agent": config.user_agent,
        "Accept-Encoding": ACCEPT_ENCODING,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        "Accept-Language": f"{config.language},*;q=0.5",
        "Connection": "keep-alive",
    }


def open_connection(config: CrawlConfig, url: str) -> urllib3.HTTPConnectionPool:
    """A pool of one kept-alive connection to `url`'s host (or to the proxy)."""
    options = dict(maxsize=1, block=False, retries=False)
    if parse_url(url).scheme == "https":
        # The same certificate bundle requests would use.
        options.update(cert_reqs="CERT_REQUIRED", ca_certs=certifi.where())
    if config.proxy:
        return urllib3.ProxyManager(config.proxy, num_pools=1, **options).connection_from_url(url)
    return urllib3.connection_from_url(url, **options)
