"""The parsers benchmark's command on a few generated pages: a row for each
library in every table, lxml's links equal to extract_links' on every page,
and figures that are positive numbers."""
from __future__ import annotations

import json

from mrcrawl.bench import parsers
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_links

LIBRARIES = ("lxml", "selectolax", "resiliparse")


def test_parsers_benchmark_on_generated_pages(tmp_path, capsys):
    figures_file = tmp_path / "parsers.json"
    assert parsers.main(["--quick", "--per-set", "2", "--repeat", "1", "--json", str(figures_file)]) == 0
    printed = capsys.readouterr().out
    document = json.loads(figures_file.read_text(encoding="utf-8"))
    table = document["figures"]
    pages = document["pages"]
    assert pages == 2 * (len(table) - 1)  # two pages of each generated set
    assert table["overall"]["pages"] == pages

    tables = printed.split("\n\n")[1:]
    assert len(tables) == len(table)
    for dataset, text in zip(table, tables):
        rows = [line.split()[0] for line in text.splitlines()[2:]]
        assert text.startswith(f"{dataset}: ")
        assert rows == [*LIBRARIES, "ours"]

    for dataset, figures in table.items():
        assert list(figures["libraries"]) == list(LIBRARIES)
        lxml = figures["libraries"]["lxml"]
        assert lxml["pages with identical links"] == figures["pages"]
        assert lxml["missing links"] == lxml["extra links"] == 0
        for name, row in figures["libraries"].items():
            for measure in parsers.MEASURES:
                assert row[f"{measure} pages/s"] > 0 and row[f"{measure} ratio to lxml"] > 0, (dataset, name, measure)
                assert row[f"{measure} errors"] == 0
            assert row["links"] > 0 and row["walked text characters"] > 0
        stage = figures["page stage"]
        assert stage["pages/s"] > 0
        assert all(0 < stage[f"lxml {measure} share"] < 1 for measure in parsers.MEASURES)
    assert document["pages with other links"]["lxml"] == []


def test_lxml_links_are_extract_links_and_the_views_read_the_same_links():
    page = ('<html><head><base href="/base/"><meta http-equiv="refresh" content="5; url=next.html"></head><body>'
            '<a href="a.html">a</a> <a href="b.html" rel="NoFollow">b</a> <a href>self</a>'
            '<map><area href="/area" alt="x"></map><iframe src="https://example.com/frame"></iframe>'
            '<a href="a.html#again">a</a></body></html>')
    url = "http://127.0.0.1/dir/page.html"
    ours = extract_links(parse_html(page), url, "utf-8")
    assert ours == ["http://127.0.0.1/base/next.html", "http://127.0.0.1/base/a.html", "http://127.0.0.1/base/",
                    "http://127.0.0.1/area", "https://example.com/frame"]
    for library in parsers.LIBRARIES:
        assert extract_links(library.links_view(library.parse(page)), url, "utf-8") == ours, library.name
