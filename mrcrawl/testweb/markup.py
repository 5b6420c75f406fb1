"""HTML and file bodies for the test web, and how links are written in them."""

from __future__ import annotations

import html
import re
import struct
import zlib
from dataclasses import dataclass

DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")


@dataclass(frozen=True)
class Link:
    """A link as written in a page, and what a correct extractor makes of it."""

    href: str  # attribute value, written as is (only HTML-escaped)
    expected: str | None  # canonical URL it must resolve to; None: yields nothing
    label: str = "link"
    rel: str | None = None
    tag: str = "a"  # a, area or iframe
    markup: str | None = None  # literal HTML instead of rendering (odd quoting, case)

    @property
    def anchor(self) -> str | None:
        """The anchor text a correct extractor gives the link: an <a>'s
        label, an <area>'s alt, whitespace collapsed, at most 200 characters;
        "" for an iframe; None for literal markup, whose text is not modelled."""
        if self.markup is not None:
            return None
        return " ".join(self.label.split())[:200] if self.tag in ("a", "area") else ""

    @property
    def followed(self) -> bool:
        nofollow = "nofollow" in (self.rel or "").lower().split()
        return self.expected is not None and not nofollow

    def html(self) -> str:
        if self.markup is not None:
            return self.markup
        href = html.escape(self.href, quote=True)
        rel = f' rel="{self.rel}"' if self.rel else ""
        label = html.escape(self.label)
        if self.tag == "area":
            return f'<map name="map"><area shape="rect" coords="0,0,10,10" href="{href}" alt="{label}"{rel}></map>'
        if self.tag == "iframe":
            return f'<iframe src="{href}" title="{label}"></iframe>'
        return f'<a href="{href}"{rel}>{label}</a>'


def document(title: str, paragraphs=(), links=(), *, lang="en", head="", body_extra="", direction=None) -> str:
    """A small, ordinary HTML page: title, headline, paragraphs, a link list."""
    dir_attr = f' dir="{direction}"' if direction else ""
    items = "".join(f"<li>{link.html()}</li>\n" for link in links)
    return (
        "<!DOCTYPE html>\n"
        f'<html lang="{lang}"{dir_attr}>\n<head>\n{head}<title>{html.escape(title)}</title>\n</head>\n'
        f"<body>\n<h1>{html.escape(title)}</h1>\n"
        + "".join(f"<p>{html.escape(p)}</p>\n" for p in paragraphs)
        + body_extra
        + (f'<ul class="links">\n{items}</ul>\n' if items else "")
        + "<footer>mrcrawl test web</footer>\n</body>\n</html>\n"
    )


def digits_in_words(text: str) -> str:
    """`text` with its numbers spelled digit by digit ("page-10" -> "page-one
    zero").  A crawler reads a page's text without its digits (the content
    signature, mrcrawl/page/change.py): pages told apart by numbers alone
    would be one page to it, unless their numbers are also in words."""
    return re.sub("[0-9]+", lambda number: " ".join(DIGIT_NAMES[int(digit)] for digit in number.group()), text)


def query_escape(word: str, label: str) -> str:
    """`word` as it appears in a canonical query when a page in charset `label`
    links to it: WHATWG encodes it in the page's encoding, then percent-encodes
    only the special-query set, so ASCII bytes such as `{` or `]` that land
    inside a multi-byte character stay literal."""
    out = []
    for byte in word.encode(label):
        char = chr(byte)
        if byte < 0x21 or byte > 0x7E or char in "\"#<>'":
            out.append(f"%{byte:02X}")
        else:
            out.append(char)
    return "".join(out)


def tiny_png() -> bytes:
    """A valid 1x1 PNG."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 1x1, 8-bit RGB
    pixels = zlib.compress(b"\0\xff\x80\x00")  # filter byte, one orange pixel
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")


TINY_PDF = (
    b"%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n"
    b"2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n"
    b"3 0 obj<</Type/Page/Parent 2 0 R/MediaBox[0 0 200 200]>>endobj\n"
    b"trailer<</Root 1 0 R>>\n%%EOF\n"
)
