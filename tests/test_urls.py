"""Canonical URLs, WHATWG resolution, host keys and the crawl's URL filter."""
from __future__ import annotations

import re

import pytest

from mrcrawl.page.urls import UrlFilter, host_key, host_of, normalize_url, resolve_link

BASE = "http://127.0.0.4/dir/page.html?old=1#top"


@pytest.mark.parametrize(
    "url, canonical",
    [
        ("http://example.com", "http://example.com/"),
        ("HTTP://EXAMPLE.COM/Case/Kept?Q=Kept", "http://example.com/Case/Kept?Q=Kept"),
        ("http://example.com/a#fragment", "http://example.com/a"),
        ("http://example.com/a#b#c", "http://example.com/a"),
        ("http://example.com:80/a", "http://example.com/a"),
        ("https://example.com:443/a", "https://example.com/a"),
        ("http://example.com:443/a", "http://example.com:443/a"),
        ("https://example.com:8443", "https://example.com:8443/"),
        ("http://example.com/a/./b/../c", "http://example.com/a/c"),
        ("http://example.com/../../x", "http://example.com/x"),
        ("http://example.com/a/%2E%2e/b", "http://example.com/b"),
        ("http://example.com/%7Euser/%41%62%2D%5F%2E", "http://example.com/~user/Ab-_."),
        ("http://example.com/a%2fb%3Fc", "http://example.com/a%2Fb%3Fc"),
        ("http://example.com/?q=%e4%b8%ad+x&y=%7e", "http://example.com/?q=%E4%B8%AD+x&y=~"),
        ("http://example.com/?b=2&a=1&b=1", "http://example.com/?b=2&a=1&b=1"),
        ("http://example.com/%zz", "http://example.com/%zz"),
        ("http://example.com/a b", "http://example.com/a%20b"),
        ("http://Bücher.example/", "http://xn--bcher-kva.example/"),
        ("http://ex%41mple.com/", "http://example.com/"),
        ("http://user:pw@example.com/", "http://example.com/"),
        ("http://[::1]:8080/x", "http://[::1]:8080/x"),
        ("http://0x7f.0.0.1/", "http://127.0.0.1/"),
        ("  http://example.com/trimmed  ", "http://example.com/trimmed"),
    ],
)
def test_normalize_url(url, canonical):
    assert normalize_url(url) == canonical
    # The canonical form is a fixed point.
    assert normalize_url(canonical) == canonical


@pytest.mark.parametrize(
    "url",
    ["", "example.com/no-scheme", "/relative", "mailto:a@example.com", "ftp://example.com/",
     "javascript:alert(1)", "http://", "http://exa mple.com/", "http://[::1/", "data:,x",
     "file:///etc/hosts"],
)
def test_normalize_url_rejects(url):
    assert normalize_url(url) is None


@pytest.mark.parametrize(
    "href, expected",
    [
        ("x.html", "http://127.0.0.4/dir/x.html"),
        ("", "http://127.0.0.4/dir/page.html?old=1"),
        ("#other", "http://127.0.0.4/dir/page.html?old=1"),
        ("?new=2", "http://127.0.0.4/dir/page.html?new=2"),
        ("../../../x", "http://127.0.0.4/x"),
        ("//127.0.0.5:81/y", "http://127.0.0.5:81/y"),
        ("\\a\\b", "http://127.0.0.4/a/b"),
        ("/a\tb\nc\rd", "http://127.0.0.4/abcd"),
        (" \n/lead-and-trail\t ", "http://127.0.0.4/lead-and-trail"),
        ("https:\\\\Example.COM\\p", "https://example.com/p"),
        ("mailto:x@y.z", None),
        ("javascript:void(0)", None),
        ("http://", None),
    ],
)
def test_resolve_link(href, expected):
    assert resolve_link(href, BASE) == expected


