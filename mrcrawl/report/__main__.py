"""`mrcrawl report DIR [--db DB] [-o FILE]` (or `python -m mrcrawl.report ...`): write a crawl's report on demand."""
from __future__ import annotations

import argparse
import os
import sys

from mrcrawl.cli import run_command
from mrcrawl.report import REPORT_FILE, ReportError, write_report

EXIT_OK = 0
EXIT_NOT_WRITTEN = 1  # the report could not be written where asked
EXIT_USAGE = 2  # a bad argument, or DIR or --db holds no crawl or crawl db


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog="mrcrawl report", allow_abbrev=False,
        usage="%(prog)s DIR [--db DB] [-o FILE]",
        epilog="Exit status: 0 the page was written; 1 it could not be written there; 2 a bad command line, or DIR "
               "holds no crawl, or --db no crawl db (one line on stderr). Nothing but the page is written.",
        description="Write one self-contained HTML page (no network needed to view it) of what a crawl did: its "
                    "summary; per layer, outcomes and step times, and each reduce task's planned and actual load; "
                    "throughput over time; per host, URLs, outcomes, bytes, errors and the smallest gap between two "
                    "requests; charsets and content types; the top errors with example URLs; main-text lengths; "
                    "and, from the crawl db, new, fetched, not modified and gone URLs per day.  Every crawl run "
                    "writes it as DIR/report.html.",
    )
    made.add_argument("directory", metavar="DIR", help="the crawl directory (the driver's --output)")
    made.add_argument("--db", metavar="DB", help="the crawl db to draw the trend across runs from "
                                   "(default: the one the crawl used, as crawl.json names it)")
    made.add_argument("-o", "--output", metavar="FILE", help=f"where to write the page (default: DIR/{REPORT_FILE})")
    return made


def main(argv: list[str] | None = None) -> int:
    """Write the report; return the exit status (EXIT_*)."""
    args = parser().parse_args(argv)  # exits 2 on a bad command line
    try:
        path = write_report(args.directory, args.output, args.db)
    except ReportError as error:
        print(f"{parser().prog}: {error}", file=sys.stderr)
        return EXIT_USAGE
    except OSError as error:
        target = args.output or os.path.join(args.directory, REPORT_FILE)
        print(f"{parser().prog}: cannot write {target}: {error.strerror or error}", file=sys.stderr)
        return EXIT_NOT_WRITTEN
    print(path)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_command(main))
