"""The content of the test web: which host serves which pages, and why.

Every host has a role. The special hosts hold the cases the crawler contract
talks about (robots.txt variants, redirects, errors, charsets, meta robots,
tricky links); the news hosts hold ordinary articles whose link graph reaches
new pages on every layer up to 5. Links are written in the HTML in varied
forms, while each page records, by hand, the canonical URLs a correct link
extractor must produce from them.
"""

from __future__ import annotations

import dataclasses
import gzip
import html
import posixpath
import random
from dataclasses import dataclass
from urllib.parse import urlsplit

from . import texts
from .markup import TINY_PDF, Link, digits_in_words, document, query_escape, tiny_png
from .model import AGENT_TOKEN, OFFSITE_ADDRESSES, Host, Page, Robots, RobotsGroup, Web, origin_of

# Roles of the first hosts, in address order (127.0.0.2, .3, ...). Every host
# after these is a news host.
SPECIAL_ROLES = ("hub", "charsets-cjk", "robots-500", "plain", "errors", "meta", "charsets-world")
MIN_HOSTS = len(SPECIAL_ROLES) + 1

ROBOTS = {
    # Our own group overrides `*` entirely: /search is allowed for us, and the
    # Allow line re-opens one page under the disallowed /private/.
    "hub": Robots(200, (
        RobotsGroup(("*",), disallow=("/search",)),
        RobotsGroup((AGENT_TOKEN,), allow=("/private/open.html",), disallow=("/private/",), crawl_delay=0.2),
        RobotsGroup(("otherbot",), disallow=("/",)),
    )),
    "charsets-cjk": Robots(404),  # 4xx: everything allowed
    "robots-500": Robots(500),  # 5xx: everything denied
    "plain": Robots(200, (RobotsGroup(("*",)),)),  # no rules at all
    "errors": Robots(200, (RobotsGroup(("*",), disallow=("/members/",), crawl_delay=0.3),)),
    # Only another robot is shut out; no group applies to us.
    "meta": Robots(200, (RobotsGroup(("otherbot",), disallow=("/",)),)),
    "charsets-world": Robots(200, (RobotsGroup(("*",), disallow=("/drafts/",)),)),
    "news": Robots(200, (RobotsGroup(("*",), disallow=("/admin/",)),)),
    "popular": Robots(200, (RobotsGroup(("*",)),)),
    "farm": Robots(200, (RobotsGroup(("*",)),)),
}

# The hosts a web with a link farm adds after its news hosts (generate's link_farm).
LINK_FARM_ROLES = ("popular", "farm")
# The popular site's main pages, which every other site's home page links,
# and its stories: STORIES_PER_PAGE linked from each main page.
POPULAR_PAGES = ("/", "/world.html", "/sport.html")
STORIES_PER_PAGE = 10
# Each page /farm/N of the link farm links the next FARM_FANOUT: /farm/(5N+1) .. /farm/(5N+5).
FARM_FANOUT = 5

# The charset pages: WHATWG label, text, language, and the host role serving them.
CHARSET_PAGES = (
    ("gb2312", texts.SIMPLIFIED_CHINESE, "zh-CN", "charsets-cjk"),
    ("gbk", texts.GBK_CHINESE, "zh-CN", "charsets-cjk"),
    ("gb18030", texts.GB18030_CHINESE, "zh-CN", "charsets-cjk"),
    ("big5", texts.TRADITIONAL_CHINESE, "zh-TW", "charsets-cjk"),
    ("shift_jis", texts.JAPANESE_SHIFT_JIS, "ja", "charsets-cjk"),
    ("euc-jp", texts.JAPANESE_EUC_JP, "ja", "charsets-cjk"),
    ("euc-kr", texts.KOREAN, "ko", "charsets-cjk"),
    ("windows-1251", texts.RUSSIAN_NEWS, "ru", "charsets-world"),
    ("koi8-r", texts.RUSSIAN_WEATHER, "ru", "charsets-world"),
    ("windows-1256", texts.ARABIC, "ar", "charsets-world"),
    ("utf-8", texts.MIXED_UTF8, "mul", "charsets-world"),
)

# How many articles are first reached on layers 1, 2, 3, 4 and 5.
ARTICLES_PER_LAYER = (8, 12, 12, 10, 6)

OVERSIZED_BYTES = 3 * 1024 * 1024

# Vocabulary for article text: plain English so that nothing but the link
# graph and the markup varies with the seed.
SUBJECTS = ("The city council", "Local farmers", "The harbour authority", "A group of students",
            "Rail engineers", "The regional museum", "Volunteers", "The weather service",
            "Small shop owners", "The football club", "The school board", "Fishermen")
VERBS = ("approved", "announced", "postponed", "celebrated", "criticised", "discussed",
         "completed", "proposed", "welcomed", "questioned")
OBJECTS = ("a new ferry timetable", "plans for a cycle path", "the spring festival",
           "repairs to the old bridge", "a cheaper bus pass", "the restoration of the town hall",
           "a river clean-up day", "longer library hours", "a night market", "the new stadium roof",
           "a solar farm", "free swimming lessons")
SECTIONS = ("news", "sport", "culture", "science", "business", "local")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
MONTHS = ("March", "April", "May", "June", "September", "October")


@dataclass
class ArticlePlan:
    """An article before rendering: its links grow while the graph is planned."""

    host: Host
    url: str
    layer: int
    title: str
    paragraphs: tuple[str, ...]
    links: list[str]
    nofollow: str | None = None  # a comments page linked with rel=nofollow


