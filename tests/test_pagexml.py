"""HtmlToXml's page rendering: every field, the main text, one safe line of
well-formed XML whatever the page holds, and a real crawl's XML against the
test web's model."""
from __future__ import annotations

import base64
import hashlib
import html
from concurrent.futures import ThreadPoolExecutor

import pytest
from lxml import etree

from crawl_support import crawl, read_records, write_inputs
from mrcrawl.output.pagexml import page_to_xml, xml_safe
from mrcrawl.page.change import page_signature
from mrcrawl.page.charset import decode_page, detect_encoding
from mrcrawl.page.charset_labels import codec_for_label
from mrcrawl.page import maintext
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_links
from mrcrawl.page.maintext import _with_left_out, main_text, page_blocks
from mrcrawl.page.metadata import description, headline, keywords, normalise_date, published
from mrcrawl.store.records import FETCHED, encode_body, new_doc
from mrcrawl.testweb import expected_duplicates, expected_layers_for_config
from test_charset import NEWS, OTHER_LEGACY_NEWS, news_page

URL = "http://127.0.0.3:8080/story.html"
# Reading the XML back: huge_tree lifts libxml2's 10 MB text-node limit.
XML_PARSER = etree.XMLParser(huge_tree=True)

# Paragraphs long enough to read as prose, as article paragraphs are.
PROSE = (
    "The harbour board approved the new ferry timetable on Tuesday after a long public consultation.",
    "Boats will leave every forty minutes from April, and the last crossing will be an hour later.",
    "Residents of the island said the change would make it easier to commute to the mainland for work.",
)


def sha1_base32(data: bytes) -> str:
    """The WARC digest, computed here independently of mrcrawl.store.records."""
    return "sha1:" + base64.b32encode(hashlib.sha1(data).digest()).decode("ascii")


def fetched_doc(body: bytes, encoding: str = "utf-8", url: str = URL) -> dict:
    doc = new_doc(url, 1)
    doc.update(outcome="fetched", status=200, content_type="text/html", encoding=encoding)
    doc["body"] = encode_body(body)
    return doc


def render(markup: str, language: str = "en", **fields) -> tuple[str, etree._Element]:
    doc = fetched_doc(markup.encode("utf-8"))
    doc.update(fields)
    line = page_to_xml(doc, language)
    assert "\n" not in line and "\r" not in line and "\t" not in line
    assert len(line.splitlines()) == 1
    return line, etree.fromstring(line, XML_PARSER)


def article(body: str, head: str = "<title>A title</title>") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


# --------------------------------------------------------------------------
# Fields


def test_attributes_and_children_of_a_plain_page():
    markup = "<html><head><title>A title</title></head><body><p>Body.</p></body></html>"
    line, page = render(markup)
    assert line.startswith("<page ") and line.endswith("</page>")
    assert page.tag == "page"
    assert list(page.attrib) == ["url", "fetched_at", "encoding", "language", "layer", "digest"]
    assert page.get("url") == URL
    assert page.get("fetched_at").endswith("Z")
    assert page.get("encoding") == "utf-8"
    assert page.get("language") == "en"
    assert page.get("layer") == "1"
    assert page.get("digest") == sha1_base32(markup.encode("utf-8"))
    # No keywords, description or date on the page: no such elements.
    assert [child.tag for child in page] == ["headline", "content"]
    assert page.findtext("headline") == "A title"
    assert page.findtext("content") == "Body."


def test_score_only_when_the_db_had_scored_the_page():
    for score in (0.0123, 1.5e-05, 0.1 + 0.2):
        _, page = render("<title>t</title>", score=score)
        assert list(page.attrib)[-1] == "score" and float(page.get("score")) == score
    _, page = render("<title>t</title>", score=None)
    assert "score" not in page.attrib


def test_redirect_from_only_after_a_redirect():
    _, page = render("<title>t</title>", redirect_from="http://127.0.0.3:8080/old")
    assert list(page.attrib)[:2] == ["url", "redirect_from"]
    assert page.get("redirect_from") == "http://127.0.0.3:8080/old"
    for no_redirect in (None, ""):
        _, page = render("<title>t</title>", redirect_from=no_redirect)
        assert "redirect_from" not in page.attrib


@pytest.mark.parametrize("layer", [0, 3, 17])
def test_layer_is_the_records_layer(layer):
    _, page = render("<title>t</title>", layer=layer)
    assert page.get("layer") == str(layer)