def test_resolve_link_query_in_the_page_encoding():
    assert resolve_link("/s?q=中文#frag中", BASE, "gb18030") == "http://127.0.0.4/s?q=%D6%D0%CE%C4"
    assert resolve_link("/中文?q=中文", BASE, "gbk") == "http://127.0.0.4/%E4%B8%AD%E6%96%87?q=%D6%D0%CE%C4"
    # ASCII bytes inside a multi-byte character stay literal unless the
    # special-query set names them: 本 is 96 7B "{".
    assert resolve_link("/s?q=日本", BASE, "cp932") == "http://127.0.0.4/s?q=%93%FA%96{"
    assert resolve_link("/s?q=한국", BASE, "cp949") == "http://127.0.0.4/s?q=%C7%D1%B1%B9"
    assert resolve_link("/s?q=Москва", BASE, "koi8-r") == "http://127.0.0.4/s?q=%ED%CF%D3%CB%D7%C1"
    assert resolve_link("/s?q=é", BASE, "cp1252") == "http://127.0.0.4/s?q=%E9"
    assert resolve_link("/s?q=é", BASE, "utf-8") == "http://127.0.0.4/s?q=%C3%A9"
    assert resolve_link("/s?q=é", BASE, "UTF_8") == "http://127.0.0.4/s?q=%C3%A9"
    # Tabs and newlines are removed before the query is encoded.
    assert resolve_link("/s?q=\t中\n文", BASE, "gb18030") == "http://127.0.0.4/s?q=%D6%D0%CE%C4"


def test_character_missing_from_the_page_encoding_becomes_an_encoded_reference():
    assert resolve_link("/s?q=😀", BASE, "gb2312") == "http://127.0.0.4/s?q=%26%23128512%3B"
    assert resolve_link("/s?q=😀&x=1", BASE, "cp932") == "http://127.0.0.4/s?q=%26%23128512%3B&x=1"


def test_resolve_link_keeps_ascii_trail_bytes_of_legacy_queries_as_browsers_do():
    # WHATWG percent-encodes only the special-query set; Shift_JIS 表 is
    # 95 5C and GBK 丂 is 81 40, whose ASCII trail bytes stay literal.
    assert resolve_link("/s?q=表", BASE, "cp932") == "http://127.0.0.4/s?q=%95\\"
    assert resolve_link("/s?q=丂", BASE, "gbk") == "http://127.0.0.4/s?q=%81@"
    # What a browser's request line would then look like, written absolutely:
    assert resolve_link("http://127.0.0.4/s?q=%95\\", BASE) == resolve_link("/s?q=表", BASE, "cp932")


def test_host_key_and_host_of():
    assert host_key("http://example.com/a/b?c") == "http://example.com"
    assert host_key("https://example.com:8443/") == "https://example.com:8443"
    assert host_key("http://127.0.0.7:8080/x?y=1") == "http://127.0.0.7:8080"
    assert host_key("http://[::1]:8080/x") == "http://[::1]:8080"
    assert host_key("http://example.com") == "http://example.com"
    assert host_key("http://example.com?q") == "http://example.com"
    assert host_of("http://127.0.0.7:8080/x") == "127.0.0.7"
    assert host_of("http://[::1]:8080/x") == "::1"
    assert host_of("https://xn--bcher-kva.example/") == "xn--bcher-kva.example"
    # One host key per host, whatever the spelling of the link.
    spellings = ["HTTP://Example.COM:80/a", "http://example.com/b#x", "http://EXAMPLE.com./c"]
    keys = {host_key(normalize_url(url)) for url in spellings[:2]}
    assert keys == {"http://example.com"}
    assert host_key(normalize_url(spellings[2])) == "http://example.com."


def test_url_filter():
    allow_all = UrlFilter([], [])
    assert allow_all.allows("http://anything.example/")
    scoped = UrlFilter([r"^https?://(www\.)?example\.com/", r"\.example\.org/news/"], [r"/private/", r"\.pdf$"])
    assert scoped.allows("http://example.com/a")
    assert scoped.allows("https://www.example.com/a")
    assert scoped.allows("http://www.example.org/news/1")  # re.search, not match
    assert not scoped.allows("http://other.com/a")
    assert not scoped.allows("http://example.com/private/x")  # deny wins over allow
    assert not scoped.allows("http://example.com/report.pdf")
    deny_only = UrlFilter([], [r"\?"])
    assert deny_only.allows("http://x.example/a")
    assert not deny_only.allows("http://x.example/a?b=1")
    with pytest.raises(re.error):
        UrlFilter(["(unclosed"], [])


