"""Charset detection benchmark: how often each detector picks a right codec, and how fast.

    python -m mrcrawl.bench.charsets [--char-dataset DIR] [--cchardet DIR] [--uchardet DIR]
                                     [--detectors ours,charset_normalizer,chardet]
                                     [--forms text,html,heavy-html] [--repeat N] [--json FILE]

Reads public corpora of real files in known encodings; nothing is shipped
and nothing is fetched.  Clone them first (any directory will do):

    git clone --depth 1 https://github.com/Ousret/char-dataset
    git clone --depth 1 https://github.com/PyYoshi/cChardet
    git clone --depth 1 https://github.com/PyYoshi/uchardet

- `--char-dataset`: charset_normalizer's samples, one directory per
  encoding, named by its Python codec (`None` holds binary files: left out).
- `--cchardet`: cChardet's `tests/samples/`; the encoding is in the file
  name (`..._SJIS.txt`, `..._expected_windows_1252_got_...`, `iso8859-2.csv`).
- `--uchardet`: uchardet's `test/<language>/<encoding>.txt`; the
  per-language figures come from these.

Each file is scored as a page body that declares no charset.  Many of the
files declare one (most of char-dataset's are RSS feeds with an XML
declaration), and charset_normalizer reads such declarations, as does the
crawler; so the keyword of every declaration in a file ("charset",
"coding") is overwritten first, and no detector can read it.

A detector is right on a file when the codec it names decodes the file's
bytes (strictly) to the same text as the file's true codec does, a leading
byte order mark aside, either both as Python's codecs read them or both as
browsers read their labels (`codec_for_label`: shift_jis as cp932, gb2312
as gb18030, tis-620 as cp874, iso-8859-1 as windows-1252), which is how the
crawler decodes a page.  So ascii for UTF-8 on an ASCII file, or gb18030
for gb2312, are right; a codec that cannot decode the bytes is wrong, and
so is no answer.  Files that their true codec cannot decode, or in an
encoding the crawler never decodes a page with (UTF-32: no browser does
either), are skipped and listed.

Accuracy is the share of files a detector gets right: overall, per corpus,
per script group of the file's text (the script most of its non-ASCII
letters are in: CJK, Cyrillic, other non-Latin such as Greek, Hebrew,
Arabic or Thai; Latin otherwise), and per language of uchardet's files.
Speed is the mean time per file, the best of `--repeat` calls each.

Three forms of each file are scored: `text`, its bytes as they are;
`html`, its text in a small HTML page (title, script, a few links, one
paragraph per line, no charset declared, under 1 KB of markup) in the same
encoding; and `heavy-html`, the same page with some 30 KB more markup (an
inline style sheet and ad configuration, a menu of links), as news sites
carry.  Markup is ASCII and dilutes the text a detector reads.

The detectors: `ours` is what the crawler records for a page served with
no charset, `mrcrawl.page.charset.detect_encoding(body, None)`: a byte
order mark, else `guess_encoding`; `charset_normalizer` is
`charset_normalizer.from_bytes(body).best()` alone; `chardet` is
`chardet.detect(body)`, if installed (`pip install -e '.[bench]'`).
"""
from __future__ import annotations

import argparse
import codecs
import html
import json
import re
import sys
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from mrcrawl.bench.extraction import available
from mrcrawl.page.charset_labels import codec_for_label

CORPORA = ("char-dataset", "cChardet", "uchardet")
GROUPS = ("CJK", "Cyrillic", "other non-Latin", "Latin")
FORMS = ("text", "html", "heavy-html")


@dataclass(frozen=True)
class Sample:
    corpus: str
    name: str  # the file's path inside its corpus
    encoding: str  # its true Python codec
    language: str | None  # uchardet's files only
    body: bytes


# --------------------------------------------------------------------------
# Reading the corpora


def _files(root: Path) -> list[Path]:
    return sorted(path for path in root.iterdir() if path.is_file() and not path.name.startswith("."))


def char_dataset(root: Path) -> list[tuple[str, str, str | None, Path]]:
    """(name, encoding, language, path) of each file: the directory is the codec."""
    return [
        (f"{folder.name}/{path.name}", folder.name, None, path)
        for folder in sorted(root.iterdir())
        if folder.is_dir() and not folder.name.startswith(".") and folder.name != "None"
        for path in _files(folder)
    ]


_EXPECTED = re.compile(r"expected_(.+?)_got")


