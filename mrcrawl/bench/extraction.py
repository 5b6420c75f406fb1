"""Main-text extraction benchmark: precision, recall, F1 and pages per second.

    python -m mrcrawl.bench.extraction [--languages zh,ja] [--per-language N]
                                       [--extractors mrcrawl,trafilatura] [--repeat N]
                                       [--json FILE] [--write-pages DIR]

Scores each extractor on the generated corpus (corpus.py) against the
article text each page is known to hold.  The competitors are optional
(`pip install -e '.[bench]'`, with a pip newer than the 23.2 that Python
3.11 bundles: that one's resolver fails on lxml[html_clean], which the
competitors spell two ways); one that is not installed is listed as such.

Scoring is a bag of tokens, as the usual article-extraction benchmarks do:
precision is the share of the extracted tokens that are in the truth,
recall the share of the truth's tokens that were extracted, both counted
with multiplicity, averaged over pages; an empty extraction scores 0.
Text is NFKC-normalised, case-folded and stripped of combining marks
first, and punctuation is not a token.  Chinese and Japanese are written
without spaces, so each Han, kana or CJK character is one token there: a
word segmenter would add a dictionary and its errors, and characters
already tell which text came out.  Everything else (Latin, Cyrillic,
Arabic, Hangul...) is split into words.

Speed is pages per second from decoded text to main text, parse
included, one thread, the best of `--repeat` passes over the corpus.
"""
from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mrcrawl.bench.corpus import HELD_OUT_LAYOUTS, LANGUAGES, LAYOUTS, PAGES_PER_LANGUAGE, BenchPage, corpus

# Han (with extensions and compatibility ideographs), kana, CJK symbols' letters.
_CJK = "\u3005\u3007\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f"
_TOKEN = re.compile(f"[{_CJK}]|[^\\W_{_CJK}]+")


def tokens(text: str) -> list[str]:
    """The tokens text is scored by: CJK characters one by one, other words whole."""
    text = unicodedata.normalize("NFKC", text).casefold()
    text = "".join(ch for ch in text if not unicodedata.category(ch).startswith("M"))
    return _TOKEN.findall(text)


@dataclass(frozen=True)
class Score:
    precision: float
    recall: float
    f1: float


def score(extracted: str, truth: str) -> Score:
    got, want = Counter(tokens(extracted)), Counter(tokens(truth))
    common = sum((got & want).values())
    if not common:
        return Score(0.0, 0.0, 0.0)
    precision = common / sum(got.values())
    recall = common / sum(want.values())
    return Score(precision, recall, 2 * precision * recall / (precision + recall))


# --------------------------------------------------------------------------
# The extractors: each takes a page's decoded HTML and its language.


def _mrcrawl(page_html: str, language: str) -> str:
    from mrcrawl.page.html import parse_html
    from mrcrawl.page.text import main_text

    return main_text(parse_html(page_html))


def _trafilatura(fast: bool) -> Callable[[str, str], str]:
    def extract(page_html: str, language: str) -> str:
        import trafilatura

        # Comments are boilerplate for the index; tables can be article text.
        return trafilatura.extract(page_html, fast=fast, include_comments=False, include_tables=True,
                                   deduplicate=False, with_metadata=False) or ""
    return extract


def _readability(page_html: str, language: str) -> str:
    from lxml import html as lxml_html
    from readability import Document

    summary = Document(page_html).summary(html_partial=True)
    # Spaces between text nodes keep words of adjacent paragraphs apart.
    return " ".join(lxml_html.fromstring(summary).itertext()) if summary.strip() else ""


# jusText's stoplists are per language; it ships none for Chinese or Japanese.
JUSTEXT_STOPLISTS = {"en": "English", "ru": "Russian", "ar": "Arabic"}


def _justext(page_html: str, language: str) -> str:
    import justext

    name = JUSTEXT_STOPLISTS.get(language)
    if name:
        paragraphs = justext.justext(page_html, justext.get_stoplist(name))
    else:
        # No stoplist: an empty one with both stopword thresholds at zero,
        # so that only paragraph length and link density decide.
        paragraphs = justext.justext(page_html, frozenset(), stopwords_low=0, stopwords_high=0)
    return "\n".join(p.text for p in paragraphs if not p.is_boilerplate)


@dataclass(frozen=True)
class Extractor:
    name: str
    module: str | None  # the package it needs, None for our own
    extract: Callable[[str, str], str]
    note: str


EXTRACTORS = (
    Extractor("mrcrawl", None, _mrcrawl, "mrcrawl.page.text.main_text, our own rules: what HtmlToXml writes"),
    Extractor("trafilatura", "trafilatura", _trafilatura(fast=False),
              "trafilatura.extract, comments off, with its readability/jusText fallbacks"),
    Extractor("trafilatura-fast", "trafilatura", _trafilatura(fast=True),
              "trafilatura.extract(fast=True): no fallback extractors"),
    Extractor("readability", "readability", _readability, "readability-lxml Document.summary()"),
    Extractor("justext", "justext", _justext,
              "jusText with the language's stoplist; zh/ja have none (empty stoplist, thresholds 0)"),
)


def available(extractor: Extractor) -> bool:
    if extractor.module is None:
        return True
    try:
        __import__(extractor.module)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------
# Running


@dataclass
class Result:
    extractor: str
    pages: list[dict]  # name, language, layout, precision, recall, f1
    pages_per_second: float

    def summary(self, language: str | None = None, layouts=None) -> Score:
        rows = [row for row in self.pages
                if (language is None or row["language"] == language) and (layouts is None or row["layout"] in layouts)]
        if not rows:
            return Score(float("nan"), float("nan"), float("nan"))
        return Score(*(statistics.fmean(row[key] for row in rows) for key in ("precision", "recall", "f1")))