def test_digest_is_of_the_raw_body_bytes_not_the_text():
    # The same text in two encodings: two digests, each of the bytes sent.
    text = "<title>Цена</title><p>Москва</p>"
    digests = set()
    for codec in ("utf-8", "cp1251"):
        body = text.encode(codec)
        page = etree.fromstring(page_to_xml(fetched_doc(body, codec), "ru"), XML_PARSER)
        assert page.get("digest") == sha1_base32(body)
        assert page.findtext("content") == "Москва"
        digests.add(page.get("digest"))
    assert len(digests) == 2
    # SHA-1 of nothing, in base32: a known value.
    empty = etree.fromstring(page_to_xml(fetched_doc(b""), "en"), XML_PARSER)
    assert empty.get("digest") == "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ"


def test_headline_falls_back_to_og_title_then_h1():
    assert headline(parse_html("<title>  Spaced \n  title </title><h1>H</h1>")) == "Spaced title"
    assert headline(parse_html('<title> </title><meta property="og:title" content="From OG"><h1>H</h1>')) == "From OG"
    assert headline(parse_html('<meta name="og:title" content=" Named OG "><h1>H</h1>')) == "Named OG"
    assert headline(parse_html('<meta property="og:title" content=""><h1>First <b>heading</b></h1><h1>Second</h1>')) == "First heading"
    assert headline(parse_html("<p>nothing</p>")) == ""
    _, page = render('<meta property="og:title" content="OG &amp; co"><h1>H</h1>')
    assert page.findtext("headline") == "OG & co"


def test_keywords_and_description_from_meta():
    head = ('<title>t</title><meta name="Keywords" content=" ferry,  harbour , timetable ">'
            '<meta name="description" content="New &lt;ferry&gt; times &amp; fares.">')
    _, page = render(article("<p>x</p>", head))
    assert [child.tag for child in page] == ["headline", "keywords", "description", "content"]
    assert page.findtext("keywords") == "ferry, harbour , timetable"
    assert page.findtext("description") == "New <ferry> times & fares."
    root = parse_html('<meta property="og:description" content="From OG"><meta name="keywords" content="">')
    assert description(root) == "From OG"
    assert keywords(root) is None
    assert description(parse_html("<p>none</p>")) is None
    assert keywords(parse_html('<meta name="news_keywords" content="election, count">')) == "election, count"


@pytest.mark.parametrize(
    "head, body, expected",
    [
        ('<meta property="article:published_time" content="2024-03-12T08:30:00+08:00">', "", "2024-03-12T08:30:00+08:00"),
        ('<meta property="og:published_time" content="2024-03-12T00:30:00Z">', "", "2024-03-12T00:30:00Z"),
        ('<meta itemprop="datePublished" content="2024-03-12">', "", "2024-03-12"),
        ('<meta name="pubdate" content="2024/3/12 8:30">', "", "2024-03-12T08:30:00"),
        ('<script type="application/ld+json">{"@type": "NewsArticle", "datePublished": "2024-03-12T08:30:00+03:00"}</script>',
         "", "2024-03-12T08:30:00+03:00"),
        ('<script type="application/ld+json">[{"@type": "WebSite"}, {"@graph": [{"@type": "Article", '
         '"datePublished": "2024-03-12T08:30:00.000+0900"}]}]</script>', "", "2024-03-12T08:30:00+09:00"),
        ("", '<span itemprop="datePublished" content="2024-03-12T08:30:00Z">March 12</span>', "2024-03-12T08:30:00Z"),
        ("", '<div itemprop="datePublished">2024年3月12日</div>', "2024-03-12"),
        ("", '<time datetime="2020-01-01">site launch</time><article><h1>x</h1>'
             '<time datetime="2024-03-12T08:30">12 March</time></article>', "2024-03-12T08:30:00"),
        ('<meta name="date" content="yesterday morning">', "", "yesterday morning"),
        # The meta wins over JSON-LD and the article's <time>.
        ('<meta property="article:published_time" content="2024-03-12"><script type="application/ld+json">'
         '{"datePublished": "2023-01-01"}</script>', '<article><time datetime="2022-01-01"></time></article>', "2024-03-12"),
        # Broken JSON-LD is skipped, not fatal.
        ('<script type="application/ld+json">{"datePublished": </script>'
         '<script type="application/ld+json">{"datePublished": "2024-03-12"}</script>', "", "2024-03-12"),
    ],
)
def test_published_from_each_source(head, body, expected):
    assert published(parse_html(f"<html><head>{head}</head><body>{body}</body></html>")) == expected
    _, page = render(article(body, "<title>t</title>" + head))
    assert page.findtext("published") == expected
    assert [child.tag for child in page] == ["headline", "published", "content"]


