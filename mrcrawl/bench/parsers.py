"""HTML parsers benchmark: lxml (libxml2), which parses every page today,
against lexbor through selectolax and through resiliparse.

    python -m mrcrawl.bench.parsers [--quick] [--per-set N] [--repeat N] [--json FILE]
    python -m mrcrawl.bench.parsers --real DIR [--datasets cleaneval,dragnet] [--per-set N] ...

Without --real the pages are the Parser benchmark's (scenarios.parse_pages:
generated pages of 20 and 100 KB, and the news layouts of corpus.py); with
it, the real pages of the public extraction datasets cloned under DIR
(real_pages.py), each decoded once.  Every library gets the same text.

For each library three figures, in pages per second:

- parse: text to tree (for lxml, html.parse_html, as every job parses);
- parse + walk: the parse, then one pass over every element and text of
  the tree, reading each one's tag and text.  This is the floor of any
  port of maintext.py's walk to that library, so it decides whether a
  switch could pay: lxml's etree.iterwalk with start and end events
  (text on start, tail on end, as maintext.page_blocks reads them),
  selectolax's traverse(include_text=True), resiliparse's own iteration
  of a node's subtree.  Neither of the two gives end events: a port would
  have to find where each element ends itself, so its real cost is above
  this floor;
- parse + links: the parse, then links.extract_links itself over the
  library's tree (through a view of it with the lxml calls extract_links
  makes: iter() and each element's tag and get()), so the links are
  resolved, filtered and canonicalised exactly as ours are (a refresh
  <meta>'s target among them).  The view costs one small object per
  link element, which a port calling the library directly would spare.

And whether the links are right: on how many pages a library's list of
links equals lxml's exactly, and how many links lxml's lists hold that the
library's lack (missing) or the other way round (extra).  The page stage
as it runs today (parse_html, extract_anchored_links, page_signals,
main_text) is timed too, to show what share of it the parse is.

Timing is extraction.run's: one thread, the libraries taking turns page
by page, each page at its fastest of --repeat passes.  Absolute links'
joins are cached (urls.resolve_absolute_link), as in the Parser: from two
passes on, every library's fastest finds a page's links cached, so the
parse + links figures compare the libraries, not who met a link first.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable
from urllib.parse import quote

from lxml import etree

from mrcrawl.bench import real_pages
from mrcrawl.bench.extraction import Extractor, Result, available, run
from mrcrawl.bench.real_pages import DATASETS
from mrcrawl.bench.scenarios import FULL, QUICK, parse_pages
from mrcrawl.page.change import page_signals
from mrcrawl.page.charset import decode_body
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_anchored_links, extract_links
from mrcrawl.page.maintext import BLOCK_TAGS, main_text

# Most pages of the datasets keep no URL; links resolve against a made-up
# one, the same for every library.  The page's codec only matters for
# non-ASCII query characters, which every library then encodes alike.
ENCODING = "utf-8"


@dataclass(frozen=True)
class ParserPage:
    dataset: str  # the real dataset, or the generated page set
    name: str
    url: str  # what its relative links resolve against
    html: str = field(repr=False)
    truth: tuple[str, ...] = field(default=(), repr=False)  # none: extraction.run scores nothing here

    @property
    def language(self) -> str:
        """extraction.run hands each extractor the page's language; no parser asks for it."""
        return ""


def generated_pages(quick: bool = False) -> list[ParserPage]:
    """The Parser benchmark's page sets, decoded as the Parser decodes them."""
    return [ParserPage(label, url, url, decode_body(body, ENCODING))
            for label, pairs in parse_pages(QUICK if quick else FULL).items() for url, body in pairs]


def dataset_pages(data_dir: Path, datasets=DATASETS) -> list[ParserPage]:
    pages, _ = real_pages.load(data_dir, datasets)
    return [ParserPage(page.dataset, page.name, f"http://{page.dataset}.example/{quote(page.name)}", page.html)
            for page in pages]


# --------------------------------------------------------------------------
# The libraries: a parse, a walk over the parsed tree, and the view of it
# extract_links reads.


class _LinkElement:
    """What extract_links reads of an lxml element: its tag and get()."""

    __slots__ = ("tag", "get")

    def __init__(self, tag: str, get: Callable[[str], str | None]):
        self.tag, self.get = tag, get


def _selector(tags) -> str:
    """The CSS selector of lxml's iter() argument (a tag or a tuple of them):
    both libraries' selector engines give the matches in document order."""
    return tags if isinstance(tags, str) else ", ".join(tags)


