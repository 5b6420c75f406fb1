"""Feeds and sitemaps read from their bytes (mrcrawl.page.announce): every
format, recognised by content, gzip, the caps, and hostile documents."""
from __future__ import annotations

import gzip
import random
import time
import zlib

import pytest

from mrcrawl.page.announce import (
    ANNOUNCEMENT_KINDS, FEED, MAX_ENTRIES, MAX_UNCOMPRESSED_BYTES, NEWS_SITEMAP, SITEMAP, SITEMAP_INDEX,
    Announcement, Entry, announced_date, feed_links, read_announcement, sniff,
)
from mrcrawl.page.html import parse_html

SITE = "http://news.test:8080"

RSS2 = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Site &amp; news</title>
  <link>http://news.test:8080/</link>
  <language>en-gb</language>
  <item>
    <title>Tom &amp;amp; Jerry: &lt;b&gt;bold&lt;/b&gt;   news &#233;t&#xE9;</title>
    <link>/world/one.html</link>
    <pubDate>Tue, 04 Jun 2024 09:30:00 +0200</pubDate>
  </item>
  <item>
    <title><![CDATA[A <i>CDATA</i> title]]></title>
    <link>https://Other.TEST/two.html#comments</link>
    <dc:date>2024-06-04T10:00:00Z</dc:date>
    <dc:language>fr</dc:language>
  </item>
  <item>
    <title>Only a guid</title>
    <guid>three.html</guid>
    <pubDate>not a date</pubDate>
  </item>
  <item>
    <title>A guid that is no link</title>
    <guid isPermaLink="false">http://news.test:8080/not-a-page</guid>
  </item>
  <item><title>ftp is not crawled</title><link>ftp://news.test/file</link></item>
  <item><title>Listed twice</title><link>http://news.test:8080/world/one.html</link></item>
</channel>
</rss>
"""


def test_rss2_items_resolve_their_links_and_decode_their_titles():
    announcement = read_announcement(RSS2, f"{SITE}/feeds/main.rss")
    assert announcement == Announcement(FEED, (
        Entry(f"{SITE}/world/one.html", "2024-06-04T07:30:00.000Z", None, "Tom & Jerry: bold news été", "en-gb"),
        Entry("https://other.test/two.html", "2024-06-04T10:00:00.000Z", None, "A CDATA title", "fr"),
        Entry(f"{SITE}/feeds/three.html", None, None, "Only a guid", "en-gb"),
    ), None)


RSS1 = b"""<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"
         xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:dcterms="http://purl.org/dc/terms/">
  <channel rdf:about="http://news.test:8080/">
    <title>Site</title>
    <dc:language>de</dc:language>
    <items><rdf:Seq><rdf:li resource="http://news.test:8080/a.html"/></rdf:Seq></items>
  </channel>
  <item rdf:about="http://news.test:8080/about-a">
    <title>&lt;em&gt;Eins&lt;/em&gt; &amp;amp; zwei</title>
    <link>a.html</link>
    <dc:date>2024-06-04T12:00:00+02:00</dc:date>
    <dcterms:modified>2024-06-05</dcterms:modified>
  </item>
  <item rdf:about="http://news.test:8080/b.html">
    <title>Drei</title>
  </item>
</rdf:RDF>
"""


def test_rss1_items_take_link_else_rdf_about():
    announcement = read_announcement(RSS1, f"{SITE}/rdf/feed")
    assert announcement == Announcement(FEED, (
        Entry(f"{SITE}/rdf/a.html", "2024-06-04T10:00:00.000Z", "2024-06-05T00:00:00.000Z", "Eins & zwei", "de"),
        Entry(f"{SITE}/b.html", None, None, "Drei", "de"),
    ), None)


ATOM = b"""<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom" xml:lang="es" xml:base="/sections/">
  <title>Site</title>
  <link rel="self" href="/atom.xml"/>
  <entry xml:base="world/">
    <title type="html">&lt;b&gt;Uno&lt;/b&gt; &amp;amp; dos</title>
    <link rel="self" href="/api/1"/>
    <link rel="alternate" type="text/html" href="uno.html"/>
    <published>2024-06-04T08:00:00-05:00</published>
    <updated>2024-06-04T09:00:00.250-05:00</updated>
  </entry>
  <entry xml:lang="ca">
    <title>Text &lt;b&gt; stays</title>
    <link href="http://news.test:8080/dos.html"/>
  </entry>
  <entry>
    <title type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml">Tres <b>negrita</b></div></title>
    <link rel="enclosure" href="tres.mp3"/>
    <link href="tres.html"/>
  </entry>
  <entry><title>No link</title><id>tag:news.test,2024:4</id></entry>
