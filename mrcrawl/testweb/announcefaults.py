"""Announcement faults on loopback: feeds and sitemaps that go wrong.

A web of broken announcements, served whole with a 200 and a
Content-Length by a PageFaultServer (pagefaults.py) from an address of its
own, for a crawl whose seeds list them:
- TRUNCATED: a sitemap cut off inside its fourth entry; the three before
  the cut are followed;
- FEED_AS_TEXT, FEED_AS_HTML: an RSS 2.0 feed served as text/plain and an
  Atom feed served as text/html, recognised by their content;
- BIG: a sitemap of BIG_BYTES (10 MB) of entries, built so that byte
  BIG_CUT (the max_page_bytes to crawl with) falls inside an entry's URL;
  the body is cut there, and of the entries before the cut only the first
  BIG_FRESH are recent enough to follow;
- SELF_INDEX: a sitemap index listing itself and SELF_SITEMAP;
- NESTED: a chain of NESTED_DEPTH sitemap indexes, each listing the next;
- LAUGHS: a feed whose internal DTD nests entities ten deep ("billion
  laughs"), its second item's title naming the last: the first item is
  followed, what the second says is a fault;
- XXE: a feed whose external entity names a local file (`secret_file`),
  whose DTD is an external one on this server (XXE_DTD, never to be
  requested), and whose titles and a link name that entity.
Every entry a correct crawler follows is a small page without a title
(ARTICLES), so the page's XML takes the announced title: an entity
expanded in a title would show there.

    with announce_fault_server(secret_file) as server:
        seeds = [server.url(path) for path in SEEDS]
        ...
        server.wait_idle()
        server.log  # one LogEntry per request
"""

from __future__ import annotations

import email.utils
from datetime import datetime, timedelta, timezone
from pathlib import Path

from mrcrawl.testweb.markup import digits_in_words
from mrcrawl.testweb.pagefaults import FaultPage, PageFaultServer

ADDRESS = "127.0.0.41"  # beside the test web's 127.0.0.2 upwards and the page faults' .40

TRUNCATED = "/truncated/sitemap.xml"
FEED_AS_TEXT = "/text-plain/feed.xml"
FEED_AS_HTML = "/text-html/feed.xml"
BIG = "/big/sitemap.xml"
SELF_INDEX = "/self/index.xml"
SELF_SITEMAP = "/self/sitemap.xml"  # listed by SELF_INDEX beside itself
NESTED_DEPTH = 20
NESTED = tuple(f"/nested/{level}.xml" for level in range(NESTED_DEPTH))  # NESTED[k] lists NESTED[k + 1]
NESTED_SITEMAP = "/nested/sitemap.xml"  # listed by the last index of the chain
LAUGHS = "/laughs/feed.xml"
XXE = "/xxe/feed.xml"
XXE_DTD = "/xxe/external.dtd"  # the XXE feed's external DTD subset and parameter entity
SEEDS = (TRUNCATED, FEED_AS_TEXT, FEED_AS_HTML, BIG, SELF_INDEX, NESTED[0], LAUGHS, XXE)

TRUNCATED_ENTRIES = 4  # the last is cut off inside its <loc>
BIG_BYTES = 10 * 1000 * 1000
BIG_CUT = 1024 * 1024  # the max_page_bytes BIG is built for
BIG_FRESH = 3  # BIG's first entries are recent; the rest are dated OLD_DATE
OLD_DATE = "2001-01-01"
LAUGHS_LEVELS = 10  # entities lol0 ... lol9, each ten of the one before: 10**10 laughs
LAUGH = "lol"

SITEMAP_NS = "http://www.sitemaps.org/schemas/sitemap/0.9"
XML_DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>\n'


def truncated_entries() -> tuple[str, ...]:
    return tuple(f"/truncated/{n}.html" for n in range(1, TRUNCATED_ENTRIES + 1))


def big_entry(number: int) -> str:
    return f"/big/{number:06d}.html"


# The pages a correct crawler reaches from the announcements, by the
# announcement that lists them (SELF_INDEX lists itself too, NESTED[k] the
# next index: those are announcements, not pages).
ARTICLES = {
    TRUNCATED: truncated_entries()[:-1],
    FEED_AS_TEXT: ("/text-plain/1.html", "/text-plain/2.html"),
    FEED_AS_HTML: ("/text-html/1.html", "/text-html/2.html"),
    BIG: tuple(big_entry(number) for number in range(BIG_FRESH)),
    SELF_SITEMAP: ("/self/1.html",),
    LAUGHS: ("/laughs/1.html",),
    XXE: ("/xxe/1.html",),
}


def sitemap_xml(origin: str, paths: tuple[str, ...], date: str, root: str = "urlset") -> str:
    """A urlset (or, with root "sitemapindex", an index) listing `paths` of `origin`, each dated `date`."""
    element = "url" if root == "urlset" else "sitemap"
    entries = "".join(f"<{element}><loc>{origin}{path}</loc><lastmod>{date}</lastmod></{element}>\n"
                      for path in paths)
    return f'{XML_DECLARATION}<{root} xmlns="{SITEMAP_NS}">\n{entries}</{root}>\n'


def big_sitemap(origin: str, recent: str, cut: int = BIG_CUT) -> bytes:
    """About BIG_BYTES of urlset, every entry the same length; a comment
    after the root's start tag is padded so that byte `cut` falls in the
    middle of an entry's URL: a body cut there ends with half a URL."""
    def entry(number: int) -> str:
        date = recent if number < BIG_FRESH else OLD_DATE
        return f"<url><loc>{origin}{big_entry(number)}</loc><lastmod>{date}</lastmod></url>\n"

    length = len(entry(0))
    opening = f'{XML_DECLARATION}<urlset xmlns="{SITEMAP_NS}">\n<!---->\n'
    inside_url = len(f"<url><loc>{origin}/big/00")
    padding = (cut - len(opening) - inside_url) % length
    opening = opening.replace("<!---->", "<!--" + " " * padding + "-->")
    closing = "</urlset>\n"
    count = (BIG_BYTES - len(opening) - len(closing)) // length
    return (opening + "".join(entry(number) for number in range(count)) + closing).encode("ascii")


