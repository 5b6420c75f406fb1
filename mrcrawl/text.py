"""A page's headline and main text, from its lxml tree.

The text keeps what a reader comes for: block-level paragraphs, one per
line, with whitespace collapsed inside each.  Scripts, styles, navigation,
headers, footers, sidebars, forms and elements whose class or id names
boilerplate (menu, cookie banner, share buttons, comments, adverts...) are
left out.
"""
from __future__ import annotations

import re

from lxml import etree

# Elements whose content is never page text.
SKIPPED_TAGS = frozenset(
    "script style noscript template nav header footer aside form iframe frame frameset "
    "head title svg math canvas object embed applet audio video map select button "
    "textarea dialog".split()
)
# Elements that start a new paragraph.
BLOCK_TAGS = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li ul ol dl dt dd table thead tbody tfoot tr caption "
    "blockquote pre section article main figure figcaption address center details "
    "summary fieldset legend hr br body html menu dir".split()
)
# Table cells are separated by a space, not a new paragraph.
CELL_TAGS = frozenset(("td", "th"))

# Words in a class or id that mark boilerplate.  Matched against whole
# words of the name ("main-nav" and "nav_bar" match "nav"; "canvas" does not).
BOILERPLATE_WORDS = frozenset(
    "menu menus nav navbar navigation breadcrumb breadcrumbs footer sidebar "
    "cookie cookies consent gdpr share sharing social comment comments "
    "advert adverts advertisement advertising ad ads adsense sponsor sponsored "
    "promo banner popup modal newsletter subscribe related pagination pager "
    "toolbar skip masthead".split()
)
# Containers of the main content itself: never dropped for their names
# (a <body class="has-sidebar"> must not take the whole page with it).
_NEVER_BOILERPLATE = frozenset(("html", "body", "main", "article"))
_NAME_WORDS = re.compile(r"[a-z]+")
_CAMEL_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)


# HTML's whitespace: what browsers collapse.  Other spaces (no-break,
# ideographic U+3000 between Japanese phrases) are content and are kept.
_HTML_WHITESPACE = re.compile(r"[ \t\n\r\f]+")


def collapse_whitespace(text: str) -> str:
    return _HTML_WHITESPACE.sub(" ", text).strip(" ")


def _is_boilerplate(element) -> bool:
    if element.get("hidden") is not None or element.get("aria-hidden") == "true":
        return True
    style = element.get("style")
    if style and _HIDDEN_STYLE.search(style):
        return True
    names = " ".join(filter(None, (element.get("class"), element.get("id"))))
    if not names:
        return False
    words = _NAME_WORDS.findall(_CAMEL_CASE.sub(" ", names).lower())
    return not BOILERPLATE_WORDS.isdisjoint(words)


def headline(root) -> str:
    """The page's title; else its og:title; else its first <h1>."""
    for title in root.iter("title"):
        text = collapse_whitespace("".join(title.itertext()))
        if text:
            return text
        break
    for meta in root.iter("meta"):
        if (meta.get("property") or meta.get("name") or "").strip().lower() == "og:title":
            text = collapse_whitespace(meta.get("content") or "")
            if text:
                return text
    for heading in root.iter("h1"):
        text = collapse_whitespace("".join(heading.itertext()))
        if text:
            return text
    return ""


def main_text(root, drop_boilerplate_names: bool = True) -> str:
    """The page's paragraphs, joined by "\\n", whitespace collapsed inside.

    Walks the tree iteratively (pages can be nested thousands deep).  If
    dropping elements by their class/id names leaves nothing, the names
    were not boilerplate after all, and the text is taken without that rule.
    """
    paragraphs: list[str] = []
    current: list[str] = []

    def end_paragraph() -> None:
        if current:
            paragraph = collapse_whitespace("".join(current))
            if paragraph:
                paragraphs.append(paragraph)
            current.clear()

    def element_boundary(tag: str) -> None:
        # A block element's start and end both close the paragraph; a table
        # cell's only separate its words from the next cell's.
        if tag in BLOCK_TAGS:
            end_paragraph()
        elif tag in CELL_TAGS:
            current.append(" ")

    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = element.tag
        if not isinstance(tag, str):  # comment or processing instruction
            if event == "start":
                walker.skip_subtree()
            elif element.tail:
                current.append(element.tail)
            continue
        if event == "start":
            if tag in SKIPPED_TAGS or (
                drop_boilerplate_names
                and tag not in _NEVER_BOILERPLATE
                and _is_boilerplate(element)
            ):
                walker.skip_subtree()
                continue
            element_boundary(tag)
            if element.text:
                current.append(element.text)
        else:
            element_boundary(tag)
            if element.tail:
                current.append(element.tail)
    end_paragraph()
    if not paragraphs and drop_boilerplate_names:
        return main_text(root, drop_boilerplate_names=False)
    return "\n".join(paragraphs)
