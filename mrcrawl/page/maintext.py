"""A page's main text, from its lxml tree: main_text(), and the blocks it is
found among (page_blocks(), Block).

Main text keeps what a reader comes for: the article's paragraphs, one per
line, with whitespace collapsed inside each.  It is found in four steps:

1. The page is cut into blocks, as a browser lays it out: a block element's
   start and end close a paragraph, a <br> does too.  Scripts, styles and
   embedded objects are left out.  Blocks inside <nav>, <header>, <footer>,
   <aside> (but an <article>'s own header and footer), hidden elements and
   elements whose class or id names boilerplate (menu, sidebar, cookie
   banner, share buttons, comments, adverts, galleries...) are marked;
   marked inline elements (an ad <span>) are left out whole.
2. The article is where the long paragraphs are.  Each block of real prose
   (long enough, and mostly not link text) credits its weight to its
   container: the element whose children the paragraphs are.  Prose in a
   list item weighs half: a list of long items is a list of teasers more
   often than an article.  The container with the most weight is the
   article body, together with those of its siblings that hold prose too
   (an article cut into sections, or into one wrapper per paragraph).
   Comments, related-story teasers and footers are elsewhere in the tree,
   and each comment sits in its own wrapper, so they do not add up to an
   article.  A region holding under MIN_REGION_SHARE of the page's prose
   is widened to its parent; one holding under MIN_MAIN_SHARE of the prose
   of the page's <main> (a landing page's sections) is widened to it.
3. Marks are for leaves, not wrappers.  The article is first looked for
   without the marked blocks.  When what is found holds a small share of
   the page's prose (MIN_ARTICLE_SHARE), a mark was on the article's
   wrapper (div#ad-portal, .content-with-sidebar-wrp, an ASP.NET <form>):
   then only the marked elements that hold a small share of the prose are
   left out, and the article is looked for again.  Content hidden from
   every reader (aria-hidden) is left out then, whatever its size.  Marked
   block elements are walked only when that might happen, the largest
   first: once the article found without them holds enough of the prose
   the rest could add (their text but scripts, styles and menus' links),
   those are never looked into.
4. Inside the region every block is kept, short ones too (subheadings, a
   one-line paragraph), except link lists ("read also", tags, share
   buttons) and the headline, which the XML holds in its own element:
   an <h1> whose text is part of the page's title or og:title
   (mrcrawl.page.metadata.headline_texts).

A page with no block of prose (a home page, a stub) keeps all its blocks
but marked ones, links and the headline.  `python -m mrcrawl.bench.extraction`
measures these rules against trafilatura, readability-lxml and jusText on
generated pages and on real pages with human-made truth.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from lxml import etree

from mrcrawl.page.metadata import HTML_WHITESPACE, collapse_whitespace, headline_texts

# Elements whose content is never page text.
SKIPPED_TAGS = frozenset(
    "script style noscript template iframe frame frameset "
    "head title svg math canvas object embed applet audio video map select button "
    "textarea dialog".split()
)
# Skipped elements that browsers lay out as blocks: the text around them
# is two paragraphs.
_SKIPPED_BLOCK_TAGS = frozenset("dialog frameset iframe".split())
# Elements that start a new paragraph.  <form> is one of them, not a
# skipped tag: ASP.NET pages wrap the whole page in <form id="Form1">.
BLOCK_TAGS = frozenset(
    "p div h1 h2 h3 h4 h5 h6 li ul ol dl dt dd table thead tbody tfoot tr td th caption "
    "blockquote pre section article main figure figcaption address center details "
    "summary fieldset legend hr br body html menu dir form nav header footer aside".split()
)
# Elements that mark boilerplate by their tag, as class and id words do by
# their names: small ones are dropped, but tag soup can leave the whole
# page inside an unclosed <header>.
MARKED_TAGS = frozenset("nav header footer aside".split())
# Table cells are blocks too: a layout table puts the menu, the article and
# the sidebar side by side in cells, and a data table's cells are fields.
CELL_TAGS = frozenset(("td", "th"))

# Words in a class or id that mark boilerplate.  Matched against whole
# words of the name ("main-nav" and "nav_bar" match "nav"; "canvas" does not).
BOILERPLATE_WORDS = frozenset(
    "menu menus nav navbar navigation breadcrumb breadcrumbs footer sidebar "
    "credit credits copyright cookie cookies consent gdpr share sharing social comment comments "
    "advert adverts advertisement advertising ad ads adsense sponsor sponsored "
    "promo banner popup modal newsletter subscribe related pagination pager "
    "toolbar skip masthead respond commentform foot profile bio about gallery".split()
)
# Of those, the words of a comment thread: a thread outweighs a short
# article, but it is never the wrapper of the page (_without_boilerplate).
COMMENT_WORDS = frozenset("comment comments respond commentform".split())
# Containers of the main content itself: never dropped for their names
# (a <body class="has-sidebar"> must not take the whole page with it).
_NEVER_BOILERPLATE = frozenset(("html", "body", "main", "article"))
_NAME_WORDS = re.compile(r"[a-z]+")
# A lower-case hyphenated name of more words is the slug of a heading or a
# title ("sharing-with-a-single-developer"), not a component's name
# (ASP.NET's "ctl00_RightColumn_ucMostCommented" is one).
MAX_NAME_WORDS = 4
_SLUG = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)+")
_CAMEL_CASE = re.compile(r"(?<=[a-z])(?=[A-Z])")
# WordPress and its kin class a post by its categories and tags
# ("category-social", "tag-ads"): topics, not boilerplate.
_TAXONOMY_CLASSES = re.compile(r"\b(?:category|tag)-\S*")
_HIDDEN_STYLE = re.compile(r"display\s*:\s*none|visibility\s*:\s*hidden", re.IGNORECASE)

# A block is prose when its text outside links weighs this much.  Han and
# kana characters weigh two: a Chinese or Japanese sentence says in 30
# characters what an English one says in 60.
PROSE_WEIGHT = 60
_CJK_CHARACTERS = re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A block with more of its characters in links than this is a link list.
MAX_LINK_DENSITY = 0.5
# A marked element (a boilerplate class or id word, or hidden) holding at
# least this share of the page's prose wraps the article, not boilerplate.
WRAPPER_SHARE = 2 / 3
# The article holds at least this share of the page's prose, marked blocks
# included, or the marks are looked at again (_without_boilerplate).
MIN_ARTICLE_SHARE = 0.2
# A container holding the best one is the article when its own prose is
# worth this share of the best one's.
NESTED_ARTICLE_SHARE = 0.5
# The article's region holds at least this share of the page's prose, or
# it is widened to its parent until it does.
MIN_REGION_SHARE = 0.3
# A region holding under this share of the prose of the page's <main> (the
# author's own mark of the dominant content) is widened to the <main>.
MIN_MAIN_SHARE = 0.5
# Elements that are items of a list.  Prose in them weighs half: a list of
# long items is a list of teasers more often than an article.
ITEM_TAGS = frozenset(("li", "dd", "dt"))


def _is_marked(attributes: list[tuple[str, str]]) -> bool:
    """Whether an element with these attributes (its items()) is hidden, or
    named (class or id) as boilerplate."""
    for name, value in attributes:
        if name == "class" or name == "id":
            # Class and id values repeat within a page and across a site's
            # pages: each distinct one is judged once.
            marked = _BOILERPLATE_NAMES.get(value)
            if marked is None:
                marked = _BOILERPLATE_NAMES.put(value, _is_boilerplate_name(value))
            if marked:
                return True
        elif name in _HIDING_ATTRIBUTES and (
                name == "hidden" or (name == "aria-hidden" and value == "true")
                or (name == "style" and _HIDDEN_STYLE.search(value) is not None)):
            return True
    return False


_HIDING_ATTRIBUTES = frozenset(("hidden", "aria-hidden", "style"))


def _is_aria_hidden(element) -> bool:
    """Hidden from every reader, assistive ones too.  display:none is not
    that strong: collapsed tabs and accordions hold articles."""
    return element.get("aria-hidden") == "true"


def _is_comments(element) -> bool:
    return not COMMENT_WORDS.isdisjoint(_name_words(element))


def _name_words(element) -> frozenset:
    """The words of an element's class and id."""
    class_names, element_id = element.get("class"), element.get("id")
    if not element_id:
        return _words_of(class_names) if class_names else _NO_WORDS
    return _words_of(element_id) | _words_of(class_names) if class_names else _words_of(element_id)


