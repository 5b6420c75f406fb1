"""Page change signals for the revisit policy: the change signature (text
outside links, digits out, whitespace collapsed) and the hub judgement (link
density), on made-up pages, on the daily news web whose ground truth says
which pages changed, on the main test web, and as the Parser's out record
carries them."""
from __future__ import annotations

import hashlib
import logging
import re
import time

import pytest
from lxml import etree

from mrcrawl.bench.corpus import corpus
from mrcrawl.page import outlinks
from mrcrawl.page.change import PageSignals, is_hub, page_signals, page_signature
from mrcrawl.page.charset import decode_body, detect_encoding
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_links
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.records import FETCHED, HTTP_ERROR, LINKS_FROM_PAGE, NOT_HTML, REDIRECT, REDIRECT_TARGET, encode_body, new_doc
from mrcrawl.testweb.daily import BENCHMARK_SPEC, DailySpec, DailyWeb
from mrcrawl.testweb.web import generate_web

PORT = 41000  # the webs are read as models here, never served
PAGE_URL = "http://127.0.0.2:41000/news/story.html"


def root_of(body: str, head: str = "<title>A page</title>"):
    return parse_html(f"<!DOCTYPE html>\n<html><head>{head}</head>\n<body>\n{body}\n</body></html>\n")


def signature(body: str, head: str = "<title>A page</title>") -> str:
    return page_signature(root_of(body, head))


# ---- the signature -------------------------------------------------------------


def test_the_signature_is_a_digest_of_the_text_outside_links_without_digits():
    root = root_of('<p>Hello 2026 world.</p>\n<p>Read <a href="/more">the rest</a>   more</p>')
    expected = hashlib.blake2b(b"Hello world. Read more", digest_size=16).hexdigest()
    assert page_signature(root) == expected
    assert page_signals(root).signature == expected
    assert re.fullmatch("[0-9a-f]{32}", expected)


ARTICLE = "<h1>Bridge repairs</h1>\n<p>The council approved the repairs to the old bridge.</p>\n"


@pytest.mark.parametrize(
    "before, after",
    [
        # Clocks, dates and counters: digits, in any script.
        ("<p>Updated 09:41, 5 January 2026</p>", "<p>Updated 17:05, 12 January 2026</p>"),
        ("<p>Edition of 2026-01-05 06:00 UTC.</p>", "<p>Edition of 2026-01-06 06:00 UTC.</p>"),
        ("<p>Seen 1,024 times</p>", "<p>Seen 2,048 times</p>"),
        ("<p>２０２６年１月５日 更新</p>", "<p>２０２６年１月６日 更新</p>"),  # full-width digits
        ("<p>آخر تحديث ٢٠٢٦/١/٥</p>", "<p>آخر تحديث ٢٠٢٦/١/٦</p>"),  # Arabic-Indic digits
        ("<p>अद्यतन ५ जनवरी</p>", "<p>अद्यतन ६ जनवरी</p>"),  # Devanagari digits
        # Links: their text, their targets, which ones and how many.
        ('<p>See <a href="/a">Old headline</a>.</p>', '<p>See <a href="/a">New headline</a>.</p>'),
        ('<p>See <a href="/a">Headline</a>.</p>', '<p>See <a href="/b?session=9f8e7d">Headline</a>.</p>'),
        ('<ul>\n<li><a href="/1">First story</a></li>\n<li><a href="/2">Second story</a></li>\n</ul>',
         '<ul>\n<li><a href="/3">Third story</a></li>\n<li><a href="/1">First story</a></li>\n'
         '<li><a href="/2">Second story</a></li>\n</ul>'),
        ('<div class="ad"><a href="/ad/1"><b>Buy</b> shoes</a></div>', '<div class="ad"><a href="/ad/2"><i>Sell</i> hats</a></div>'),
        # What is not shown.
        ("<script>var served = 'a1';</script>", "<script>var served = 'b2'; track();</script>"),
        ("<style>p { color: red }</style>", "<style>p { color: blue }</style>"),
        ("<noscript>Enable JavaScript</noscript>", "<noscript>Please enable scripts</noscript>"),
        ("<template><p>Loading one</p></template>", "<template><p>Loading two</p></template>"),
        ("<!-- served by web-1 -->", "<!-- served by web-7, cache hit -->"),
        ('<p class="lead" data-id="x1">Text</p>', '<p class="teaser" data-id="y2">Text</p>'),
        # Whitespace: indentation, line breaks.
        ("<p>Some   text\n    here</p>", "<p>Some text here</p>"),
    ],
)
def test_the_signature_ignores_digits_links_and_what_is_not_shown(before, after):
    assert signature(ARTICLE + before) == signature(ARTICLE + after)


