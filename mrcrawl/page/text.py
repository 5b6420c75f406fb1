"""What a page says about itself: headline, keywords, description, publication
date, and its main text, from its lxml tree.

Main text keeps what a reader comes for: the article's paragraphs, one per
line, with whitespace collapsed inside each.  It is found in three steps:

1. The page is cut into blocks, as a browser lays it out: a block element's
   start and end close a paragraph, a <br> does too.  Scripts, styles,
   navigation, headers, footers, sidebars, forms, hidden elements and
   elements whose class or id names boilerplate (menu, cookie banner, share
   buttons, comments, adverts...) are left out whole.
2. The article is where the long paragraphs are.  Each block of real prose
   (long enough, and mostly not link text) credits its weight to its
   container: the element whose children the paragraphs are.  The container
   with the most weight is the article body, together with those of its
   siblings that hold prose too (an article cut into sections, or into one
   wrapper per paragraph).  Comments, related-story teasers and footers are
   elsewhere in the tree, and each comment sits in its own wrapper, so they
   do not add up to an article.
3. Inside that region every block is kept, short ones too (subheadings, a
   one-line paragraph), except link lists ("read also", tags, share
   buttons) and the headline, which the XML holds in its own element.

A page with no block of prose (a home page, a stub) keeps all its blocks
but links and the headline.  The benchmark in mrcrawl.bench.extraction
measures these rules against trafilatura, readability-lxml and jusText.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime, timezone

from lxml import etree

# Elements whose content is never page text.
SKIPPED_TAGS = frozenset(
    "script style noscript template nav header footer aside form iframe frame frameset "
    "head title svg math canvas object embed applet audio video map select button "
    "textarea dialog".split()
)
# Skipped elements that browsers lay out as blocks: the text around them
# is two paragraphs.
_SKIPPED_BLOCK_TAGS = frozenset("nav header footer aside form dialog frameset iframe".split())
# Elements that start a new paragraph.
BLOCK_TAGS = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li ul ol dl dt dd table thead tbody tfoot tr td th caption "
    "blockquote pre section article main figure figcaption address center details "
    "summary fieldset legend hr br body html menu dir".split()
)
# Table cells are blocks too: a layout table puts the menu, the article and
# the sidebar side by side in cells, and a data table's cells are fields.
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

# A block is prose when its text outside links weighs this much.  Han and
# kana characters weigh two: a Chinese or Japanese sentence says in 30
# characters what an English one says in 60.
PROSE_WEIGHT = 60
_CJK_CHARACTERS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A block with more of its characters in links than this is a link list.
MAX_LINK_DENSITY = 0.5


# HTML's whitespace: what browsers collapse.  Other spaces (no-break,
# ideographic U+3000 between Japanese phrases) are content and are kept.
HTML_WHITESPACE = " \t\n\r\f"


def collapse_whitespace(text: str) -> str:
    # String methods, not a regex: re.sub visits every single space of a
    # paragraph, and this ran on every block of every page (20x slower on
    # a clean English paragraph, which has nothing to collapse).
    for space in "\t\n\r\f":
        if space in text:
            text = text.replace(space, " ")
    if "  " in text:
        return " ".join(filter(None, text.split(" ")))
    return text.strip(" ")


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


# --------------------------------------------------------------------------
# Metadata


def _meta_values(root) -> dict[str, str]:
    """The first non-empty content of each <meta name|property|itemprop>, by lower-cased key."""
    values: dict[str, str] = {}
    for meta in root.iter("meta"):
        content = collapse_whitespace(meta.get("content") or "")
        if not content:
            continue
        for attribute in ("name", "property", "itemprop"):
            key = (meta.get(attribute) or "").strip().lower()
            if key:
                values.setdefault(key, content)
    return values


def _element_text(element) -> str:
    return collapse_whitespace("".join(element.itertext()))


def headline(root) -> str:
    """The page's title; else its og:title; else its first <h1>."""
    for title in root.iter("title"):
        text = _element_text(title)
        if text:
            return text
        break
    og_title = _meta_values(root).get("og:title")
    if og_title:
        return og_title
    for heading in root.iter("h1"):
        text = _element_text(heading)
        if text:
            return text
    return ""


def keywords(root) -> str | None:
    """<meta name="keywords"> (else news_keywords, Google News' own), or None when the page has neither."""
    values = _meta_values(root)
    return values.get("keywords") or values.get("news_keywords")


