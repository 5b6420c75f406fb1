"""The benchmark's parse scenario at --quick's size: the page stage
(page_stage.py) on every page set, with --real on a tiny data directory laid
out as a public checkout is, and with --baseline this very checkout, so that
both sides run the same code and the ratio is about 1 on any machine.

No timing is asserted beyond that: the machine is shared.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from bench_support import quick_bench
from mrcrawl.bench.__main__ import judge
from mrcrawl.bench.corpus import corpus
from mrcrawl.bench.scenarios import ROW_KEYS

REPOSITORY = Path(__file__).resolve().parent.parent
LABELS = ("20 KB, 100 links", "20 KB, 30 links", "100 KB, 100 links", "news layouts", "real pages")
JUDGED = ("page stage (20 KB, 100 links)", "page stage (real pages)")


def real_data_dir(root: Path) -> tuple[Path, int]:
    """A few of the bench corpus's pages as Dragnet's pages, in the layout of
    html-cleaning-dataset-merged (mrcrawl/bench/real_pages.py): the directory and its page count."""
    folder = root / "html-cleaning-dataset-merged" / "dragnet_data"
    pages = corpus(("en", "zh"), 2)
    for page in pages:
        for kind, suffix, text in (("input", "html", page.html), ("GoldStandard", "txt", "\n".join(page.truth))):
            path = folder / kind / f"{page.name}.{suffix}"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return root, len(pages)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    directory = tmp_path_factory.mktemp("bench-parse")
    real, real_pages = real_data_dir(directory / "real")
    options = ("--baseline", str(REPOSITORY), "--real", str(real))
    output, report = quick_bench(directory, "parse", timeout=600, options=options)
    return output, report["scenarios"], real_pages


def test_every_page_set_has_a_row_beside_the_baseline(run):
    output, rows, real_pages = run
    assert [row["name"] for row in rows] == [f"page stage ({label})" for label in LABELS]
    assert rows[-1]["pages"] == real_pages
    for row in rows:
        assert set(ROW_KEYS) <= set(row), row["name"]
        assert row["pages"] > 0 and row["wall_s"] > 0
        # Every generated and real page is an indexable article: each yields XML, under either code.
        assert row["xml_pages"] == row["baseline_xml_pages"] == row["pages"], row
        assert row["links_per_page"] > 0
        assert row["cpu_ms_per_page"] == pytest.approx(row["parser_ms_per_page"] + row["xml_ms_per_page"])
        assert row["pages_per_s"] == row["pages_per_core_s"] == pytest.approx(1000 / row["cpu_ms_per_page"])
        assert row["baseline_pages_per_core_s"] == pytest.approx(
            1000 / (row["baseline_parser_ms_per_page"] + row["baseline_xml_ms_per_page"]))
        assert row["ratio_to_baseline"] == pytest.approx(row["pages_per_core_s"] / row["baseline_pages_per_core_s"])
        # The same code on both sides.
        assert 0.3 <= row["ratio_to_baseline"] <= 3, row
        assert row["baseline"] == str(REPOSITORY)
        # --quick is not judged; the two rows the target is set on say it.
        assert row["meets_target"] is None
        assert (row["target"] is not None) == (row["name"] in JUDGED)
        assert f"{row['name']}: " in output
    assert "baseline" in output and "×" in output


def test_a_row_without_a_baseline_is_not_judged():
    def page_stage_row(name, ratio):
        return {"name": name, "runner": "functions", "ratio_to_baseline": ratio}

    rows = [page_stage_row(JUDGED[0], None), page_stage_row(JUDGED[0], 2.4), page_stage_row(JUDGED[1], 1.1),
            page_stage_row("page stage (news layouts)", 0.5)]
    judge(rows, quick=False)
    assert [row["meets_target"] for row in rows] == [None, True, False, None]
    assert [row["target"] is None for row in rows] == [False, False, False, True]
