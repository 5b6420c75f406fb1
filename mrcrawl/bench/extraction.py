"""Main-text extraction benchmark: precision, recall, F1 and pages per second.

    python -m mrcrawl.bench.extraction [--languages zh,ja] [--per-language N]
                                       [--extractors mrcrawl,trafilatura] [--repeat N]
                                       [--json FILE] [--write-pages DIR]
    python -m mrcrawl.bench.extraction --real DIR [--datasets cleaneval,dragnet] ...

Scores each extractor on the generated corpus (corpus.py) against the
article text each page is known to hold, or with --real on the real pages
of public extraction datasets cloned under DIR (real_pages.py).  The
competitors are optional
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
included, one thread, each page timed at its fastest of `--repeat` passes,
the extractors taking turns page by page.
On real pages, a page is "lost" when its truth holds prose (PROSE_TOKENS
tokens or more) and the extraction recalls less than a tenth of it.
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

from mrcrawl.bench import real_pages
from mrcrawl.bench.corpus import HELD_OUT_LAYOUTS, LANGUAGES, LAYOUTS, PAGES_PER_LANGUAGE, BenchPage, corpus
from mrcrawl.bench.real_pages import DATASETS, GROUP_LANGUAGES, RealPage

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
    from mrcrawl.page.maintext import main_text

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
JUSTEXT_STOPLISTS = {"en": "English", "ru": "Russian", "el": "Greek", "ar": "Arabic"}


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
    Extractor("mrcrawl", None, _mrcrawl, "mrcrawl.page.maintext.main_text, our own rules: what HtmlToXml writes"),
    Extractor("trafilatura", "trafilatura", _trafilatura(fast=False),
              "trafilatura.extract, comments off, with its readability/jusText fallbacks"),
    Extractor("trafilatura-fast", "trafilatura", _trafilatura(fast=True),
              "trafilatura.extract(fast=True): no fallback extractors"),
    Extractor("readability", "readability", _readability, "readability-lxml Document.summary()"),
    Extractor("justext", "justext", _justext,
              "jusText with the language's stoplist; zh/ja have none (empty stoplist, thresholds 0)"),
)


def available(peer) -> bool:
    """Whether a benchmark peer (an Extractor, or charsets.py's Detector) can
    run: our own always can, a library's when its package imports."""
    if peer.module is None:
        return True
    try:
        __import__(peer.module)
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------
# Running


PROSE_TOKENS = 50  # a truth this long holds prose: extracting none of it loses the page


@dataclass
class Result:
    extractor: str
    # The page's labels (name, language, layout; or dataset, name, group), its
    # precision, recall, f1, truth_tokens, and seconds: its fastest time.
    pages: list[dict]
    errors: int = 0  # pages the extractor raised on, scored as empty

    def rows(self, key: str | None = None, *values: str) -> list[dict]:
        """The pages whose `key` is one of `values`; all of them without a key."""
        return self.pages if key is None else [row for row in self.pages if row[key] in values]

    def summary(self, key: str | None = None, *values: str) -> Score:
        rows = self.rows(key, *values)
        if not rows:
            return Score(float("nan"), float("nan"), float("nan"))
        return Score(*(statistics.fmean(row[metric] for row in rows) for metric in ("precision", "recall", "f1")))

    def speed(self, key: str | None = None, *values: str) -> float:
        rows = self.rows(key, *values)
        return len(rows) / max(sum(row["seconds"] for row in rows), 1e-9)

    def lost(self, key: str | None = None, *values: str) -> int:
        return sum(row["truth_tokens"] >= PROSE_TOKENS and row["recall"] < 0.1 for row in self.rows(key, *values))

    @property
    def pages_per_second(self) -> float:
        return self.speed()


def _labels(page: BenchPage | RealPage) -> dict:
    return {key: value for key, value in vars(page).items() if key not in ("html", "truth")}


def run(extractors: list[Extractor], pages: list[BenchPage | RealPage], repeat: int = 3) -> list[Result]:
    """Scores the extractors, one Result each.  The extractors take turns
    page by page, in an order that rotates, for `repeat` passes; a page's
    time is its fastest.  Taking turns, not whole passes one extractor
    after another, is what makes the ratios fair on a shared machine: a
    burst of load falls on every extractor alike, where it would otherwise
    slow down whichever one ran during it."""
    for extractor in extractors:
        extractor.extract(pages[0].html, pages[0].language)  # warms imports up
    outputs = [[""] * len(pages) for _ in extractors]
    best = [[math.inf] * len(pages) for _ in extractors]
    failed = [set() for _ in extractors]
    started = time.perf_counter()
    for number in range(repeat):
        for index, page in enumerate(pages):
            for turn in range(len(extractors)):
                which = (index + number + turn) % len(extractors)
                start = time.perf_counter()
                try:
                    output = extractors[which].extract(page.html, page.language)
                except Exception:  # a library failing on one page is that page's score, not the run's end
                    output = ""
                    failed[which].add(index)
                best[which][index] = min(best[which][index], time.perf_counter() - start)
                if number == 0:
                    outputs[which][index] = output
            if (index + 1) % 500 == 0 or index + 1 == len(pages):
                print(f"pass {number + 1}/{repeat}, {index + 1}/{len(pages)} pages, "
                      f"{time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
    truths = ["\n".join(page.truth) for page in pages]
    results = []
    for extractor, texts, seconds, errors in zip(extractors, outputs, best, failed):
        rows = []
        for page, truth, output, page_seconds in zip(pages, truths, texts, seconds):
            page_score = score(output, truth)
            rows.append({**_labels(page), "precision": page_score.precision, "recall": page_score.recall,
                         "f1": page_score.f1, "truth_tokens": len(tokens(truth)), "seconds": page_seconds})
        results.append(Result(extractor.name, rows, len(errors)))
    return results


def report(results: list[Result], languages: list[str], missing: list[str]) -> str:
    lines = [
        "Overall (mean over pages)",
        f"{'extractor':<18}{'P':>7}{'R':>7}{'F1':>7}{'F1 held out*':>14}{'pages/s':>10}",
    ]
    for result in results:
        overall = result.summary()
        held_out = result.summary("layout", *HELD_OUT_LAYOUTS)
        held_out_f1 = "-" if math.isnan(held_out.f1) else f"{held_out.f1:.3f}"
        lines.append(f"{result.extractor:<18}{overall.precision:7.3f}{overall.recall:7.3f}{overall.f1:7.3f}"
                     f"{held_out_f1:>14}{result.pages_per_second:10.0f}")
    lines += ["", "Per language: P / R / F1",
              f"{'extractor':<18}" + "".join(f"{language:>20}" for language in languages)]
    for result in results:
        cells = []
        for language in languages:
            s = result.summary("language", language)
            cells.append(f"{s.precision:.2f} / {s.recall:.2f} / {s.f1:.2f}".rjust(20))
        lines.append(f"{result.extractor:<18}" + "".join(cells))
    layouts = [layout for layout in LAYOUTS if any(row["layout"] == layout for row in results[0].pages)] if results else []
    lines += ["", "Per layout: F1 (* held out: layouts the rules were never tuned on)",
              f"{'extractor':<18}" + "".join(
                  f"{layout + ('*' if layout in HELD_OUT_LAYOUTS else ''):>12}" for layout in layouts)]
    for result in results:
        lines.append(f"{result.extractor:<18}" + "".join(
            f"{result.summary('layout', layout).f1:12.3f}" for layout in layouts))
    if missing:
        lines += ["", "not installed (pip install -e '.[bench]'): " + ", ".join(missing)]
    return "\n".join(lines)


def _figures(result: Result, key: str | None = None, *values: str) -> dict:
    """The scores of some pages as JSON: null where no page was scored (JSON has no NaN)."""
    figures = {name: None if math.isnan(value) else value for name, value in result.summary(key, *values).__dict__.items()}
    return {**figures, "lost": result.lost(key, *values), "pages_per_second": result.speed(key, *values)}


def _breakdown(result: Result, key: str, values) -> dict:
    return {value: _figures(result, key, value) for value in values}


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
                "overall": _figures(result),
                "per_language": _breakdown(result, "language", languages),
                "per_layout": _breakdown(result, "layout", layouts),
                "held_out_layouts": _figures(result, "layout", *HELD_OUT_LAYOUTS),
                "pages_per_second": result.pages_per_second,
                "pages": result.pages,
            }
            for result in results
        },
    }