@pytest.mark.parametrize(
    "markup",
    [
        "<p>no date at all</p>",
        '<time datetime="2024-03-12">a time outside any article</time>',
        '<script type="application/ld+json">{"@type": "Organization", "name": "x"}</script>',
        '<meta property="article:published_time" content="  ">',
    ],
)
def test_no_published_element_without_a_stated_date(markup):
    assert published(parse_html(markup)) is None
    _, page = render(markup)
    assert page.find("published") is None


def test_normalise_date():
    assert normalise_date("2024-03-12T08:30:00+08:00") == "2024-03-12T08:30:00+08:00"
    assert normalise_date(" 2024-03-12T08:30:00Z ") == "2024-03-12T08:30:00Z"
    assert normalise_date("2024-03-12T08:30:00+00:00") == "2024-03-12T08:30:00Z"
    assert normalise_date("2024-03-12") == "2024-03-12"
    assert normalise_date("2024.03.12 08:30:15") == "2024-03-12T08:30:15"
    assert normalise_date("2024年03月12日 08:30") == "2024-03-12T08:30:00"
    assert normalise_date("Published 2024-03-12 08:30 +0300") == "2024-03-12T08:30:00+03:00"
    assert normalise_date("2024-13-45") == "2024-13-45"  # not a date: kept as stated
    assert normalise_date("12 March 2024") == "12 March 2024"


# --------------------------------------------------------------------------
# Main text


def test_content_is_the_article_without_its_surroundings():
    paragraphs = "".join(f"<p>{p}</p>" for p in PROSE)
    markup = f"""<html><head><title>Ferry timetable approved - Island News</title><style>p {{ color: red }}</style>
    <script>var secret = "script text";</script></head><body class="has-sidebar">
    <header><div class="logo">Site header</div></header>
    <nav><a href="/">Home</a> <a href="/news">News</a></nav>
    <div id="cookie-banner">We use cookies to improve your experience on this website. <button>Accept</button></div>
    <ul class="main-menu"><li>Menu item</li></ul>
    <main><article>
      <h1>Ferry timetable approved</h1>
      <div class="byline">By A. Reporter</div>
      <div class="body">
        {paragraphs}
        <h2>What changes</h2>
        <p>Fares stay the same: <b>bold</b>, <a href="/x">a link</a> and<br>a line break.</p>
        <p><strong>Read also:</strong> <a href="/other">Harbour dredging starts next week on the east quay</a></p>
        <div class="advert">Buy now</div>
        <p style="display: none">Hidden text</p>
        <p hidden>Also hidden</p>
        <noscript>Enable JavaScript</noscript>
        <template><p>Template text</p></template>
        <iframe src="/ad">Iframe text</iframe>
      </div>
      <section id="comments"><p>A reader comment that goes on for long enough to look like prose to anyone.</p></section>
    </article></main>
    <aside>Related stories</aside>
    <div class="sidebar">Sidebar text</div>
    <footer>Copyright footer</footer>
    </body></html>"""
    _, page = render(markup)
    assert page.findtext("content").split("\n") == [
        *PROSE, "What changes", "Fares stay the same: bold, a link and", "a line break.",
    ]


def test_comments_and_teasers_without_telling_names_are_left_out():
    # Hashed class names: only the structure tells the article from the rest.
    comments = "".join(
        f'<div class="x{n}"><div class="y">reader{n}</div><p>{text}</p><div><span>12</span></div></div>'
        for n, text in enumerate(PROSE)
    )
    teasers = "".join(f'<div class="t"><a href="/s{n}">Story {n}</a><p>{text}</p></div>' for n, text in enumerate(PROSE))
    story = "".join(f"<p>{text}</p>" for text in PROSE * 2)
    body = (f'<div class="a1"><h1>Headline</h1><div class="b2">{story}<p>Short one.</p></div>'
            f'<div class="c3"><a href="/1">Link one</a> <a href="/2">Link two</a> <a href="/3">Link three</a></div>'
            f'<div class="d4">{teasers}</div><div class="e5">{comments}</div></div>'
            f'<div class="f6"><p>{PROSE[2]}</p></div>')
    text = main_text(parse_html(article(body, "<title>Headline</title>")))
    assert text.split("\n") == [*PROSE * 2, "Short one."]