</feed>
"""


def test_atom_entries_resolve_against_xml_base_then_the_document():
    announcement = read_announcement(ATOM, f"{SITE}/feeds/atom.xml")
    assert announcement == Announcement(FEED, (
        Entry(f"{SITE}/sections/world/uno.html", "2024-06-04T13:00:00.000Z", "2024-06-04T14:00:00.250Z",
              "Uno & dos", "es"),
        Entry(f"{SITE}/dos.html", None, None, "Text <b> stays", "ca"),
        Entry(f"{SITE}/sections/tres.html", None, None, "Tres negrita", "es"),
    ), None)


ATOM_03 = b"""<?xml version="1.0" encoding="utf-8"?>
<feed version="0.3" xmlns="http://purl.org/atom/ns#" xml:lang="en">
  <title>Old blog</title>
  <link rel="alternate" type="text/html" href="http://news.test:8080/"/>
  <modified>2024-06-04T12:00:00Z</modified>
  <entry>
    <title type="text/html" mode="escaped">Fish &amp;amp; &lt;b&gt;chips&lt;/b&gt;</title>
    <link rel="service.edit" type="application/x.atom+xml" href="/edit/1"/>
    <link rel="alternate" type="text/html" href="/2024/06/fish.html"/>
    <issued>2024-06-04T09:30:00+02:00</issued>
    <modified>2024-06-04T11:00:00Z</modified>
    <created>2024-06-03T20:00:00Z</created>
  </entry>
  <entry xml:lang="de">
    <title type="text/html" mode="xml">Inline <b xmlns="http://www.w3.org/1999/xhtml">bold</b> &lt;b&gt;</title>
    <link rel="alternate" type="application/xhtml+xml" href="http://news.test:8080/2024/06/wurst.html"/>
    <created>2024-06-03T20:00:00Z</created>
  </entry>
</feed>
"""


def test_atom_0_3_feeds_are_read_with_their_issued_and_modified_dates():
    assert sniff(ATOM_03) == FEED
    announcement = read_announcement(ATOM_03, f"{SITE}/atom03.xml")
    assert announcement == Announcement(FEED, (
        Entry(f"{SITE}/2024/06/fish.html", "2024-06-04T07:30:00.000Z", "2024-06-04T11:00:00.000Z",
              "Fish & chips", "en"),
        # No <issued>: <created> is the publication.  mode="xml": the markup is elements, "<b>" is text.
        Entry(f"{SITE}/2024/06/wurst.html", "2024-06-03T20:00:00.000Z", None, "Inline bold <b>", "de"),
    ), None)


RSS2_USERLAND = """<?xml version="1.0"?>
<rss version="2.0" xmlns="http://backend.userland.com/rss2" xmlns:dc="http://purl.org/dc/elements/1.1/">
<channel>
  <title>Namespaced</title>
  <language>en-us</language>
  <item>
    <title>Caf&#233; &amp;amp; bar</title>
    <link>/2024/cafe.html</link>
    <pubDate>Tue, 04 Jun 2024 09:30:00 GMT</pubDate>
  </item>