class _SelectolaxLinks:
    """A selectolax tree as extract_links reads an lxml root."""

    __slots__ = ("tree",)

    def __init__(self, tree):
        self.tree = tree

    def iter(self, tags):
        for node in self.tree.css(_selector(tags)):
            attributes = node.attributes
            # selectolax gives a valueless attribute (<a href>) as None; the DOM's value is "".
            if None in attributes.values():
                attributes = {name: value or "" for name, value in attributes.items()}
            yield _LinkElement(node.tag, attributes.get)


class _ResiliparseLinks:
    """A resiliparse tree as extract_links reads an lxml root."""

    __slots__ = ("document",)

    def __init__(self, tree):
        self.document = tree.document

    def iter(self, tags):
        # values(): iterating the node list itself takes time quadratic in its length.
        for node in self.document.query_selector_all(_selector(tags)).values():
            yield _LinkElement(node.tag, node.getattr)


def _lxml_walk(root) -> tuple[int, int]:
    """Block elements and text characters met, as maintext.page_blocks walks."""
    blocks = characters = 0
    for event, element in etree.iterwalk(root, events=("start", "end")):
        if event == "start":
            if element.tag in BLOCK_TAGS:
                blocks += 1
            text = element.text
        else:
            text = element.tail
        if text:
            characters += len(text)
    return blocks, characters


def _lexbor_walk(nodes, text_tag: str, text_of) -> tuple[int, int]:
    """Block elements and text characters met among a lexbor tree's `nodes`,
    in document order, text nodes included: those tagged `text_tag`, whose
    text `text_of(node)` reads."""
    blocks = characters = 0
    for node in nodes:
        tag = node.tag
        if tag == text_tag:
            characters += len(text_of(node))
        elif tag in BLOCK_TAGS:
            blocks += 1
    return blocks, characters


def _selectolax_walk(tree) -> tuple[int, int]:
    return _lexbor_walk(tree.root.traverse(include_text=True), "-text", lambda node: node.text_content)


def _resiliparse_walk(tree) -> tuple[int, int]:
    # Iterating the document yields its whole subtree, depth first.
    return _lexbor_walk(tree.document, "#text", lambda node: node.text)


def _selectolax_parse(text: str):
    from selectolax.lexbor import LexborHTMLParser

    return LexborHTMLParser(text)


def _resiliparse_parse(text: str):
    from resiliparse.parse.html import HTMLTree

    return HTMLTree.parse(text)


@dataclass(frozen=True)
class Library:
    name: str
    distribution: str  # whose installed metadata gives the version and licence
    module: str | None  # what must import for it to run; None for ours
    parse: Callable[[str], object]
    walk: Callable[[object], tuple[int, int]]
    links_view: Callable[[object], object]  # the parsed tree as extract_links reads it


LIBRARIES = (
    Library("lxml", "lxml", None, parse_html, _lxml_walk, lambda root: root),
    Library("selectolax", "selectolax", "selectolax.lexbor", _selectolax_parse, _selectolax_walk, _SelectolaxLinks),
    Library("resiliparse", "resiliparse", "resiliparse.parse.html", _resiliparse_parse, _resiliparse_walk,
            _ResiliparseLinks),
)
MEASURES = ("parse", "parse+walk", "parse+links")
PAGE_STAGE = "page stage"


def version(library: Library) -> str:
    text = importlib.metadata.version(library.distribution)
    if library.name == "lxml":
        text += " (libxml2 " + ".".join(map(str, etree.LIBXML_VERSION)) + ")"
    return text


def licence(library: Library) -> str:
    """The licence its installed metadata states."""
    metadata = importlib.metadata.metadata(library.distribution)
    stated = metadata.get("License-Expression") or metadata.get("License")
    if stated:
        return stated
    classifiers = [c.rsplit(" :: ", 1)[-1] for c in metadata.get_all("Classifier") or () if c.startswith("License ::")]
    return ", ".join(classifiers) or "not stated"


@dataclass
class Outputs:
    """What each timed task gave on each page it finished (those it raised
    on are missing), keyed by the page's text: extraction.run hands an
    extractor the text, not the page."""

    url: dict[str, str]  # text -> the page's URL
    found: dict[str, dict[str, object]] = field(default_factory=dict)  # task -> text -> output

    def links(self, library: str) -> dict[str, list[str]]:
        return self.found[f"{library} parse+links"]