class WebBuilder:
    """Builds the pages of one web; everything random comes from one seeded RNG."""

    def __init__(self, seed: int, hosts: int, port: int, stall_seconds: float, extra_roles: tuple[str, ...] = ()):
        if hosts < MIN_HOSTS + len(extra_roles):
            raise ValueError(f"the test web needs at least {MIN_HOSTS + len(extra_roles)} hosts, got {hosts}")
        if not 0 < port < 65536:
            raise ValueError(f"bad port {port}")
        self.port = port
        self.stall = stall_seconds
        self.rng = random.Random(seed)
        roles = SPECIAL_ROLES + ("news",) * (hosts - len(SPECIAL_ROLES) - len(extra_roles)) + extra_roles
        self.hosts = tuple(
            Host(address=f"127.0.0.{2 + i}", port=port, role=role, robots=ROBOTS[role])
            for i, role in enumerate(roles)
        )
        self.by_role = {host.role: host for host in self.hosts if host.role != "news"}
        self.news = [host for host in self.hosts if host.role == "news"]
        self.pages: dict[str, Page] = {}
        self.wanted: set[str] = set()  # every URL something links or redirects to
        self.missing: set[str] = set()  # linked on purpose, but answers 404
        self.home_links: list[Link] = []  # what every home page links besides its own links, but on their host
        self.added_links: dict[str, list[Link]] = {}  # page URL -> links it has besides its own
        self.made_on_request: dict = {}  # origin -> its pages' maker (Web.made_on_request)

    def role(self, name: str) -> Host:
        return self.by_role[name]

    # -- adding pages --------------------------------------------------------

    def add(self, page: Page) -> Page:
        if page.url in self.pages:
            raise ValueError(f"page defined twice: {page.url}")
        self.pages[page.url] = page
        return page

    def add_html(self, url: str, kind: str, title: str, paragraphs=(), links=(), *, lang="en",
                 head="", body_extra="", charset="utf-8", declared="header", meta_style="charset",
                 direction=None, inert_text=(), **fields) -> Page:
        """An HTML page whose charset is declared in the header, a meta tag,
        both (disagreeing: the header must win), a BOM, or nowhere.
        `inert_text`: the labels of links that go nowhere, which the main
        text holds after the paragraphs."""
        meta = ""
        if declared in ("meta", "header-over-meta"):
            meta_label = "windows-1251" if declared == "header-over-meta" else charset
            meta = (f'<meta charset="{meta_label}">\n' if meta_style == "charset" else
                    f'<meta http-equiv="Content-Type" content="text/html; charset={meta_label}">\n')
        links = [*links, *self.added_links.get(url, ()),
                 *(link for link in self.home_links if kind == "home" and origin_of(link.expected) != origin_of(url))]
        text = document(title, paragraphs, links, lang=lang, head=meta + head,
                        body_extra=body_extra, direction=direction)
        body = text.encode(charset)  # Python knows every label used
        if declared == "bom":
            body = b"\xef\xbb\xbf" + body
        in_header = declared in ("header", "header-over-meta")
        fields.setdefault("content_type", f"text/html; charset={charset}" if in_header else "text/html")
        for link in links:
            if link.expected:
                self.wanted.add(link.expected)
        first: dict[str, str | None] = {}
        for link in links:
            if link.followed:
                first.setdefault(link.expected, link.anchor)
        followed, anchors = tuple(first), tuple(first.values())
        return self.add(Page(url=url, kind=kind, body=body, links=followed, anchors=anchors, charset=charset,
                             declared=declared, title=title, paragraphs=(*paragraphs, *inert_text),
                             text=text, **fields))

    def add_redirect(self, url: str, status: int, location: str, target: str, note: str) -> Page:
        """A 3xx answer; `location` is the header as sent, `target` its canonical form."""
        self.wanted.add(target)
        body = b"<!DOCTYPE html><html><head><title>Moved</title></head><body><p>Moved.</p></body></html>"
        return self.add(Page(url=url, kind="redirect", status=status, body=body,
                             headers=(("Location", location),), redirect_to=target, note=note))

    def add_status(self, url: str, kind: str, status: int, note: str) -> Page:
        body = f"<!DOCTYPE html><html><head><title>{status}</title></head><body><p>{note}</p></body></html>"
        return self.add(Page(url=url, kind=kind, status=status, body=body.encode(), note=note))

    def fill_leaves(self) -> None:
        """Give every linked URL on a served host a page, unless it is meant
        to be missing: a crawler that resolves a link wrongly then requests a
        URL the oracle never lists, instead of getting a 404 either way."""
        origins = {host.origin for host in self.hosts} - set(self.made_on_request)
        for url in sorted(self.wanted - self.missing - set(self.pages)):
            parts = urlsplit(url)
            if f"{parts.scheme}://{parts.netloc}" in origins:
                # The footer spells the path's numbers: leaves whose paths
                # differ in numbers alone would otherwise have one text.
                footer = f"<footer>{html.escape(digits_in_words(parts.path))}</footer>\n"
                self.add_html(url, "leaf", f"Leaf {parts.path}", ("A page that links point to.",),
                              (Link("/", f"{parts.scheme}://{parts.netloc}/", "home"),), body_extra=footer)

    def add_robots_files(self) -> None:
        for host in self.hosts:
            self.add(Page(url=host.url("/robots.txt"), kind="robots", status=host.robots.status,
                          content_type="text/plain", body=host.robots.body, note="robots.txt"))

    # -- link spelling -------------------------------------------------------

    def href_for(self, target: str, page_url: str) -> str:
        """A randomly chosen, equivalent way to write a link to canonical
        `target` on the page at `page_url`."""
        t, p = urlsplit(target), urlsplit(page_url)
        path_query = t.path + (f"?{t.query}" if t.query else "")
        forms = ["absolute", "scheme-relative", "upper-scheme"]
        if t.netloc == p.netloc:
            forms += ["root", "root"]
            if not t.query and not t.path.endswith("/"):
                forms += ["relative", "relative"]
        form = self.rng.choice(forms)
        if form == "absolute":
            href = target
        elif form == "scheme-relative":
            href = f"//{t.netloc}{path_query}"
        elif form == "upper-scheme":
            href = f"HTTP://{t.netloc}{path_query}"
        elif form == "root":
            href = path_query
        else:
            href = posixpath.relpath(t.path, posixpath.dirname(p.path))
        if self.rng.random() < 0.15:
            href += "#comments"  # a fragment never changes the target
        return href

    def links_to(self, targets, page_url: str) -> list[Link]:
        return [Link(self.href_for(t, page_url), t, urlsplit(t).path) for t in targets]


# -- the hosts ---------------------------------------------------------------

