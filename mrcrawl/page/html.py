"""Parsing page text into an lxml tree, whatever the page holds.

Every job that looks inside pages (links, meta robots, XML) starts here.
The text is already decoded (charset.decode_page), so it is handed to
libxml2 as UTF-8 with that encoding forced: a page's own <meta charset> or
XML declaration must not make the parser decode it a second time.
"""
from __future__ import annotations

import re
import threading

from lxml import etree

_EMPTY_DOCUMENT = b"<html><head></head><body></body></html>"
_LONE_SURROGATES = re.compile("[\ud800-\udfff]")
# libxml2 stops parsing at a nesting depth of 2048 (with huge_tree), which
# would lose everything after a pathological nest.  Such a page is parsed
# again with only the tags that carry links, metadata, paragraphs or the
# boilerplate the text extraction drops; wrappers (div, span, font,
# custom elements...) are what nests that deep.
_WRAPPER_TAGS = re.compile(
    rb"</?(?!(?:a|area|base|frame|iframe|meta|link|title|head|body|html|p|br|h[1-6]|"
    rb"script|style|noscript|template|nav|header|footer|aside|form)[\s/>])[A-Za-z][^<>]*>",
    re.IGNORECASE,
)
# A nest of the tags kept above (<aside>, <h1>, <noscript>, <a><p><a><p>...)
# is still too deep: then only the tags that carry links and metadata are
# kept, none of which nests (an <a> closes the open one; a script's or a
# title's content is text).  The page loses its paragraphs and boilerplate
# marks, not its text and links.
_NESTING_TAGS = re.compile(
    rb"</?(?!(?:a|area|base|frame|iframe|meta|link|title|head|body|html|br|script|style)[\s/>])"
    rb"[A-Za-z][^<>]*>",
    re.IGNORECASE,
)

# lxml parsers keep state while parsing and are not thread-safe; fetch
# threads each get their own.
_local = threading.local()


def _parser() -> etree.HTMLParser:
    parser = getattr(_local, "parser", None)
    if parser is None:
        # huge_tree lifts libxml2's 10 MB text-node and depth-256 limits;
        # the HTML parser expands no entities, so it opens no XML bomb.
        # etree's parser, not lxml.html's: that one looks up a Python class
        # for every element touched (a tenth of the Parser's time), for
        # methods nothing here uses.  No stage reads comments, processing
        # instructions or the id index: leaving them out makes the parse and
        # the walks over the tree 3% faster.
        parser = etree.HTMLParser(recover=True, encoding="utf-8", huge_tree=True, collect_ids=False,
                                  remove_comments=True, remove_pis=True)
        _local.parser = parser
    return parser


def _utf8(text: str) -> bytes:
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # Lone surrogates cannot be encoded; a browser shows U+FFFD.
        return _LONE_SURROGATES.sub("\ufffd", text).encode("utf-8")


def _too_deep(parser: etree.HTMLParser) -> bool:
    """Did the last parse stop at libxml2's nesting limit?"""
    return any(
        entry.type_name == "ERR_RESOURCE_LIMIT" and "depth" in entry.message.lower()
        for entry in parser.error_log.filter_from_fatals()
    )


def parse_html(text: str):
    """The lxml root (an <html> element) of a page's text. Never raises.

    NUL bytes, lone surrogates, XML declarations, 10 MB of text and
    100,000-deep nesting all give a usable document; input with no
    content at all gives an empty <html><head/><body/></html>.
    """
    parser = _parser()
    data = _utf8(text)
    try:
        root = etree.fromstring(data, parser)
        for flattening in (_WRAPPER_TAGS, _NESTING_TAGS):
            if root is None or not _too_deep(parser):
                break
            flattened = etree.fromstring(flattening.sub(b" ", data), parser)
            if flattened is not None:
                root = flattened
    except (etree.LxmlError, ValueError):
        root = None
    if root is None:
        root = etree.fromstring(_EMPTY_DOCUMENT, parser)
    return root