def test_the_signature_ignores_the_head():
    assert (signature(ARTICLE, head='<title>Bridge - Mon 5 Jan</title><meta name="x" content="a">')
            == signature(ARTICLE, head='<title>Bridge - Tue 6 Jan</title><meta name="x" content="b">'))


@pytest.mark.parametrize(
    "before, after",
    [
        ("<p>The council approved the repairs.</p>", "<p>The council postponed the repairs.</p>"),
        ("<p>The council approved the repairs.</p>",
         "<p>The council approved the repairs.</p>\n<p>Work starts in the spring.</p>"),
        ("<p>One.</p>\n<p>Two.</p>", "<p>Two.</p>\n<p>One.</p>"),
        ("<p>会议批准了修桥计划。</p>", "<p>会议推迟了修桥计划。</p>"),
        ("<p>Встреча отменена.</p>", "<p>Встреча перенесена.</p>"),
        # The words around a link are text; so is an anchor without href.
        ('<p>Read <a href="/x">this</a> first</p>', '<p>Read <a href="/x">this</a> last</p>'),
        ('<p><a name="top">Top stories</a></p>', '<p><a name="top">Latest stories</a></p>'),
        # A digit removed is not a change, a word next to it is.
        ("<p>Seen 5 times</p>", "<p>Seen 5 days</p>"),
    ],
)
def test_the_signature_changes_with_the_text(before, after):
    assert signature(ARTICLE + before) != signature(ARTICLE + after)


# ---- the hub judgement -----------------------------------------------------------


def test_link_density_is_link_characters_over_all_visible_characters():
    root = root_of('<p>abcd</p><p><a href="/x">efgh</a></p>')
    signals = page_signals(root)
    assert (signals.text_characters, signals.link_characters, signals.link_density) == (8, 4, 0.5)
    assert is_hub(root, 0.5) and signals.is_hub(0.5)  # at least the threshold
    assert not is_hub(root, 0.51) and not signals.is_hub(0.51)
    assert is_hub(root) is True  # the default threshold is 0.5


def test_whitespace_and_hidden_text_do_not_count():
    spaced = root_of('<p>ab    \n\n      cd</p>\n    <ul>\n      <li><a href="/x">efgh</a></li>\n    </ul>')
    assert page_signals(spaced)[1:3] == (8, 4)
    hidden = root_of('<script>' + "x" * 1000 + '</script><style>p{}</style><noscript>Enable it</noscript>'
                     '<template>A template</template><!-- a comment --><p>ab</p><a href="/x">cde</a>',
                     head="<title>" + "t" * 100 + "</title>")
    assert page_signals(hidden)[1:3] == (5, 3)
    assert is_hub(hidden, 0.5)


def test_only_a_href_is_link_text_whatever_its_rel():
    anchors = root_of('<p><a name="top">Top of the page</a> <a href="/x">x</a></p>')
    assert page_signals(anchors).link_characters == 1 and not is_hub(anchors, 0.5)
    nofollow = root_of('<p>ab <a href="/x" rel="nofollow">cdef</a></p>')
    assert is_hub(nofollow, 0.5)
    nested = root_of('<p>ab <a href="/x">cd <b>ef <i>gh</i></b></a></p>')
    assert page_signals(nested).link_characters == 6


@pytest.mark.parametrize(
    "page, hub",
    [
        ("", False),  # neither text nor links
        ('<a name="top"></a><img src="/logo.png">', False),  # an anchor is no link
        ('<a href="/a"><img src="/a.png"></a><a href="/b"><img src="/b.png"></a>', True),  # links, no text
        ('<img src="/map.png" usemap="#m"><map name="m"><area href="/a" coords="0,0,9,9"></map>', True),
        ('<a href="/a" rel="nofollow"><img src="/a.png"></a>', True),
        ("<p>Only text, not one link.</p>", False),
        ('<p>Text and an image link <a href="/a"><img src="/a.png"></a></p>', False),
        ("<script>location.href = '/a'</script>", False),
    ],
)
def test_pages_without_text_or_without_links(page, hub):
    assert is_hub(root_of(page), 0.5) is hub
    assert is_hub(root_of(page), 1.0) is hub  # no text: the threshold does not matter; no links: never


def test_a_frameset_and_a_page_of_head_links_only():
    frames = parse_html('<html><head><title>Frames</title></head><frameset cols="50%,50%">'
                        '<frame src="left.html"><frame src="right.html"></frameset></html>')
    assert page_signals(frames).text_characters == 0 and is_hub(frames, 0.5)
    head_only = root_of("", head='<title>Next</title><link rel="next" href="/page/2">')
    assert not is_hub(head_only, 0.5)


# ---- robustness and speed ----------------------------------------------------------


@pytest.mark.parametrize("text", ["", "\x00", "plain text, no markup", "<p>" * 100_000 + "deep",
                                  "<nav>" * 100_000 + "deep" + '<a href="/x">x</a>', "<div>" * 100_000 + "deep"])