def build_hub(b: WebBuilder, articles: list[str]) -> None:
    """127.0.0.2: a seed home page linking every other host, robots.txt rules
    for our own agent, and redirects that leave the host or hit robots.txt."""
    hub = b.role("hub")
    cjk, denied, world = b.role("charsets-cjk"), b.role("robots-500"), b.role("charsets-world")
    go = [
        ("/go/cjk", 301, cjk.url("/moved/welcome.html"), cjk.url("/moved/welcome.html"),
         "cross-host: the target enters the next layer"),
        ("/go/offsite", 302, f"http://{OFFSITE_ADDRESSES[0]}:{b.port}/gone.html",
         f"http://{OFFSITE_ADDRESSES[0]}:{b.port}/gone.html", "cross-host to a host the filters reject"),
        ("/go/secure", 302, f"https://{hub.address}:{b.port}/secure.html",
         f"https://{hub.address}:{b.port}/secure.html", "another scheme is another host key"),
        ("/go/private", 302, "/private/hidden.html", hub.url("/private/hidden.html"),
         "same host, into a path robots.txt disallows"),
        ("/go/robots500", 301, f"//{denied.address}:{b.port}/moved.html", denied.url("/moved.html"),
         "scheme-relative Location to a host whose robots.txt fails"),
        ("/go/news", 307, b.news[0].url("/"), b.news[0].url("/"),
         "cross-host to a seed: its target was attempted already"),
        ("/go/late", 301, world.url("/moved/late.html"), world.url("/moved/late.html"),
         "linked from a layer-2 article: its target appears on layer 4"),
    ]
    for path, status, location, target, note in go:
        b.add_redirect(hub.url(path), status, location, target, note)
    homes = [h.url("/") for h in b.hosts if h is not hub and h.role not in LINK_FARM_ROLES]
    specials = [hub.url(p) for p in ("/private/open.html", "/private/secret.html", "/search?q=crawler")]
    specials += [hub.url(path) for path, *_ in go if path != "/go/late"]
    links = b.links_to(homes + specials + articles, hub.url("/"))
    links.append(Link(f"http://{OFFSITE_ADDRESSES[1]}:{b.port}/",
                      f"http://{OFFSITE_ADDRESSES[1]}:{b.port}/", "a host the filters reject"))
    b.add_html(hub.url("/"), "home", "Test web hub",
               ("The hub links every host of the test web.",), links, note="seed")
    b.add_html(hub.url("/private/open.html"), "leaf", "Open private page",
               ("robots.txt re-opens this page with an Allow line.",),
               b.links_to([hub.url("/private/next.html")], hub.url("/private/open.html")))
    b.add_html(hub.url("/search?q=crawler"), "leaf", "Search",
               ("Disallowed for *, but our own group does not disallow it.",))


def build_charsets(b: WebBuilder) -> None:
    """Pages in eleven charsets, each declared in the header, in a meta tag,
    and not at all; they link a query in their own encoding."""
    for number, (label, text, lang, role) in enumerate(CHARSET_PAGES):
        host = b.role(role)
        query_target = host.url(f"/text/{label}/search.html?q={query_escape(text.query, label)}")
        variants = ["header", "meta", "none"]
        if label == "utf-8":
            variants.append("bom")
        if label == "koi8-r":
            variants.append("header-over-meta")
        for declared in variants:
            url = host.url(f"/text/{label}/{declared}.html")
            links = [Link("/", host.url("/"), "home"),
                     Link(f"search.html?q={text.query}", query_target, text.query)]
            if label == "gbk" and declared == "header":
                # The path is UTF-8 percent-encoded whatever the page's charset.
                links.append(Link("中文页.html", host.url("/text/gbk/%E4%B8%AD%E6%96%87%E9%A1%B5.html"), "中文页"))
            # The variant is named in the page's footer, so that no two
            # variants have the same text: a crawler would take one for a
            # duplicate of the other.  (A footer is not main text.)
            b.add_html(url, "charset", text.title, text.paragraphs, links, lang=lang, charset=label,
                       body_extra=f"<footer>Charset declared: {declared}.</footer>\n",
                       declared=declared, meta_style="charset" if number % 2 else "http-equiv",
                       direction="rtl" if lang == "ar" else None,
                       note=f"{label} declared: {declared}")
        # The query's page is named by the word it asks for, not by the
        # label: gb2312 and gb18030 differ in digits alone, which a crawler
        # does not read in a page's text.
        b.add_html(query_target, "leaf", f"Search for {text.query}", ("A page that links point to.",),
                   (Link("/", host.url("/"), "home"),))


def charset_pages_on(b: WebBuilder, host: Host) -> list[str]:
    return [page.url for page in b.pages.values() if page.kind == "charset" and page.url.startswith(host.origin + "/")]


def build_cjk(b: WebBuilder) -> None:
    """127.0.0.3: CJK charset pages; robots.txt answers 404 (allow all)."""
    host = b.role("charsets-cjk")
    b.add_html(host.url("/"), "home", "CJK pages", ("Pages in Chinese, Japanese and Korean charsets.",),
               b.links_to(charset_pages_on(b, host), host.url("/")))
    b.add_html(host.url("/moved/welcome.html"), "leaf", "Welcome", ("Reached through a cross-host redirect.",))


def build_denied(b: WebBuilder) -> None:
    """127.0.0.4: robots.txt answers 500, so every page is robots_denied."""
    host = b.role("robots-500")
    for path in ("/", "/page.html", "/moved.html"):
        b.add_html(host.url(path), "leaf", "Unreachable", ("robots.txt fails on this host.",))