def rss_item(origin: str, path: str, title: str, published: str) -> str:
    return (f"<item><title>{title}</title><link>{origin}{path}</link>"
            f"<description>{title}</description><pubDate>{published}</pubDate></item>")


def rss(origin: str, items: str, doctype: str = "", title: str = "Announcements") -> str:
    return (f"{XML_DECLARATION}{doctype}<rss version=\"2.0\"><channel><title>{title}</title>"
            f"<link>{origin}/</link><description>{title}</description><language>en</language>"
            f"{items}</channel></rss>\n")


def laughs_doctype() -> str:
    """The billion laughs: lol0 is LAUGH, each next one ten of the one before.
    No run of two laughs is in the document itself: one in a crawl's
    output is an expansion."""
    entities = [f'<!ENTITY lol0 "{LAUGH}">']
    entities += [f'<!ENTITY lol{level} "' + f"&lol{level - 1};" * 10 + '">' for level in range(1, LAUGHS_LEVELS)]
    return "<!DOCTYPE rss [\n" + "\n".join(entities) + "\n]>\n"


def xxe_doctype(origin: str, secret_file: Path) -> str:
    return (f'<!DOCTYPE rss SYSTEM "{origin}{XXE_DTD}" [\n'
            f'<!ENTITY secret SYSTEM "{secret_file.resolve().as_uri()}">\n'
            f'<!ENTITY % remote SYSTEM "{origin}{XXE_DTD}">\n%remote;\n]>\n')


def article(path: str) -> str:
    """A page an announcement lists: no title (the XML takes the announced
    one), and a text of its own (digits alone would not tell pages apart)."""
    return (f"<html><head></head><body><p>The article at {digits_in_words(path)}, "
            "reached through a broken announcement.</p></body></html>")


def announce_pages(origin: str, secret_file: Path, now: datetime) -> dict[str, FaultPage]:
    """Every page the server answers, by path.  Dates are a day before `now`,
    but BIG's old ones; `secret_file` is what XXE's external entity names."""
    day_before = now - timedelta(days=1)
    recent = day_before.strftime("%Y-%m-%d")
    published = email.utils.format_datetime(day_before.astimezone(timezone.utc), usegmt=True)
    xml = "application/xml"
    pages: dict[str, FaultPage] = {}

    def add(path: str, text: str | bytes, content_type: str = xml) -> None:
        pages[path] = FaultPage(text.encode("utf-8") if isinstance(text, str) else text, content_type)

    whole = sitemap_xml(origin, truncated_entries(), recent)
    add(TRUNCATED, whole[: whole.index(truncated_entries()[-1]) + len("/truncated/")])
    items = "".join(rss_item(origin, path, f"Plain text {n}", published)
                    for n, path in enumerate(ARTICLES[FEED_AS_TEXT], 1))
    add(FEED_AS_TEXT, rss(origin, items), "text/plain; charset=utf-8")
    updated = day_before.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    entries = "".join(f'<entry><title>Atom as HTML {n}</title><link href="{origin}{path}"/>'
                      f"<id>{origin}{path}</id><updated>{updated}</updated></entry>"
                      for n, path in enumerate(ARTICLES[FEED_AS_HTML], 1))
    add(FEED_AS_HTML, f'{XML_DECLARATION}<feed xmlns="http://www.w3.org/2005/Atom"><title>Atom as HTML</title>'
        f"<id>{origin}{FEED_AS_HTML}</id><updated>{updated}</updated>{entries}</feed>\n", "text/html; charset=utf-8")
    add(BIG, big_sitemap(origin, recent))
    add(SELF_INDEX, sitemap_xml(origin, (SELF_INDEX, SELF_SITEMAP), recent, "sitemapindex"))
    add(SELF_SITEMAP, sitemap_xml(origin, ARTICLES[SELF_SITEMAP], recent))
    for index, listed in zip(NESTED, [*NESTED[1:], NESTED_SITEMAP]):
        add(index, sitemap_xml(origin, (listed,), recent, "sitemapindex"))
    add(NESTED_SITEMAP, sitemap_xml(origin, ("/nested/deep.html",), recent))
    items = (rss_item(origin, ARTICLES[LAUGHS][0], "Before the laughs", published)
             + rss_item(origin, "/laughs/2.html", f"&lol{LAUGHS_LEVELS - 1};", published))
    add(LAUGHS, rss(origin, items, laughs_doctype()))
    items = (rss_item(origin, ARTICLES[XXE][0], "&secret;", published)
             + rss_item(origin, "/xxe/&secret;.html", "The secret in a link", published))
    add(XXE, rss(origin, items, xxe_doctype(origin, secret_file), "&secret;"))
    add(XXE_DTD, '<!ENTITY leaked "fetched from the network">\n', "application/xml-dtd")
    for path in [path for paths in ARTICLES.values() for path in paths] + ["/nested/deep.html"]:
        add(path, article(path), "text/html; charset=utf-8")
    return pages


def announce_fault_server(secret_file: Path, now: datetime | None = None) -> PageFaultServer:
    """A PageFaultServer on ADDRESS serving announce_pages(), dated from `now`
    (the time of the crawl to come: by default, the present)."""
    moment = now or datetime.now(timezone.utc)
    return PageFaultServer(ADDRESS, lambda origin: announce_pages(origin, secret_file, moment))
