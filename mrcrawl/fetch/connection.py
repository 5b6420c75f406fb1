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

import re
import socket
from typing import Callable

import certifi
import urllib3
from urllib3.connection import HTTPConnection
from urllib3.util import make_headers, parse_url
from urllib3.util.wait import wait_for_read

from mrcrawl.config import CrawlConfig

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


# The validators an earlier fetch left in the crawl db (records.KNOWN_FIELDS)
# and the headers that send them back (RFC 9110 §13.1): a server that finds
# the page unchanged answers 304 Not Modified instead of sending it again.
CONDITIONAL_HEADERS = (("etag", "If-None-Match"), ("last_modified", "If-Modified-Since"))


def conditional_headers(known: dict | None) -> dict[str, str]:
    """The headers that send back the validators in `known` (a doc record's `known`)."""
    if not known:
        return {}
    return {header: known[field] for field, header in CONDITIONAL_HEADERS if known.get(field)}


def known_for_request(doc: dict | None, url: str) -> dict | None:
    """What of the crawl db's record a request for `url`, made for `doc`,
    sends back.  The record is of the URL the fetch started from (a retry
    asks for it again); a redirect hop asks for another URL, whose page the
    record says nothing of, and robots.txt has no doc."""
    if doc is None or url != doc["requested_url"]:
        return None
    return doc["known"]


def request_headers(config: CrawlConfig, url: str, known: dict | None = None) -> dict[str, str]:
    """Every header of the GET for `url`, in the order they are sent; with
    `known` (known_for_request), the conditional headers last."""
    headers = {
        "Host": host_header(url),
        "User-Agent": config.user_agent,
        "Accept-Encoding": ACCEPT_ENCODING,
        "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5",
        "Accept-Language": f"{config.language},*;q=0.5",
        "Connection": "keep-alive",
    }
    if known:
        headers.update(conditional_headers(known))
    return headers


# The most of an answer we look at to see whether all of it has arrived:
# larger answers are read as they come.
PEEK_BYTES = 256 * 1024
_CONTENT_LENGTH = re.compile(rb"\r\ncontent-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r\n", re.IGNORECASE)
_TRANSFER_ENCODING = re.compile(rb"\r\ntransfer-encoding[ \t]*:", re.IGNORECASE)


def whole_answer_arrived(sock: socket.socket) -> bool:
    """Whether the socket already holds an entire HTTP answer: the header
    block and a Content-Length body, so reading it cannot wait on the
    network.  Looks without consuming (MSG_PEEK); anything unusual (TLS,
    chunked, no length, a large answer) counts as not arrived."""
    try:
        data = sock.recv(PEEK_BYTES, socket.MSG_PEEK | socket.MSG_DONTWAIT)
    except (OSError, ValueError):  # nothing there yet, or a TLS socket (no peeking)
        return False
    header_end = data.find(b"\r\n\r\n")
    if header_end < 0 or _TRANSFER_ENCODING.search(data, 0, header_end):
        return False
    length = _CONTENT_LENGTH.search(data, 0, header_end + 2)
    return length is not None and header_end + 4 + int(length.group(1)) <= len(data)


class AnsweredConnection(HTTPConnection):
    """A plain-HTTP connection that calls `on_answer(sock)` when the first
    bytes of each answer arrive, before http.client reads them.

    The fetcher uses the moment to time its politeness gap and to see
    whether the whole answer is already here (whole_answer_arrived).
    """

    def __init__(self, *args, on_answer: Callable[[socket.socket], None], **kwargs):
        super().__init__(*args, **kwargs)
        self.on_answer = on_answer

    def getresponse(self):
        if self.sock is not None:  # urllib3 asks only after sending a request
            if not wait_for_read(self.sock, timeout=self.timeout):
                raise TimeoutError("timed out")  # urllib3 makes this a ReadTimeoutError
            self.on_answer(self.sock)
        return super().getresponse()


class AnsweredConnectionPool(urllib3.HTTPConnectionPool):
    ConnectionCls = AnsweredConnection


def open_connection(config: CrawlConfig, url: str,
                    on_answer: Callable[[socket.socket], None]) -> urllib3.HTTPConnectionPool:
    """A pool of one kept-alive connection to `url`'s host (or to the proxy).

    A direct plain-HTTP connection calls `on_answer` as each answer arrives
    (see AnsweredConnection).  Through TLS or a proxy the bytes on the
    socket are not simply the answer's, and the fetcher times the answer
    when its headers have been read.
    """
    options = dict(maxsize=1, block=False, retries=False)
    parts = parse_url(url)
    if parts.scheme == "https":
        # The same certificate bundle requests would use.
        options.update(cert_reqs="CERT_REQUIRED", ca_certs=certifi.where())
    if config.proxy:
        return urllib3.ProxyManager(config.proxy, num_pools=1, **options).connection_from_url(url)
    if parts.scheme == "https":
        return urllib3.connection_from_url(url, **options)
    return AnsweredConnectionPool(parts.host, port=parts.port or 80, on_answer=on_answer, **options)
