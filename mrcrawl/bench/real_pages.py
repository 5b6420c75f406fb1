"""Real pages with known main text, from the public datasets extractors are
judged on, read from checkouts the user cloned side by side into one
directory (nothing is shipped or fetched: their licences differ).

    python -m mrcrawl.bench.extraction --real DIR

finds, under DIR, whichever of these is there:

- cleaneval (dev and final sets), cleanportaleval, dragnet, l3s-gn1 (the
  Google News set) and readability (Mozilla's test pages), as
  github.com/j-szulc/html-cleaning-dataset-merged gives them:
  `<set>/input/<name>.html` with `<set>/GoldStandard/<name>.txt`; also a
  checkout of github.com/ppke-nlpg/CleanPortalEval or of
  github.com/mozilla/readability (`test/test-pages/<case>/`);
- scrapinghub: github.com/scrapinghub/article-extraction-benchmark,
  `html/<id>.html.gz` with `ground-truth.json`;
- chinese-news: github.com/immortal-autumn/Chinese-Web-Content-Extraction-Dataset,
  `original/<id>.html` with `cleaned/<id>.txt`;
- daniel: the DAniEL corpus (Lejeune and Zhu, 2018) in github.com/rundimeco/waddle,
  news of 2011-12 in Chinese, English, Greek, Polish and Russian:
  `corpora/Corpus_daniel_v2.1/html/<id>` with `reference/<id>`.

Each gold file is read the way its dataset means it (see the `*_truth`
functions).  The HTML is decoded as the crawler decodes a page served
without a charset in its Content-Type, so every extractor gets the same text.
"""
from __future__ import annotations

import gzip
import html
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

from lxml import etree

from mrcrawl.page.charset import decode_body, detect_encoding
from mrcrawl.page.html import parse_html

DATASETS = ("cleaneval", "cleanportaleval", "dragnet", "l3s-gn1", "readability", "scrapinghub", "chinese-news",
            "daniel")
# Language groups by the truth's script, and the language each stands for
# where an extractor asks (only jusText does, for its stoplist).
GROUP_LANGUAGES = {"latin": "en", "cjk": "zh", "cyrillic": "ru", "greek": "el", "arabic": "ar"}


@dataclass(frozen=True)
class RealPage:
    dataset: str
    name: str
    group: str  # a key of GROUP_LANGUAGES
    html: str = field(repr=False)
    truth: tuple[str, ...] = field(repr=False)  # the main text's lines

    @property
    def language(self) -> str:
        return GROUP_LANGUAGES[self.group]


_SCRIPTS = {
    "cjk": re.compile("[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]"),
    "cyrillic": re.compile("[\u0400-\u04ff]"),
    "greek": re.compile("[\u0370-\u03ff\u1f00-\u1fff]"),
    "arabic": re.compile("[\u0600-\u06ff\u0750-\u077f\ufb50-\ufdff\ufe70-\ufefc]"),
}
_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[^\W_]")


def script_group(text: str) -> str:
    """cjk, cyrillic, greek or arabic where that script writes a fifth of the letters
    or more (a CJK character is a word), else latin."""
    counts = {group: len(script.findall(text)) for group, script in _SCRIPTS.items()}
    group = max(counts, key=counts.get)
    return group if counts[group] >= 0.2 * len(_LETTER.findall(text)) > 0 else "latin"


# --------------------------------------------------------------------------
# Gold files

# UTF-8 read as Windows-1252 or Latin-1 (some CleanEval golds): a lead byte's
# character, then continuation bytes' characters.
_MOJIBAKE = re.compile("[\u00c2-\u00f4][\u0080-\u00bf\u0152\u0153\u0160\u0161\u0178\u017d\u017e\u0192\u02c6"
                       "\u02dc\u2013\u2014\u2018-\u201e\u2020-\u2022\u2026\u2030\u2039\u203a\u20ac\u2122]+")


def _repair(match: re.Match) -> str:
    for codec in ("cp1252", "latin-1"):
        try:
            return match.group().encode(codec).decode("utf-8")
        except UnicodeError:
            pass
    return match.group()