def _extractors(libraries: list[Library], outputs: Outputs) -> list[Extractor]:
    """The timed tasks, as extraction.run's extractors: each returns no text."""
    extractors = []
    for library in libraries:
        def parse(page_html: str, library=library) -> bool:
            return library.parse(page_html) is not None

        def parse_walk(page_html: str, library=library) -> tuple[int, int]:
            return library.walk(library.parse(page_html))

        def parse_links(page_html: str, library=library) -> list[str]:
            return extract_links(library.links_view(library.parse(page_html)), outputs.url[page_html], ENCODING)

        for measure, task in zip(MEASURES, (parse, parse_walk, parse_links)):
            extractors.append(Extractor(f"{library.name} {measure}", library.module,
                                        _keeping(task, outputs.found.setdefault(f"{library.name} {measure}", {})),
                                        measure))

    def page_stage(page_html: str) -> None:
        root = parse_html(page_html)
        extract_anchored_links(root, outputs.url[page_html], ENCODING)
        page_signals(root)
        main_text(root)

    extractors.append(Extractor(PAGE_STAGE, None, _keeping(page_stage, outputs.found.setdefault(PAGE_STAGE, {})),
                                "parse_html + extract_anchored_links + page_signals + main_text"))
    return extractors


def _keeping(task: Callable[[str], object], found: dict[str, object]) -> Callable[[str, str], str]:
    """The task as an extractor extraction.run times: it keeps the task's output in `found`."""
    def extract(page_html: str, language: str) -> str:
        found[page_html] = task(page_html)
        return ""
    return extract


# --------------------------------------------------------------------------
# Figures


def _link_differences(ours: list[str], theirs: list[str]) -> tuple[int, int]:
    """Links of ours the library's list lacks, and links it has that ours lacks."""
    mine, other = Counter(ours), Counter(theirs)
    return sum((mine - other).values()), sum((other - mine).values())


def figures(libraries: list[Library], results: list[Result], pages: list[ParserPage], outputs: Outputs) -> dict:
    """Per dataset and overall: each library's speeds, their ratios to
    lxml's, and its links against lxml's; the page stage's speed and the
    share of it lxml's parse, parse+walk and parse+links take."""
    by_name = {result.extractor: result for result in results}
    reference = outputs.links("lxml")
    table = {}
    for dataset in ["overall", *dict.fromkeys(page.dataset for page in pages)]:
        where = () if dataset == "overall" else ("dataset", dataset)
        chosen = [page for page in pages if not where or page.dataset == dataset]
        rows = {}
        for library in libraries:
            row = {"version": version(library), "licence": licence(library)}
            for measure in MEASURES:
                task = f"{library.name} {measure}"
                row[f"{measure} pages/s"] = by_name[task].speed(*where)
                row[f"{measure} seconds"] = sum(page["seconds"] for page in by_name[task].rows(*where))
                row[f"{measure} errors"] = sum(page.html not in outputs.found[task] for page in chosen)
            found = outputs.links(library.name)
            differences = [_link_differences(reference.get(page.html, []), found.get(page.html, []))
                           for page in chosen]
            row["pages with identical links"] = sum(
                reference.get(page.html, []) == found.get(page.html, []) for page in chosen)
            row["missing links"] = sum(missing for missing, _ in differences)
            row["extra links"] = sum(extra for _, extra in differences)
            row["links"] = sum(len(found.get(page.html, [])) for page in chosen)
            walked = [outputs.found[f"{library.name} parse+walk"].get(page.html, (0, 0)) for page in chosen]
            row["walked block elements"] = sum(blocks for blocks, _ in walked)
            row["walked text characters"] = sum(characters for _, characters in walked)
            rows[library.name] = row
        for row in rows.values():
            for measure in MEASURES:
                row[f"{measure} ratio to lxml"] = row[f"{measure} pages/s"] / rows["lxml"][f"{measure} pages/s"]
        stage = by_name[PAGE_STAGE]
        stage_seconds = sum(page["seconds"] for page in stage.rows(*where))
        table[dataset] = {
            "pages": len(chosen),
            "libraries": rows,
            "page stage": {"pages/s": stage.speed(*where), "seconds": stage_seconds,
                           "errors": sum(page.html not in outputs.found[PAGE_STAGE] for page in chosen),
                           **{f"lxml {measure} share": rows["lxml"][f"{measure} seconds"] / stage_seconds
                              for measure in MEASURES}},
        }
    return table