def build_plain(b: WebBuilder, articles: list[str]) -> None:
    """127.0.0.5: a seed with no robots rules: tricky links, frames, non-HTML,
    an oversized page, gzip, XHTML, a page that stalls mid-body."""
    host = b.role("plain")
    build_link_torture(b, host)
    b.add(Page(url=host.url("/guide/frames.html"), kind="frames", title="Frames",
               body=(b'<!DOCTYPE html>\n<html><head><title>Frames</title></head>\n'
                     b'<frameset cols="50%,50%"><frame src="frame-left.html">'
                     b'<frame src="/guide/frame-right.html"></frameset>\n</html>\n'),
               links=(host.url("/guide/frame-left.html"), host.url("/guide/frame-right.html")),
               charset="utf-8", declared="header"))
    b.wanted.update({host.url("/guide/frame-left.html"), host.url("/guide/frame-right.html")})
    trap = host.url("/trap/from-text.html")
    binaries = [
        ("/files/logo.png", "image/png", tiny_png()),
        ("/files/report.pdf", "application/pdf", TINY_PDF),
        ("/files/notes.txt", "text/plain; charset=utf-8",
         f'Plain text is not parsed for links: <a href="{trap}">trap</a>\n'.encode()),
        ("/api/data.json", "application/json", f'{{"links": ["{trap}"]}}\n'.encode()),
        ("/files/large.bin", "application/octet-stream", b.rng.randbytes(OVERSIZED_BYTES)),
    ]
    for path, content_type, body in binaries:
        b.add(Page(url=host.url(path), kind="binary", content_type=content_type, body=body))
    xhtml = (
        '<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html>\n'
        '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><title>XHTML page</title></head>\n'
        '<body><h1>XHTML page</h1><p>Served as application/xhtml+xml.</p>\n'
        '<p><a href="xhtml-link.html">a link</a></p></body></html>\n'
    )
    b.add(Page(url=host.url("/doc/page.xhtml"), kind="xhtml", content_type="application/xhtml+xml",
               body=xhtml.encode(), links=(host.url("/doc/xhtml-link.html"),), charset="utf-8",
               declared="xml-declaration", title="XHTML page", paragraphs=("Served as application/xhtml+xml.",),
               text=xhtml))
    b.wanted.add(host.url("/doc/xhtml-link.html"))
    build_oversized(b, host)
    gz = b.add_html(host.url("/gzip/page.html"), "gzip", "Compressed page",
                    ("Sent with Content-Encoding: gzip.",),
                    [Link("inside.html", host.url("/gzip/inside.html"))])
    b.pages[gz.url] = dataclasses.replace(gz, gzip_body=gzip.compress(gz.body, mtime=0))
    b.add_html(host.url("/case/content-type.html"), "leaf", "Upper-case media type",
               ("The Content-Type is written in mixed case.",),
               [Link("inside.html", host.url("/case/inside.html"))],
               content_type="Text/HTML; Charset=UTF-8")
    b.add_html(host.url("/slow-body.html"), "slow", "Stalls mid-body", ("Headers come at once.",),
               [Link("after-slow-body.html", host.url("/after-slow-body.html"))],
               stall=b.stall, stall_after_headers=True, note="stalls after the headers")
    specials = ["/guide/links/page.html", "/guide/frames.html", "/doc/page.xhtml", "/big/page.html",
                "/gzip/page.html", "/case/content-type.html", "/slow-body.html"]
    specials += [path for path, *_ in binaries]
    links = b.links_to([host.url(p) for p in specials] + articles, host.url("/"))
    links += build_calendar(b, host)
    b.add_html(host.url("/"), "home", "Plain host", ("No robots.txt rules here.",), links, note="seed")


# The calendar trap (build_calendar): how far each of its chains runs.
CALENDAR_MONTHS = 120  # the month chain: ten years, far beyond any crawl of the test web
CALENDAR_PATH_LEVELS = 12  # the path chain: /cal/x/ to /cal/x/.../x/, x twelve times
CALENDAR_AGENDA_PAGES = 12  # the agenda chain: 10 query parameters on its first page, 21 on its last
CALENDAR_SHARE_PAGES = 6  # the share chain: its last URL is still under 2,048 characters, which links may have
CALENDAR_SHARE_STEP = 300  # characters each page of the share chain adds to its state
# The agenda's first page: its month, then what a tagged newsletter link carries.
CALENDAR_AGENDA_QUERY = ("view=agenda", "lang=en", "region=all", "category=all", "sort=date", "utm_source=home",
                         "utm_medium=web", "utm_campaign=events", "utm_content=calendar")
MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
               "October", "November", "December")


def calendar_month(number: int) -> tuple[str, str]:
    """The calendar's month `number` (0: January 2025): as its query says it, and in words."""
    year, month = divmod(number, 12)
    return f"{2025 + year}-{month + 1:02d}", f"{MONTH_NAMES[month]} {digits_in_words(str(2025 + year))}"


def build_calendar(b: WebBuilder, host: Host) -> list[Link]:
    """A calendar trap on the plain host: chains of pages that never end, or
    end far beyond any crawl, each page linking the next.  Returns the home
    page's links to the first page of each chain (layer 1 of a crawl).

    - /cal/?month=2025-01, each month linking the next: ordinary URLs, which
      no trap guard catches: only the crawl's depth stops it;
    - /cal/x/, linking the relative x/ (/cal/x/x/, ...): a path that repeats
      a segment on every link; max_path_repeats (3) stops it, at /cal/x/x/x/x/;
    - /cal/agenda?month=...: each next month keeps the page's query and adds
      a `from` parameter; max_query_params (12) stops it at 13 parameters;
    - /cal/share?state=...: a view state that grows on every link;
      max_url_length (1,024) stops it at its fourth page.

    With the config's defaults each guard catches its chain on a page of
    layer 3 (a crawl of depth 4 records them `trapped`), and no page here
    repeats another's text (their words differ, not only their digits).
    """
    cal = host.url("/cal/")
    agenda = f"{cal}agenda?" + "&".join([f"month={calendar_month(0)[0]}", *CALENDAR_AGENDA_QUERY])
    firsts = [f"{cal}?month={calendar_month(0)[0]}", f"{cal}x/", agenda, f"{cal}share?state={share_state(1)}"]
    for number in range(CALENDAR_MONTHS):
        query, words = calendar_month(number)
        more = ([Link(f"?month={calendar_month(number + 1)[0]}", f"{cal}?month={calendar_month(number + 1)[0]}",
                      "next month")] if number + 1 < CALENDAR_MONTHS else [])
        b.add_html(f"{cal}?month={query}", "calendar", f"Events in {words}", ("No event is listed this month.",),
                   [Link("/", host.url("/"), "home"), *more], note="the month chain: only the depth ends it")
    for level in range(1, CALENDAR_PATH_LEVELS + 1):
        more = [Link("x/", cal + "x/" * (level + 1), "this view")] if level < CALENDAR_PATH_LEVELS else []
        b.add_html(cal + "x/" * level, "calendar", f"Calendar view, level {digits_in_words(str(level))}",
                   ("A relative link adds a level on every page.",), [Link("/", host.url("/"), "home"), *more],
                   note="the path chain: x repeated on every link")
    query = agenda.split("?", 1)[1].split("&")
    for page in range(CALENDAR_AGENDA_PAGES):
        following = "&".join([f"month={calendar_month(page + 1)[0]}", *query[1:], f"from={calendar_month(page)[0]}"])
        more = ([Link(f"?{following}", f"{cal}agenda?{following}", "next month")]
                if page + 1 < CALENDAR_AGENDA_PAGES else [])
        b.add_html(f"{cal}agenda?{'&'.join(query)}", "calendar", f"Agenda for {calendar_month(page)[1]}",
                   ("The agenda keeps every filter it was reached with.",), [Link("/", host.url("/"), "home"), *more],
                   note="the agenda chain: a parameter more on every link")
        query = following.split("&")
    for page in range(1, CALENDAR_SHARE_PAGES + 1):
        more = ([Link(f"?state={share_state(page + 1)}", f"{cal}share?state={share_state(page + 1)}", "share")]
                if page < CALENDAR_SHARE_PAGES else [])
        b.add_html(f"{cal}share?state={share_state(page)}", "calendar",
                   f"Shared calendar, part {digits_in_words(str(page))}", ("The view's state is in its URL.",),
                   [Link("/", host.url("/"), "home"), *more], note="the share chain: a longer URL on every link")
    return [Link(url[len(host.origin):], url, "calendar") for url in firsts]


