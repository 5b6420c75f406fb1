"""What the index holds of a page besides its record: its headline,
keywords, description, publication date and main text.

They are read where the page is parsed, once per crawl: the Parser reads
them with the page's links (outlinks.out_record) and keeps them in its out
record's `page`; Merge hands them to HtmlToXml with the page's doc record
(frontier/merge.py), and HtmlToXml writes them without parsing the page
again (output/pagexml.py).  What each field holds is in metadata.py, and
how the main text is found in maintext.py.
"""
from __future__ import annotations

from mrcrawl.page.maintext import main_text
from mrcrawl.page.metadata import description, headline, keywords, published

# The fields, in the order the XML writes them.
INDEX_FIELDS = ("headline", "keywords", "description", "published", "content")


def indexed_before(known: dict | None, signature: str | None) -> bool:
    """Whether the index has the page as it is now: the crawl db's last
    fetch of it (`known`, a doc record's) had this change `signature`
    (change.py), and got XML, being no duplicate then.  Its text is then
    neither read nor written again."""
    known = known or {}
    return signature is not None and known.get("signature") == signature and not known.get("duplicate_of")


def index_fields(root, indexed: bool = True) -> dict:
    """The INDEX_FIELDS of a page's lxml tree (html.parse_html's root); a
    field the page does not state is None, "" for the headline and the
    content.  A page that is not to be `indexed` (meta robots, or the index
    has it: indexed_before) gets its headline only: the page index
    (output/pageindex.py) lists every page's title."""
    if not indexed:
        return {"headline": headline(root)}
    return {"headline": headline(root), "keywords": keywords(root), "description": description(root),
            "published": published(root), "content": main_text(root)}
