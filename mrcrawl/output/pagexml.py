"""One fetched page as one line of XML, for the HtmlToXml job.

    <page url="..." [redirect_from="..."] fetched_at="..." encoding="..."
          language="..." layer="..." digest="sha1:..." [score="..."]>
      <headline>...</headline>
      [<keywords>...</keywords>] [<description>...</description>]
      [<published>...</published>]
      <content>first paragraph&#10;second paragraph...</content>
    </page>

(shown on several lines here; the real document is one line).  `language`
is the crawl's language.  `digest` is the WARC payload digest of the body
bytes, so a page in the XML can be matched with its archive record.
`score` is the page's score in the crawl db when it was queued (its
PageRank, as Python writes a float), absent when it had none.  The
optional elements appear only when the page states them; a page without a
title or a date of its own has the title and the publication date (else
the last modification) a feed or sitemap announced for it.  What each field
holds is in mrcrawl.page.metadata, and how the main text is found in
mrcrawl.page.maintext.

The fields and the change signature are those the Parser read when it
parsed the page, which Merge put in the record's `page`
(mrcrawl/page/index_fields.py): the page is not parsed again here.  Only a
record without them is (one merged by an older version, or a page whose
text the Parser could not read).

No detected language is added: telling the 27 crawl languages apart
reliably (Russian from Ukrainian, Malay from Indonesian, Chinese from
Japanese written in kanji) needs a trained model, and none ships in our
dependencies.

The document is built with lxml and serialised by it, so every special
character is escaped by the library that will read it back.  The line never
breaks: newlines, carriage returns and tabs, in attributes and text alike,
are written as character references (&#10; &#13; &#9;), which parse back to
the same characters.  Characters XML 1.0 forbids (most C0 controls, lone
surrogates, U+FFFE and U+FFFF) are dropped, and text is NFC-normalised so
one word has one spelling whatever the page's encoding composed it from.
"""
from __future__ import annotations

import re
import unicodedata

from lxml import etree

from mrcrawl.page.change import page_signature
from mrcrawl.page.charset import decode_page
from mrcrawl.page.html import parse_html
from mrcrawl.page.index_fields import index_fields, indexed_before
from mrcrawl.store.records import body_bytes, is_fetched_page, payload_digest

_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")
# The forbidden C0 controls as UTF-8 bytes: a byte below 0x80 is always a
# character of its own in UTF-8, so deleting these bytes deletes exactly
# those characters.
_FORBIDDEN_CONTROL_BYTES = bytes(range(0x00, 0x09)) + b"\x0b\x0c" + bytes(range(0x0E, 0x20))
# Also NEL, LINE SEPARATOR and PARAGRAPH SEPARATOR: legal in XML, but
# line readers such as Python's str.splitlines() break lines on them.
_LINE_BREAKING = (
    ("\n", "&#10;"), ("\r", "&#13;"), ("\t", "&#9;"),
    ("\x85", "&#133;"), ("\u2028", "&#8232;"), ("\u2029", "&#8233;"),
)


def _break_no_line(xml: str) -> str:
    # One str.replace per character, not str.translate: translating to
    # longer strings goes character by character through a dict, and took
    # a third of a page's time.  No reference holds a replaced character.
    for character, reference in _LINE_BREAKING:
        if character in xml:
            xml = xml.replace(character, reference)
    return xml


def xml_safe(text: str | None) -> str:
    """`text` NFC-normalised, without the characters XML 1.0 cannot hold."""
    if not text:
        return ""
    # The regex alone walks the text character by character (a tenth of a
    # page's time on 20 KB of content); encoding and bytes.translate are C
    # loops, and the regex is left for the rare text it is needed for.
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return unicodedata.normalize("NFC", _XML_FORBIDDEN.sub("", text))
    kept = data.translate(None, _FORBIDDEN_CONTROL_BYTES)
    if len(kept) != len(data):
        text = kept.decode("utf-8")
    if "\ufffe" in text or "\uffff" in text:
        text = text.replace("\ufffe", "").replace("\uffff", "")
    return unicodedata.normalize("NFC", text)


def indexable(doc: dict) -> bool:
    """Whether a doc record is a page the index may have: fetched, no feed
    or sitemap, and not saying noindex (meta robots or X-Robots-Tag)."""
    return is_fetched_page(doc) and doc["meta_index"]


def needs_parse(doc: dict) -> bool:
    """Whether page_to_xml must parse the record's page: it holds no reading
    of it by the Parser, or one without the text of a page the index lacks
    (see the module docstring)."""
    page = doc.get("page")
    return page is None or ("content" not in page and not indexed_before(doc.get("known"), page["signature"]))


def page_to_xml(doc: dict, language: str) -> str | None:
    """The XML line of a fetched doc record (see the module docstring); None
    when the index has the page as it is (index_fields.indexed_before: its
    change signature is the one the crawl db held when it was queued)."""
    body = body_bytes(doc)
    if needs_parse(doc):
        root = parse_html(decode_page(doc, body))
        fields, signature = index_fields(root), page_signature(root)
    else:
        fields, signature = doc["page"], doc["page"]["signature"]
    if indexed_before(doc.get("known"), signature):
        return None
    page = etree.Element("page")
    page.set("url", xml_safe(doc.get("url")))
    if doc.get("redirect_from"):
        page.set("redirect_from", xml_safe(doc["redirect_from"]))
    page.set("fetched_at", xml_safe(doc.get("fetched_at")))
    page.set("encoding", xml_safe(doc.get("encoding")))
    page.set("language", xml_safe(language))
    page.set("layer", str(doc.get("layer")))
    page.set("digest", payload_digest(body))
    if doc.get("score") is not None:  # records written before scores have no such field
        page.set("score", repr(float(doc["score"])))
    # A page that states no title or date has the one a feed or sitemap gave it.
    announced = doc.get("announced") or {}
    etree.SubElement(page, "headline").text = xml_safe(fields["headline"] or announced.get("title"))
    for tag, value in (("keywords", fields["keywords"]), ("description", fields["description"]),
                       ("published", fields["published"] or announced.get("published") or announced.get("modified"))):
        if value:
            etree.SubElement(page, tag).text = xml_safe(value)
    etree.SubElement(page, "content").text = xml_safe(fields["content"])
    # lxml already writes attribute newlines and tabs as references, and
    # the tree is serialised without indentation, so every raw line break
    # or tab left in the output sits in character data, where a character
    # reference means the same character.
    return _break_no_line(etree.tostring(page, encoding="unicode"))