def share_state(page: int) -> str:
    """The share chain's state on its page `page`: letters, CALENDAR_SHARE_STEP more a page."""
    return "".join("abcdefghijklmnopqrstuvwxyz"[(index * 7 + page) % 26] for index in range(page * CALENDAR_SHARE_STEP))


def build_oversized(b: WebBuilder, host: Host) -> None:
    """3 MB of HTML, links only at the top so truncation keeps them."""
    url = host.url("/big/page.html")
    head = document("Oversized page", ("Much bigger than max_page_bytes.",),
                    [Link("after.html", host.url("/big/after.html"))])
    head = head.replace("</body>\n</html>\n", "")
    filler, number = [], 0
    size = len(head)
    while size < OVERSIZED_BYTES:
        line = f"<p>Filler paragraph {number}: the quick brown fox jumps over the lazy dog.</p>\n"
        filler.append(line)
        size += len(line)
        number += 1
    text = head + "".join(filler) + "</body>\n</html>\n"
    b.wanted.add(host.url("/big/after.html"))
    b.add(Page(url=url, kind="oversized", body=text.encode(), links=(host.url("/big/after.html"),),
               charset="utf-8", declared="header", title="Oversized page",
               paragraphs=("Much bigger than max_page_bytes.",), text=text))


def build_link_torture(b: WebBuilder, host: Host) -> None:
    """One page of hrefs that only a WHATWG-conformant resolver gets right."""
    here = host.url("/guide/links/page.html")
    o, port = host.origin, b.port
    world = b.role("charsets-world")
    w, wa = world.origin, world.address
    hex_world = "0X7F.0.0." + wa.rsplit(".", 1)[1]  # WHATWG reads 0X7F as 127
    links = [
        Link("x.html", f"{o}/guide/links/x.html", "relative"),
        Link("./y.html", f"{o}/guide/links/y.html", "dot-relative"),
        Link("../z.html", f"{o}/guide/z.html", "parent-relative"),
        Link("/a/../b.html", f"{o}/b.html", "dot segments in a root path"),
        Link("?q=1", f"{here}?q=1", "query only"),
        Link(f"//{wa}:{port}/from-scheme-relative.html", f"{w}/from-scheme-relative.html", "scheme-relative"),
        Link("#top", here, "fragment only: this page"),
        Link("x.html#frag", f"{o}/guide/links/x.html", "fragment dropped"),
        Link("mailto:editor@example.invalid", None, "mailto"),
        Link("javascript:void(0)", None, "javascript"),
        Link("JavaScript:history.back()", None, "javascript, mixed case"),
        Link("tel:+15550100", None, "tel"),
        Link(f"ftp://{host.address}/pub/file.txt", None, "ftp"),
        Link("data:text/html,<b>hi</b>", None, "data"),
        Link("  spaced.html  ", f"{o}/guide/links/spaced.html", "surrounding spaces"),
        Link("tab\tbed.html", f"{o}/guide/links/tabbed.html", "embedded tab"),
        Link("new\nline.html", f"{o}/guide/links/newline.html", "embedded newline"),
        Link("\\guide\\back.html", f"{o}/guide/back.html", "backslashes"),
        Link("..\\up.html", f"{o}/guide/up.html", "backslash after dot-dot"),
        Link(f"HTTP://{wa}:{port}/Upper/Case.html", f"{w}/Upper/Case.html", "upper-case scheme"),
        Link(f"http://{hex_world}:{port}/hex-host.html", f"{w}/hex-host.html", "hexadecimal IPv4 part"),
        Link("../%7euser/page%2Dtwo.html", f"{o}/guide/~user/page-two.html", "encoded unreserved"),
        Link("%41%42c.html", f"{o}/guide/links/ABc.html", "encoded letters"),
        Link("a%2fb.html", f"{o}/guide/links/a%2Fb.html", "encoded slash stays encoded"),
        Link("caf%c3%a9-lower.html", f"{o}/guide/links/caf%C3%A9-lower.html", "lower-case hex"),
        Link("with space.html", f"{o}/guide/links/with%20space.html", "space in path"),
        Link("café.html", f"{o}/guide/links/caf%C3%A9.html", "non-ASCII path"),
        Link("list.html?b=2&a=1", f"{o}/guide/links/list.html?b=2&a=1", "query order kept"),
        Link("/../../above-root.html", f"{o}/above-root.html", "dot-dot above the root"),
        Link("%2e%2e/dotdot-encoded.html", f"{o}/guide/dotdot-encoded.html", "encoded dot-dot"),
        Link("./sub/./deeper/../leaf.html", f"{o}/guide/links/sub/leaf.html", "mixed dot segments"),
        Link("http:scheme-relative.html", f"{o}/guide/links/scheme-relative.html", "same scheme, no slashes"),
        Link(f"\\\\{wa}:{port}\\backslash-host.html", f"{w}/backslash-host.html", "backslash authority"),
        Link("", here, "empty href: this page"),
        Link(f"HTTP://{host.address}:{port}/guide/links/x.html", f"{o}/guide/links/x.html", "duplicate"),
        Link("nofollow-target.html", f"{o}/guide/links/nofollow-target.html", "nofollow", rel="nofollow"),
        Link("area.html", f"{o}/guide/links/area.html", "area", tag="area"),
        Link("iframe.html", f"{o}/guide/links/iframe.html", "iframe", tag="iframe"),
        Link(f"http://{OFFSITE_ADDRESSES[0]}:{port}/offsite.html",
             f"http://{OFFSITE_ADDRESSES[0]}:{port}/offsite.html", "off-site"),
        Link(f"http://{OFFSITE_ADDRESSES[1]}:{port}/offsite.html",
             f"http://{OFFSITE_ADDRESSES[1]}:{port}/offsite.html", "off-site"),
        Link(f"https://{host.address}:{port}/secure.html", f"https://{host.address}:{port}/secure.html", "https"),
        Link(f"http://{host.address}:80/default-port.html", f"http://{host.address}/default-port.html",
             "explicit default port"),
        Link("", f"{o}/guide/links/UPPER-TAG.html", markup='<A HREF="UPPER-TAG.html">upper-case tag</A>'),
        Link("", f"{o}/guide/links/single-quoted.html", markup="<a href='single-quoted.html'>single quotes</a>"),
        Link("", f"{o}/guide/links/unquoted.html", markup="<a href=unquoted.html>unquoted</a>"),
        Link("", f"{o}/guide/links/tabentity.html", markup='<a href="tab&#9;entity.html">tab entity</a>'),
        Link("", f"{o}/guide/links/amp.html?x=1&y=2", markup='<a href="amp.html?x=1&amp;y=2">escaped ampersand</a>'),
        Link("", None, markup='<a name="no-href">an anchor without href</a>'),
    ]
    # Not links: only a, area, frame and iframe count.
    not_links = ('<p><img src="img.png" alt="image"> <script src="script.js"></script>'
                 '<form action="submit.html"><button>go</button></form></p>\n')
    # Anchors that go nowhere (javascript:, no href) are text to a reader.
    inert = ("javascript", "javascript, mixed case", "an anchor without href")
    b.add_html(here, "links", "Link syntax", ("Every link below is written in an unusual way.",), links,
               head='<link rel="stylesheet" href="style.css">\n', body_extra=not_links, inert_text=inert)


