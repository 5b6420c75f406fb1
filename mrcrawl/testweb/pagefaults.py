"""Page faults on loopback: well-formed HTTP answers whose pages are hostile.

faults.py serves answers that go wrong below HTTP.  The pages here arrive
whole, with a 200 and a Content-Length, and go wrong inside: 100,000 nested
elements, 10 MB on one line, NUL bytes, bytes invalid in the charset the
page declares, a charset label Python has no codec for, 50,000 links, a
<base href> of another scheme, and meta refreshes that go round in a loop.
A PageFaultServer serves them from one loopback address beside the test
web, so that one crawl fetches both, and logs every request.

    with PageFaultServer() as server:
        seeds = [*web_server.seeds, server.url(HOME)]
        ...
        server.wait_idle()
        server.log  # one LogEntry per request

The home page links every case but the ones only a refresh or a chain of
links reaches: REFRESH_B (from REFRESH_A's refresh) and MANY_LINKS (three
links from the home page, so that a crawl reaches it on layer 3).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from mrcrawl.page.charset_labels import LABEL_TO_CODEC
from mrcrawl.testweb.markup import digits_in_words
from mrcrawl.testweb.server import LogEntry

ADDRESS = "127.0.0.40"  # beside the test web's 127.0.0.2 upwards

HOME = "/"
NESTED = "/nested-divs.html"  # NEST_DEPTH nested <div>s, then a paragraph and a link
NESTED_MARKED = "/nested-asides.html"  # the same with <aside>, which the first flattening keeps
AFTER_NEST = "/after-nest.html"  # linked only after the nests
ONE_LINE = "/ten-megabytes.html"  # ONE_LINE_BYTES with no line break
NUL_BYTES = "/nul-bytes.html"  # NUL and other C0 controls in the title, text, attributes
BASE_JAVASCRIPT = "/base/javascript.html"  # <base href="javascript:...">, relative and absolute links
BASE_FTP = "/base/ftp.html"  # <base href="ftp://...">
BASE_DATA = "/base/data.html"  # <base href="data:...">
BASE_TARGET = "/base/target.html"  # the one absolute http link of the base pages
REFRESH_A = "/refresh/a.html"  # refreshes to REFRESH_B
REFRESH_B = "/refresh/b.html"  # refreshes back to REFRESH_A
REFRESH_SELF = "/refresh/self.html"  # refreshes to itself
CHAIN = ("/chain/1.html", "/chain/2.html")  # HOME -> 1 -> 2 -> MANY_LINKS
MANY_LINKS = "/many-links.html"  # MANY_LINK_COUNT distinct links to /many/<n>.html


def charset_path(label: str) -> str:
    """The page declaring `label` (in its Content-Type) with bytes invalid in it."""
    return f"/charset/{label}.html"


def unknown_label_path(label: str, declared_in: str = "header") -> str:
    """The KOI8-R page whose declared `label` Python has no codec for;
    `declared_in` "header" (Content-Type) or "meta"."""
    return f"/label/{declared_in}/{label}.html"


NEST_DEPTH = 100_000
ONE_LINE_BYTES = 10 * 1000 * 1000
MANY_LINK_COUNT = 50_000
# Labels browsers know but Python has no codec for (x-user-defined), decode
# as U+FFFD only ("replacement": hz-gb-2312, iso-2022-kr), and one no one knows.
UNKNOWN_LABELS = ("x-user-defined", "hz-gb-2312", "iso-2022-kr", "foo-bar")
UNKNOWN_LABEL_TEXT = (
    "Москва - столица России, город федерального значения, административный центр "
    "Центрального федерального округа и центр Московской области, в состав которой не входит. "
    "Крупнейший по численности населения город России и её субъект. "
) * 3
UNKNOWN_LABEL_CODEC = "koi8-r"  # what those pages really are
NUL_TEXT = "Before\x00between\x00after, with a bell\x07 and an escape\x1b too."


def charset_labels() -> dict[str, str]:
    """One label per codec the charset module maps labels to: codec -> its shortest label."""
    labels: dict[str, str] = {}
    for label, codec in LABEL_TO_CODEC.items():
        if codec not in labels or len(label) < len(labels[codec]):
            labels[codec] = label
    return dict(sorted(labels.items()))


def invalid_bytes(codec: str) -> bytes:
    """Byte sequences `codec` cannot decode (a lone surrogate for UTF-16, a
    byte with no character in it for the others), or b"" when every byte
    is a character in it."""
    if codec.startswith("utf-16"):
        return "\ud800x".encode(codec, "surrogatepass")
    found = b""
    for value in range(0x80, 0x100):
        try:
            (bytes([value]) + b"  ").decode(codec)
        except UnicodeDecodeError:
            found += bytes([value])
    return found


def charset_page(codec: str, label: str) -> bytes:
    """A page in `codec` with its invalid bytes (invalid_bytes), the C0
    controls XML cannot hold, and, when no byte is invalid, every byte
    from 0x80 up, which must all decode."""
    def text(markup: str) -> bytes:
        return markup.encode(codec)

    invalid = invalid_bytes(codec) or (b"" if codec.startswith("utf-16") else bytes(range(0x80, 0x100)))
    # The footer spells the label's numbers: labels such as l2 and l4 differ
    # in digits alone, and their pages would otherwise have one text.
    return (text(f"<html><head><title>Bytes invalid in {label}</title></head><body><p>Here come bytes "
                 f"invalid in {label}: ") + invalid + text(" and controls \x01\x08\x1f, and the page goes on.</p>"
                                                            "<p>The last paragraph.</p>"
                                                            f"<footer>{digits_in_words(label)}</footer></body></html>"))


@dataclass(frozen=True)
class FaultPage:
    body: bytes
    content_type: str = "text/html"


def fault_pages(origin: str) -> dict[str, FaultPage]:
    """Every page the server answers, by path; `origin` is its http://address:port."""
    html = "text/html"
    pages: dict[str, FaultPage] = {}

    def add(path: str, markup: str | bytes, content_type: str = html) -> None:
        pages[path] = FaultPage(markup.encode("utf-8") if isinstance(markup, str) else markup, content_type)

    after = f'<p>After the nest comes the rest of the page.</p><a href="{AFTER_NEST}">after the nest</a>'
    # Each page's text is its own (the title is no part of it): the same
    # text twice would make one page a duplicate of the other.
    add(NESTED, "<html><head><title>Nested divs</title></head><body>" + "<div>" * NEST_DEPTH
        + "deep inside the divs" + "</div>" * NEST_DEPTH + after + "</body></html>")
    add(NESTED_MARKED, "<html><head><title>Nested asides</title></head><body>" + "<aside>" * NEST_DEPTH
        + "deep inside the asides" + "</aside>" * NEST_DEPTH + after + "</body></html>")
    add(AFTER_NEST, "<html><head><title>After the nest</title></head><body><p>Reached after the nest.</p>"
        "</body></html>")
    opening = b"<html><head><title>Ten megabytes on one line</title></head><body><p>"
    closing = b"</p></body></html>"
    words = b"ten megabytes on one line "
    filler = words * ((ONE_LINE_BYTES - len(opening) - len(closing)) // len(words) + 1)
    add(ONE_LINE, opening + filler[: ONE_LINE_BYTES - len(opening) - len(closing)] + closing)
    add(NUL_BYTES, f'<html><head><title>NUL\x00title</title><meta name="description" content="NUL\x00description">'
        f'</head><body class="a\x00b"><p>{NUL_TEXT}</p><p id="x\x00y">Second\x00paragraph.</p></body></html>')
    for codec, label in charset_labels().items():
        add(charset_path(label), charset_page(codec, label), f"{html}; charset={label}")
    # The footer makes each page's text its own: the same text twice would be a duplicate.
    koi8 = ("<html><head>{meta}<title>Страница</title></head><body><p>"
            + UNKNOWN_LABEL_TEXT + "</p><footer>{path}</footer></body></html>")
    for label in UNKNOWN_LABELS:
        path = unknown_label_path(label)
        add(path, koi8.format(meta="", path=path).encode(UNKNOWN_LABEL_CODEC), f"{html}; charset={label}")
    path = unknown_label_path("foo-bar", "meta")
    add(path, koi8.format(meta='<meta charset="foo-bar">', path=path).encode(UNKNOWN_LABEL_CODEC))
    links = ('<a href="relative.html">relative</a><a href="/rooted.html">rooted</a><a href="?query">query</a>'
             '<a href="javascript:alert(1)">script</a><a href="ftp://127.0.0.40/file">ftp</a>'
             f'<a href="{origin}{BASE_TARGET}">absolute</a>')
    for path, base in ((BASE_JAVASCRIPT, "javascript:alert(document.domain)//"),
                       (BASE_FTP, f"ftp://{ADDRESS}/pub/"), (BASE_DATA, "data:text/html,base")):
        add(path, f'<html><head><base href="{base}"><title>Base</title></head><body>{links}</body></html>')
    add(BASE_TARGET, "<html><head><title>Base target</title></head><body><p>Reached through a base.</p></body></html>")
    for path, content in ((REFRESH_A, f"0; url={REFRESH_B}"), (REFRESH_B, f"0;URL='{REFRESH_A}'"),
                          (REFRESH_SELF, "1; url=self.html")):
        add(path, f'<html><head><meta http-equiv="refresh" content="{content}"><title>Refresh</title></head>'
            f"<body><p>Refreshing {path}.</p></body></html>")
    chain = [*CHAIN, MANY_LINKS]
    for path, following in zip(chain, chain[1:]):
        add(path, f'<html><head><title>Chain</title></head><body><a href="{following}">next</a></body></html>')
    add(MANY_LINKS, "<html><head><title>Many links</title></head><body>"
        + "".join(f'<a href="/many/{n}.html">{n}</a>' for n in range(MANY_LINK_COUNT)) + "</body></html>")
    linked = [path for path in pages if path not in (REFRESH_B, AFTER_NEST, BASE_TARGET, MANY_LINKS, CHAIN[1])]
    add(HOME, "<html><head><title>Page faults</title></head><body>"
        + "".join(f'<a href="{path}">{path}</a>' for path in linked) + "</body></html>")
    return pages


class PageFaultServer:
    """Serves fault_pages() on ADDRESS (a free port), logging every request;
    any other path is a 404 (robots.txt too: everything is allowed).  Other
    hostile webs serve their own `pages` (a function of the origin) the same
    way, from an address of their own."""

    def __init__(self, address: str = ADDRESS, pages: Callable[[str], dict[str, FaultPage]] = fault_pages):
        owner = self
        self._log: list[LogEntry] = []
        self._lock = threading.Lock()
        self._active = 0

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True

            def do_GET(self) -> None:
                started = (time.monotonic(), time.time())
                owner._begin()
                page = owner.pages.get(self.path.split("?", 1)[0])
                status = 200 if page else 404
                body = page.body if page else b"<html><body><p>Not found</p></body></html>"
                completed = False
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", page.content_type if page else "text/html")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    completed = True
                except OSError:
                    pass  # the crawler cut a long page at max_page_bytes and hung up
                finally:
                    owner._end(LogEntry(
                        address=self.server.server_address[0], port=self.server.server_address[1], method="GET",
                        path=self.path, status=status, start=started[0], end=time.monotonic(),
                        start_wall=started[1], end_wall=time.time(), connection=id(self.connection),
                        user_agent=self.headers.get("User-Agent"), completed=completed))

            def log_message(self, *args) -> None:
                pass

        self._server = ThreadingHTTPServer((address, 0), Handler)
        self._server.daemon_threads = True
        self.address, self.port = self._server.server_address[:2]
        self.origin = f"http://{self.address}:{self.port}"
        self.pages = pages(self.origin)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return self.origin + path

    @property
    def url_allow(self) -> str:
        """A regex matching exactly this server's URLs."""
        return "^" + self.origin.replace(".", r"\.") + "/"

    @property
    def log(self) -> list[LogEntry]:
        with self._lock:
            return list(self._log)

    def wait_idle(self, timeout: float = 5.0) -> bool:
        """Wait (at most `timeout`) until no request is being answered."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                if not self._active:
                    return True
            time.sleep(0.01)
        return False

    def _begin(self) -> None:
        with self._lock:
            self._active += 1

    def _end(self, entry: LogEntry) -> None:
        with self._lock:
            self._active -= 1
            self._log.append(entry)

    def __enter__(self) -> PageFaultServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._server.shutdown()
        self._server.server_close()