</channel>
</rss>
"""


@pytest.mark.parametrize("body", [
    RSS2_USERLAND,
    # The same with a prefix on every element and no default namespace.
    RSS2_USERLAND.replace("<rss version=\"2.0\" xmlns=", "<r:rss version=\"2.0\" xmlns:r=")
    .replace("</rss>", "</r:rss>").replace("<channel>", "<r:channel>").replace("</channel>", "</r:channel>")
    .replace("<item>", "<r:item>").replace("</item>", "</r:item>")
    .replace("<title>", "<r:title>").replace("</title>", "</r:title>")
    .replace("<link>", "<r:link>").replace("</link>", "</r:link>")
    .replace("<language>", "<r:language>").replace("</language>", "</r:language>")
    .replace("<pubDate>", "<r:pubDate>").replace("</pubDate>", "</r:pubDate>"),
    # Other namespaces RSS 2.0 was published in.
    RSS2_USERLAND.replace("http://backend.userland.com/rss2", "http://blogs.law.harvard.edu/tech/rss"),
])
def test_rss2_in_a_namespace_is_read_as_rss2(body):
    body = body.encode()
    assert sniff(body) == FEED
    assert read_announcement(body, f"{SITE}/rss.xml") == Announcement(FEED, (
        Entry(f"{SITE}/2024/cafe.html", "2024-06-04T09:30:00.000Z", None, "Café & bar", "en-us"),), None)


def test_rss_0_90_items_are_read():
    body = b"""<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
        xmlns="http://my.netscape.com/rdf/simple/0.9/">
      <channel><title>Netscape era</title><link>http://news.test:8080/</link></channel>
      <item><title>First &amp;amp; oldest</title><link>http://news.test:8080/first.html</link></item>
      <item><title>Relative</title><link>second.html</link></item>
    </rdf:RDF>"""
    assert sniff(body) == FEED
    assert read_announcement(body, f"{SITE}/feeds/rss090.rdf") == Announcement(FEED, (
        Entry(f"{SITE}/first.html", None, None, "First & oldest", None),
        Entry(f"{SITE}/feeds/second.html", None, None, "Relative", None),
    ), None)


@pytest.mark.parametrize("namespace", ["http://www.w3.org/2005/Atom", "http://purl.org/atom/ns#"])
def test_an_atom_link_given_as_text_is_taken_only_when_it_is_an_absolute_url(namespace):
    body = f"""<feed xmlns="{namespace}">
      <entry><link rel="alternate" type="text/html">  http://news.test:8080/text.html </link></entry>
      <entry>
        <link rel="enclosure" type="audio/mpeg">http://news.test:8080/enclosure.mp3</link>
        <link rel="alternate" type="text/html">http://news.test:8080/after-enclosure.html</link>
      </entry>
      <entry>
        <link>http://news.test:8080/text-first.html</link>
        <link rel="alternate" href="/href-wins.html"/>
      </entry>
      <entry><link rel="alternate">Read the article</link></entry>
      <entry><link rel="alternate">/relative-text.html</link></entry>
      <entry><link rel="enclosure">http://news.test:8080/only-an-enclosure.mp3</link></entry>
    </feed>""".encode()
    assert [entry.url for entry in read_announcement(body, f"{SITE}/feeds/atom.xml").entries] == [
        f"{SITE}/text.html", f"{SITE}/after-enclosure.html", f"{SITE}/href-wins.html"]


SITEMAP_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>http://news.test:8080/a.html</loc><lastmod>2024-06-01</lastmod><changefreq>daily</changefreq></url>
  <url><loc>
      http://news.test:8080/b.html?x=1&amp;y=2
  </loc><lastmod>2024-06-02T10:00:00+01:00</lastmod></url>
  <url><loc>c.html</loc></url>
  <url><loc>mailto:someone@news.test</loc></url>
  <url><loc>http://news.test:8080/""" + b"x" * 2100 + b"""</loc></url>
  <url><loc>http://news.test:8080/a.html</loc><lastmod>2030-01-01</lastmod></url>
</urlset>
"""


def test_a_sitemap_lists_its_urls_with_lastmod():
    announcement = read_announcement(SITEMAP_XML, f"{SITE}/maps/sitemap.xml")
    assert announcement == Announcement(SITEMAP, (
        Entry(f"{SITE}/a.html", None, "2024-06-01T00:00:00.000Z", None, None),
        Entry(f"{SITE}/b.html?x=1&y=2", None, "2024-06-02T09:00:00.000Z", None, None),
        Entry(f"{SITE}/maps/c.html", None, None, None, None),
    ), None)


NEWS_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"
        xmlns:news="http://www.google.com/schemas/sitemap-news/0.9">
  <url>
    <loc>http://news.test:8080/today.html</loc>
    <news:news>
      <news:publication><news:name>The Test</news:name><news:language>pt-br</news:language></news:publication>
      <news:publication_date>2024-06-04T10:15:00-03:00</news:publication_date>
      <news:title>AT&amp;T &amp;amp; &lt;i&gt;friends&lt;/i&gt;</news:title>
    </news:news>
  </url>