def cchardet_samples(root: Path) -> list[tuple[str, str, str | None, Path]]:
    """The encoding is what follows "expected_", or the last "_" part of the
    name, or the whole name (`iso8859-2.csv`)."""
    if (root / "tests" / "samples").is_dir():
        root = root / "tests" / "samples"
    found = []
    for path in _files(root):
        expected = _EXPECTED.search(path.stem)
        encoding = expected.group(1) if expected else path.stem.rsplit("_", 1)[-1]
        found.append((path.name, encoding, None, path))
    return found


# uchardet's names Python spells differently.
_UCHARDET_NAMES = {"maccentraleurope": "mac-latin2"}


def uchardet_tests(root: Path) -> list[tuple[str, str, str | None, Path]]:
    """`<language>/<encoding>.txt`; `utf-16.be` and the like give the byte order."""
    if (root / "test").is_dir():
        root = root / "test"
    found = []
    for folder in sorted(path for path in root.iterdir() if path.is_dir()):
        for path in _files(folder):
            encoding, _, extension = path.name.partition(".")
            if extension in ("be", "le"):
                encoding = f"{encoding}-{extension}"
            found.append((f"{folder.name}/{path.name}", _UCHARDET_NAMES.get(encoding, encoding), folder.name, path))
    return found


READERS = {"char-dataset": char_dataset, "cChardet": cchardet_samples, "uchardet": uchardet_tests}


def truth(body: bytes, encoding: str) -> str | None:
    """The file's text in `encoding`, without a byte order mark, or None if
    the codec cannot decode it."""
    try:
        text = body.decode(encoding)
    except (UnicodeDecodeError, LookupError):
        return None
    return text.removeprefix("\ufeff")


# "charset=" and "encoding=" (in "coding"), as declarations spell them and
# as charset_normalizer looks for them.
_DECLARATION = re.compile(rb"(?:charset|coding)(?=[\t\n\x0c\r :=]{1,10}[\"']?[A-Za-z0-9._:-])", re.IGNORECASE)


def undeclared(body: bytes) -> bytes:
    """The body with every charset declaration in it made unreadable (the
    keyword overwritten), so that it declares nothing to any detector."""
    return _DECLARATION.sub(lambda match: b"x" * len(match.group(0)), body)


def load(roots: dict[str, Path]) -> tuple[list[Sample], list[dict]]:
    """The samples of each corpus given, undeclared, and the files skipped, with why."""
    samples, skipped = [], []
    for corpus, root in roots.items():
        for name, label, language, path in READERS[corpus](root):
            try:
                encoding = codecs.lookup(label).name
            except LookupError:
                skipped.append({"corpus": corpus, "name": name, "why": f"Python has no codec {label}"})
                continue
            body = undeclared(path.read_bytes())
            if codec_for_label(encoding) is None:
                skipped.append({"corpus": corpus, "name": name, "why": f"no page is decoded as {encoding}"})
            elif truth(body, encoding) is None:
                skipped.append({"corpus": corpus, "name": name, "why": f"not valid {encoding}"})
            else:
                samples.append(Sample(corpus, name, encoding, language, body))
    return samples, skipped


def _group_of(ch: str) -> str:
    script = unicodedata.name(ch, "").split(" ", 1)[0]
    if script in ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "HALFWIDTH", "BOPOMOFO"):
        return "CJK"
    if script == "CYRILLIC":
        return "Cyrillic"
    if script in ("LATIN", "FULLWIDTH", ""):
        return "Latin"
    return "other non-Latin"


def script_group(text: str) -> str:
    """The group of the script most of the text's non-ASCII letters are in."""
    groups: Counter = Counter()
    for ch, count in Counter(text).items():
        if ch > "\x7f" and ch.isalpha():
            groups[_group_of(ch)] += count
    return groups.most_common(1)[0][0] if groups else "Latin"


_PAGE = """<!DOCTYPE html>
<html>
<head>
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>@title@</title>
<link rel="stylesheet" href="/static/css/site.css?v=20240312">
<script type="text/javascript">
window.dataLayer = window.dataLayer || [];
function gtag(){dataLayer.push(arguments);}
gtag('js', new Date()); gtag('config', 'G-12345678');
</script>
@head@</head>
<body class="article">
<nav><ul><li><a href="/">Home</a></li><li><a href="/news/">News</a></li><li><a href="/about/">About</a></li></ul></nav>
<main><article>
@paragraphs@
</article></main>
<footer><a href="/contact/">Contact</a> | <a href="/privacy/">Privacy</a></footer>
@footer@</body>
</html>
"""
# What a heavier page adds, some 30 KB of markup as many news sites carry:
# an inline style sheet and ad configuration, a menu and footer of links.
_HEAVY_HEAD = "<style>\n" + "".join(
    f".block-{i} .item-{i} > a {{ margin: 0 {i % 9}px; padding: 4px 8px; color: #333; font-size: 14px; }}\n"
    for i in range(100)
) + "</style>\n<script>\n" + "".join(
    f'window.adSlots.push({{"id": "div-gpt-ad-{i}", "path": "/1234567/news/article", '
    f'"sizes": [[300, 250], [728, 90]], "targeting": {{"pos": "{i}", "section": "news"}}}});\n'
    for i in range(80)
) + "</script>\n"
_HEAVY_FOOTER = "<div class=\"site-menu\"><ul>\n" + "".join(
    f'<li class="menu-item menu-item-type-taxonomy menu-item-object-category menu-item-{i}">'
    f'<a href="/category/section-{i}/" data-track="menu-{i}"><span class="icon icon-{i}"></span></a></li>\n'
    for i in range(60)
) + "</ul></div>\n"