def run(extractor: Extractor, pages: list[BenchPage], repeat: int = 3) -> Result:
    outputs = [extractor.extract(page.html, page.language) for page in pages]  # also warms imports up
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for page in pages:
            extractor.extract(page.html, page.language)
        best = min(best, time.perf_counter() - start)
    rows = []
    for page, output in zip(pages, outputs):
        page_score = score(output, "\n".join(page.truth))
        rows.append({"name": page.name, "language": page.language, "layout": page.layout,
                     "precision": page_score.precision, "recall": page_score.recall, "f1": page_score.f1})
    return Result(extractor.name, rows, len(pages) / max(best, 1e-9))


def report(results: list[Result], languages: list[str], missing: list[str]) -> str:
    lines = [
        "Overall (mean over pages)",
        f"{'extractor':<18}{'P':>7}{'R':>7}{'F1':>7}{'F1 held out*':>14}{'pages/s':>10}",
    ]
    for result in results:
        overall = result.summary()
        held_out = result.summary(layouts=HELD_OUT_LAYOUTS)
        held_out_f1 = "-" if math.isnan(held_out.f1) else f"{held_out.f1:.3f}"
        lines.append(f"{result.extractor:<18}{overall.precision:7.3f}{overall.recall:7.3f}{overall.f1:7.3f}"
                     f"{held_out_f1:>14}{result.pages_per_second:10.0f}")
    lines += ["", "Per language: P / R / F1",
              f"{'extractor':<18}" + "".join(f"{language:>20}" for language in languages)]
    for result in results:
        cells = []
        for language in languages:
            s = result.summary(language)
            cells.append(f"{s.precision:.2f} / {s.recall:.2f} / {s.f1:.2f}".rjust(20))
        lines.append(f"{result.extractor:<18}" + "".join(cells))
    layouts = [layout for layout in LAYOUTS if any(row["layout"] == layout for row in results[0].pages)] if results else []
    lines += ["", "Per layout: F1 (* held out: layouts the rules were never tuned on)",
              f"{'extractor':<18}" + "".join(
                  f"{layout + ('*' if layout in HELD_OUT_LAYOUTS else ''):>12}" for layout in layouts)]
    for result in results:
        lines.append(f"{result.extractor:<18}" + "".join(
            f"{result.summary(layouts=(layout,)).f1:12.3f}" for layout in layouts))
    if missing:
        lines += ["", "not installed (pip install -e '.[bench]'): " + ", ".join(missing)]
    return "\n".join(lines)


def _figures(summary: Score) -> dict:
    """A score as JSON: null where no page was scored (JSON has no NaN)."""
    return {key: None if math.isnan(value) else value for key, value in summary.__dict__.items()}


def as_json(results: list[Result], pages: list[BenchPage]) -> dict:
    languages = sorted({page.language for page in pages}, key=LANGUAGES.index)
    layouts = [layout for layout in LAYOUTS if any(page.layout == layout for page in pages)]
    return {
        "pages": len(pages),
        "languages": languages,
        "layouts": layouts,
        "held_out_layouts": [layout for layout in HELD_OUT_LAYOUTS if layout in layouts],
        "extractors": {
            result.extractor: {
                "overall": _figures(result.summary()),
                "per_language": {language: _figures(result.summary(language)) for language in languages},
                "per_layout": {layout: _figures(result.summary(layouts=(layout,))) for layout in layouts},
                "held_out_layouts": _figures(result.summary(layouts=HELD_OUT_LAYOUTS)),
                "pages_per_second": result.pages_per_second,
                "pages": result.pages,
            }
            for result in results
        },
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.extraction", description=__doc__.split("\n\n")[0])
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated, of " + ",".join(LANGUAGES))
    parser.add_argument("--per-language", type=int, default=PAGES_PER_LANGUAGE, help="pages per language")
    parser.add_argument("--extractors", default=",".join(e.name for e in EXTRACTORS))
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; the fastest counts")
    parser.add_argument("--json", type=Path, help="write the figures, per page too, to this file")
    parser.add_argument("--write-pages", type=Path, help="also write the corpus's HTML and truth here")
    args = parser.parse_args(argv)
    languages = [language for language in args.languages.split(",") if language]
    unknown = set(languages) - set(LANGUAGES)
    known = {extractor.name: extractor for extractor in EXTRACTORS}
    names = [name for name in args.extractors.split(",") if name]
    unknown |= set(names) - set(known)
    if unknown or args.per_language < 1 or args.repeat < 1:
        parser.error(f"unknown: {', '.join(sorted(unknown))}" if unknown else "counts must be at least 1")
    pages = corpus(languages, args.per_language)
    if args.write_pages:
        args.write_pages.mkdir(parents=True, exist_ok=True)
        for page in pages:
            (args.write_pages / f"{page.name}.html").write_text(page.html, encoding="utf-8")
            (args.write_pages / f"{page.name}.txt").write_text("\n".join(page.truth) + "\n", encoding="utf-8")
    results, missing = [], []
    for name in names:
        extractor = known[name]
        if available(extractor):
            results.append(run(extractor, pages, args.repeat))
        else:
            missing.append(name)
    print(f"{len(pages)} pages: {', '.join(languages)}; layouts {', '.join(sorted({p.layout for p in pages}))}")
    print(report(results, languages, missing))
    if args.json:
        figures = json.dumps(as_json(results, pages), ensure_ascii=False, indent=1, allow_nan=False)
        args.json.write_text(figures + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