</urlset>
"""


def test_a_news_sitemap_gives_publication_date_title_and_language():
    announcement = read_announcement(NEWS_XML, f"{SITE}/news.xml")
    assert announcement == Announcement(NEWS_SITEMAP, (
        Entry(f"{SITE}/today.html", "2024-06-04T13:15:00.000Z", None, "AT&T & friends", "pt-br"),
    ), None)


INDEX_XML = b"""<?xml version="1.0" encoding="UTF-8"?>
<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <sitemap><loc>http://news.test:8080/sitemap-1.xml.gz</loc><lastmod>2024-06-04T00:00:00Z</lastmod></sitemap>
  <sitemap><loc>/sitemap-news.xml</loc></sitemap>
</sitemapindex>
"""


def test_a_sitemap_index_lists_sitemaps():
    announcement = read_announcement(INDEX_XML, f"{SITE}/sitemap_index.xml")
    assert announcement == Announcement(SITEMAP_INDEX, (
        Entry(f"{SITE}/sitemap-1.xml.gz", None, "2024-06-04T00:00:00.000Z", None, None),
        Entry(f"{SITE}/sitemap-news.xml", None, None, None, None),
    ), None)


@pytest.mark.parametrize("body, kind", [
    (RSS2, FEED), (RSS1, FEED), (ATOM, FEED), (SITEMAP_XML, SITEMAP), (NEWS_XML, NEWS_SITEMAP),
    (INDEX_XML, SITEMAP_INDEX),
    # What may come before the root element.
    (b"\xef\xbb\xbf<?xml version='1.0'?><rss version='2.0'/>", FEED),
    (b"\n\n  <?xml version='1.0'?>\n<rss/>", FEED),
    (b"<?xml version='1.0'?><!-- generated --><?xml-stylesheet href='s.xsl'?>"
     b"<!DOCTYPE rss PUBLIC '-//Netscape Communications//DTD RSS 0.91//EN' "
     b"'http://127.0.0.1:9/rss-0.91.dtd'><rss version='0.91'/>", FEED),
    (b"<!DOCTYPE feed [<!ENTITY site 'news'>]><!-- x --><feed xmlns='http://www.w3.org/2005/Atom'/>", FEED),
    ("<?xml version='1.0' encoding='utf-16'?><urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'/>"
     .encode("utf-16"), SITEMAP),
    (b"<!--" + b"c" * 20000 + b"--><sitemapindex xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'/>",
     SITEMAP_INDEX),
    (b"<sm:urlset xmlns:sm='http://www.sitemaps.org/schemas/sitemap/0.9' "
     b"xmlns:n='http://www.google.com/schemas/sitemap-news/0.9'/>", NEWS_SITEMAP),
    (gzip.compress(NEWS_XML), NEWS_SITEMAP),
    # Look-alikes: the namespace decides.
    (b"<feed><entry/></feed>", None),
    (b"<rdf:RDF xmlns:rdf='http://www.w3.org/1999/02/22-rdf-syntax-ns#'/>", None),
    (b"<html><head><title>rss</title></head><body><rss/></body></html>", None),
    (b"<!DOCTYPE html><html><link rel=alternate type=application/rss+xml href=/f>", None),
    (b'{"version": "https://jsonfeed.org/version/1"}', None),
    (b"", None),
    (b"\x1f\x8b\x08garbage", None),
])
def test_sniff_reads_the_root_element(body, kind):
    assert sniff(body) == kind


def test_neither_the_url_nor_a_content_type_decides():
    # The parser is given no Content-Type at all, and a URL that names
    # another format does not matter: the bytes decide.
    assert read_announcement(RSS2, f"{SITE}/sitemap.xml.gz").kind == FEED
    assert read_announcement(gzip.compress(INDEX_XML), f"{SITE}/feed.rss").kind == SITEMAP_INDEX
    page = read_announcement(b"<html><body><p>Hi</p></body></html>", f"{SITE}/feed.xml")
    assert page == Announcement(None, (), "not a feed or sitemap: the root element is <html>")


def test_gzip_bodies_are_inflated_every_member_of_them():
    one = gzip.compress(SITEMAP_XML)
    assert read_announcement(one, f"{SITE}/maps/sitemap.xml.gz") == read_announcement(SITEMAP_XML,
                                                                                      f"{SITE}/maps/sitemap.xml.gz")
    half = len(NEWS_XML) // 2
    two_members = gzip.compress(NEWS_XML[:half]) + gzip.compress(NEWS_XML[half:])
    assert read_announcement(two_members, f"{SITE}/n.xml.gz").entries[0].title == "AT&T & friends"


def test_a_cut_or_damaged_gzip_body_keeps_the_entries_before_the_fault():
    body = b"".join([SITEMAP_XML.split(b"<url><loc>c.html")[0],
                     b"".join(b"<url><loc>/p/%d.html</loc></url>" % number for number in range(5000)), b"</urlset>"])
    compressed = gzip.compress(body)
    cut = read_announcement(compressed[: len(compressed) // 2], f"{SITE}/maps/s.xml.gz")
    assert cut.kind == SITEMAP
    assert [entry.url for entry in cut.entries[:3]] == [f"{SITE}/a.html", f"{SITE}/b.html?x=1&y=2", f"{SITE}/p/0.html"]
    assert 1000 < len(cut.entries) < 5000
    assert cut.error.startswith("gzip data cut short after ")
    wrong_checksum = compressed[:-8] + bytes([compressed[-8] ^ 0xFF]) + compressed[-7:]
    damaged = read_announcement(wrong_checksum, f"{SITE}/maps/s.xml.gz")
    assert damaged.entries[:3] == cut.entries[:3]
    assert len(damaged.entries) > 3000
    assert damaged.error.startswith("broken gzip data after ")
    assert damaged.error.endswith(" bytes: Error -3 while decompressing data: incorrect data check")
    unknown_method = compressed[:2] + b"\x07" + compressed[3:]
    assert read_announcement(unknown_method, SITE) == Announcement(
        None, (), "broken gzip data after 0 bytes: Error -3 while decompressing data: unknown compression method")


def test_truncated_xml_keeps_the_entries_before_the_break():
    cut = RSS2[: RSS2.index(b"<title>Only a guid")]
    announcement = read_announcement(cut, f"{SITE}/feeds/main.rss")
    assert [entry.url for entry in announcement.entries] == [f"{SITE}/world/one.html", "https://other.test/two.html"]
    assert announcement.error == "not well-formed XML at line 19: Premature end of data in tag item line 18"


def test_a_fault_in_the_middle_says_where_and_what():
    broken = RSS2.replace(b"<title>Only a guid</title>", b"<title>Only&nbsp;a guid</title>")
    announcement = read_announcement(broken, f"{SITE}/feeds/main.rss")
    assert len(announcement.entries) == 2
    assert announcement.error == "not well-formed XML at line 19: Entity 'nbsp' not defined"
    mismatched = read_announcement(INDEX_XML.replace(b"</loc></sitemap>\n</", b"</loc></sitmap>\n</"), SITE)
    assert [entry.url for entry in mismatched.entries] == [f"{SITE}/sitemap-1.xml.gz"]
    assert mismatched.error == ("not well-formed XML at line 4: "
                                "Opening and ending tag mismatch: sitemap line 4 and sitmap")


def test_at_most_max_entries_are_read():
    urls = b"".join(b"<url><loc>/p/%d</loc></url>" % number for number in range(MAX_ENTRIES + 5))
    body = b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>" + urls + b"</urlset>"
    announcement = read_announcement(body, SITE)
    assert len(announcement.entries) == MAX_ENTRIES
    assert announcement.entries[-1].url == f"{SITE}/p/{MAX_ENTRIES - 1}"
    assert announcement.error == f"more than {MAX_ENTRIES} entries: the rest ignored"
    exactly = body.replace(b"<url><loc>/p/%d</loc></url>" % MAX_ENTRIES, b"").replace(
        b"".join(b"<url><loc>/p/%d</loc></url>" % number for number in range(MAX_ENTRIES + 1, MAX_ENTRIES + 5)), b"")
    assert read_announcement(exactly, SITE).error is None


def _gzip_bomb() -> bytes:
    """A urlset of two URLs with MAX_UNCOMPRESSED_BYTES of comments between them, gzipped."""
    deflater = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    padding = (b"<!--" + b"x" * 1017 + b"-->") * 1024  # 1 MB
    parts = [deflater.compress(b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'>"
                               b"<url><loc>/first</loc></url>")]
    parts += [deflater.compress(padding) for _ in range(MAX_UNCOMPRESSED_BYTES // len(padding) + 1)]
    parts.append(deflater.compress(b"<url><loc>/after-the-cap</loc></url></urlset>"))
    parts.append(deflater.flush())
    return b"".join(parts)


def test_a_gzip_bomb_is_inflated_up_to_the_cap():
    bomb = _gzip_bomb()
    assert len(bomb) < MAX_UNCOMPRESSED_BYTES // 100
    started = time.monotonic()
    announcement = read_announcement(bomb, SITE)
    assert announcement == Announcement(SITEMAP, (Entry(f"{SITE}/first", None, None, None, None),),
                                        "more than 50 MB uncompressed: cut there")
    assert time.monotonic() - started < 10


def test_an_uncompressed_body_over_the_cap_is_cut_too():
    comments = (b"<!--" + b"x" * 1017 + b"-->") * (MAX_UNCOMPRESSED_BYTES // 1024 + 1)
    body = b"<urlset><url><loc>/first</loc></url>" + comments + b"<url><loc>/after-the-cap</loc></url></urlset>"
    assert read_announcement(body, SITE) == Announcement(
        SITEMAP, (Entry(f"{SITE}/first", None, None, None, None),), "more than 50 MB uncompressed: cut there")


LAUGHS = "".join(f'<!ENTITY lol{level} "{("&lol%d;" % (level - 1)) * 10}">' for level in range(1, 10))


@pytest.mark.parametrize("levels", [9, 3])
def test_billion_laughs_expands_nothing(levels):
    body = (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY lol0 "lol">{LAUGHS}]>'
            f'<rss><channel><item><title>a &lol{levels};</title><link>/&lol{levels};</link></item>'
            f'<item><title>b &lol{levels}; c</title><link>/b</link></item></channel></rss>').encode()
    announcement = read_announcement(body, SITE)
    assert "lollol" not in repr(announcement)
    # Either the parser refuses the declarations, or the references stay
    # unexpanded: a link holding one is no link, a title loses it.
    assert announcement.error or announcement.entries == (Entry(f"{SITE}/b", None, None, "b c", None),)


@pytest.fixture
def secret_file(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("TOP-SECRET-4711\n")
    return path


def test_an_external_entity_naming_a_local_file_reads_nothing(secret_file):
    uri = secret_file.as_uri()
    body = (f'<?xml version="1.0"?><!DOCTYPE rss [<!ENTITY secret SYSTEM "{uri}">]>'
            f'<rss><channel><language>&secret;</language>'
            f'<item><title>leak: &secret;</title><link>http://news.test/&secret;</link></item>'
            f'<item><title>&secret;</title><link>http://news.test/ok</link><dc:language xmlns:dc='
            f'"http://purl.org/dc/elements/1.1/">&secret;</dc:language></item>'
            f'</channel></rss>').encode()
    announcement = read_announcement(body, SITE)
    assert "TOP-SECRET" not in repr(announcement)
    assert announcement == Announcement(FEED, (Entry("http://news.test/ok", None, None, None, None),), None)


def test_a_doctype_or_parameter_entity_naming_a_local_file_opens_nothing(secret_file):
    # Were the file read as a DTD, its text would make the parse fail
    # ("Content error in the external subset"): it is never opened.
    secret_file.write_text('<!ENTITY secret "TOP-SECRET-4711">')
    uri = secret_file.as_uri()
    tail = (b"<urlset xmlns='http://www.sitemaps.org/schemas/sitemap/0.9'><url><loc>/a</loc></url>"
            b"<url><loc>/&secret;</loc></url></urlset>")
    for doctype in (f'<!DOCTYPE urlset SYSTEM "{uri}">', f'<!DOCTYPE urlset SYSTEM "{secret_file}">',
                    f'<!DOCTYPE urlset [<!ENTITY % outside SYSTEM "{uri}"> %outside;]>'):
        announcement = read_announcement(doctype.encode() + tail, SITE)
        assert "TOP-SECRET" not in repr(announcement)
        assert announcement == Announcement(SITEMAP, (Entry(f"{SITE}/a", None, None, None, None),), None), doctype
    secret_file.write_text("TOP-SECRET-4711 is no DTD")
    announcement = read_announcement(f'<!DOCTYPE urlset SYSTEM "{uri}">'.encode() + tail, SITE)
    assert announcement.error is None and "TOP-SECRET" not in repr(announcement)


@pytest.mark.parametrize("text, expected", [
    ("Tue, 04 Jun 2024 09:30:00 +0200", "2024-06-04T07:30:00.000Z"),
    ("Tue, 04 Jun 2024 09:30:00 GMT", "2024-06-04T09:30:00.000Z"),
    ("Tue, 04 Jun 2024 09:30:00 -0530", "2024-06-04T15:00:00.000Z"),
    ("Tue, 4 Jun 2024 9:30:00 +0000", "2024-06-04T09:30:00.000Z"),
    ("Tue, 04 Jun 2024 09:3x:00 +0000", None),
    ("4 Jun 2024 09:30 EST", "2024-06-04T14:30:00.000Z"),
    ("Tue, 04 Jun 2024 09:30:00 -0000", "2024-06-04T09:30:00.000Z"),
    ("2024-06-04", "2024-06-04T00:00:00.000Z"),
    ("2024-06", "2024-06-01T00:00:00.000Z"),
    ("2024", "2024-01-01T00:00:00.000Z"),
    ("2024-06-04T09:30Z", "2024-06-04T09:30:00.000Z"),
    ("2024-06-04T09:30:15.5+05:30", "2024-06-04T04:00:15.500Z"),
    (" 2024-06-04T23:30:00-02:00\n", "2024-06-05T01:30:00.000Z"),
    ("2024-06-04T09:30:00", "2024-06-04T09:30:00.000Z"),
    ("2024-06-04 09:30:00+0100", "2024-06-04T08:30:00.000Z"),
    ("yesterday", None),
    ("2024-13-45", None),
    ("Tue, 31 Feb 2024 09:30:00 GMT", None),
    ("", None),
    ("0001-01-01T00:00:00+01:00", None),
])
def test_announced_dates_are_iso_utc(text, expected):
    assert announced_date(text) == expected


def test_a_page_names_its_feeds():
    page = parse_html("""<html><head><base href="/sections/">
        <link rel="alternate" type="application/rss+xml" href="rss.xml">
        <link rel="Alternate home" type="Application/Atom+XML; charset=utf-8" href="https://news.test/atom">
        <link rel="alternate" type="application/rdf+xml" href="/rdf">
        <link rel="alternate" type="text/html" hreflang="fr" href="/fr/">
        <link rel="stylesheet" type="application/rss+xml" href="style.css">
        <link rel="alternate" type="application/rss+xml" href="javascript:void(0)">
        <link rel="alternate" type="application/rss+xml" href="rss.xml#again">
        </head><body><link rel="alternate" type="application/atom+xml" href="/late.atom"></body></html>""")
    assert feed_links(page, f"{SITE}/index.html", "utf-8") == [
        f"{SITE}/sections/rss.xml", "https://news.test/atom", f"{SITE}/rdf", f"{SITE}/late.atom"]


def test_damaged_documents_never_raise():
    rng = random.Random(30)
    samples = [RSS2, RSS1, ATOM, SITEMAP_XML, NEWS_XML, INDEX_XML]
    for sample in samples + [gzip.compress(sample) for sample in samples]:
        for _ in range(200):
            data = bytearray(sample)
            for _ in range(rng.randint(1, 8)):
                at = rng.randrange(len(data) or 1)
                choice = rng.random()
                if choice < 0.4:
                    data[at:at + 1] = bytes([rng.randrange(256)])
                elif choice < 0.6:
                    del data[at:at + rng.randint(1, 50)]
                elif choice < 0.9:
                    data[at:at] = rng.choice([b"&", b"<", b"&nbsp;", b"]]>", b"\x00", b"\xff\xfe", b"&#0;",
                                              b"<!DOCTYPE x [<!ENTITY a 'b'>]>", b" xml:base='::' "])
                else:
                    del data[at:]
            announcement = read_announcement(bytes(data), f"{SITE}/f")
            assert announcement.kind in (None, *ANNOUNCEMENT_KINDS)
            assert announcement.kind == sniff(bytes(data)) or announcement.kind is None