# --------------------------------------------------------------------------
# Real pages: figures overall, per dataset and per language group


RIVALS = ("trafilatura", "readability")  # the targets: F1 at least the best of them, 5x faster than both


def _present(pages: list[RealPage], key: str, order) -> dict[str, int]:
    counts = Counter(getattr(page, key) for page in pages)
    return {value: counts[value] for value in order if counts[value]}


def comparison(results: list[Result], datasets) -> dict:
    """Per dataset: our F1 minus the best rival's, our speed over the faster rival's."""
    by_name = {result.extractor: result for result in results}
    rivals = [by_name[name] for name in RIVALS if name in by_name]
    if "mrcrawl" not in by_name or not rivals:
        return {}
    ours, rows = by_name["mrcrawl"], {}
    for dataset in ["all", *datasets]:
        where = ("dataset", dataset) if dataset != "all" else ()
        best = max(rivals, key=lambda rival: rival.summary(*where).f1)
        faster = max(rivals, key=lambda rival: rival.speed(*where))
        rows[dataset] = {
            "f1": ours.summary(*where).f1, "best": best.extractor, "best_f1": best.summary(*where).f1,
            "f1_difference": ours.summary(*where).f1 - best.summary(*where).f1,
            "faster": faster.extractor, "speed_ratio": ours.speed(*where) / faster.speed(*where),
        }
    return rows


