"""The page stage of one checkout: pages per CPU second of the Parser's and HtmlToXml's work on each page.

    python PATH/page_stage.py --code CHECKOUT_DIR --pages PAGES_FILE [--repeat N]

Run by file path, it puts CHECKOUT_DIR first on sys.path before importing
the crawler, so it measures that checkout's code: the benchmark's parse
scenario runs it on the working tree and on an older checkout in the same
run, to compare the two.  It therefore calls only what every checkout since
the page stage was first measured has: out_record, UrlFilter,
Utf8JsonProtocol, UndecodedRecordProtocol, page_to_xml and merged_record,
and the trap guards and entry rules where the checkout has them.

PAGES_FILE holds doc-store lines (`key TAB value`, as the doc store holds a
fetched page).  Each page goes through the page stage as the jobs take it:

- the Parser's part: the doc line decoded, out_record, the out record
  encoded (timed);
- Merge's part: the doc record the URL keeps.  When the out record carries
  the parsed page (a "page" key), Merge attaches it to the doc:
  merged_record([doc value, out value], hub_link_density); otherwise the
  doc goes on as it is (not timed: Merge is a stage of its own);
- HtmlToXml's part: the merged line decoded, page_to_xml (timed).

Times are CPU seconds (time.process_time), each page's part at its fastest
of --repeat passes.  The config values are the checkout's own defaults, the
scope allows every link, and the language is "en".  The result is one JSON
line: pages, parser_cpu_s, xml_cpu_s, pages_per_cpu_s (pages over the two
parts' CPU seconds), xml_pages (pages that yielded XML), outlinks, and
joined_pages (pages whose out record carried the parsed page).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

LANGUAGE = "en"
# A user agent only to construct the config with: the page stage never sends one.
USER_AGENT = "mrcrawl-bench"


def parse_args(argv):
    parser = argparse.ArgumentParser(prog="page_stage.py", description=__doc__.split("\n\n")[0], allow_abbrev=False)
    parser.add_argument("--code", type=Path, required=True, metavar="CHECKOUT_DIR",
                        help="the checkout whose crawler is measured: the directory holding its mrcrawl package")
    parser.add_argument("--pages", type=Path, required=True, metavar="PAGES_FILE",
                        help="doc-store lines, one fetched page each")
    parser.add_argument("--repeat", type=int, default=3, metavar="N",
                        help="passes over the pages; each page's part counts at its fastest (default: 3)")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat: must be at least 1, got {args.repeat}")
    if not (args.code / "mrcrawl" / "__init__.py").is_file():
        parser.error(f"--code: {args.code} holds no mrcrawl package")
    return args


def use_checkout(code: Path) -> None:
    """Import the crawler from `code` only: first on sys.path, and without
    this script's own directory, whose modules would shadow nothing of the
    checkout's but are no part of what is measured."""
    here = Path(__file__).resolve().parent
    sys.path[:] = [str(code)] + [entry for entry in sys.path if entry and Path(entry).resolve() != here]


def page_lines(path: Path):
    with open(path, "rb") as pages:
        for line in pages:
            line = line.rstrip(b"\n")
            if line:
                yield line


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    code = args.code.resolve()
    use_checkout(code)
    import mrcrawl
    from mrcrawl.config import CrawlConfig
    from mrcrawl.frontier.merge import merged_record
    from mrcrawl.output.pagexml import page_to_xml
    from mrcrawl.page.outlinks import out_record
    from mrcrawl.page.urls import UrlFilter
    from mrcrawl.store.protocols import UndecodedRecordProtocol, Utf8JsonProtocol

    if not Path(mrcrawl.__file__).resolve().is_relative_to(code):
        raise SystemExit(f"page_stage.py: mrcrawl was imported from {mrcrawl.__file__}, not from {code}")
    config = CrawlConfig(language=LANGUAGE, user_agent=USER_AGENT)
    hub_link_density = config.revisit.hub_link_density
    scope = UrlFilter(config.url_allow, config.url_deny)
    # Checkouts before the trap guards and entry rules have neither, and an out_record without them.
    rules_and_guards = []
    try:
        from mrcrawl.page.entries import EntryRules
        from mrcrawl.page.traps import TrapGuards
    except ImportError:
        pass
    else:
        rules_and_guards = [TrapGuards.of(config), EntryRules.of(config)]
    records, undecoded = Utf8JsonProtocol(), UndecodedRecordProtocol()

    def parser_part(line: bytes) -> tuple[dict, bytes]:
        url, doc = records.read(line)
        out = out_record(doc, scope, hub_link_density, *rules_and_guards)
        return out, records.write(url, out)

    def merge_part(line: bytes, out: dict, out_line: bytes) -> bytes:
        key, doc_value = undecoded.read(line)
        if "page" not in out:
            return line
        return undecoded.write(key, merged_record([doc_value, undecoded.read(out_line)[1]], hub_link_density))

    def xml_part(merged: bytes):
        _, doc = records.read(merged)
        return page_to_xml(doc, LANGUAGE)

    first = next(page_lines(args.pages), None)
    if first is not None:  # imports and caches the first page would otherwise pay for
        out, out_line = parser_part(first)
        xml_part(merge_part(first, out, out_line))
    parser_best: list[float] = []
    xml_best: list[float] = []
    xml_pages = outlinks = joined = 0
    clock = time.process_time
    for number in range(args.repeat):
        for index, line in enumerate(page_lines(args.pages)):
            started = clock()
            out, out_line = parser_part(line)
            parsed = clock()
            merged = merge_part(line, out, out_line)
            joined_at = clock()
            xml = xml_part(merged)
            done = clock()
            if number == 0:
                parser_best.append(math.inf)
                xml_best.append(math.inf)
                xml_pages += xml is not None
                outlinks += len(out["outlinks"])
                joined += "page" in out
            parser_best[index] = min(parser_best[index], parsed - started)
            xml_best[index] = min(xml_best[index], done - joined_at)
    pages = len(parser_best)
    parser_cpu, xml_cpu = sum(parser_best), sum(xml_best)
    print(json.dumps({"pages": pages, "parser_cpu_s": parser_cpu, "xml_cpu_s": xml_cpu,
                      "pages_per_cpu_s": pages / (parser_cpu + xml_cpu) if pages else 0.0,
                      "xml_pages": xml_pages, "outlinks": outlinks, "joined_pages": joined}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