_NO_WORDS: frozenset = frozenset()


def _is_boilerplate_name(names: str) -> bool:
    """Whether a class or id value holds a boilerplate word of its
    _words_of, mostly found without them: a page has a hundred distinct
    names, most of them new to the caches, and splitting each into its
    words took up to a fifteenth of the time a page took."""
    # Every word of the value, taxonomy classes and slugs too: _words_of
    # only drops some of these, so none boilerplate here means none there.
    words = _split_words(names)
    if BOILERPLATE_WORDS.isdisjoint(words):
        return False
    # No taxonomy class, and no name long enough to be a slug: it drops none.
    if len(words) <= MAX_NAME_WORDS and "category-" not in names and "tag-" not in names:
        return True
    return not BOILERPLATE_WORDS.isdisjoint(_words_of(names))


def _split_words(names: str) -> list[str]:
    """The lower-case words of class or id names, camelCase split first
    (most names are lower case already)."""
    return _NAME_WORDS.findall(names if names.islower() else _CAMEL_CASE.sub(" ", names).lower())


def _words_of(names: str) -> frozenset:
    words = _NAMES_SEEN.get(names)
    if words is None:
        text = _TAXONOMY_CLASSES.sub(" ", names) if "category-" in names or "tag-" in names else names
        found = set()
        for name in text.split():
            name_words = _split_words(name)
            if len(name_words) <= MAX_NAME_WORDS or not _SLUG.fullmatch(name):
                found.update(name_words)
        words = _NAMES_SEEN.put(names, frozenset(found))
    return words