def test_a_region_with_a_small_share_of_the_prose_is_widened_to_its_parent():
    # An article cut into parts at different depths: the container with the
    # most prose holds under 30% of the page's, so its parent is the article.
    parts = [f"<div><p>{text}</p><p>{text}</p></div>" for text in PROSE]
    body = (f'<div class="story"><h1>Headline</h1><div class="lead">{parts[0]}</div>{parts[1]}{parts[2]}</div>'
            f'<div class="f6"><p>{PROSE[0]}</p></div>')
    text = main_text(parse_html(article(body, "<title>Headline</title>")))
    assert text.split("\n") == [text for text in PROSE for _ in range(2)]


def test_paragraphs_split_by_line_breaks_in_a_table_cell():
    body = (
        '<table><tr><td><a href="/">Home</a> | <a href="/news">News</a></td></tr></table>'
        f'<table><tr><td width="680"><font size="3">{PROSE[0]}<br><br>{PROSE[1]}<br><br>{PROSE[2]}</font></td>'
        '<td><b>Most read</b><br>1. <a href="/a">First story</a><br>2. <a href="/b">Second story</a></td></tr>'
        f'<tr><td><table><tr><td>reader</td><td>{PROSE[0]} I agree.</td></tr>'
        f'<tr><td>other</td><td>{PROSE[1]} Not me.</td></tr></table></td></tr></table>'
    )
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


@pytest.mark.parametrize(
    "wrap",
    [
        lambda p: f'<div data-component="text-block"><div class="z"><p>{p}</p></div></div>',
        lambda p: f'<div class="para">{p}</div>',
        lambda p: f"<section><p>{p}</p></section>",
    ],
    ids=["deep-wrappers", "div-paragraphs", "sections"],
)
def test_paragraphs_each_in_their_own_wrapper(wrap):
    body = '<div class="story">' + "".join(wrap(p) for p in PROSE) + "</div>"
    body += '<div class="more"><p>Short teaser.</p></div>'
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


def test_headline_is_not_repeated_in_the_content():
    body = f"<h1>Ferry timetable approved</h1><p>{PROSE[0]}</p><h1>Another heading</h1><p>{PROSE[1]}</p>"
    head = "<title>Ferry timetable approved | Island News</title>"
    assert main_text(parse_html(article(body, head))).split("\n") == [PROSE[0], "Another heading", PROSE[1]]


def test_a_page_without_prose_keeps_its_short_text_but_not_its_links():
    body = ('<h1>Island News</h1><p>The latest stories.</p>'
            '<ul class="links"><li><a href="/a">One</a></li><li><a href="/b">Two</a></li></ul>')
    assert main_text(parse_html(article(body, "<title>Island News</title>"))) == "The latest stories."


def test_class_names_are_matched_as_words():
    text = main_text(parse_html(
        '<div class="canvas-wrapper"><p>Kept: canvas is not nav</p></div>'
        '<div class="commentary"><p>Kept: commentary is not comment</p></div>'
        '<div class="siteNavBar"><p>Dropped: camelCase nav</p></div>'
        '<div id="main_menu"><p>Dropped: menu</p></div>'
    ))
    assert text == "Kept: canvas is not nav\nKept: commentary is not comment"


def test_credit_and_copyright_lines_inside_the_article_are_left_out():
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    body = (f'<div class="story"><figure><img src="/a.jpg"><figcaption>The harbour at dawn.'
            f'<span class="photo-credit">Photograph: Anna Smith for The Island News Agency</span></figcaption></figure>'
            f'{story}<p class="copyright">Copyright 2024 The Island News Agency. All rights reserved.</p></div>')
    assert main_text(parse_html(article(body))).split("\n") == ["The harbour at dawn.", *PROSE]


# The wrappers that held whole real pages (CleanEval, CleanPortalEval, Dragnet).
WRAPPERS = [
    '<div id="ad-portal">{}</div>',
    '<div class="l-sidebar-fixed">{}</div>',
    '<div class="theiaStickySidebar">{}</div>',
    '<div id="content-sidebar-wrap">{}</div>',
    '<div class="i-nav_drawer_slide">{}</div>',
    '<div class="share_wrapper">{}</div>',
    '<form id="Form1" method="post" action="page.aspx">{}</form>',
    '<header>{}</header>',  # an unclosed <header> holds the page in tag soup
]


@pytest.mark.parametrize("wrapper", WRAPPERS, ids=lambda w: w.split(">")[0][1:])
def test_a_boilerplate_word_on_the_article_s_wrapper_does_not_drop_it(wrapper):
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    inside = (f'<div class="share-bar"><a href="/s">Share</a> <span>on the social web, with a long label</span></div>'
              f'<h1>Headline</h1><div class="story">{story}</div>'
              f'<div class="comments"><p>{PROSE[0]} I agree with every word.</p></div>')
    body = ('<div class="cookie-banner"><p>We use cookies to make this site work and to measure how it is used.</p></div>'
            + wrapper.format(inside))
    text = main_text(parse_html(article(body, "<title>Headline</title>")))
    assert text.split("\n") == list(PROSE)  # the leaves inside the wrapper are still dropped


