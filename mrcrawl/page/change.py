"""What the revisit policy reads of a fetched page: whether it changed, and
whether it is a hub.

A change is a change of the page's signature, `page_signature(root)`: a
digest (blake2b, 128 bits, hex) of the page's visible text OUTSIDE links, in
UTF-8, with every digit removed (0-9 and every other Unicode decimal digit)
and runs of whitespace (HTML's: ASCII) collapsed to one space.  Visible text is the text of every element but <head>,
<script>, <style>, <noscript> and <template> (and never comments or
attribute values).

Why not the bytes: a digest of the raw body changes on every fetch of a page
that prints the time or today's date, a view counter, a rotating list of
headlines or adverts, a session token in a URL, a cache-busting query on a
script.  A news site's pages nearly all do, so every revisit would count as a
change and the intervals would never grow.  Those moving parts are digits
(clocks, dates, counters) or links (headlines, teasers, adverts, every href),
so the signature leaves them out.  What is left is the prose of the page: a
corrected article, a new paragraph, an edited sentence still changes it.
What it misses, on purpose: a change to nothing but numbers (a corrected
figure), to a link's text or target, or to markup that shows no text (an
image swapped).  A page with no visible text outside links has the signature
of the empty text: it is judged unchanged, and its links are what a revisit
of it is for anyway (it is a hub, below).

A hub (a home page, a section page) is a page that leads to other pages
rather than saying something itself: most of its visible text is link text.
Its link density is the characters of anchor text (of <a href>) over the
characters of all visible text, whitespace not counted; a page whose density
is at least the crawl's `revisit.hub_link_density` is a hub.  A page with no
visible text but links (a frameset, a wall of image links) is a hub; a page
with neither is not.  Hubs are revisited on every run, whether or not their
signature changed: their links are what changes.

Both run on every page the Parser reads, so the tree is read once, in C: one
XSLT transform (libxslt) collects the visible text outside links and the
text of the links, and C string methods and one regex clean it.  (A Python
walk over the tree took more than twice as long, XPath's ancestor tests ten
times.)  libxslt follows templates up to 3,000 deep, and parse_html's trees
are at most 2,048 deep (libxml2's own limit).
"""
from __future__ import annotations

import hashlib
import re
import threading
from typing import NamedTuple

from lxml import etree

from mrcrawl.config import RevisitConfig
from mrcrawl.page.links import LINK_ATTRIBUTES

# Hidden: <head> (the title is shown on no page), scripts and styles, the
# fallback of scripts, inert templates; and comments.  A link is an <a> with
# an href: <a name> is an anchor, its text is text.  The links' text is taken
# from the outermost links only, so that a link inside a link counts once.
_STYLESHEET = b"""\
<xsl:stylesheet version="1.0" xmlns:xsl="http://www.w3.org/1999/XSL/Transform">
  <xsl:template match="/">
    <texts>
      <outside><xsl:apply-templates/></outside>
      <links><xsl:apply-templates select="//a[@href][not(ancestor::a[@href])]" mode="link"/></links>
    </texts>
  </xsl:template>
  <xsl:template match="head|script|style|noscript|template|a[@href]|comment()|processing-instruction()"/>
  <xsl:template match="head|script|style|noscript|template|comment()|processing-instruction()" mode="link"/>
  <xsl:template match="*" mode="link"><xsl:apply-templates mode="link"/></xsl:template>
  <xsl:template match="text()" mode="link"><xsl:value-of select="."/></xsl:template>
</xsl:stylesheet>
"""
_LINK_TAGS = tuple(LINK_ATTRIBUTES)

_DIGITS = re.compile(r"\d+")  # every Unicode decimal digit: Arabic-Indic, full-width...
# HTML's whitespace, and \v, which bytes.split() splits on too.  Other spaces
# (no-break, ideographic) are characters, as maintext.py counts them.
_WHITESPACE = " \t\n\r\f\v"

# One compiled transform per thread, as html.py keeps one parser per thread.
_local = threading.local()


def _texts(root) -> tuple[str, str]:
    """The page's visible text outside links, and the text of its links."""
    transform = getattr(_local, "transform", None)
    if transform is None:
        transform = _local.transform = etree.XSLT(etree.XML(_STYLESHEET))
    outside, links = transform(root).getroot()
    return outside.text or "", links.text or ""


class PageSignals(NamedTuple):
    """What one pass over a page's tree yields for the revisit policy."""

    signature: str  # blake2b-128 hex of the visible text outside links, digits out, whitespace collapsed
    text_characters: int  # characters of all visible text, link text included, whitespace not counted
    link_characters: int  # characters of the visible text inside <a href>, whitespace not counted
    has_links: bool  # the page has an a[href], area[href], frame[src] or iframe[src], nofollow or not

    @property
    def link_density(self) -> float:
        """Link characters over all visible characters; 0.0 for a page without text."""
        return self.link_characters / self.text_characters if self.text_characters else 0.0

    def is_hub(self, hub_link_density: float) -> bool:
        """Whether the page is a hub at this threshold (config.revisit.hub_link_density)."""
        if self.text_characters == 0:
            return self.has_links
        return self.link_characters >= hub_link_density * self.text_characters


def page_signals(root) -> PageSignals:
    """The signature and link density of a page's lxml tree (parse_html's root)."""
    outside, inside = _texts(root)
    link_characters = _non_space_length(inside)
    text_characters = _non_space_length(outside) + link_characters
    has_links = link_characters > 0 or _has_links(root)
    return PageSignals(_signature(outside), text_characters, link_characters, has_links)


def page_signature(root) -> str:
    """What counts as a change of the page (see the module docstring)."""
    return _signature(_texts(root)[0])


def is_hub(root, hub_link_density: float = RevisitConfig.hub_link_density) -> bool:
    """Whether the page is a hub: at least `hub_link_density`
    (config.revisit.hub_link_density) of its visible text is link text, or it
    has links and no text."""
    return page_signals(root).is_hub(hub_link_density)


def _signature(text: str) -> str:
    if not text.isascii():
        text = _DIGITS.sub("", text)
    # ASCII digits go in C, on the UTF-8 bytes (no multi-byte sequence holds
    # an ASCII byte); bytes.split() splits on HTML's whitespace, ASCII only.
    data = text.encode("utf-8", "surrogatepass").translate(None, b"0123456789")
    return hashlib.blake2b(b" ".join(data.split()), digest_size=16).hexdigest()


def _non_space_length(text: str) -> int:
    return len(text) - sum(text.count(space) for space in _WHITESPACE)


def _has_links(root) -> bool:
    """Whether the page has a link element with a target (any rel); stops at the first."""
    return any(element.get(LINK_ATTRIBUTES[element.tag]) is not None for element in root.iter(_LINK_TAGS))