class _NameCache(dict):
    """What was found of each class or id value, forgotten all at once when
    it holds NAMES_CACHED names or NAME_CHARS_CACHED characters of them: a
    page can make every name unique, and one name can be the whole page."""

    def __init__(self):
        super().__init__()
        self.characters = 0

    def put(self, name: str, found):
        if len(self) >= NAMES_CACHED or self.characters + len(name) > NAME_CHARS_CACHED:
            self.clear()
            self.characters = 0
        self[name] = found
        self.characters += len(name)
        return found


NAMES_CACHED = 50_000
NAME_CHARS_CACHED = 4_000_000
# Each distinct class or id is judged once (in _is_marked), and split into
# words once.
_NAMES_SEEN = _NameCache()
_BOILERPLATE_NAMES = _NameCache()


@dataclass(slots=True)
class Block:
    """One paragraph as laid out: its text and where it sits in the tree."""

    text: str  # as the page has it: whitespace is collapsed only in what is kept
    owner: etree._Element  # the innermost block element its text starts in
    link_text: str  # the part of it inside links
    # The marked elements around it (step 1 of the module docstring),
    # outermost first: whether they are boilerplate is decided by how much
    # of the page's prose they hold (_without_boilerplate).
    marked_by: tuple
    in_item: bool  # inside a list item (ITEM_TAGS)
    _characters: int = -1
    _link_characters: int = -1

    # Characters are counted when first asked: most blocks are too short to
    # be prose, and most are not kept.
    @property
    def characters(self) -> int:
        """Not counting whitespace."""
        if self._characters < 0:
            self._characters = _non_space_length(self.text)
        return self._characters

    @property
    def link_characters(self) -> int:
        """Of the characters, those inside links."""
        if self._link_characters < 0:
            self._link_characters = _non_space_length(self.link_text) if self.link_text else 0
        return self._link_characters

    @property
    def link_density(self) -> float:
        return self.link_characters / self.characters if self.characters else 0.0

    def prose_weight(self) -> float:
        """How much text outside links the block holds (CJK characters count
        twice), halved in a list item."""
        text = self.text
        # A CJK character weighs two, any other one: shorter texts weigh too little.
        if len(text) < PROSE_WEIGHT and (2 * len(text) < PROSE_WEIGHT or text.isascii()):
            return 0
        if self.link_density > MAX_LINK_DENSITY:
            return 0
        cjk = 0 if text.isascii() else len(_CJK_CHARACTERS.findall(text))
        weight = (self.characters - self.link_characters) + cjk
        if weight < PROSE_WEIGHT:
            return 0
        return weight / 2 if self.in_item else weight