def description(root) -> str | None:
    """<meta name="description">, else og:description; None when the page has neither."""
    values = _meta_values(root)
    return values.get("description") or values.get("og:description")


# Where pages state when an article was published, most explicit first.
_DATE_META_KEYS = (
    "article:published_time", "og:published_time", "datepublished", "publishdate",
    "pubdate", "date", "dc.date.issued", "dc.date", "dcterms.created",
)
_LOOSE_DATE = re.compile(
    r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?"
    r"(?:[T\s]+(\d{1,2})[:時](\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?)?"
)


def normalise_date(value: str) -> str:
    """`value` as ISO 8601 when it reads as a date (with a time and an offset
    when it has them); else `value` itself, whitespace collapsed."""
    text = collapse_whitespace(value)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        parsed = None
    if parsed is not None:
        if len(text) <= 10 and parsed.hour == parsed.minute == 0 and "T" not in text:
            return parsed.date().isoformat()
        return _iso(parsed)
    match = _LOOSE_DATE.search(text)
    if not match:
        return text
    year, month, day, hour, minute, second, offset = match.groups()
    try:
        if hour is None:
            return datetime(int(year), int(month), int(day)).date().isoformat()
        stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
        if offset:
            zone = "+00:00" if offset == "Z" else offset if ":" in offset else f"{offset[:3]}:{offset[3:]}"
            stamp = datetime.fromisoformat(stamp.isoformat() + zone)
    except ValueError:
        return text
    return _iso(stamp)


def _iso(stamp: datetime) -> str:
    text = stamp.isoformat()
    if stamp.tzinfo is not None and stamp.utcoffset() == timezone.utc.utcoffset(None):
        text = text.replace("+00:00", "Z")
    return text


def _json_ld_dates(root):
    """datePublished values of the page's JSON-LD objects, in page order."""
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                value = item.get("datePublished")
                if isinstance(value, str) and value.strip():
                    yield value
                graph = item.get("@graph")
                if graph is not None:
                    stack.append(graph)


def published(root) -> str | None:
    """When the article was published, as the page states it: meta
    (article:published_time, itemprop datePublished...), JSON-LD
    datePublished, an element with itemprop=datePublished, or the first
    <time datetime> inside <article>.  ISO 8601 when it parses; None when
    the page states no date."""
    values = _meta_values(root)
    for key in _DATE_META_KEYS:
        if values.get(key):
            return normalise_date(values[key])
    for value in _json_ld_dates(root):
        return normalise_date(value)
    for element in root.xpath("//*[@itemprop='datePublished'][not(self::meta)]"):
        value = element.get("datetime") or element.get("content") or _element_text(element)
        if value.strip():
            return normalise_date(value)
    for value in root.xpath("//article//time/@datetime"):
        if value.strip():
            return normalise_date(value)
    return None


# --------------------------------------------------------------------------
# Main text


@dataclass
class Block:
    """One paragraph as laid out: its text and where it sits in the tree."""

    text: str
    owner: etree._Element  # the innermost block element its text starts in
    link_characters: int
    characters: int  # not counting whitespace

    @property
    def link_density(self) -> float:
        return self.link_characters / self.characters if self.characters else 0.0

    def prose_weight(self) -> int:
        """How much text outside links the block holds (CJK characters count twice)."""
        if self.link_density > MAX_LINK_DENSITY:
            return 0
        cjk = 0 if self.text.isascii() else len(_CJK_CHARACTERS.findall(self.text))
        weight = (self.characters - self.link_characters) + cjk
        return weight if weight >= PROSE_WEIGHT else 0


def _non_space_length(text: str) -> int:
    return len(text) - sum(text.count(space) for space in HTML_WHITESPACE)


