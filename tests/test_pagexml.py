"""HtmlToXml's page rendering: fields, text extraction, and one safe line of
well-formed XML whatever the page holds."""
from __future__ import annotations

import html

import pytest
from lxml import etree

from mrcrawl.charset import detect_encoding
from mrcrawl.html import parse_html
from mrcrawl.pagexml import page_to_xml, xml_safe
from mrcrawl.records import encode_body, new_doc
from mrcrawl.text import headline, main_text
from test_charset import NEWS, news_page

URL = "http://127.0.0.3:8080/story.html"
# Reading the XML back: huge_tree lifts libxml2's 10 MB text-node limit.
XML_PARSER = etree.XMLParser(huge_tree=True)


def fetched_doc(body: bytes, encoding: str = "utf-8", url: str = URL) -> dict:
    doc = new_doc(url, 1)
    doc.update(outcome="fetched", status=200, content_type="text/html", encoding=encoding)
    doc["body"] = encode_body(body)
    return doc


def render(markup: str, **fields) -> tuple[str, etree._Element]:
    doc = fetched_doc(markup.encode("utf-8"))
    doc.update(fields)
    line = page_to_xml(doc, "en")
    assert "\n" not in line and "\r" not in line and "\t" not in line
    assert len(line.splitlines()) == 1
    return line, etree.fromstring(line, XML_PARSER)


def test_fields_and_structure():
    line, page = render("<html><head><title>A title</title></head><body><p>Body.</p></body></html>")
    assert page.tag == "page"
    assert page.get("url") == URL
    assert page.get("fetched_at").endswith("Z")
    assert page.get("encoding") == "utf-8"
    assert page.get("language") == "en"
    assert "redirect_from" not in page.attrib
    assert [child.tag for child in page] == ["headline", "content"]
    assert page.findtext("headline") == "A title"
    assert page.findtext("content") == "Body."
    assert line.startswith("<page ")


def test_redirect_from_is_kept():
    _, page = render("<title>t</title>", redirect_from="http://127.0.0.3:8080/old")
    assert page.get("redirect_from") == "http://127.0.0.3:8080/old"


def test_headline_falls_back_to_og_title_then_h1():
    assert headline(parse_html("<title>  Spaced \n  title </title><h1>H</h1>")) == "Spaced title"
    assert headline(parse_html('<title> </title><meta property="og:title" content="From OG"><h1>H</h1>')) == "From OG"
    assert headline(parse_html("<body><h1>First <b>heading</b></h1><h1>Second</h1></body>")) == "First heading"
    assert headline(parse_html("<p>nothing</p>")) == ""


def test_content_keeps_paragraphs_and_drops_boilerplate():
    markup = """<html><head><title>T</title><style>p { color: red }</style>
    <script>var secret = "script text";</script></head><body class="has-sidebar">
    <header><div class="logo">Site header</div></header>
    <nav><a href="/">Home</a> <a href="/news">News</a></nav>
    <div id="cookie-banner">We use cookies. <button>Accept</button></div>
    <ul class="main-menu"><li>Menu item</li></ul>
    <main><article>
      <h1>The  headline</h1>
      <p>First    paragraph
         spans lines.</p>
      <p>Second with <b>bold</b>, <a href="/x">a link</a> and<br>a line break.</p>
      <div class="share-buttons">Share on social</div>
      <div class="advert">Buy now</div>
      <p style="display: none">Hidden text</p>
      <p hidden>Also hidden</p>
      <table><tr><td>Cell one</td><td>Cell two</td></tr></table>
      <noscript>Enable JavaScript</noscript>
      <template><p>Template text</p></template>
      <form><label>Search</label><input name="q"></form>
      <iframe src="/ad">Iframe text</iframe>
      <section id="comments"><p>A reader comment</p></section>
    </article></main>
    <aside>Related stories</aside>
    <div class="sidebar">Sidebar text</div>
    <footer>Copyright footer</footer>
    </body></html>"""
    _, page = render(markup)
    assert page.findtext("content").split("\n") == [
        "The headline",
        "First paragraph spans lines.",
        "Second with bold, a link and",
        "a line break.",
        "Cell one Cell two",
    ]


def test_class_names_are_matched_as_words():
    text = main_text(parse_html(
        '<div class="canvas-wrapper"><p>Kept: canvas is not nav</p></div>'
        '<div class="commentary"><p>Kept: commentary is not comment</p></div>'
        '<div class="siteNavBar"><p>Dropped: camelCase nav</p></div>'
        '<div id="main_menu"><p>Dropped: menu</p></div>'
    ))
    assert text == "Kept: canvas is not nav\nKept: commentary is not comment"


def test_boilerplate_names_on_every_element_do_not_empty_the_page():
    # A site whose every block is named "menu-..." still has text.
    text = main_text(parse_html('<div class="menu-content"><p>The only text</p></div>'))
    assert text == "The only text"


@pytest.mark.parametrize(
    "hostile",
    [
        "]]> and ]]&gt; and <![CDATA[ x ]]>",
        "</page><page url='evil'>",
        "</content></page>\n<injected/>",
        "NUL:\x00: BEL:\x07: VT:\x0b: FF:\x0c: ESC:\x1b:",
        "quotes \" and ' and & and < and >",
        "line\nbreaks\r\nand\ttabs\x85and\u2028separators\u2029end",
        "nonchars \ufffe \uffff end",
    ],
)
def test_hostile_text_round_trips_safely(hostile):
    escaped = html.escape(hostile)
    line, page = render(f"<title>{escaped}</title><p>{escaped}</p><p>after</p>")
    content = page.findtext("content")
    assert page.findtext("headline")
    assert content.endswith("after")
    for forbidden in "\x00\x07\x0b\x0c\x1b\ufffe\uffff":
        assert forbidden not in line and forbidden not in content
    assert len(page) == 2
    for kept in ("]]>", "</page>", "<injected/>", "\"", "'", "&", "\x85", "\u2028"):
        if kept in hostile:
            assert kept in content