def build_errors(b: WebBuilder) -> None:
    """127.0.0.6: error statuses, pages that fail only their first request,
    a robots.txt Disallow and a Crawl-delay for everyone."""
    host = b.role("errors")
    b.add_status(host.url("/missing.html"), "client_error", 404, "Not found.")
    b.add_status(host.url("/gone.html"), "client_error", 410, "Gone.")
    b.add_status(host.url("/forbidden.html"), "client_error", 403, "Forbidden.")
    b.add_status(host.url("/broken.html"), "server_error", 500, "Always fails.")
    b.add_html(host.url("/flaky.html"), "flaky", "Flaky page", ("Fails once, then works.",),
               [Link("flaky-deep.html", host.url("/flaky-deep.html"))], flaky=True)
    b.add_html(host.url("/flaky-deep.html"), "flaky", "Flaky page, one layer down",
               ("Also fails once, then works.",), flaky=True)
    paths = ["/missing.html", "/gone.html", "/forbidden.html", "/broken.html", "/flaky.html",
             "/members/area.html"]
    b.add_html(host.url("/"), "home", "Errors", ("Pages that fail.",),
               b.links_to([host.url(p) for p in paths], host.url("/")))


META_PAGES = (
    # name, extra <head> markup, extra headers, follow, index
    ("noindex", '<meta name="robots" content="noindex">', (), True, False),
    ("nofollow", '<meta name="robots" content="nofollow">', (), False, True),
    ("none", '<meta name="robots" content="none">', (), False, False),
    ("agent-nofollow", f'<meta name="{AGENT_TOKEN}" content="nofollow">', (), False, True),
    ("other-agent", '<meta name="otherbot" content="noindex, nofollow">', (), True, True),
    ("upper-case", '<META NAME="ROBOTS" CONTENT="NOFOLLOW">', (), False, True),
    ("header-nofollow", "", (("X-Robots-Tag", "nofollow"),), False, True),
    ("header-noindex", "", (("X-Robots-Tag", "noindex"),), True, False),
    ("header-agent", "", (("X-Robots-Tag", f"{AGENT_TOKEN}: nofollow"),), False, True),
    ("header-other-agent", "", (("X-Robots-Tag", "otherbot: noindex, nofollow"),), True, True),
)


def build_meta(b: WebBuilder) -> None:
    """127.0.0.7: meta robots and X-Robots-Tag, <base href>, rel=nofollow,
    and same-host redirect chains."""
    host = b.role("meta")
    pages = []
    for name, head, headers, follow, index in META_PAGES:
        url = host.url(f"/meta/{name}.html")
        pages.append(url)
        b.add_html(url, "meta", f"Meta robots: {name}", (f"This page says {name}.",),
                   [Link(f"t/{name}.html", host.url(f"/meta/t/{name}.html"), "target")],
                   head=head + "\n" if head else "", headers=headers, follow=follow, index=index)
    rel_links = [
        Link("t/rel-nofollow.html", host.url("/meta/t/rel-nofollow.html"), rel="nofollow"),
        Link("t/rel-noopener-nofollow.html", host.url("/meta/t/rel-noopener-nofollow.html"), rel="noopener nofollow"),
        Link("t/rel-case.html", host.url("/meta/t/rel-case.html"), rel="NoFollow"),
        Link("t/rel-area.html", host.url("/meta/t/rel-area.html"), rel="nofollow", tag="area"),
        Link("t/rel-noopener.html", host.url("/meta/t/rel-noopener.html"), rel="noopener"),
        Link("t/rel-external.html", host.url("/meta/t/rel-external.html"), rel="external"),
    ]
    b.add_html(host.url("/meta/rel.html"), "meta", "rel=nofollow", ("Some links say nofollow.",), rel_links)
    # The first <base> with an href counts, resolved against the page URL.
    b.add_html(host.url("/base/page.html"), "base", "Base href", ("Links resolve against the base.",), [
        Link("x.html", host.url("/deep/dir/x.html")),
        Link("/root-from-base.html", host.url("/root-from-base.html")),
        Link("../up.html", host.url("/deep/up.html")),
        Link("?q=2", host.url("/deep/dir/?q=2")),
        Link("#frag", host.url("/deep/dir/")),
    ], head='<base target="_top">\n<base href="../deep/dir/">\n<base href="/ignored/">\n')
    news = b.news[0]
    b.add_html(host.url("/base/cross.html"), "base", "Base on another host", ("The base is another host.",), [
        Link("from-base.html", news.url("/news/from-base.html")),
        Link("../about.html", news.url("/about.html")),
    ], head=f'<base href="{news.url("/news/")}">\n')
    redirects = build_redirect_chains(b, host)
    special = pages + [host.url(p) for p in ("/meta/rel.html", "/base/page.html", "/base/cross.html")]
    b.add_html(host.url("/"), "home", "Meta robots and redirects", ("Directives and redirects.",),
               b.links_to(special + redirects, host.url("/")))