def as_html_page(sample: Sample, heavy: bool = False) -> Sample | None:
    """The sample's text in an undeclared HTML page in its encoding, one
    paragraph a line, or None if the encoding cannot write the page."""
    lines = [line.strip() for line in truth(sample.body, sample.encoding).splitlines() if line.strip()]
    parts = {
        "title": html.escape(lines[0][:80] if lines else ""),
        "head": _HEAVY_HEAD if heavy else "",
        "paragraphs": "\n".join(f"<p>{html.escape(line, quote=False)}</p>" for line in lines),
        "footer": _HEAVY_FOOTER if heavy else "",
    }
    page = re.sub(r"@(\w+)@", lambda match: parts[match.group(1)], _PAGE)
    try:
        body = page.encode(sample.encoding)
    except UnicodeEncodeError:
        return None
    return Sample(sample.corpus, sample.name, sample.encoding, sample.language, body)


# --------------------------------------------------------------------------
# The detectors: each takes a body and names a codec (or None).


def _ours(body: bytes) -> str | None:
    from mrcrawl.page.charset import detect_encoding

    return detect_encoding(body, None)


def _charset_normalizer(body: bytes) -> str | None:
    import charset_normalizer

    best = charset_normalizer.from_bytes(body).best()
    return best.encoding if best else None


def _chardet(body: bytes) -> str | None:
    import chardet

    return chardet.detect(body)["encoding"]


@dataclass(frozen=True)
class Detector:
    name: str
    module: str | None  # the package it needs, None for our own
    detect: Callable[[bytes], str | None]
    note: str


DETECTORS = (
    Detector("ours", None, _ours, "mrcrawl.page.charset.detect_encoding(body, None)"),
    Detector("charset_normalizer", "charset_normalizer", _charset_normalizer,
             "charset_normalizer.from_bytes(body).best().encoding"),
    Detector("chardet", "chardet", _chardet, "chardet.detect(body)['encoding']"),
)


def is_right(body: bytes, encoding: str, chosen: str | None) -> bool:
    """Whether `chosen` decodes `body` to the text `encoding` gives, both
    read as they are or both read as browsers read them."""
    if chosen is None:
        return False
    if truth(body, chosen) == truth(body, encoding):
        return True
    as_browsers = codec_for_label(chosen), codec_for_label(encoding)
    return None not in as_browsers and truth(body, as_browsers[0]) == truth(body, as_browsers[1])


# --------------------------------------------------------------------------
# Running


def run(detector: Detector, samples: list[Sample], groups: list[str], repeat: int = 3) -> list[dict]:
    """One row per sample: what the detector chose, whether it is right, ms."""
    rows = []
    for sample, group in zip(samples, groups):
        best = float("inf")
        for _ in range(repeat):
            started = time.perf_counter()
            chosen = detector.detect(sample.body)
            best = min(best, time.perf_counter() - started)
        rows.append({"corpus": sample.corpus, "name": sample.name, "encoding": sample.encoding,
                     "language": sample.language, "group": group, "chosen": chosen,
                     "right": is_right(sample.body, sample.encoding, chosen), "ms": best * 1000})
    return rows


def accuracy(rows: list[dict], key: str | None = None, value: str | None = None) -> dict:
    chosen = [row for row in rows if key is None or row[key] == value]
    right = sum(row["right"] for row in chosen)
    return {"files": len(chosen), "right": right, "accuracy": right / len(chosen) if chosen else None}


def summary(rows: list[dict]) -> dict:
    languages = sorted({row["language"] for row in rows if row["language"]})
    return {
        "overall": accuracy(rows),
        "per_corpus": {corpus: accuracy(rows, "corpus", corpus) for corpus in CORPORA
                       if any(row["corpus"] == corpus for row in rows)},
        "per_group": {group: accuracy(rows, "group", group) for group in GROUPS
                      if any(row["group"] == group for row in rows)},
        "per_language": {language: accuracy(rows, "language", language) for language in languages},
        "ms_per_file": sum(row["ms"] for row in rows) / len(rows) if rows else None,
    }


