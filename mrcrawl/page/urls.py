"""URL parsing, resolution and canonical form.

Every URL the crawler stores, compares or fetches is in canonical form, so
that the Optimizer's sort-merge and the Merge job see one spelling per page.
Parsing and joining follow the WHATWG URL Standard (through the ada-url
binding) because that is what browsers do with the hrefs real pages contain:
urllib's urljoin disagrees with browsers on backslashes, tabs and newlines,
`..` above the root, IDNA hosts, spaces and percent-encoding.
"""
from __future__ import annotations

import re
from functools import lru_cache

import ada_url

SCHEMES = ("http:", "https:")

# RFC 3986 section 2.3: percent-encoded unreserved characters mean the same
# as the characters themselves, so the canonical form decodes them.
_UNRESERVED = frozenset(
    b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
)
_PERCENT_ESCAPE = re.compile(r"%([0-9A-Fa-f]{2})")


def _normalise_escape(match: re.Match) -> str:
    byte = int(match.group(1), 16)
    if byte in _UNRESERVED:
        return chr(byte)
    return "%" + match.group(1).upper()


def _normalise_percent_encoding(text: str) -> str:
    if "%" not in text:
        return text
    return _PERCENT_ESCAPE.sub(_normalise_escape, text)


def _canonical(parsed: ada_url.URL) -> str | None:
    if parsed.protocol not in SCHEMES or not parsed.host:
        return None
    parsed.hash = ""
    path = _normalise_percent_encoding(parsed.pathname)
    query = _normalise_percent_encoding(parsed.search)
    # ada already lower-cases scheme and host, converts IDNA to punycode,
    # drops the default port and removes dot segments (including %2e forms).
    return f"{parsed.protocol}//{parsed.host}{path}{query}"


@lru_cache(maxsize=65536)
def normalize_url(url: str) -> str | None:
    """The canonical form of an absolute http(s) URL, or None if it has none."""
    try:
        return _canonical(ada_url.URL(url))
    except ValueError:
        return None


# WHATWG "query percent-encode set" applies to bytes; characters outside
# ASCII are first encoded with the document's encoding.  Only non-ASCII
# characters are affected by the encoding, so only they are pre-encoded here;
# ada then handles the ASCII ones as for any page.
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_TAB_OR_NEWLINE = re.compile(r"[\t\n\r]")


# Bytes the URL Standard's special-query percent-encode set leaves as they are.
_QUERY_LITERAL_BYTES = frozenset(range(0x21, 0x7F)) - frozenset(b"\"#<>'")


def _encode_query_char(char: str, encoding: str) -> str:
    try:
        raw = char.encode(encoding)
    except UnicodeEncodeError:
        # The standard writes an unmappable character as its numeric character
        # reference, every byte of it percent-encoded.
        return f"%26%23{ord(char)}%3B"
    # A multi-byte character can contain ASCII bytes (Shift_JIS 日 is 0x93 0xFA,
    # 本 is 0x96 0x7B "{"); those stay literal unless the set names them.
    return "".join(chr(byte) if byte in _QUERY_LITERAL_BYTES else f"%{byte:02X}" for byte in raw)


def _encode_query_in_page_encoding(href: str, encoding: str) -> str:
    """Percent-encode the non-ASCII part of href's query in the page encoding."""
    query_start = href.find("?")
    if query_start < 0:
        return href
    fragment_start = href.find("#", query_start)
    if fragment_start < 0:
        fragment_start = len(href)
    query = href[query_start:fragment_start]
    if not _NON_ASCII.search(query):
        return href
    encoded = _NON_ASCII.sub(lambda m: _encode_query_char(m.group(0), encoding), query)
    return href[:query_start] + encoded + href[fragment_start:]


@lru_cache(maxsize=256)
def _is_utf8_family(encoding: str) -> bool:
    name = encoding.lower().replace("_", "-")
    # WHATWG: UTF-16 documents also use UTF-8 for URL queries.
    return name.startswith("utf")


def resolve_link(href: str, base_url: str, encoding: str = "utf-8") -> str | None:
    """Resolve an href found on a page, as a browser would, to canonical form.

    `encoding` is the page's encoding: the query of a link on a non-UTF-8 page
    is percent-encoded in that encoding, as the URL Standard says.
    """
    if href.startswith(ABSOLUTE_PREFIXES):
        return resolve_absolute_link(href, encoding)
    return resolve_relative_link(href, base_url, encoding)


ABSOLUTE_PREFIXES = ("http://", "https://")


@lru_cache(maxsize=32768)
def resolve_absolute_link(href: str, encoding: str) -> str | None:
    """resolve_link for an href that starts with http:// or https://.

    An absolute link means the same on every page: menus, footers and
    lists repeat them across a site, so their joins are remembered.
    """
    return resolve_relative_link(href, href, encoding)


def resolve_relative_link(href: str, base_url: str, encoding: str) -> str | None:
    """resolve_link without its shortcut for absolute hrefs."""
    if not _is_utf8_family(encoding) and "?" in href:
        href = _encode_query_in_page_encoding(_TAB_OR_NEWLINE.sub("", href), encoding)
    try:
        joined = ada_url.join_url(base_url, href)
    except ValueError:
        return None
    return _canonical_serialisation(joined)


def _canonical_serialisation(url: str) -> str | None:
    """The canonical form of a URL ada has just serialised.

    This is the Parser's hot path.  ada's serialisation is already WHATWG's:
    scheme and host lower-case, punycode, no default port, no dot segments.
    What canonical form adds is dropping the fragment and an empty query
    (plain string work), and normalising %-escapes and dropping userinfo,
    which only URLs with "%" or "@" need, by a full parse.
    """
    if not url.startswith(("http://", "https://")):
        return None
    url = url.partition("#")[0]
    if "%" in url or "@" in url:
        return normalize_url(url)
    # Only an empty query goes: "?a?" keeps its last "?".
    return url[:-1] if url.find("?") == len(url) - 1 else url


def host_key(url: str) -> str:
    """scheme://host[:port] of a canonical URL: the unit of politeness."""
    scheme_end = url.index("//") + 2
    path_start = url.find("/", scheme_end)
    if path_start < 0:
        query_start = url.find("?", scheme_end)
        path_start = query_start if query_start >= 0 else len(url)
    return url[:path_start]


def host_of(url: str) -> str:
    """The host name (or IP literal, without brackets) of a canonical URL."""
    authority = host_key(url).split("//", 1)[1]
    if authority.startswith("["):
        return authority[1 : authority.index("]")]
    return authority.rsplit(":", 1)[0] if ":" in authority else authority


class UrlFilter:
    """The crawl's scope: url_allow and url_deny regexes, by re.search.

    An empty allow list admits every URL; a deny match always wins.
    """

    def __init__(self, allow: list[str], deny: list[str]):
        self._allow = [re.compile(pattern) for pattern in allow]
        self._deny = [re.compile(pattern) for pattern in deny]
        # A site's menus and lists repeat its links on every page; a config's
        # dozens of regexes are then searched once per URL, not per link.
        self.allows = lru_cache(maxsize=32768)(self._allows)

    def _allows(self, url: str) -> bool:
        if self._allow and not any(rx.search(url) for rx in self._allow):
            return False
        return not any(rx.search(url) for rx in self._deny)