def build_redirect_chains(b: WebBuilder, host: Host) -> list[str]:
    """Same-host redirects; returns the URLs to link to."""
    five = [host.url(f"/r/five/{i}") for i in range(6)]
    # Five redirects with every status and every Location form: followed.
    hops = [
        (301, "/r/five/1"),
        (302, "2"),
        (303, five[3]),
        (307, "./4"),
        (308, f"HTTP://{host.address}:{b.port}/r/five/5"),
    ]
    for i, (status, location) in enumerate(hops):
        b.add_redirect(five[i], status, location, five[i + 1], f"hop {i + 1} of 5")
    b.add_html(five[5], "leaf", "End of five redirects", ("Reached after five redirects.",))
    six = [host.url(f"/r/six/{i}") for i in range(7)]
    for i in range(6):
        b.add_redirect(six[i], 302, f"/r/six/{i + 1}", six[i + 1], f"hop {i + 1} of 6: the 6th fails")
    b.add_html(six[6], "leaf", "Never reached", ("Six redirects away.",))
    b.add_redirect(host.url("/r/loop/a"), 302, "b", host.url("/r/loop/b"), "loop a -> b")
    b.add_redirect(host.url("/r/loop/b"), 302, "a", host.url("/r/loop/a"), "loop b -> a")
    b.add_redirect(host.url("/r/loop/self"), 301, "self", host.url("/r/loop/self"), "redirects to itself")
    b.add_redirect(host.url("/r/to-missing"), 301, "/r/missing.html", host.url("/r/missing.html"), "to a 404")
    b.missing.add(host.url("/r/missing.html"))
    b.add_redirect(host.url("/r/to-image"), 302, "image.png", host.url("/r/image.png"), "to non-HTML")
    b.add(Page(url=host.url("/r/image.png"), kind="binary", content_type="image/png", body=tiny_png()))
    b.add_redirect(host.url("/r/with-fragment"), 302, "/r/landing.html#section", host.url("/r/landing.html"),
                   "Location with a fragment")
    b.add_redirect(host.url("/r/to-denied"), 302, "/denied/page.html", host.url("/denied/page.html"),
                   "same host, into a path url_deny rejects: blocked")
    news = b.news[0]
    b.add_redirect(host.url("/r/hop/1"), 302, "/r/hop/2", host.url("/r/hop/2"), "same host first")
    b.add_redirect(host.url("/r/hop/2"), 301, news.url("/from-hop.html"), news.url("/from-hop.html"),
                   "then another host")
    return [five[0], six[0], host.url("/r/loop/a"), host.url("/r/loop/self"), host.url("/r/to-missing"),
            host.url("/r/to-image"), host.url("/r/with-fragment"), host.url("/r/to-denied"), host.url("/r/hop/1")]


def build_world(b: WebBuilder, articles: list[str]) -> None:
    """127.0.0.8: Cyrillic, Arabic and mixed UTF-8 pages, a page that stalls
    before answering, and a robots.txt Disallow."""
    host = b.role("charsets-world")
    b.add_html(host.url("/slow.html"), "slow", "Slow page", ("Answers long after any sane timeout.",),
               [Link("after-slow.html", host.url("/after-slow.html"))], stall=b.stall)
    b.add_html(host.url("/moved/late.html"), "leaf", "Moved late", ("Reached through a late redirect.",))
    targets = charset_pages_on(b, host) + [host.url("/slow.html"), host.url("/drafts/plan.html")] + articles
    links = b.links_to(targets, host.url("/"))
    b.add_html(host.url("/"), "home", "World pages", ("Cyrillic, Arabic and mixed pages.",), links)


# -- articles ----------------------------------------------------------------

def article_text(rng: random.Random) -> tuple[str, tuple[str, ...]]:
    subject, verb, obj = rng.choice(SUBJECTS), rng.choice(VERBS), rng.choice(OBJECTS)
    title = f"{subject} {verb} {obj}"
    return title, article_paragraphs(rng)


def article_paragraphs(rng: random.Random) -> tuple[str, ...]:
    """Three paragraphs of article text (the daily web's articles keep their
    title when an update draws a new text)."""
    paragraphs = []
    for _ in range(3):
        sentences = [
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.choice(OBJECTS)} on {rng.choice(WEEKDAYS)}.",
            f"About {rng.randint(20, 9000)} residents will be affected, officials said.",
            f"A decision on {rng.choice(OBJECTS)} is expected in {rng.choice(MONTHS)}.",
        ]
        rng.shuffle(sentences)
        paragraphs.append(" ".join(sentences))
    return tuple(paragraphs)


def plan_articles(b: WebBuilder, seed_homes: list[Host]) -> tuple[list[ArticlePlan], dict[str, list[str]]]:
    """Lay out the article graph so that articles of layer k are linked only
    from pages of layer k-1 or later: each layer up to 5 gets new pages.
    Returns the articles and, per seed home, the layer-1 articles it links."""
    rng = b.rng
    article_hosts = [b.role("plain"), b.role("charsets-world")] + b.news
    articles: list[ArticlePlan] = []
    by_layer: dict[int, list[ArticlePlan]] = {}
    from_seed: dict[str, list[str]] = {home.origin: [] for home in seed_homes}
    for layer, count in enumerate(ARTICLES_PER_LAYER, start=1):
        for _ in range(count):
            host = rng.choice(article_hosts)
            title, paragraphs = article_text(rng)
            slug = "-".join(title.lower().split()[:6])
            path = f"/{rng.choice(SECTIONS)}/{rng.randint(2019, 2025)}/{slug}-{len(articles)}.html"
            plan = ArticlePlan(host, host.url(path), layer, title, paragraphs, [])
            if layer == 1:
                from_seed[rng.choice(seed_homes).origin].append(plan.url)
            else:
                rng.choice(by_layer[layer - 1]).links.append(plan.url)
            if rng.random() < 0.2:
                plan.nofollow = host.url(f"/comments/{slug}-{len(articles)}.html")
            articles.append(plan)
            by_layer.setdefault(layer, []).append(plan)
    for plan in articles:  # extra links never reach further than the next layer
        candidates = [a.url for a in articles if a.layer <= plan.layer + 1 and a is not plan]
        plan.links.extend(rng.sample(candidates, rng.randint(0, 3)))
    # A few articles also point at the special hosts.
    port = b.port
    by_layer[1][0].links.append(b.role("robots-500").url("/page.html"))
    by_layer[2][0].links.append(b.role("hub").url("/go/late"))
    by_layer[2][1].links.append(f"http://{OFFSITE_ADDRESSES[1]}:{port}/wire/story.html")
    by_layer[3][0].links.append(b.role("errors").url("/old/story.html"))
    b.missing.add(b.role("errors").url("/old/story.html"))
    return articles, from_seed