def real_report(results: list[Result], pages: list[RealPage], skipped: Counter, missing: list[str]) -> str:
    datasets, groups = _present(pages, "dataset", DATASETS), _present(pages, "group", GROUP_LANGUAGES)
    lines = [f"{len(pages)} real pages: " + ", ".join(f"{name} {count}" for name, count in datasets.items())
             + "; language groups: " + ", ".join(f"{name} {count}" for name, count in groups.items())]
    lines += [f"skipped: {count} {dataset} ({reason})" for (dataset, reason), count in sorted(skipped.items())]
    sections = [("Overall (mean over pages)", None, "")]
    sections += [(f"dataset {name} ({count} pages)", "dataset", name) for name, count in datasets.items()]
    sections += [(f"language group {name} ({count} pages)", "group", name) for name, count in groups.items()]
    for title, key, value in sections:
        lines += ["", title, f"{'extractor':<18}{'P':>7}{'R':>7}{'F1':>7}{'lost':>6}{'pages/s':>10}"]
        for result in results:
            where = (key, value) if key else ()
            s = result.summary(*where)
            lines.append(f"{result.extractor:<18}{s.precision:7.3f}{s.recall:7.3f}{s.f1:7.3f}"
                         f"{result.lost(*where):6d}{result.speed(*where):10.0f}")
    lines += ["", f"lost: the truth holds prose ({PROSE_TOKENS} tokens or more) and the extraction recalls < 0.1 of it"]
    lines += [f"pages {result.extractor} raised an error on (scored as empty): {result.errors}"
              for result in results if result.errors]
    rows = comparison(results, datasets)
    if rows:
        rivals = " and ".join(result.extractor for result in results if result.extractor in RIVALS)
        lines += ["", f"mrcrawl against the best of {rivals} (targets: F1 difference >= 0, speed >= 5x)"]
        for dataset, row in rows.items():
            lines.append(f"{dataset:<16} F1 {row['f1']:.3f} - {row['best_f1']:.3f} {row['best']:<12} = "
                         f"{row['f1_difference']:+.3f}   speed {row['speed_ratio']:5.1f}x {row['faster']}")
    if missing:
        lines += ["", "not installed (pip install -e '.[bench]'): " + ", ".join(missing)]
    return "\n".join(lines)