def test_a_comment_thread_longer_than_the_article_is_not_its_wrapper():
    comments = "".join(f'<div class="c"><p>{text} {text}</p></div>' for text in PROSE * 2)
    body = f'<div class="post"><p>{PROSE[0]}</p></div><div id="comments">{comments}</div>'
    assert main_text(parse_html(article(body))) == PROSE[0]


def test_a_sidebar_longer_than_the_article_is_not_its_wrapper():
    sidebar = "".join(f"<p>{text}</p>" for text in PROSE * 2)
    body = f'<div class="post"><p>{PROSE[1]}</p></div><aside><div class="widget">{sidebar}</div></aside>'
    assert main_text(parse_html(article(body))) == PROSE[1]


def test_text_in_links_that_go_nowhere_is_text():
    story = "".join(f'<p><a href="javascript:void(0)">{text}</a></p>' for text in PROSE)
    body = f'<div class="story">{story}</div><p><a name="end">{PROSE[0]}</a></p>'
    text = main_text(parse_html(article(body))).split("\n")
    assert text[:3] == list(PROSE)


def test_a_post_s_topic_classes_are_not_boilerplate():
    # WordPress classes a post by its categories and tags.
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    body = (f'<div class="post entry-category-social_media tag-ads">{story}</div>'
            f'<div class="sidebar"><p>{PROSE[0]}</p></div>')
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


def test_a_heading_slug_is_not_a_boilerplate_name():
    # Documentation generators name sections after their headings.
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    body = (f'<div class="section" id="setting-up"><h2>Setting up</h2>{story}</div>'
            f'<div class="section" id="sharing-with-a-single-developer"><h2>Sharing</h2>{story}</div>')
    assert main_text(parse_html(article(body))).split("\n") == ["Setting up", *PROSE, "Sharing", *PROSE]


def test_a_list_of_long_teasers_does_not_outweigh_the_article():
    teasers = "".join(f"<li>{text}</li>" for text in PROSE)  # more prose than the article's two paragraphs
    body = f'<div class="rail"><ul>{teasers}</ul></div><div class="story"><p>{PROSE[0]}</p><p>{PROSE[1]}</p></div>'
    assert main_text(parse_html(article(body))).split("\n") == [PROSE[0], PROSE[1]]


def test_boilerplate_names_on_every_element_do_not_empty_the_page():
    # A site whose every block is named "menu-..." still has text.
    text = main_text(parse_html('<div class="menu-content"><p>The only text</p></div>'))
    assert text == "The only text"


# Teasers: each as long as an article paragraph.
TEASERS = tuple(
    f"Story {n}: the council met on Thursday evening to talk about the plans for the new pool by the beach."
    for n in range(6)
)


def test_content_hidden_from_every_reader_is_left_out_however_long():
    # The article sits in a modal (a marked wrapper); a stream of teasers
    # twice its length is aria-hidden behind it.
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    stream = "".join(f'<div class="item"><p>{text}</p></div>' for text in TEASERS)
    body = f'<div id="modal-root"><article><div class="body">{story}</div></article></div>' \
           f'<div aria-hidden="true" class="stream">{stream}</div>'
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


def test_an_article_s_own_header_is_part_of_it():
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    standfirst = "Boats will leave every forty minutes from April, the harbour board decided after a year of talks."
    body = ('<header><nav><a href="/">Home</a></nav><p>The Island News, since 1921</p></header>'
            f'<article><header><h1>Ferry timetable approved</h1><p class="standfirst">{standfirst}</p></header>'
            f'<div class="body">{story}</div></article>'
            '<footer><p>Copyright The Island News. All rights reserved.</p></footer>')
    text = main_text(parse_html(article(body, "<title>Ferry timetable approved</title>")))
    assert text.split("\n") == [standfirst, *PROSE]


def test_a_gallery_inside_the_article_is_left_out():
    slides = "".join(f'<div class="slide"><p>{text}</p></div>' for text in TEASERS)
    body = (f'<div class="story"><p>{PROSE[0]}</p><div class="photo-gallery">{slides}</div>'
            f'<p>{PROSE[1]}</p><p>{PROSE[2]}</p></div>')
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