def _non_space_length(text: str) -> int:
    return len(text) - text.count(" ") - text.count("\n") - text.count("\t") - text.count("\r") - text.count("\f")


def _is_link(href: str | None) -> bool:
    """Whether an <a> with this href goes somewhere.  `javascript:` hrefs
    and <a name> are text to a reader; some sites put all their paragraphs
    in them."""
    if href is None:
        return False
    return href[:1] not in "jJ \t\n\r\f" or not href.lstrip(HTML_WHITESPACE)[:11].lower() == "javascript:"


def _heads_an_article(element) -> bool:
    """An <article>'s own <header> or <footer> (its standfirst, byline,
    notes): part of the article, not of the site's frame."""
    return element.tag in _ARTICLE_PARTS and next(element.iterancestors("article"), None) is not None


_ARTICLE_PARTS = frozenset(("header", "footer"))


def _holds_blocks(element) -> bool:
    # lxml's own iteration: parse_html keeps nesting under 2,048 deep, so
    # even nested <span class="ad"> around a paragraph stay cheap.
    return len(element) > 0 and next(element.iterdescendants(*BLOCK_TAGS), None) is not None


# What page_blocks does at an element's start and end, by its tag: one dict
# lookup per element, because the walk visits every element of every page.
_INLINE, _ANCHOR, _BLOCK, _MARKED_BLOCK, _SKIPPED, _SKIPPED_BLOCK = range(6)
_KINDS = {
    **{tag: _BLOCK for tag in BLOCK_TAGS},
    **{tag: _MARKED_BLOCK for tag in MARKED_TAGS},
    **{tag: _SKIPPED for tag in SKIPPED_TAGS},
    **{tag: _SKIPPED_BLOCK for tag in _SKIPPED_BLOCK_TAGS},
    "a": _ANCHOR,
}
# Elements whose class and id are not read: the containers of the main
# content; void elements (<img>, <br>...), which hold no text, so a mark on
# them would change nothing (a fifth of a page's elements are void); and
# links, whose text is link text, which link density already tells apart
# (reading the names and long hrefs of a page's links was a sixth of the
# time the walk took).
_UNNAMED_TAGS = _NEVER_BOILERPLATE | frozenset(
    "a area base br col embed hr img input keygen link meta param source track wbr".split())


@dataclass(slots=True)
class LeftOut:
    """A marked block element that page_blocks left unwalked, and what was
    open around it: what walking it later needs to give the blocks that
    one whole walk gives."""

    element: etree._Element
    at: int  # how many blocks come before its own
    marked_by: tuple  # the marked elements around it, outermost first
    in_item: bool
    in_link: bool


# Stands for a list item or a link open around a left-out element.
_OPEN_AROUND = object()