def build_articles(b: WebBuilder, articles: list[ArticlePlan]) -> None:
    for plan in articles:
        links = [Link("/", plan.host.url("/"), "home")]
        links += b.links_to(dict.fromkeys(plan.links), plan.url)
        if plan.nofollow:
            links.append(Link(plan.nofollow, plan.nofollow, "comments", rel="nofollow"))
        b.add_html(plan.url, "article", plan.title, plan.paragraphs, links)


def latest(articles: list[ArticlePlan], host: Host) -> list[str]:
    """What a home page first reached on layer 1 links: its articles of layers 1 and 2."""
    return [a.url for a in articles if a.host is host and a.layer <= 2]


def build_news_homes(b: WebBuilder, articles: list[ArticlePlan], from_seed: dict[str, list[str]]) -> None:
    """News home pages; the first is a seed (it links only layer-1 articles),
    the others are linked from the hub."""
    for number, host in enumerate(b.news):
        targets = from_seed[host.origin] if number == 0 else latest(articles, host)
        b.add_html(host.url("/"), "home", f"News {number}", ("The latest articles.",),
                   b.links_to(targets, host.url("/")), note="seed" if number == 0 else "")


# -- a link farm and a popular site (generate's link_farm) ---------------------------

def link_farm_and_popular_site(b: WebBuilder, linked_from: str) -> None:
    """Before the other hosts are built: every home page will link the
    popular site's main pages, and the page `linked_from` the link farm's
    first page, its only link from outside the farm.  So the popular site's
    pay-level domain is linked from every other site that has a home page,
    and the farm's from one, however many pages it has."""
    popular, farm = b.role("popular"), b.role("farm")
    b.home_links = [Link(popular.url(path), popular.url(path), "popular") for path in POPULAR_PAGES]
    b.added_links[linked_from] = [Link(farm.url("/farm/0"), farm.url("/farm/0"), "farm")]
    b.made_on_request[farm.origin] = farm_page


def build_popular(b: WebBuilder) -> None:
    """The popular site: main pages that link each other and their stories."""
    popular = b.role("popular")
    for number, path in enumerate(POPULAR_PAGES):
        stories = range(number * STORIES_PER_PAGE, (number + 1) * STORIES_PER_PAGE)
        targets = [popular.url(other) for other in POPULAR_PAGES if other != path]
        targets += [popular.url(f"/story/{story}.html") for story in stories]
        b.add_html(popular.url(path), "home" if path == "/" else "section", f"Popular {path}",
                   ("The site every other site links.",), [Link(url, url, "more") for url in targets])
        for story in stories:
            b.add_html(popular.url(f"/story/{story}.html"), "article", f"Popular story {digits_in_words(str(story))}",
                       ("A story of the popular site.",), [Link("/", popular.url("/"), "home")])


def farm_page(url: str) -> Page | None:
    """The link farm's page at `url`, made when asked for: /farm/N links
    /farm/(5N+1) .. /farm/(5N+5), and nothing outside the farm; its words
    differ from every other farm page's, not only its digits."""
    parts = urlsplit(url)
    number = parts.path.removeprefix("/farm/")
    if not parts.path.startswith("/farm/") or not number.isdigit() or number != str(int(number)) or parts.query:
        return None
    first = int(number) * FARM_FANOUT + 1
    links = [Link(f"/farm/{next_number}", f"{parts.scheme}://{parts.netloc}/farm/{next_number}", "more")
             for next_number in range(first, first + FARM_FANOUT)]
    title = f"Farm page {digits_in_words(number)}"
    text = document(title, ("Pages that link only to each other.",), links)
    return Page(url=url, kind="farm", body=text.encode(), links=tuple(link.expected for link in links), charset="utf-8",
                declared="header", title=title, paragraphs=("Pages that link only to each other.",), text=text,
                note="the link farm: endless pages, one link from outside")


def generate(seed: int, hosts: int, port: int, stall_seconds: float, link_farm: bool = False) -> Web:
    b = WebBuilder(seed, hosts, port, stall_seconds, LINK_FARM_ROLES if link_farm else ())
    hub, plain, news0 = b.role("hub"), b.role("plain"), b.news[0]
    if link_farm:
        link_farm_and_popular_site(b, plain.url("/"))
    articles, from_seed = plan_articles(b, [hub, plain, news0])
    build_charsets(b)
    build_hub(b, from_seed[hub.origin])
    build_cjk(b)
    build_denied(b)
    build_plain(b, from_seed[plain.origin])
    build_errors(b)
    build_meta(b)
    build_world(b, latest(articles, b.role("charsets-world")))
    build_articles(b, articles)
    build_news_homes(b, articles, from_seed)
    if link_farm:
        build_popular(b)
    b.fill_leaves()
    b.add_robots_files()
    seeds = (hub.url("/"), plain.url("/"), news0.url("/"))
    spellings = {
        f"HTTP://{hub.address}:{port}/#top": hub.url("/"),
        f"http://{plain.address}:{port}": plain.url("/"),
        f"http://{news0.address}:{port}/./index/../": news0.url("/"),
        f"http://{OFFSITE_ADDRESSES[1]}:{port}/": f"http://{OFFSITE_ADDRESSES[1]}:{port}/",
        "ftp://127.0.0.2/": None,
        "mailto:editor@example.invalid": None,
        "not a url": None,
    }
    return Web(seed=seed, port=port, hosts=b.hosts, pages=dict(sorted(b.pages.items())),
               seed_urls=seeds, seed_spellings=spellings, made_on_request=b.made_on_request)