def gold_text(data: bytes, repair: bool = True) -> str:
    """A gold file's text: UTF-16 after its BOM (a few Dragnet golds), UTF-8,
    else Windows-1252 (some CleanEval and Dragnet golds are), and with
    `repair` UTF-8 that was read as Windows-1252 undone (CleanEval golds
    hold both)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", errors="replace")
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("cp1252", errors="replace")
    return _MOJIBAKE.sub(_repair, text) if repair else text


_URL_LINE = re.compile(r"\A\s*URL:[^\n]*")
_MARKER = re.compile(r"<[phl]>", re.IGNORECASE)


def cleaneval_truth(data: bytes) -> str:
    """CleanEval's gold: a `URL: ...` line, then text with <p>, <h>, <l>
    opening paragraphs, headings and list items, and HTML entities."""
    return html.unescape(_MARKER.sub("\n", _URL_LINE.sub("", gold_text(data))))


_COMMENTS = re.compile(r"!@#\$%\^&\*\(\).*", re.DOTALL)


def dragnet_truth(data: bytes) -> str:
    """Dragnet's gold: plain text, the article then, after `!@#$%^&*()  COMMENTS`,
    its comments, which are not main text."""
    return _COMMENTS.sub("", gold_text(data))


_BLOCKS = frozenset("address article aside blockquote br dd div dl dt figcaption figure footer form h1 h2 h3 h4 h5 h6 "
                    "header hr li main nav ol p pre section table td th tr ul".split())
_HIDDEN = frozenset({"script", "style", "noscript", "template", "head", "title"})


def _html_text(markup: str, kept: Callable[[etree._Element, bool], bool] = lambda element, inherited: inherited,
               top: bool = True) -> str:
    """The text of an HTML document, blocks on lines of their own, keeping the
    text of the elements that `kept(element, whether its parent's text is
    kept)` accepts; `top`: whether the root's parent's is."""
    pieces, keep = [], [top]
    for event, element in etree.iterwalk(parse_html(markup), events=("start", "end")):
        tag = element.tag if isinstance(element.tag, str) else None  # None: a comment
        if tag in _BLOCKS:
            pieces.append("\n")
        if event == "start":
            keep.append(tag is not None and tag not in _HIDDEN and kept(element, keep[-1]))
            if keep[-1] and element.text:
                pieces.append(element.text)
        else:
            keep.pop()
            if keep[-1] and element.tail:
                pieces.append(element.tail)
    return "".join(pieces)


def html_truth(data: bytes) -> str:
    """An HTML gold (Mozilla Readability's expected output): its text."""
    return _html_text(gold_text(data, repair=False))


_L3S_LABEL = re.compile(r"\bx-nc-sel(\d)\b")


def _l3s_selected(element: etree._Element, inherited: bool) -> bool:
    label = _L3S_LABEL.search(element.get("class") or "")
    return inherited if label is None else label.group(1) in "123"


def l3s_truth(data: bytes) -> str:
    """L3S-GN1's gold: the page annotated with spans of class x-nc-sel0 (not
    content), 1 (headline), 2 (full text), 3 (supplemental: captions...),
    4 (related content), 5 (comments), nested; a text is labelled by its
    innermost span.  The truth is labels 1-3, as Bevendorff et al. (2023)
    read it."""
    return _html_text(gold_text(data, repair=False), _l3s_selected, top=False)


# --------------------------------------------------------------------------
# The datasets' layouts: each yields (name, HTML bytes, truth or None).

@dataclass(frozen=True)
class Unusable:
    """A gold file that is not the text of its page's article, and why."""

    reason: str


Entry = tuple[str, bytes, "str | Unusable | None"]  # None: no gold file


def _read(path: Path, truth: Callable[[bytes], "str | Unusable"]) -> str | Unusable | None:
    return truth(path.read_bytes()) if path.is_file() else None


def _input_gold(folder: Path, truth: Callable[[bytes], str]) -> Iterator[Entry]:
    """CleanEval's layout, which the merged mirror gives every dataset."""
    for page in sorted((folder / "input").glob("*.html")):
        yield page.stem, page.read_bytes(), _read(folder / "GoldStandard" / f"{page.stem}.txt", truth)


# CleanEval wraps each page in <text id="URL" title=... encoding=...>...</text>.
_TEXT_WRAPPER = re.compile(rb"\A\s*<text [^>]*>|</text>\s*\Z")


def _cleaneval_layout(folder: Path) -> Iterator[Entry]:
    for name, body, truth in _input_gold(folder, cleaneval_truth):
        yield name, _TEXT_WRAPPER.sub(b"", body), truth


def cleaneval(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/cleaneval-*")):
        part = folder.name.removeprefix("cleaneval-")
        yield from ((f"{part}-{name}", body, truth) for name, body, truth in _cleaneval_layout(folder))


def cleanportaleval(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted([*data_dir.glob("*/CleanPortalEval-master"), *data_dir.glob("CleanPortalEval")]):
        yield from _cleaneval_layout(folder)


def dragnet(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/dragnet_data")):
        yield from _input_gold(folder, dragnet_truth)


def l3s_gn1(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/page-signal-master")):
        yield from _input_gold(folder, l3s_truth)


def readability(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/readability")):
        yield from _input_gold(folder, html_truth)
    for case in sorted(data_dir.glob("*/test/test-pages/*/source.html")):  # a checkout of mozilla/readability
        yield case.parent.name, case.read_bytes(), _read(case.with_name("expected.html"), html_truth)


def scrapinghub(data_dir: Path) -> Iterator[Entry]:
    for truth_file in sorted(data_dir.glob("*/ground-truth.json")):
        truth = json.loads(truth_file.read_text(encoding="utf-8"))
        for page in sorted((truth_file.parent / "html").glob("*.html.gz")):
            name = page.name.removesuffix(".html.gz")
            yield name, gzip.decompress(page.read_bytes()), truth.get(name, {}).get("articleBody")


def chinese_news(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/cleaned")):
        for page in sorted((folder.parent / "original").glob("*.html")):
            yield page.stem, page.read_bytes(), _read(folder / f"{page.stem}.txt", gold_text)


# A DAniEL gold that is a copy of its whole page, not the text of its article.
_WHOLE_PAGE = re.compile(r"<(?:html|body)\b", re.IGNORECASE)


def daniel_truth(data: bytes) -> str | Unusable:
    """DAniEL's gold: the headline and the article's paragraphs, each in a
    <p> on a line of its own, with a few stray tags (a <script> among them)
    from the page.  One gold is the whole page again."""
    text = gold_text(data, repair=False)
    return Unusable("gold is the whole page") if _WHOLE_PAGE.search(text) else _html_text(text)


def daniel(data_dir: Path) -> Iterator[Entry]:
    for folder in sorted(data_dir.glob("*/corpora/Corpus_daniel_v*")):
        for page in sorted((folder / "html").iterdir()):
            yield page.name, page.read_bytes(), _read(folder / "reference" / page.name, daniel_truth)


READERS = {"cleaneval": cleaneval, "cleanportaleval": cleanportaleval, "dragnet": dragnet, "l3s-gn1": l3s_gn1,
           "readability": readability, "scrapinghub": scrapinghub, "chinese-news": chinese_news, "daniel": daniel}


def load(data_dir: Path | str, datasets=DATASETS) -> tuple[list[RealPage], Counter]:
    """The pages of `datasets` found under data_dir (absent ones give none),
    and a count of the pages skipped, by (dataset, reason)."""
    pages, skipped = [], Counter()
    for dataset in datasets:
        for name, body, truth in READERS[dataset](Path(data_dir)):
            if isinstance(truth, Unusable):
                skipped[dataset, truth.reason] += 1
                continue
            lines = tuple(filter(None, (" ".join(line.split()) for line in (truth or "").splitlines())))
            if not _WORD.search("\n".join(lines)):
                skipped[dataset, "no gold file" if truth is None else "empty truth"] += 1
                continue
            page_html = decode_body(body, detect_encoding(body, None))
            pages.append(RealPage(dataset, name, script_group("\n".join(lines)), page_html, lines))
    return pages, skipped