def page_blocks(root, left_out: list[LeftOut] | None = None, around: LeftOut | None = None) -> list[Block]:
    """The page's blocks in document order (step 1 of the module docstring).

    With `left_out`, marked block elements are not walked but appended to
    it: the article is looked for without them first (main_text).  With
    `around`, `root` is such an element, and its blocks are those the whole
    page's walk gives.

    Walks the tree iteratively: pages can be nested thousands deep.  This
    loop runs for every element of every page, so it does the least it
    can: an end event needs no tag (the stacks know what is open), and a
    paragraph's whitespace is collapsed only if it is kept (main_text).
    """
    blocks: list[Block] = []
    texts: list[str] = []  # the open paragraph's texts, from its first that is not whitespace
    link_texts: list[str] = []  # those of them inside links
    open_blocks = [root]
    # The open elements that are marked (step 1), outermost first; the open
    # <a> elements that go somewhere; the open list items (ITEM_TAGS).
    marked_open: list = list(around.marked_by) if around else []
    links_open: list = [_OPEN_AROUND] if around and around.in_link else []
    items_open: list = [_OPEN_AROUND] if around and around.in_item else []
    owner = None  # set by the paragraph's first text that is not whitespace
    marked_by: tuple = ()
    in_item = False
    kind_of = _KINDS.get

    def end_paragraph() -> None:
        """Closes the open paragraph; only called while one is open."""
        nonlocal owner
        paragraph = "".join(texts)
        texts.clear()
        link_text = ""
        if link_texts:
            link_text = "".join(link_texts)
            link_texts.clear()
        blocks.append(Block(paragraph, owner, link_text, marked_by, in_item))
        owner = None

    skipped = None  # skip_subtree() makes a skipped element's end the next event
    # Comments and processing instructions are events of their own: they
    # hold no page text, but their tails do (React writes "very<!-- -->
    # recently"), and without these events iterwalk would not show them.
    walker = etree.iterwalk(root, events=("start", "end", "comment", "pi"))
    add_text, add_link_text = texts.append, link_texts.append
    for event, element in walker:
        if event == "start":
            tag = element.tag
            kind = kind_of(tag, _INLINE)
            if kind >= _SKIPPED:
                walker.skip_subtree()
                skipped = element
                if kind == _SKIPPED_BLOCK and owner is not None:
                    end_paragraph()
                continue
            if (kind == _MARKED_BLOCK and not _heads_an_article(element)) or (
                    tag not in _UNNAMED_TAGS and _is_marked(element.items())):
                # A marked inline element (a share link, an ad <span>) is a
                # leaf: dropped here.  One that holds blocks may wrap the article.
                if kind < _BLOCK and not _holds_blocks(element):
                    walker.skip_subtree()
                    skipped = element
                    continue
                if left_out is not None and kind >= _BLOCK:
                    if owner is not None:
                        end_paragraph()
                    left_out.append(LeftOut(element, len(blocks), tuple(marked_open), bool(items_open),
                                            bool(links_open)))
                    walker.skip_subtree()
                    skipped = element
                    continue
                marked_open.append(element)
            if kind >= _BLOCK:
                if owner is not None:
                    end_paragraph()
                open_blocks.append(element)
                if tag in ITEM_TAGS:
                    items_open.append(element)
            elif kind == _ANCHOR and _is_link(element.get("href")):
                links_open.append(element)
            text = element.text
        else:  # an end; or a comment or a processing instruction, which no check below matches
            if element is open_blocks[-1]:
                if owner is not None:
                    end_paragraph()
                if element is root:  # its tail is not inside it
                    break
                open_blocks.pop()
                if items_open and items_open[-1] is element:
                    items_open.pop()
            elif element is skipped:
                skipped = None
                if owner is not None and element.tag in _SKIPPED_BLOCK_TAGS:
                    end_paragraph()
            elif links_open and links_open[-1] is element:
                links_open.pop()
            if marked_open and marked_open[-1] is element:
                marked_open.pop()
            text = element.tail
        if text:
            if owner is None:
                # Whitespace before a paragraph's first text is dropped, as collapsing would.
                if not text.strip(HTML_WHITESPACE):
                    continue
                owner = open_blocks[-1]
                marked_by = tuple(marked_open) if marked_open else ()
                in_item = bool(items_open)
            add_text(text)
            if links_open:
                add_link_text(text)
    if owner is not None:
        end_paragraph()
    return blocks