@pytest.mark.parametrize("teaser_list", [
    lambda texts: "<ul>" + "".join(f"<li><div>{text}</div></li>" for text in texts) + "</ul>",
    lambda texts: "<dl>" + "".join(f"<dt>Story</dt><dd>{text}</dd>" for text in texts) + "</dl>",
], ids=["ul", "dl"])
def test_prose_in_list_items_weighs_half(teaser_list):
    # Four teasers outweigh the three paragraphs of the article, unless
    # list items weigh half.
    story = "".join(f"<p>{text}</p>" for text in PROSE)
    body = f'<div class="main"><div class="story">{story}</div></div><div class="right">{teaser_list(TEASERS[:4])}</div>'
    assert main_text(parse_html(article(body))).split("\n") == list(PROSE)


def test_sections_like_the_article_s_join_it():
    # A post cut into alike sections; one holds its prose a level deeper,
    # in a paragraph that a line break splits from its subheading.
    body = (f'<div class="post"><div class="text"><p>{PROSE[0]}</p><p>{PROSE[1]}</p></div>'
            f'<div class="text"><p><b>What changes</b><br>{TEASERS[0]}</p></div>'
            f'<div class="text"><p>{PROSE[2]}</p><p>{TEASERS[1]}</p></div></div>'
            '<div class="more"><p>Short teaser.</p></div>')
    assert main_text(parse_html(article(body))).split("\n") == [
        PROSE[0], PROSE[1], "What changes", TEASERS[0], PROSE[2], TEASERS[1]]


def test_a_landing_page_keeps_its_main():
    # Its sections hold a paragraph each, at different depths: none is the
    # article, so the author's <main> is.
    section = '<section{}><div class="container"><div class="copy"><h2>{}</h2><p>{}</p></div></div></section>'
    body = ('<nav><a href="/">Home</a> <a href="/features">Features</a></nav><main>'
            + section.format(' id="intro"', "Designed for you", PROSE[0])
            + '<div id="more">' + section.format(' class="feature"', "Themes", PROSE[1])
            + section.format(' class="feature"', "Add-ons", PROSE[2]) + '</div></main>'
            '<footer><p>Portions of this content are by individual contributors.</p></footer>')
    assert main_text(parse_html(article(body))).split("\n") == [
        "Designed for you", PROSE[0], "Themes", PROSE[1], "Add-ons", PROSE[2]]


def test_text_after_a_comment_is_kept():
    # React writes "very<!-- -->recently"; old pages comment out markup mid-paragraph.
    body = f"<p>It happened very<!-- -->recently, <!-- an ad was here -->{PROSE[0]}</p><p>{PROSE[1]}<?php x ?> end.</p>"
    assert main_text(parse_html(article(body))).split("\n") == [f"It happened veryrecently, {PROSE[0]}",
                                                                 f"{PROSE[1]} end."]


def test_a_walk_that_leaves_marked_blocks_out_gives_the_whole_walk_s_blocks_once_they_are_walked():
    # main_text walks the marked blocks only when it may need them: their
    # blocks must then be those one whole walk gives, in its order, with the
    # marks, list items and links open around them.
    body = (f'<div class="story"><p>{PROSE[0]}</p>'
            f'<ul><li>Item text <div class="share-box">{PROSE[1]}<p class="note">{PROSE[2]}</p></div> after</li></ul>'
            f'<a href="/more">Read <div class="related"><p>{PROSE[0]}</p></div> more</a>'
            f'<div class="sidebar">Sidebar <div id="comments"><p>{PROSE[1]}</p></div> tail</div>'
            f'<footer>Footer <span class="ad">ad</span> text</footer> end of story</div>')
    root = parse_html(article(body))
    left_out = []
    first = page_blocks(root, left_out)
    assert [part.element.get("class") or part.element.tag for part in left_out] == [
        "share-box", "related", "sidebar", "footer"]
    assert not any(block.marked_by for block in first)

    def described(blocks):
        return [(block.text, block.owner, block.link_text, block.marked_by, block.in_item) for block in blocks]

    whole = page_blocks(root)
    spliced, weights = _with_left_out(first, [block.prose_weight() for block in first], left_out)
    assert described(spliced) == described(whole)
    assert weights == [block.prose_weight() for block in whole]
    assert len(whole) > len(first)


def test_skipped_blocks_still_separate_paragraphs():
    text = main_text(parse_html("<div>before<nav>menu</nav>after<div class='ad'>x</div>end</div>"))
    assert text == "before\nafter\nend"


