"""The test web's data model.

A `Web` maps every URL to a `Page`: exactly what the server sends for it
(status, headers, body, delays, first-request failures) and what a correct
crawler should conclude from it (the canonical outlinks its extractor finds,
meta robots follow/index, the decoded text). The server serves these pages and
the oracle reasons over them; neither ever parses the HTML again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote_to_bytes, urlsplit

# The robots.txt agent token the tests crawl with, and a user agent whose
# first token is that token.
AGENT_TOKEN = "mrcrawl-test"
USER_AGENT = f"{AGENT_TOKEN}/1.0"

# Loopback addresses that pages link to but that no test server binds and the
# tests' url_allow rejects: a correct crawler never requests them.
OFFSITE_ADDRESSES = ("127.0.0.1", "127.0.0.250")

HTML_TYPES = ("text/html", "application/xhtml+xml")


@dataclass(frozen=True)
class RobotsGroup:
    """One `User-agent:` group of a robots.txt: plain path prefixes only."""

    agents: tuple[str, ...]
    allow: tuple[str, ...] = ()
    disallow: tuple[str, ...] = ()
    crawl_delay: float | None = None

    def lines(self) -> list[str]:
        lines = [f"User-agent: {agent}" for agent in self.agents]
        lines += [f"Disallow: {prefix}" for prefix in self.disallow]
        lines += [f"Allow: {prefix}" for prefix in self.allow]
        if self.crawl_delay is not None:
            lines.append(f"Crawl-delay: {self.crawl_delay}")
        return lines


@dataclass(frozen=True)
class Robots:
    """A host's /robots.txt: the status it answers with and its rules."""

    status: int = 200
    groups: tuple[RobotsGroup, ...] = ()

    @property
    def body(self) -> bytes:
        if self.status != 200:
            return f"robots.txt answers {self.status}\n".encode()
        blocks = ["\n".join(group.lines()) for group in self.groups]
        return ("# robots.txt of a test host\n\n" + "\n\n".join(blocks) + "\n").encode()

    def group_for(self, agent_token: str) -> RobotsGroup | None:
        """The group that governs `agent_token` (RFC 9309): the one naming the
        token, else the `*` group; other groups never apply."""
        token = agent_token.lower()
        named = [g for g in self.groups if token in (a.lower() for a in g.agents)]
        anyone = [g for g in self.groups if "*" in g.agents]
        return (named or anyone or [None])[0]

    def allows(self, path: str, agent_token: str) -> bool:
        """Whether `path` (path and query of a canonical URL) may be fetched,
        with the crawler's semantics: 2xx apply, 4xx allow all, else deny all."""
        if 400 <= self.status < 500:
            return True
        if not 200 <= self.status < 300:
            return False
        group = self.group_for(agent_token)
        if group is None:
            return True
        # The longest matching prefix decides; an Allow wins a tie.
        longest, allowed = -1, True
        for prefix in group.disallow:
            if prefix and path.startswith(prefix) and len(prefix) > longest:
                longest, allowed = len(prefix), False
        for prefix in group.allow:
            if path.startswith(prefix) and len(prefix) >= longest:
                longest, allowed = len(prefix), True
        return allowed

    def crawl_delay(self, agent_token: str) -> float | None:
        if self.status != 200:
            return None
        group = self.group_for(agent_token)
        return group.crawl_delay if group else None


@dataclass(frozen=True)
class Host:
    """One served host: a loopback address, all hosts sharing one port."""

    address: str
    port: int
    role: str  # what this host is for, e.g. "hub", "charsets-cjk"
    robots: Robots

    @property
    def origin(self) -> str:
        return f"http://{self.address}:{self.port}"

    def url(self, path: str) -> str:
        return self.origin + path


@dataclass(frozen=True)
class Page:
    """What the server does for one URL, and what a crawler should conclude."""

    url: str  # canonical absolute URL
    kind: str  # a label for tests and counts: "article", "charset", "redirect", ...
    status: int = 200
    content_type: str | None = "text/html; charset=utf-8"
    body: bytes = b""  # the body after any Content-Encoding is undone
    headers: tuple[tuple[str, str], ...] = ()  # extra headers: Location, X-Robots-Tag
    gzip_body: bytes | None = None  # sent instead of `body` when the client accepts gzip
    flaky: bool = False  # answers 503 to its first request per server instance
    stall: float = 0.0  # seconds the server waits (or until the client hangs up)
    stall_after_headers: bool = False  # stall mid-body instead of before the status line
    redirect_to: str | None = None  # canonical target of the Location header
    links: tuple[str, ...] = ()  # what a correct extractor yields: canonical, in order, before url filters
    # Parallel to `links`: the anchor text of each link's first occurrence
    # (None where the page's markup is not modelled); empty when no link is.
    anchors: tuple[str | None, ...] = ()
    # The feeds its <link rel="alternate"> names (canonical, in order): not
    # links, which a crawler follows as any other, but announcements.
    feeds: tuple[str, ...] = ()
    follow: bool = True  # meta robots / X-Robots-Tag allow following links
    index: bool = True  # meta robots / X-Robots-Tag allow indexing
    charset: str | None = None  # WHATWG label of the encoding the body is written in
    declared: str | None = None  # where that charset is declared: header, meta, none, bom, ...
    title: str | None = None
    paragraphs: tuple[str, ...] = ()  # the main text, as it must come out of decoding
    text: str | None = None  # the whole document decoded (BOM excluded)
    # The URL of a page (an article, not a hub) whose text this one shows,
    # only what every answer changes differing (a clock, an advert, a
    # nonce): the crawler takes it for that page's duplicate.  The pages of
    # a web otherwise all differ in their text, outside links and digits.
    same_text_as: str | None = None
    note: str = ""  # why this page exists

    @property
    def media_type(self) -> str:
        return (self.content_type or "").split(";")[0].strip().lower()

    @property
    def is_html(self) -> bool:
        return self.media_type in HTML_TYPES

    @property
    def is_redirect(self) -> bool:
        return 300 <= self.status < 400 and self.redirect_to is not None

    @property
    def outlinks(self) -> tuple[str, ...]:
        """The links a crawler keeps: none when the page says nofollow."""
        return self.links if self.follow else ()