def _without_boilerplate(blocks: list[Block], weights: list[float]) -> list[int]:
    """The indexes of the blocks that are not boilerplate.

    A class or id word (or a hidden attribute) marks a leaf: a menu, a
    share bar, a comment list, an ad.  The same words also name the
    wrappers of whole pages (div#ad-portal, .content-with-sidebar,
    .theiaStickySidebar), so a marked element that holds at least
    WRAPPER_SHARE of the page's prose is a wrapper, and its mark is ignored;
    a comment thread or an <aside>, <nav>, <header> or <footer> must hold
    all of it.  Content hidden from every reader (aria-hidden) is left out
    first, and the shares are of the prose that is left.  When every block
    is marked and none is prose, the marks were not boilerplate either: all
    blocks are kept.
    """
    hidden = {element for block, weight in zip(blocks, weights) if weight
              for element in block.marked_by if _is_aria_hidden(element)}
    visible = [hidden.isdisjoint(block.marked_by) for block in blocks]
    total = sum(weight for weight, shown in zip(weights, visible) if shown)
    if not total:  # all the prose is hidden: then hiding is not what tells it
        hidden, visible, total = set(), [True] * len(blocks), sum(weights)
    prose_inside: dict = {}
    for block, weight, shown in zip(blocks, weights, visible):
        if weight and shown:
            for element in block.marked_by:
                prose_inside[element] = prose_inside.get(element, 0) + weight
    wrappers = {element for element, prose in prose_inside.items()
                if prose >= (total if element.tag in MARKED_TAGS or _is_comments(element) else WRAPPER_SHARE * total)}
    kept = [index for index, block in enumerate(blocks) if wrappers.issuperset(block.marked_by)]
    return kept or list(range(len(blocks)))


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


def _first_class(element) -> str:
    names = element.get("class")
    return names.split(None, 1)[0] if names and not names.isspace() else ""