# --------------------------------------------------------------------------
# Hostile text


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
    head = f'<title>{escaped}</title><meta name="keywords" content="{escaped}"><meta name="description" content="{escaped}">'
    line, page = render(article(f"<p>{escaped}</p><p>after</p>", head))
    content = page.findtext("content")
    assert page.findtext("headline")
    assert content.endswith("after")
    for forbidden in "\x00\x07\x0b\x0c\x1b\ufffe\uffff":
        assert forbidden not in line and forbidden not in content
    assert [child.tag for child in page] == ["headline", "keywords", "description", "content"]
    for kept in ("]]>", "</page>", "<injected/>", "\"", "'", "&", "\x85", "\u2028"):
        if kept in hostile:
            assert kept in content
            assert kept in page.findtext("description")


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


@pytest.mark.parametrize("nest, closing", [
    ("<aside>", "</aside>"), ("<h1>", "</h1>"), ("<noscript>", "</noscript>"),
    ("<nav><header>", "</header></nav>"), ("<a href='/x'><p>", "</p></a>"),
])
def test_deep_nesting_of_the_tags_kept_for_the_article_loses_nothing_after_it(nest, closing):
    # Flattening the wrappers leaves these as deep as they were: the page is
    # flattened again, down to the tags that carry links and metadata.
    markup = (f"<title>deep</title>{nest * 100_000}inside{closing * 100_000}"
              "<p>The paragraph after the nest.</p><a href='/after'>after</a>")
    root = parse_html(markup)
    assert max(len(list(element.iterancestors())) for element in root.iter()) < 100
    assert extract_links(root, URL, "utf-8")[-1] == "http://127.0.0.3:8080/after"
    _, page = render(markup)
    assert page.findtext("headline") == "deep"
    assert "The paragraph after the nest." in page.findtext("content")


def test_the_class_name_caches_stay_bounded_whatever_the_names():
    # Each page makes up a class name of 600 KB: the caches of names judged
    # must not keep every one of them for the rest of the task.
    for n in range(20):
        name = f"page{n} " + "menu item " * 60_000
        render(article(f'<div class="{name}"><p>{PROSE[0]}</p></div><p id="{name}">{PROSE[1]}</p>'))
    for cache in (maintext._NAMES_SEEN, maintext._BOILERPLATE_NAMES):
        assert sum(map(len, cache)) == cache.characters <= maintext.NAME_CHARS_CACHED


def test_many_paragraphs_deep_inside_a_nest_stay_fast():
    # 2,000 levels (under libxml2's limit) around 5,000 paragraphs: the
    # article is found without walking the nest once per paragraph.
    paragraphs = "".join(f"<p>{PROSE[n % 3]} Number {n}.</p>" for n in range(5_000))
    markup = f"<title>t</title>{'<div>' * 2_000}{paragraphs}{'</div>' * 2_000}"
    _, page = render(markup)
    content = page.findtext("content").split("\n")
    assert len(content) == 5_000 and content[-1].endswith("Number 4999.")


def test_empty_and_non_html_bodies():
    for body in (b"", b"\x00\x01\x02", b"%PDF-1.4 binary", b"<?xml version='1.0'?><rss/>"):
        doc = fetched_doc(body)
        page = etree.fromstring(page_to_xml(doc, "en"), XML_PARSER)
        assert page.findtext("headline") is not None
        assert page.get("digest") == sha1_base32(body)


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
    head = '<title>Cafe\u0301</title><meta name="description" content="Cre\u0300me">'
    _, page = render(article("<p>Bu\u0308cher</p>", head))
    assert page.findtext("headline") == "Caf\u00e9"
    assert page.findtext("description") == "Cr\u00e8me"
    assert page.findtext("content") == "B\u00fccher"


# --------------------------------------------------------------------------
# Charsets


@pytest.mark.parametrize("declared", ["undeclared", "header"])
@pytest.mark.parametrize("text", NEWS + OTHER_LEGACY_NEWS, ids=lambda text: f"{text.label}-{text.language}")
def test_each_charset_reads_back_without_mojibake(text, declared):
    body = news_page(text).encode(text.codec)
    content_type = "text/html" if declared == "undeclared" else f"text/html; charset={text.label}"
    encoding = detect_encoding(body, content_type)
    line = page_to_xml(fetched_doc(body, encoding), text.language)
    page = etree.fromstring(line, XML_PARSER)
    assert page.get("encoding") == encoding
    if declared == "header":
        assert encoding == codec_for_label(text.label)
    assert page.get("language") == text.language
    assert page.get("digest") == sha1_base32(body)
    assert page.findtext("headline") == text.title
    # Exactly the article's paragraphs: no headline, byline, menu or footer.
    assert page.findtext("content").split("\n") == text.paragraphs
    assert "\ufffd" not in line


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