def test_any_parsed_page_gets_its_signals(text):
    signals = page_signals(parse_html(text))
    assert isinstance(signals, PageSignals) and re.fullmatch("[0-9a-f]{32}", signals.signature)


_HIDDEN = frozenset(("head", "script", "style", "noscript", "template"))
_ASCII_SPACE = re.compile(r"[ \t\n\r\f\v]+")


def reference_signals(root) -> tuple[str, int, int]:
    """The definition, walked in Python: text outside hidden elements and
    outside a[href]; digits out, HTML whitespace collapsed."""
    outside, inside = [], []

    def visit(element, in_link: bool) -> None:
        if not isinstance(element.tag, str) or element.tag in _HIDDEN:
            return
        in_link = in_link or (element.tag == "a" and element.get("href") is not None)
        (inside if in_link else outside).append(element.text or "")
        for child in element:
            visit(child, in_link)
            (inside if in_link else outside).append(child.tail or "")

    visit(root, False)
    text, links = "".join(outside), "".join(inside)
    normalised = _ASCII_SPACE.sub(" ", re.sub(r"\d", "", text)).strip(" ")
    characters = len(_ASCII_SPACE.sub("", text))
    link_characters = len(_ASCII_SPACE.sub("", links))
    signature_ = hashlib.blake2b(normalised.encode(), digest_size=16).hexdigest()
    return signature_, characters + link_characters, link_characters


def test_signals_match_the_definition_on_the_extraction_corpus():
    """Ninety pages of news sites' markup in five languages (menus, ads,
    scripts, comments, link lists), against a plain walk of the tree."""
    for page in corpus():
        root = parse_html(page.html)
        assert page_signals(root)[:3] == reference_signals(root), page.name


def best_seconds(functions, items, rounds: int = 5) -> list[float]:
    """Each function's best time over `items`, the functions taking turns:
    a busy machine only slows a round down."""
    best = [float("inf")] * len(functions)
    for _ in range(rounds):
        for number, function in enumerate(functions):
            started = time.perf_counter()
            for item in items:
                function(item)
            best[number] = min(best[number], time.perf_counter() - started)
    return best


def test_signals_cost_less_than_parsing_and_taking_the_links():
    pages = [page.html for page in corpus()]
    roots = [parse_html(text) for text in pages]
    signals, links = best_seconds([page_signals, lambda root: extract_links(root, PAGE_URL, "utf-8")], roots)
    (parsing,) = best_seconds([parse_html], pages)
    # Measured around half of parsing and links together; the bound only
    # catches a gross slowdown (XPath ancestor tests cost three times as much).
    assert signals < 1.5 * (parsing + links), f"signals {signals:.4f}s, parse {parsing:.4f}s + links {links:.4f}s"


# ---- the daily news web ---------------------------------------------------------


def daily_root(web: DailyWeb, url: str, day: int):
    page = web.page(url, day)
    assert page.status == 200, (url, day)
    return parse_html(page.body.decode("utf-8"))


def articles_on(web: DailyWeb, day: int) -> list[str]:
    return sorted(url for url in web.existing(day) if url.endswith(".html"))


def test_hub_pages_keep_their_signature_while_their_date_and_links_change():
    web = DailyWeb(DailySpec(), PORT)
    for url in web.hub_urls():
        bodies = {web.page(url, day).body for day in web.days}
        assert len(bodies) == len(web.days), url  # the edition's date changes every day
        assert len({tuple(web.outlinks(url, day)) for day in web.days}) > 1, url  # and new articles come
        assert len({page_signature(daily_root(web, url, day)) for day in web.days}) == 1, url


def test_an_article_s_signature_changes_exactly_on_the_days_its_text_does():
    web = DailyWeb(DailySpec(), PORT)
    changed = unchanged = 0
    for day in range(2, web.spec.days + 1):
        for url in articles_on(web, day - 1):
            if not web.exists(url, day):
                continue  # deleted
            before = page_signature(daily_root(web, url, day - 1))
            after = page_signature(daily_root(web, url, day))
            updated = web.version(url, day) == day
            assert (before != after) == updated, (url, day)
            changed += updated
            unchanged += not updated
    assert changed >= 10 and unchanged >= 500  # both cases were seen


def test_home_and_section_pages_are_hubs_and_articles_are_not():
    for spec, days in ((DailySpec(), None), (BENCHMARK_SPEC, (1, 7))):
        web = DailyWeb(spec, PORT)
        hubs = web.hub_urls() if days is None else web.hub_urls()[:1 + spec.sections]  # one site of the benchmark's 50
        for day in days or web.days:
            for url in hubs:
                assert is_hub(daily_root(web, url, day), 0.5), (url, day)
            articles = list(dict.fromkeys(link for hub in hubs for link in web.outlinks(hub, day) if link.endswith(".html")))
            assert len(articles) >= spec.latest
            for url in articles:
                assert not is_hub(daily_root(web, url, day), 0.5), (url, day)


