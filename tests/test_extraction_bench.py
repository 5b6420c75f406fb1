"""The main-text benchmark: its scoring, its corpus, and its command on a
small subset, with whichever competitors are installed."""
from __future__ import annotations

import html
import json
import socket
import unicodedata

import pytest

from mrcrawl.bench import extraction
from mrcrawl.bench.corpus import ARTICLES, HELD_OUT_LAYOUTS, LANGUAGES, LAYOUTS, corpus
from mrcrawl.bench.extraction import EXTRACTORS, Extractor, available, score, tokens


@pytest.fixture
def no_network(monkeypatch):
    """Extraction must never reach out: any connection attempt fails the test."""
    def refuse(*args, **kwargs):
        raise AssertionError(f"network use during extraction: {args}")
    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


def test_tokens_are_characters_in_chinese_and_japanese_and_words_elsewhere():
    assert tokens("东京タワー、2024年。") == ["东", "京", "タ", "ワ", "ー", "2024", "年"]
    assert tokens("Hello, WORLD! Straße (ＡＢＣ)") == ["hello", "world", "strasse", "abc"]
    assert tokens("Москва — столица. Ёлка") == ["москва", "столица", "ёлка"]
    # Arabic vowel marks are dropped: the same word with or without them.
    assert tokens("كَتَبَ الكِتابَ") == tokens("كتب الكتاب") == ["كتب", "الكتاب"]
    assert tokens("시장에 간다") == ["시장에", "간다"]
    assert tokens(" ,.!? — ") == []


def test_score_counts_tokens_with_multiplicity():
    assert score("a b c", "a b c") == extraction.Score(1.0, 1.0, 1.0)
    assert score("x y", "a b") == extraction.Score(0.0, 0.0, 0.0)
    assert score("", "a b") == extraction.Score(0.0, 0.0, 0.0)
    half_noise = score("a b c d", "a b")
    assert (half_noise.precision, half_noise.recall) == (0.5, 1.0)
    assert half_noise.f1 == pytest.approx(2 / 3)
    repeated = score("a b", "a a b")
    assert (repeated.precision, repeated.recall) == (1.0, pytest.approx(2 / 3))
    assert score("图书馆", "图书").precision == pytest.approx(2 / 3)


def test_corpus_is_deterministic_and_covers_every_language_and_layout():
    pages = corpus()
    assert [page.html for page in pages] == [page.html for page in corpus()]
    assert len(pages) == 90
    assert {(page.language, page.layout) for page in pages} == {
        (language, layout) for language in LANGUAGES for layout in LAYOUTS
    }
    assert set(HELD_OUT_LAYOUTS) < set(LAYOUTS)
    assert len({page.name for page in pages}) == len(pages)
    for page in pages:
        article = next(a for a in ARTICLES[page.language] if a.main_text == page.truth)
        assert article.title not in page.truth  # the headline is not main text
        for paragraph in page.truth:
            assert html.escape(paragraph) in page.html, page.name
    assert sum(len(page.html.encode()) for page in pages) < 2_000_000


def test_each_language_is_written_in_its_own_script():
    scripts = {"zh": ("CJK UNIFIED",), "ja": ("HIRAGANA", "KATAKANA", "CJK UNIFIED"), "ru": ("CYRILLIC",),
               "ar": ("ARABIC",), "en": ("LATIN",)}
    for language, articles in ARTICLES.items():
        for article in articles:
            names = [unicodedata.name(ch) for ch in "".join(article.paragraphs) if ch.isalpha()]
            assert sum(name.startswith(scripts[language]) for name in names) > 0.9 * len(names), article.title
            if language == "ja":  # kana, not only the Han characters Chinese shares
                assert any(name.startswith("HIRAGANA") for name in names)


def test_the_command_on_a_subset(tmp_path, capsys, no_network):
    figures_file = tmp_path / "figures.json"
    pages_dir = tmp_path / "pages"
    status = extraction.main([
        "--languages", "zh,ja,ar", "--per-language", str(len(LAYOUTS)), "--repeat", "1",
        "--json", str(figures_file), "--write-pages", str(pages_dir),
    ])
    assert status == 0
    printed = capsys.readouterr().out
    assert printed.startswith(f"{3 * len(LAYOUTS)} pages: zh, ja, ar")
    figures = json.loads(figures_file.read_text(encoding="utf-8"))
    assert figures["pages"] == 3 * len(LAYOUTS)
    assert figures["languages"] == ["zh", "ja", "ar"]
    assert figures["held_out_layouts"] == list(HELD_OUT_LAYOUTS)
    installed = [extractor.name for extractor in EXTRACTORS if available(extractor)]
    assert list(figures["extractors"]) == installed
    for name, result in figures["extractors"].items():
        assert name in printed
        assert result["pages_per_second"] > 0
        assert len(result["pages"]) == figures["pages"]
        for summary in [result["overall"], result["held_out_layouts"], *result["per_language"].values(),
                        *result["per_layout"].values()]:
            for key in ("precision", "recall", "f1"):
                assert 0.0 <= summary[key] <= 1.0, (name, summary)
    ours = figures["extractors"]["mrcrawl"]
    assert ours["overall"]["f1"] > 0.9
    assert ours["overall"]["recall"] > 0.95
    assert all(ours["per_language"][language]["f1"] > 0.85 for language in ("zh", "ja", "ar"))
    if "justext" in figures["extractors"]:
        # jusText has no stoplist for Chinese or Japanese, and finds nothing there.
        assert figures["extractors"]["justext"]["per_language"]["zh"]["f1"] < 0.1
    written = sorted(path.name for path in pages_dir.iterdir())
    assert len(written) == 2 * figures["pages"]
    truth = (pages_dir / "zh-00-semantic.txt").read_text(encoding="utf-8").splitlines()
    assert truth == list(corpus(("zh",), 1)[0].truth)


def test_a_missing_competitor_is_listed_not_fatal(monkeypatch, capsys):
    ghost = Extractor("ghost", "no_such_extractor_module", lambda page, language: "", "not installed anywhere")
    monkeypatch.setattr(extraction, "EXTRACTORS", (EXTRACTORS[0], ghost))
    assert extraction.main(["--languages", "en", "--per-language", "2", "--repeat", "1",
                            "--extractors", "mrcrawl,ghost"]) == 0
    printed = capsys.readouterr().out
    assert "not installed (pip install -e '.[bench]'): ghost" in printed
    assert "\nmrcrawl " in printed


@pytest.mark.parametrize("arguments", [["--extractors", "nosuch"], ["--languages", "xx"], ["--per-language", "0"]])
def test_bad_arguments_exit_2(arguments, capsys):
    with pytest.raises(SystemExit) as exit_info:
        extraction.main(arguments)
    assert exit_info.value.code == 2
    assert "error" in capsys.readouterr().err