def request_key(target: str) -> bytes:
    """How the server matches a request target to a page: percent-decoded, as
    most real servers route. Clients may legitimately re-quote a URL (`{` as
    `%7B`, `%7e` as `~`); the crawler's own spelling of URLs is checked by the
    records it writes, not by getting a 404 here."""
    # The server reads the request line as Latin-1: encoding it back gives
    # the raw bytes, should a client send unencoded non-ASCII.
    return unquote_to_bytes(target.encode("latin-1", "replace"))


def missing_page(url: str) -> Page:
    """What the server answers for a URL the web does not contain."""
    body = b"<!DOCTYPE html><html><head><title>Not found</title></head><body><p>Not found.</p></body></html>"
    return Page(url=url, kind="missing", status=404, body=body, title="Not found", note="not in the web")


def path_of(url: str) -> str:
    """Path and query of an absolute URL: what robots.txt rules match."""
    parts = urlsplit(url)
    return (parts.path or "/") + (f"?{parts.query}" if parts.query else "")


def origin_of(url: str) -> str:
    """scheme://host[:port] of a canonical URL (the crawler's host key)."""
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


@dataclass
class Web:
    """A generated test web: hosts, pages, and the seeds to crawl it from."""

    seed: int
    port: int
    hosts: tuple[Host, ...]
    pages: dict[str, Page]  # canonical URL -> page, robots.txt included
    seed_urls: tuple[str, ...]
    # Non-canonical or invalid spellings of seeds, mapped to the canonical URL
    # (None: not an http(s) URL); for seed files that test normalisation.
    seed_spellings: dict[str, str | None]
    # Hosts whose pages are made when asked for (a link farm's endless pages):
    # origin -> a function of a canonical URL giving its page, or None.
    made_on_request: dict = field(default_factory=dict)
    _by_request: dict[tuple[str, bytes], Page] = field(init=False, repr=False, compare=False)
    _by_origin: dict[str, Host] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self._by_origin = {host.origin: host for host in self.hosts}
        self._by_request = {}
        for url, page in self.pages.items():
            parts = urlsplit(url)
            key = (parts.hostname, request_key(path_of(url)))
            if key in self._by_request:
                raise ValueError(f"two pages answer the same request: {url}")
            self._by_request[key] = page

    # -- looking things up ------------------------------------------------

    def page(self, url: str) -> Page:
        """The page at canonical `url`; a 404 page when the web has none."""
        return self.pages.get(url) or self._made(url) or missing_page(url)

    def _made(self, url: str) -> Page | None:
        make = self.made_on_request.get(origin_of(url))
        return make(url) if make else None

    def respond(self, address: str, target: str) -> Page:
        """The page the server sends for a request target on `address`."""
        if target.startswith(("http://", "https://")):  # absolute-form target
            target = path_of(target)
        page = self._by_request.get((address, request_key(target)))
        url = f"http://{address}:{self.port}{target}"
        return page or self._made(url) or missing_page(url)

    def host(self, url: str) -> Host | None:
        """The served host of a URL, None when no test server answers it."""
        return self._by_origin.get(origin_of(url))

    def role(self, name: str) -> Host:
        """The first host with role `name` (see sites.SPECIAL_ROLES; "news")."""
        for host in self.hosts:
            if host.role == name:
                return host
        raise KeyError(name)

    def pages_of_kind(self, *kinds: str) -> list[Page]:
        return [page for page in self.pages.values() if page.kind in kinds]

    @property
    def addresses(self) -> tuple[str, ...]:
        return tuple(host.address for host in self.hosts)

    # -- crawl configuration for tests ---------------------------------------

    @property
    def url_allow(self) -> str:
        """A regex matching exactly the URLs of the served hosts."""
        last_octets = "|".join(address.rsplit(".", 1)[1] for address in self.addresses)
        return rf"^http://127\.0\.0\.(?:{last_octets}):{self.port}/"

    # URLs under /denied/ exist on the server but the tests' url_deny drops
    # them: a same-host redirect into it must end `blocked`.
    url_deny = r"/denied/"

    def crawl_config(self, **overrides) -> dict:
        """A crawl config (the YAML's keys) suited to this web; override any key."""
        config = {
            "name": "testweb",
            "language": "en",
            "user_agent": USER_AGENT,
            "threads": 8,
            "delay": 0.05,
            "timeout": 1.0,
            "retries": 1,
            "max_page_bytes": 1048576,
            "url_allow": [self.url_allow],
            "url_deny": [self.url_deny],
            "obey_robots": True,
            "max_crawl_delay": 30.0,
            "allow_private_networks": True,
        }
        unknown = set(overrides) - set(config) - {"proxy", "allow_networks"}
        if unknown:
            raise KeyError(f"not crawl config keys: {sorted(unknown)}")
        config.update(overrides)
        return config