def page_blocks(root, drop_boilerplate_names: bool = True) -> list[Block]:
    """The page's blocks in document order (step 1 of the module docstring).

    Walks the tree iteratively: pages can be nested thousands deep.
    """
    blocks: list[Block] = []
    current: list[str] = []
    open_blocks = [root]
    owner = None  # set by the paragraph's first text that is not whitespace
    link_characters = 0
    link_depth = 0

    def add(text: str) -> None:
        nonlocal owner, link_characters
        current.append(text)
        if owner is None and text.strip(HTML_WHITESPACE):
            owner = open_blocks[-1]
        if link_depth:
            link_characters += _non_space_length(text)

    def end_paragraph() -> None:
        nonlocal owner, link_characters
        if current:
            paragraph = collapse_whitespace("".join(current))
            if paragraph and owner is not None:
                # Collapsed, the paragraph's only whitespace is single spaces.
                characters = len(paragraph) - paragraph.count(" ")
                blocks.append(Block(paragraph, owner, link_characters, characters))
            current.clear()
        owner = None
        link_characters = 0

    skipped = set()
    walker = etree.iterwalk(root, events=("start", "end"))
    for event, element in walker:
        tag = element.tag
        if not isinstance(tag, str):  # comment or processing instruction
            if event == "start":
                walker.skip_subtree()
            elif element.tail:
                add(element.tail)
            continue
        if event == "start":
            if tag in SKIPPED_TAGS or (
                drop_boilerplate_names
                and tag not in _NEVER_BOILERPLATE
                and _is_boilerplate(element)
            ):
                walker.skip_subtree()
                skipped.add(element)
                if tag in BLOCK_TAGS or tag in _SKIPPED_BLOCK_TAGS:
                    end_paragraph()
                continue
            if tag in BLOCK_TAGS:
                end_paragraph()
                open_blocks.append(element)
            elif tag == "a":
                link_depth += 1
            if element.text:
                add(element.text)
        else:
            if element in skipped:
                skipped.discard(element)
                if tag in BLOCK_TAGS or tag in _SKIPPED_BLOCK_TAGS:
                    end_paragraph()
            elif tag in BLOCK_TAGS:
                end_paragraph()
                open_blocks.pop()
            elif tag == "a":
                link_depth -= 1
            if element.tail:
                add(element.tail)
    end_paragraph()
    return blocks


def _wrapper_and_container(block: Block, blocks_inside: dict):
    """The outermost element that holds this block and no other (its
    wrapper), and the wrapper's parent: the container its paragraph is one
    of.  A block whose owner holds other blocks too (text split by <br>
    in a <td>) has no wrapper: the owner is its container."""
    wrapper = block.owner
    if blocks_inside[wrapper] > 1:
        return None, wrapper
    parent = wrapper.getparent()
    # A table cell's container is its row: a row is a record (a name, a
    # comment), not one paragraph of a longer text.
    while parent is not None and blocks_inside[parent] == 1 and wrapper.tag not in CELL_TAGS:
        wrapper, parent = parent, parent.getparent()
    return wrapper, parent if parent is not None else wrapper


def _article_region(root, blocks: list[Block]) -> set | None:
    """Every element of the article's region (step 2), or None when no
    block is prose."""
    # Blocks inside each element, summed up from the owners in one pass:
    # in reverse document order every child comes before its parent.
    blocks_inside: dict = {}
    for block in blocks:
        blocks_inside[block.owner] = blocks_inside.get(block.owner, 0) + 1
    for element in reversed(list(root.iter())):
        count = blocks_inside.get(element)
        if count:
            parent = element.getparent()
            if parent is not None:
                blocks_inside[parent] = blocks_inside.get(parent, 0) + count
    scores: dict = {}
    prose_wrappers = set()
    for block in blocks:
        weight = block.prose_weight()
        if weight:
            wrapper, container = _wrapper_and_container(block, blocks_inside)
            scores[container] = scores.get(container, 0) + weight
            prose_wrappers.add(wrapper)
    if not scores:
        return None
    best = max(scores, key=scores.get)  # the first container wins a tie
    parent = best.getparent()
    tops = [best] if parent is None else [
        sibling for sibling in parent if sibling is best or sibling in scores or sibling in prose_wrappers
    ]
    return {element for top in tops for element in top.iter()}


def _headline_texts(root) -> tuple[str, ...]:
    titles = [_element_text(title) for title in root.iter("title")][:1]
    og_title = _meta_values(root).get("og:title")
    if og_title:
        titles.append(og_title)
    return tuple(title for title in titles if title)


def _is_headline(block: Block, titles: tuple[str, ...]) -> bool:
    return block.owner.tag == "h1" and any(block.text in title for title in titles)


def main_text(root) -> str:
    """The page's main text, found by the rules of the module docstring:
    its paragraphs joined by "\\n", whitespace collapsed inside each."""
    blocks = page_blocks(root)
    if not blocks:
        # Every block had a boilerplate name: the names were not boilerplate after all.
        blocks = page_blocks(root, drop_boilerplate_names=False)
    region = _article_region(root, blocks)
    titles = _headline_texts(root)
    return "\n".join(
        block.text for block in blocks
        if block.link_density <= MAX_LINK_DENSITY
        and not _is_headline(block, titles)
        and (region is None or block.owner in region)
    )