def differing_pages(libraries: list[Library], pages: list[ParserPage], outputs: Outputs) -> dict:
    """Per library, the pages whose links differ from lxml's, with the counts."""
    reference = outputs.links("lxml")
    differing = {}
    for library in libraries:
        found = outputs.links(library.name)
        rows = []
        for page in pages:
            ours, theirs = reference.get(page.html, []), found.get(page.html, [])
            if ours != theirs:
                missing, extra = _link_differences(ours, theirs)
                rows.append({"dataset": page.dataset, "name": page.name, "lxml links": len(ours),
                             "links": len(theirs), "missing": missing, "extra": extra})
        differing[library.name] = rows
    return differing


_COLUMNS = (("library", 13), ("version", 26), ("parse/s", 9), ("x lxml", 8), ("parse+walk/s", 14), ("x lxml", 8),
            ("parse+links/s", 15), ("x lxml", 8), ("same links", 15), ("missing", 9), ("extra", 8), ("errors", 8))


def report(table: dict) -> str:
    """The figures as one table per dataset, overall first."""
    header = "".join(name.ljust(width) if index < 2 else name.rjust(width)
                     for index, (name, width) in enumerate(_COLUMNS))
    lines = []
    for dataset, figures_of in table.items():
        pages = figures_of["pages"]
        lines += ["", f"{dataset}: {pages} pages", header]
        for name, row in figures_of["libraries"].items():
            cells = [name, row["version"]]
            for measure in MEASURES:
                cells += [f"{row[f'{measure} pages/s']:.0f}", f"{row[f'{measure} ratio to lxml']:.2f}"]
            cells += [f"{row['pages with identical links']}/{pages}", str(row["missing links"]),
                      str(row["extra links"]), str(max(row[f"{measure} errors"] for measure in MEASURES))]
            lines.append("".join(cell.ljust(width) if index < 2 else cell.rjust(width)
                                 for index, (cell, (_, width)) in enumerate(zip(cells, _COLUMNS))))
        stage = figures_of["page stage"]
        shares = ", ".join(f"{measure} {100 * stage[f'lxml {measure} share']:.0f}%" for measure in MEASURES)
        lines.append(f"{'ours today':<13}{'page stage':<26}{stage['pages/s']:9.0f}   lxml's share of it: {shares}"
                     + (f"; {stage['errors']} errors" if stage["errors"] else ""))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m mrcrawl.bench.parsers", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("--real", type=Path, help="the real pages of the datasets cloned in this directory")
    parser.add_argument("--datasets", default=",".join(DATASETS), help="with --real: comma-separated, of "
                        + ",".join(DATASETS))
    parser.add_argument("--quick", action="store_true", help="without --real: the Parser benchmark's --quick sets")
    parser.add_argument("--per-set", type=int, help="at most this many pages of each dataset or page set")
    parser.add_argument("--repeat", type=int, default=3, help="timed passes; each page's fastest counts (default 3)")
    parser.add_argument("--json", type=Path, help="write the figures, and the pages whose links differ, to this file")
    args = parser.parse_args(argv)
    datasets = [dataset for dataset in args.datasets.split(",") if dataset]
    unknown = set(datasets) - set(DATASETS)
    if unknown or args.repeat < 1 or (args.per_set is not None and args.per_set < 1):
        parser.error(f"unknown: {', '.join(sorted(unknown))}" if unknown else "counts must be at least 1")
    if args.real:
        pages = dataset_pages(args.real, datasets)
        if not pages:
            parser.error(f"no dataset found in {args.real} (see mrcrawl/bench/real_pages.py)")
    else:
        pages = generated_pages(args.quick)
    if args.per_set:
        kept, taken = [], Counter()
        for page in pages:
            taken[page.dataset] += 1
            if taken[page.dataset] <= args.per_set:
                kept.append(page)
        pages = kept
    libraries = [library for library in LIBRARIES if available(library)]
    missing = [library.name for library in LIBRARIES if library not in libraries]
    outputs = Outputs({page.html: page.url for page in pages})
    results = run(_extractors(libraries, outputs), pages, args.repeat)
    table = figures(libraries, results, pages, outputs)
    print("libraries: " + "; ".join(f"{library.name} {version(library)}, {licence(library)}" for library in libraries))
    print(f"{len(pages)} pages, each at its fastest of {args.repeat} passes; same links: pages whose list of links "
          "equals lxml's; missing/extra: links in lxml's lists and not the library's, and the other way round")
    print(report(table))
    if missing:
        print("\nnot installed (pip install -e '.[bench]'): " + ", ".join(missing))
    if args.json:
        document = {"pages": len(pages), "repeat": args.repeat, "figures": table,
                    "pages with other links": differing_pages(libraries, pages, outputs)}
        args.json.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