def measure(samples: list[Sample], detectors: list[Detector], forms: list[str], repeat: int) -> dict:
    """Per form: the files scored, and per detector its summary and rows."""
    groups = [script_group(truth(sample.body, sample.encoding)) for sample in samples]
    figures = {}
    for form in forms:
        scored, scored_groups = samples, groups
        if form != "text":
            pages = [as_html_page(sample, heavy=form == "heavy-html") for sample in samples]
            scored = [page for page in pages if page is not None]
            scored_groups = [group for page, group in zip(pages, groups) if page is not None]
        results = {}
        for detector in detectors:
            rows = run(detector, scored, scored_groups, repeat)
            results[detector.name] = {**summary(rows), "rows": rows}
        figures[form] = {"files": len(scored), "detectors": results}
    return figures


def _cell(figures: dict) -> str:
    return "-" if figures["accuracy"] is None else f"{100 * figures['accuracy']:.1f}%"


def report(form: str, figures: dict) -> str:
    names = list(figures["detectors"])
    summaries = [figures["detectors"][name] for name in names]
    width = max([20, *(len(name) + 2 for name in names)])
    lines = [f"Form {form}: {figures['files']} files; share of files right",
             f"{'':<24}{'files':>6}" + "".join(f"{name:>{width}}" for name in names)]

    def row(label: str, pick: Callable[[dict], dict]) -> None:
        cells = [pick(s) for s in summaries]
        lines.append(f"{label:<24}{cells[0]['files']:>6}" + "".join(f"{_cell(c):>{width}}" for c in cells))

    if not summaries:
        return "\n".join(lines)
    row("all", lambda s: s["overall"])
    for corpus in summaries[0]["per_corpus"]:
        row(corpus, lambda s, corpus=corpus: s["per_corpus"][corpus])
    for group in summaries[0]["per_group"]:
        row(group, lambda s, group=group: s["per_group"][group])
    lines.append(f"{'ms per file':<24}{'':>6}" + "".join(f"{s['ms_per_file']:>{width}.2f}" for s in summaries))
    if summaries[0]["per_language"]:
        lines.append("uchardet, per language:")
        for language in summaries[0]["per_language"]:
            row(f"  {language}", lambda s, language=language: s["per_language"][language])
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.charsets", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("--char-dataset", type=Path, help="a clone of github.com/Ousret/char-dataset")
    parser.add_argument("--cchardet", type=Path, help="a clone of github.com/PyYoshi/cChardet (or its tests/samples)")
    parser.add_argument("--uchardet", type=Path, help="a clone of github.com/PyYoshi/uchardet (or its test)")
    parser.add_argument("--detectors", default=",".join(d.name for d in DETECTORS))
    parser.add_argument("--forms", default=",".join(FORMS), help="comma-separated, of " + ",".join(FORMS))
    parser.add_argument("--repeat", type=int, default=3, help="timed calls per file; the fastest counts")
    parser.add_argument("--json", type=Path, help="write the figures, per file too, to this file")
    args = parser.parse_args(argv)
    roots = {corpus: path for corpus, path in zip(CORPORA, (args.char_dataset, args.cchardet, args.uchardet)) if path}
    known = {detector.name: detector for detector in DETECTORS}
    names = [name for name in args.detectors.split(",") if name]
    forms = [form for form in args.forms.split(",") if form]
    unknown = (set(names) - set(known)) | (set(forms) - set(FORMS))
    if unknown:
        parser.error(f"unknown: {', '.join(sorted(unknown))}")
    if not roots:
        parser.error("give at least one corpus directory")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    for corpus, root in roots.items():
        if not root.is_dir():
            parser.error(f"{corpus}: no directory {root}")
    samples, skipped = load(roots)
    detectors = [known[name] for name in names if available(known[name])]
    missing = [name for name in names if not available(known[name])]
    figures = measure(samples, detectors, forms, args.repeat)
    print(f"{len(samples)} files from {', '.join(roots)}; {len(skipped)} skipped")
    for form in forms:
        print()
        print(report(form, figures[form]))
    if missing:
        print("\nnot installed (pip install -e '.[bench]'): " + ", ".join(missing))
    if args.json:
        document = {"files": len(samples), "skipped": skipped, "missing": missing,
                    "detectors": {d.name: d.note for d in detectors}, "forms": figures}
        args.json.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