def _article_region(blocks: list[Block], weights: list[float]) -> tuple[set | None, float]:
    """The owners of the blocks in the article's region (step 2): the
    region's tops and the block elements inside them; None when no block
    is prose.  And how much prose the region holds."""
    # Blocks and prose inside each owner and each of its ancestors: the
    # only elements asked about.  Each owner's ancestors are climbed up to
    # one met already, which lists every such element after its parent;
    # then the sums go up, children first.  Going over every block element
    # of the tree instead made this function take twice as long.
    blocks_inside: dict = {}
    prose_inside: dict = {}
    for block, weight in zip(blocks, weights):
        blocks_inside[block.owner] = blocks_inside.get(block.owner, 0) + 1
        prose_inside[block.owner] = prose_inside.get(block.owner, 0) + weight
    owners = list(blocks_inside)
    parents: dict = {}  # of the owners and their ancestors, parents first
    for owner in owners:
        climbed = []
        element = owner
        while element is not None and element not in parents:
            parent = element.getparent()
            climbed.append((element, parent))
            element = parent
        parents.update(reversed(climbed))
    for element, parent in reversed(parents.items()):
        if parent is not None:
            blocks_inside[parent] = blocks_inside.get(parent, 0) + blocks_inside[element]
            prose_inside[parent] = prose_inside.get(parent, 0) + prose_inside[element]
    scores: dict = {}
    paragraphs: dict = {}  # prose blocks per container
    prose_wrappers = set()
    for block, weight in zip(blocks, weights):
        if weight:
            wrapper, container = _wrapper_and_container(block, blocks_inside)
            scores[container] = scores.get(container, 0) + weight
            paragraphs[container] = paragraphs.get(container, 0) + 1
            prose_wrappers.add(wrapper)
    if not scores:
        return None, 0

    def region_tops(best) -> list:
        """The container and its siblings that hold prose too: containers,
        paragraphs, and sections like it (same tag and first class) with
        prose further down."""
        parent = best.getparent()
        if parent is None:
            return [best]
        kind = _first_class(best)
        tops = [sibling for sibling in parent if sibling is best or sibling in scores or sibling in prose_wrappers
                or (kind and sibling.tag == best.tag and prose_inside.get(sibling) and _first_class(sibling) == kind)]
        if len(tops) > 1:
            return tops
        # An article cut into sections, each a container of its own
        # (<div class="StoryBodyColumn"> repeated): the sections are the
        # siblings of the outermost wrapper around the container that adds
        # no prose, and they look alike.
        top = best
        while top.getparent() is not None and prose_inside[top.getparent()] == prose_inside[top]:
            top = top.getparent()
        parent, kind = top.getparent(), _first_class(top)
        sections = [] if parent is None or not kind else [
            sibling for sibling in parent
            if prose_inside.get(sibling) and sibling.tag == top.tag and _first_class(sibling) == kind
        ]
        return sections if len(sections) > 1 else tops

    best = max(scores, key=scores.get)  # the first container wins a tie
    # A box inside the article (a recipe, a fact box) can outweigh the
    # article's own paragraphs: a container around the best one, with
    # paragraphs of its own worth half as much, is the article.
    least_own = NESTED_ARTICLE_SHARE * scores[best]
    for ancestor in best.iterancestors():
        if scores.get(ancestor, 0) >= least_own and paragraphs[ancestor] > 1:
            best = ancestor
    tops = region_tops(best)
    # A region holding a small share of the page's prose is one part of a
    # longer text (an article cut up by ads or split across wrappers):
    # widen it to the parent until it holds a fair share.
    least = MIN_REGION_SHARE * sum(weights)
    prose = sum(prose_inside.get(top, 0) for top in tops)
    while prose < least and best.getparent() is not None:
        best = best.getparent()
        tops = region_tops(best)
        prose = sum(prose_inside.get(top, 0) for top in tops)
    # The author's <main> holds the dominant content: when what was found is
    # a small part of it (a landing page's sections), the <main> is the region.
    main = next(best.iterancestors("main"), None)
    if main is not None and prose < MIN_MAIN_SHARE * prose_inside.get(main, 0):
        tops, prose = [main], prose_inside[main]
    # The region is its tops and the block elements inside them.  Parents
    # come first: an element is inside a top when its parent is.
    within = set(tops)
    for element, parent in parents.items():
        if parent in within:
            within.add(element)
    return {owner for owner in owners if owner in within and (owner.tag in BLOCK_TAGS or owner in tops)}, prose


def _walk_left_out(part: LeftOut) -> tuple[list[Block], list[float]]:
    """A left-out element's own blocks, as one whole walk gives them, and
    their prose weights."""
    own = page_blocks(part.element, around=part)
    return own, [block.prose_weight() for block in own]


def _with_left_out(blocks: list[Block], weights: list[float], left_out: list[LeftOut],
                   walked: dict | None = None) -> tuple[list[Block], list[float]]:
    """The blocks of one whole walk and their prose weights: those of a
    walk that left elements out, with the left-out elements' own in their
    places.  `walked` holds those already walked (_walk_left_out), by their
    index in left_out."""
    whole: list[Block] = []
    whole_weights: list[float] = []
    start = 0
    for index, part in enumerate(left_out):
        own, own_weights = walked[index] if walked and index in walked else _walk_left_out(part)
        whole += blocks[start:part.at] + own
        whole_weights += weights[start:part.at] + own_weights
        start = part.at
    whole += blocks[start:]
    whole_weights += weights[start:]
    return whole, whole_weights


def _most_prose(element) -> int:
    """A bound on the prose weight of an element's blocks, counted in C:
    all its text (scripts' too) as prose, CJK characters twice."""
    return _text_weight(etree.tostring(element, method="text", encoding="unicode", with_tail=False))


def _never_prose(element) -> int:
    """What _most_prose counts of an element's text that no block counts
    as prose: its scripts' and styles' text (CJK characters twice), never
    walked; and the characters of its links that hold only text (a menu's),
    link text wherever they are walked.  No text is counted twice: a link
    holding only text holds no script."""
    weight = 0
    for inner in element.iter("a", "script", "style"):
        text = inner.text
        if text:
            if inner.tag != "a":
                weight += _text_weight(text)
            elif not len(inner) and _is_link(inner.get("href")):
                weight += _non_space_length(text)
    return weight