# ---- the main test web --------------------------------------------------------------


def test_on_the_test_web_home_pages_frames_and_the_link_list_are_hubs():
    """Home pages list hosts and articles; the frameset has links and no text;
    the link-syntax page is a list of links.  Articles, charset pages, meta
    robots pages and leaves say something."""
    web = generate_web(seed=1, port=PORT)
    kinds: dict[str, set[bool]] = {}
    for page in web.pages.values():
        if page.status != 200 or not page.is_html or not page.body:
            continue
        text = page.text if page.text is not None else decode_body(page.body, detect_encoding(page.body, page.content_type))
        kinds.setdefault(page.kind, set()).add(is_hub(parse_html(text), 0.5))
    assert kinds.pop("home") == {True}
    assert kinds.pop("frames") == {True}
    assert kinds.pop("links") == {True}
    assert {"article", "leaf", "charset", "meta"} <= kinds.keys()
    assert all(judged == {False} for judged in kinds.values()), kinds


# ---- the Parser's out record ------------------------------------------------------------

SCOPE = UrlFilter([], [])
HUB_PAGE = ("<html><head><title>Home</title></head><body><h1>Home</h1><ul>"
            '<li><a href="/one.html">The first story of the day</a></li>'
            '<li><a href="/two.html">The second story of the day</a></li></ul></body></html>')


def fetched_doc(html: str, *, follow: bool = True, hops: int | None = 2) -> dict:
    doc = new_doc(PAGE_URL, 3, {"hops": hops, "known": None})
    doc.update(outcome=FETCHED, status=200, content_type="text/html", encoding="utf-8",
               body=encode_body(html.encode("utf-8")), meta_follow=follow)
    return doc


def test_a_fetched_page_s_out_record_has_its_hops_signature_and_hub_judgement():
    out = outlinks.out_record(fetched_doc(HUB_PAGE), SCOPE)
    assert out["outlinks"] == ["http://127.0.0.2:41000/one.html", "http://127.0.0.2:41000/two.html"]
    assert (out["type"], out["layer"], out["hops"]) == (LINKS_FROM_PAGE, 3, 2)
    assert out["signature"] == page_signature(parse_html(HUB_PAGE)) and out["hub"] is True
    article = outlinks.out_record(fetched_doc(f"<p>{'Words of an article. ' * 20}</p>{HUB_PAGE}"), SCOPE)
    assert article["hub"] is False and article["signature"] != out["signature"]
    # The crawl's threshold is passed on.
    assert outlinks.out_record(fetched_doc(HUB_PAGE), SCOPE, hub_link_density=0.95)["hub"] is False


def test_a_nofollow_page_gives_no_links_but_is_judged_all_the_same():
    followed = outlinks.out_record(fetched_doc(HUB_PAGE), SCOPE)
    nofollow = outlinks.out_record(fetched_doc(HUB_PAGE, follow=False), SCOPE)
    assert nofollow["outlinks"] == []
    assert (nofollow["signature"], nofollow["hub"], nofollow["hops"]) == (followed["signature"], True, 2)


def test_records_without_a_page_carry_their_hops_and_no_judgement():
    redirect = new_doc(PAGE_URL, 1, {"hops": 4, "known": None})
    redirect.update(outcome=REDIRECT, status=301, redirect_to="http://127.0.0.3:41000/")
    out = outlinks.out_record(redirect, SCOPE)
    assert (out["outlinks"], out["type"], out["hops"], out["signature"], out["hub"]) == (
        ["http://127.0.0.3:41000/"], REDIRECT_TARGET, 4, None, None)
    for outcome in (HTTP_ERROR, NOT_HTML):
        doc = new_doc(PAGE_URL, 1, {"hops": 0, "known": None})
        doc.update(outcome=outcome, status=404)
        out = outlinks.out_record(doc, SCOPE)
        assert (out["outlinks"], out["hops"], out["signature"], out["hub"]) == ([], 0, None, None)
    old = fetched_doc(HUB_PAGE)
    del old["hops"]  # a doc record written before hops existed
    assert outlinks.out_record(old, SCOPE)["hops"] is None


def test_a_page_that_breaks_the_parser_costs_only_its_own_record(monkeypatch, caplog):
    def broken(text):
        raise etree.LxmlError("broken")

    monkeypatch.setattr(outlinks, "parse_html", broken)
    with caplog.at_level(logging.ERROR, logger=outlinks.log.name):
        out = outlinks.out_record(fetched_doc(HUB_PAGE), SCOPE)
    assert (out["outlinks"], out["signature"], out["hub"], out["hops"]) == ([], None, None, 2)
    assert PAGE_URL in caplog.text
