"""Which charset decodes a page, and the one function that decodes it.

A doc record keeps the exact body bytes plus `encoding`, the Python codec
that turns them into the page's text.  `detect_encoding` picks that codec
when the page is fetched; `decode_page` is what every job calls to get the
text back, so all of them see the same characters.

The choice follows browsers (WHATWG Encoding and HTML standards): what
the page declares (charset_labels.py: a byte order mark, the HTTP
Content-Type charset, a <meta> found by the standard's prescan, an XML
declaration), else statistical detection (charset_detection.py).  One
departure: a <meta> or XML declaration of a legacy charset loses to the
bytes when they are valid UTF-8 with some non-ASCII (a copied template's
leftover); a BOM and the HTTP header are obeyed as they are.
"""
from __future__ import annotations

from mrcrawl.page.charset_detection import guess_encoding
from mrcrawl.page.charset_labels import DEFAULT_ENCODING, bom_encoding, codec_for_label, declared_encoding
from mrcrawl.store.records import body_bytes


def detect_encoding(body: bytes, content_type: str | None) -> str:
    """The Python codec that decodes this page, as a browser would choose it:
    what the page declares (BOM, HTTP header, <meta>, XML declaration; a
    legacy <meta> or XML declaration on valid UTF-8 bytes gives UTF-8), else
    statistical detection."""
    return declared_encoding(body, content_type) or guess_encoding(body)


def decode_body(body: bytes, encoding: str | None) -> str:
    """The body's text in `encoding` (bad bytes become U+FFFD), BOM removed.

    `encoding` is a Python codec or a WHATWG label; labels are widened as
    browsers widen them ("iso-8859-1" decodes as windows-1252).  A BOM
    decides, as it did in detect_encoding.
    """
    codec = bom_encoding(body) or codec_for_label(encoding) or DEFAULT_ENCODING
    text = body.decode(codec, errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


def decode_page(doc: dict, body: bytes | None = None) -> str:
    """The text of a doc record's page: THE decoder every job uses.

    Records written before `encoding` was known (or without it) are
    detected from their bytes and Content-Type here, the same way.
    `body` spares decoding the base64 again when the caller has the bytes.
    """
    if body is None:
        body = body_bytes(doc)
    encoding = doc.get("encoding") or detect_encoding(body, doc.get("content_type"))
    return decode_body(body, encoding)