def test_pages_from_many_threads():
    # Map tasks may render in threads; each page must get its own result.
    pages = [f"<title>page {n}</title><p>{'text ' * (n % 50)}number {n}</p>" for n in range(400)]

    def render_one(markup: str) -> tuple[str, str]:
        page = etree.fromstring(page_to_xml(fetched_doc(markup.encode()), "en"), XML_PARSER)
        return page.findtext("headline"), page.findtext("content")

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(render_one, pages))
    for n, (title, text) in enumerate(results):
        assert title == f"page {n}"
        assert text.endswith(f"number {n}")


# --------------------------------------------------------------------------
# A real crawl


def test_xml_of_a_crawl_matches_the_test_web(web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path, language="zh")
    output = tmp_path / "crawl"
    depth = 3  # layer 2 holds the charset pages and the meta robots (noindex) pages
    assert crawl(seeds, conf, output, depth) == 0
    web = web_server.web

    # Where the oracle first fetches each URL: its layer.
    expected = expected_layers_for_config(web, config, web_server.seeds, depth=depth)
    layer_of = {url: layer for layer, records in enumerate(expected)
                for _, outcome, url in records if outcome == FETCHED}
    merged = {url: doc for url, doc in read_records(output / "doc" / "merged")}
    # A page whose payload another URL's page had first is a duplicate, and gets no line.
    duplicates = expected_duplicates(web, expected, config["max_page_bytes"])
    assert duplicates and {url: doc["duplicate_of"] for url, doc in merged.items() if doc["duplicate_of"]} == duplicates
    indexable = {url for url, doc in merged.items()
                 if doc["outcome"] == FETCHED and doc["meta_index"] and url not in duplicates}
    assert any(not doc["meta_index"] for doc in merged.values() if doc["outcome"] == FETCHED)  # noindex pages: no line

    (xml_dir,) = (output / "xml").iterdir()
    lines = [line for part in sorted(xml_dir.glob("part-*"))
             for line in part.read_text(encoding="utf-8").splitlines()]
    urls = [line.split("\t", 1)[0] for line in lines]
    assert sorted(urls) == sorted(indexable)  # one line per indexable page, no more
    checked_content = 0
    for line in lines:
        key, document = line.split("\t", 1)
        page = etree.fromstring(document, XML_PARSER)
        url = page.get("url")
        assert key == url
        model = web.page(url)
        doc = merged[url]
        assert page.get("language") == "zh"
        assert page.get("layer") == str(layer_of[url])
        assert page.get("encoding") == doc["encoding"]
        if model.charset and model.declared != "none":
            assert page.get("encoding") == codec_for_label(model.charset), url
        body = model.body[:config["max_page_bytes"]]
        assert page.get("digest") == sha1_base32(body), url
        assert page.get("redirect_from") == doc["redirect_from"]
        if model.title is not None:
            assert page.findtext("headline") == model.title, url
        content = page.findtext("content").split("\n") if page.findtext("content") else []
        if model.kind == "oversized":  # cut at max_page_bytes, with filler paragraphs after its own
            assert content[: len(model.paragraphs)] == list(model.paragraphs)
        else:
            assert content == list(model.paragraphs), url
            checked_content += 1
    assert checked_content >= 20
    # The crawl reached pages in many charsets, and pages reached through a redirect.
    assert len({web.page(url).charset for url in urls if web.page(url).kind == "charset"}) >= 8
    assert any(merged[url]["redirect_from"] for url in urls)


def test_a_page_whose_signature_is_the_known_one_gets_no_xml():
    article = "<html><body><p>The council met on {day} May.</p><p>{text}</p><a href='/x'>{link}</a></body></html>"
    before = fetched_doc(article.format(day=3, text="It voted to build a bridge.", link="More").encode())
    signature = page_signature(parse_html(decode_page(before)))
    # Another date and another link: the same page, as the revisit policy reads it.
    same = fetched_doc(article.format(day=4, text="It voted to build a bridge.", link="Latest").encode())
    same["known"] = {"signature": signature}
    assert page_to_xml(same, "en") is None
    edited = fetched_doc(article.format(day=4, text="It voted against the bridge.", link="More").encode())
    edited["known"] = {"signature": signature}
    assert "against the bridge" in page_to_xml(edited, "en")
    assert page_to_xml(before, "en") is not None  # a first fetch: nothing known
