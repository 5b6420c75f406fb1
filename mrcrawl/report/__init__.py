"""The crawl report: one self-contained HTML page of what a crawl did.

    python -m mrcrawl.report DIR [--db DB] [-o report.html]

- figures.py gathers what the crawl directory (and its crawl db) hold, in
  bounded memory;
- charts.py draws the charts as inline SVG;
- page.py writes the page;
- write_report() does all three; the driver calls it at the end of every run
  and the command on demand.
"""
from __future__ import annotations

import os
from pathlib import Path

from mrcrawl.report.figures import CrawlFigures, ReportError, gather
from mrcrawl.report.page import render

REPORT_FILE = "report.html"


def write_report(directory: str | Path, output: str | Path | None = None, db: str | None = None) -> Path:
    """Write the report of the crawl in `directory` to `output` (default
    DIR/report.html) and return its path; the trend comes from `db`, else
    from the crawl db the crawl used.  Raises ReportError, or OSError when
    the file cannot be written; a file already there is replaced whole or
    not at all."""
    figures = gather(directory, db)
    path = Path(output) if output is not None else Path(directory) / REPORT_FILE
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_text(render(figures), encoding="utf-8")
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)
    return path


__all__ = ["REPORT_FILE", "CrawlFigures", "ReportError", "gather", "render", "write_report"]