TRICKY_HREFS = [
    "x.html", "./y", "../z", "/a/../b", "?q=1", "?", "#top", "x#frag", "x?#f", "//Other.EXAMPLE:80/p",
    "HTTP://Example.COM/Upper", "\\\\host\\path", "..\\up", " spaced ", "tab\tbed", "new\nline",
    "%7euser/%41", "a%2fb", "caf%c3%a9", "café", "with space", "user:pw@host/x", "http://u@h/p",
    "/p?a=1&b=%41", "http://[::1]:8080/x", "http://0x7f.0.0.1/", "https://bücher.de/", "mailto:x@y",
    "javascript:void(0)", "http:relative", "/../../above", "%2e%2e/dot", "http://h:443/", "https://h:443/",
]


@pytest.mark.parametrize("href", TRICKY_HREFS)
def test_the_fast_path_equals_a_full_parse(href):
    # resolve_link serialises with ada and canonicalises by string work where it can;
    # that must equal canonicalising a full parse of the joined URL.
    import ada_url

    base = "http://Example.com:80/dir/page.html?old=1#x"
    try:
        joined = ada_url.join_url(base, href)
    except ValueError:
        joined = None
    expected = normalize_url(joined) if joined else None
    assert resolve_link(href, base) == expected


def _full_parse(href: str, base: str) -> str | None:
    import ada_url

    try:
        return normalize_url(ada_url.join_url(base, href))
    except ValueError:
        return None


def _generated_hrefs():
    """Links in many shapes: absolute (hosts, ports, IPv4 spellings, cases),
    root-relative and relative, with dot segments, escapes, odd characters,
    queries and fragments."""
    origins = ["http://news.example.com", "https://news.example.com", "http://News.example.com",
               "http://news.example.com:80", "https://news.example.com:443", "http://news.example.com:8080",
               "http://127.0.0.1", "http://127.1", "http://0x7f.0.0.1", "http://1.2.3.04", "http://300.1.1.1",
               "http://a-b.example", "http://xn--bcher-kva.de", "http://h.example.", "http://u@h.example",
               "http://h.example:65536", "http://h.example:0", "http://h_x.example", "http://256.example.1"]
    paths = ["", "/", "/a/b.html", "/a/./b", "/a/../b", "/a/.", "/a/..", "/.hidden", "/a%41", "/a b", "/a\\b",
             "/caf\u00e9", "/a'b", "/a@b", "/a:b", "/~user/", "/a//b", "/a|b", "/{x}"]
    tails = ["", "?", "?a=1", "?a=1&b=2", "?a='x'", "?a=%41", "?a b", "?a=1?b", "#f", "?q#f", "?a={}"]
    relatives = ["x.html", "sub/x.html", "./x", "../x", "x:y", "mailto:a@b", "//other.example/x", "/x",
                 "?only", "#only", "", " x", "x\ty", "a/b?c=d", "~u/x", "@x", "a@b/c"]
    for origin in origins:
        for path in paths:
            for tail in tails:
                yield origin + path + tail
    for relative in relatives:
        for tail in tails:
            yield relative + tail


@pytest.mark.parametrize("base", ["http://news.example.com/dir/page.html?x=1",
                                  "https://news.example.com:8443/", "http://127.0.0.2:8080/a/b"])
def test_generated_links_resolve_as_a_full_parse_does(base):
    # The string-work canonicalisation of resolve_link against a full parse,
    # over some 4,000 shapes (it once dropped the last "?" of "?a?").
    for href in _generated_hrefs():
        assert resolve_link(href, base) == _full_parse(href, base), href