def _text_weight(text: str) -> int:
    """Characters but whitespace, CJK characters twice."""
    return _non_space_length(text) + (0 if text.isascii() else len(_CJK_CHARACTERS.findall(text)))


def _walk_needed(left_out: list[LeftOut], prose: float, found: float) -> dict[int, tuple[list[Block], list[float]]]:
    """The left-out elements walked (_walk_left_out), by their index, until
    an article holding `prose` surely holds MIN_ARTICLE_SHARE of the page's
    prose: `found` outside them, and theirs.  All of them when it does not.

    Until it is walked, an element's prose is bounded by _most_prose; when
    that does not settle it, by that less _never_prose (scripts, styles and
    menus' links are most of the text of the elements that get that far),
    and the largest are walked first."""
    if not prose or prose < MIN_ARTICLE_SHARE * found:  # short of the share already, or no prose to share
        return {index: _walk_left_out(part) for index, part in enumerate(left_out)}
    bounds = [_most_prose(part.element) for part in left_out]
    unwalked = sum(bounds)
    if prose < MIN_ARTICLE_SHARE * (found + unwalked):
        bounds = [bound - _never_prose(part.element) for bound, part in zip(bounds, left_out)]
        unwalked = sum(bounds)
    walked = {}
    for index in sorted(range(len(left_out)), key=bounds.__getitem__, reverse=True):
        if prose >= MIN_ARTICLE_SHARE * (found + unwalked):
            break
        walked[index] = _walk_left_out(left_out[index])
        found += sum(walked[index][1])
        unwalked -= bounds[index]
    return walked


def main_text(root) -> str:
    """The page's main text, found by the rules of the module docstring:
    its paragraphs joined by "\\n", whitespace collapsed inside each."""
    left_out: list[LeftOut] = []
    all_blocks = page_blocks(root, left_out)
    all_weights = [block.prose_weight() for block in all_blocks]

    def article(kept: list[int]):
        blocks, weights = [all_blocks[index] for index in kept], [all_weights[index] for index in kept]
        region, prose = _article_region(blocks, weights)
        if region is None:
            # No block is prose (a poem, a list): the text is every block but link lists.
            prose = sum(block.characters - block.link_characters for block in blocks
                        if block.link_density <= MAX_LINK_DENSITY)
        return blocks, region, prose

    # Every mark is boilerplate, unless the article found without the
    # marked blocks holds a small share of the page's prose: then a mark
    # was on a wrapper of the article, and only small marked elements go.
    blocks, region, prose = article([index for index, block in enumerate(all_blocks) if not block.marked_by])
    # The marked block elements are walked only while the article might hold
    # a small share of the prose with theirs: most pages need not walk their
    # menus, footers and comment threads at all (half of the walk).
    walked = _walk_needed(left_out, prose, sum(all_weights)) if left_out and blocks else {}
    if left_out and (not blocks or len(walked) == len(left_out)):
        all_blocks, all_weights = _with_left_out(all_blocks, all_weights, left_out, walked)
    if not blocks or prose < MIN_ARTICLE_SHARE * sum(all_weights):
        blocks, region, _ = article(_without_boilerplate(all_blocks, all_weights))
    # The region is asked first: most blocks are outside it, and their
    # characters need not be counted.
    kept = [(block.owner, collapse_whitespace(block.text)) for block in blocks
            if (region is None or block.owner in region) and block.link_density <= MAX_LINK_DENSITY]
    # The headline is an <h1> that repeats the page's title: the titles are
    # only read when an <h1> is kept.
    if any(owner.tag == "h1" for owner, _ in kept):
        titles = headline_texts(root)
        kept = [(owner, text) for owner, text in kept
                if not (owner.tag == "h1" and any(text in title for title in titles))]
    return "\n".join(text for _, text in kept)