def test_raw_hostile_markup_in_text():
    markup = "<p>a ]]> b</p><p>x </page> y</p><script>document.write('</page>')</script>"
    _, page = render(markup)
    assert page.findtext("content") == "a ]]> b\nx y"


def test_hostile_attributes_round_trip():
    redirect = 'http://127.0.0.3/"quoted"\n\'single\'\r\n\t<tag>&amp;\x00'
    line, page = render("<title>t</title>", redirect_from=redirect, url="http://127.0.0.3/a?b=\"c\"&d=<e>")
    assert page.get("redirect_from") == 'http://127.0.0.3/"quoted"\n\'single\'\r\n\t<tag>&amp;'
    assert page.get("url") == "http://127.0.0.3/a?b=\"c\"&d=<e>"
    assert "&#10;" in line and "&#13;" in line and "&#9;" in line


def test_ten_megabytes_of_text():
    markup = "<title>big</title><p>" + "word " * 2_000_000 + "</p><p>tail</p>"
    _, page = render(markup)
    content = page.findtext("content")
    assert content.endswith("\ntail")
    assert len(content) > 9_900_000


@pytest.mark.parametrize("tag", ["div", "x-custom-element", "q"])
def test_deep_nesting(tag):
    # Far past libxml2's depth limit: the text after the nest is kept too.
    markup = f"<title>deep</title>{f'<{tag}>' * 100_000}<p>inside</p>{f'</{tag}>' * 100_000}<p>after</p>"
    _, page = render(markup)
    assert page.findtext("headline") == "deep"
    assert page.findtext("content") == "inside\nafter"


def test_empty_and_non_html_bodies():
    for body in (b"", b"\x00\x01\x02", b"%PDF-1.4 binary", b"<?xml version='1.0'?><rss/>"):
        doc = fetched_doc(body)
        page = etree.fromstring(page_to_xml(doc, "en"), XML_PARSER)
        assert page.findtext("headline") is not None


def test_xml_safe_normalises_and_strips():
    assert xml_safe("e\u0301t\u00e9") == "\u00e9t\u00e9"  # NFC
    assert xml_safe("a\ud800b\udfffc") == "abc"  # lone surrogates
    assert xml_safe("a\x00b\x1fc\tn\nr\r") == "abc\tn\nr\r"
    assert xml_safe(None) == ""


def test_only_html_whitespace_is_collapsed():
    _, page = render("<title> 見出し\u3000副題 </title><p>\n a \t b\u00a0c\u3000d \r\n</p>")
    assert page.findtext("headline") == "見出し\u3000副題"
    assert page.findtext("content") == "a b\u00a0c\u3000d"


def test_decomposed_text_is_nfc_in_the_xml():
    _, page = render("<title>Cafe\u0301</title><p>Bu\u0308cher</p>")
    assert page.findtext("headline") == "Caf\u00e9"
    assert page.findtext("content") == "B\u00fccher"


@pytest.mark.parametrize("text", NEWS, ids=lambda text: text.label)
def test_each_charset_round_trips_without_mojibake(text):
    page_html = news_page(text)
    body = page_html.encode(text.codec)
    encoding = detect_encoding(body, "text/html")  # undeclared: the hardest case
    doc = fetched_doc(body, encoding)
    line = page_to_xml(doc, text.language)
    page = etree.fromstring(line, XML_PARSER)
    assert page.get("encoding") == encoding
    assert page.get("language") == text.language
    assert page.findtext("headline") == text.title
    content = page.findtext("content").split("\n")
    assert content[0] == text.title  # the <h1>
    for paragraph in text.paragraphs:
        assert paragraph in content
    for item in text.navigation:  # navigation is boilerplate
        assert item not in content
    assert "\ufffd" not in line
    assert "Copyright" not in line


@pytest.mark.parametrize(
    "markup, expected_text",
    [
        ("", ""),
        ("   \n ", ""),
        ("<!-- only a comment -->", ""),
        ("\x00", "\ufffd"),
        ("a\ud800b<p>c\udfffd</p>", "a\ufffdb\nc\ufffdd"),
        ('<?xml version="1.0" encoding="iso-8859-1"?><html><body><p>中文 é</p></body></html>', "中文 é"),
        ('<meta charset="gbk"><p>中文 is UTF-8 here</p>', "中文 is UTF-8 here"),
        ('<meta http-equiv="Content-Type" content="text/html; charset=koi8-r"><p>Москва</p>', "Москва"),
        ("<p>unclosed <b>bold <i>italic", "unclosed bold italic"),
        ("</p></div></body></html>text after closers", "text after closers"),
    ],
)
def test_parse_html_never_raises_and_keeps_the_decoded_text(markup, expected_text):
    root = parse_html(markup)
    assert root.tag == "html"
    assert main_text(root) == expected_text


def test_parse_html_from_many_threads():
    # Fetch threads parse concurrently; each must get its own document.
    from concurrent.futures import ThreadPoolExecutor

    pages = [f"<title>page {n}</title><p>{'text ' * (n % 50)}number {n}</p>" for n in range(400)]

    def parse_one(page: str) -> tuple[str, str]:
        root = parse_html(page)
        return headline(root), main_text(root)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(parse_one, pages))
    for n, (title, text) in enumerate(results):
        assert title == f"page {n}"
        assert text.endswith(f"number {n}")