def real_json(results: list[Result], pages: list[RealPage], skipped: Counter) -> dict:
    datasets, groups = _present(pages, "dataset", DATASETS), _present(pages, "group", GROUP_LANGUAGES)
    return {
        "pages": len(pages),
        "datasets": datasets,
        "groups": groups,
        "skipped": [{"dataset": dataset, "reason": reason, "pages": count}
                    for (dataset, reason), count in sorted(skipped.items())],
        "prose_tokens": PROSE_TOKENS,
        "extractors": {
            result.extractor: {
                **_figures(result),
                "errors": result.errors,
                "per_dataset": _breakdown(result, "dataset", datasets),
                "per_group": _breakdown(result, "group", groups),
                "pages": result.pages,
            }
            for result in results
        },
        "comparison": comparison(results, datasets),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.extraction", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated, of " + ",".join(LANGUAGES))
    parser.add_argument("--per-language", type=int, default=PAGES_PER_LANGUAGE, help="pages per language")
    parser.add_argument("--extractors", default=",".join(e.name for e in EXTRACTORS))
    parser.add_argument("--repeat", type=int, help="timed passes; each page's fastest counts (default 3; 1 with --real)")
    parser.add_argument("--json", type=Path, help="write the figures, per page too, to this file")
    parser.add_argument("--write-pages", type=Path, help="also write the corpus's HTML and truth here")
    parser.add_argument("--real", type=Path, help="score the real pages of the datasets cloned in this directory")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="with --real: comma-separated, of "
                        + ",".join(DATASETS))
    args = parser.parse_args(argv)
    args.repeat = args.repeat if args.repeat is not None else 1 if args.real else 3
    languages = [language for language in args.languages.split(",") if language]
    unknown = set(languages) - set(LANGUAGES)
    known = {extractor.name: extractor for extractor in EXTRACTORS}
    names = [name for name in args.extractors.split(",") if name]
    unknown |= set(names) - set(known)
    datasets = [dataset for dataset in args.datasets.split(",") if dataset]
    unknown |= set(datasets) - set(DATASETS)
    if unknown or args.per_language < 1 or args.repeat < 1:
        parser.error(f"unknown: {', '.join(sorted(unknown))}" if unknown else "counts must be at least 1")
    if args.real:
        if args.write_pages:
            parser.error("--write-pages writes the generated corpus; the real pages are in their checkouts")
        pages, skipped = real_pages.load(args.real, datasets)
        if not pages:
            parser.error(f"no dataset found in {args.real} (see mrcrawl/bench/real_pages.py)")
    else:
        pages = corpus(languages, args.per_language)
    if args.write_pages:
        args.write_pages.mkdir(parents=True, exist_ok=True)
        for page in pages:
            (args.write_pages / f"{page.name}.html").write_text(page.html, encoding="utf-8")
            (args.write_pages / f"{page.name}.txt").write_text("\n".join(page.truth) + "\n", encoding="utf-8")
    missing = [name for name in names if not available(known[name])]
    results = run([known[name] for name in names if name not in missing], pages, args.repeat)
    if args.real:
        print(real_report(results, pages, skipped, missing))
        figures = real_json(results, pages, skipped)
    else:
        print(f"{len(pages)} pages: {', '.join(languages)}; layouts {', '.join(sorted({p.layout for p in pages}))}")
        print(report(results, languages, missing))
        figures = as_json(results, pages)
    if args.json:
        args.json.write_text(json.dumps(figures, ensure_ascii=False, indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
