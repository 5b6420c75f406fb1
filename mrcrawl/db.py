"""Read a crawl db, as Nutch's `readdb` does.

    python -m mrcrawl.db stats DB [--now ISO8601]      counts per status and per host, URLs due, payload digests,
                                                       how the scores spread, and what waits (deferred, trapped)
                                                       per pay-level domain
    python -m mrcrawl.db top DB [-n N] [--json]        the N URLs of the highest scores (Nutch's readdb -topN)
    python -m mrcrawl.db get DB URL                    one URL's record, as JSON
    python -m mrcrawl.db inlinks DB URL [--json]       the pages that link to URL (Nutch's readlinkdb)
    python -m mrcrawl.db dump DB [--status S] [--format jsonl|parquet] [-o FILE]

DB is a crawl db, or a crawl directory, whose crawl.json names its db.  The
db is read one partition file at a time, so any size is read in bounded
memory: stats holds a count per host and a few per pay-level domain, never
the URLs, and top holds N records (frontier/score_spread.py).
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from datetime import datetime, timezone
from pathlib import Path

from mrcrawl.cli import run_command
from mrcrawl.frontier.crawldb import NoCrawlDb, find_record, read_db, read_digest_index
from mrcrawl.frontier.db_update import parse_time
from mrcrawl.frontier.links import find_inlinks
from mrcrawl.frontier.score_spread import ScoredUrl, ScoreSpread, bucket_label, score_spread, top_scored
from mrcrawl.frontier.waiting import WaitingTally
from mrcrawl.page.urls import normalize_url
from mrcrawl.store.crawl_state import CrawlState
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import DB_FIELDS, DB_STATUSES, iso_utc

DUMP_FORMATS = ("jsonl", "parquet")
TOP_DEFAULT = 20  # URLs `top` prints unless -n says
STATS_TOP = 5  # URLs of the highest scores `stats` names
PARQUET_ROWS = 50_000  # rows per Parquet row group: what a dump holds in memory at once


def db_of(path: Path) -> Path:
    """The crawl db `path` names: `path` itself, or for a crawl directory
    the db its crawl.json names.  Raises NoCrawlDb when that cannot be read here."""
    crawl = CrawlStore(path)
    if not crawl.holds_crawl():
        return path
    try:
        db = CrawlState.load(crawl).db
    except (ValueError, KeyError, TypeError) as error:  # StateMismatch among them
        raise NoCrawlDb(f"{crawl.state_path}: not a crawl state this version reads ({error})") from None
    if "://" in db:  # HDFS or S3 (as is_cluster_path tells, which would load mrjob)
        raise NoCrawlDb(f"{path}: its crawl.json names the crawl db {db}, which is read here from local disk "
                        "only: copy it down and name the copy")
    return Path(db)


def stats(db: Path, now: datetime) -> str:
    statuses: Counter = Counter()
    hosts: dict[str, Counter] = defaultdict(Counter)
    due = 0
    moment = iso_utc(now)
    waiting = WaitingTally()
    for _, record in read_db(db):
        statuses[record["status"]] += 1
        hosts[record["host"]][record["status"]] += 1
        due += record["due_at"] is not None and record["due_at"] <= moment
        waiting.add(record)
    total = sum(statuses.values())
    payloads = sum(1 for _ in read_digest_index(db))
    lines = [f"{db}: {total} URLs, {len(hosts)} hosts, {due} due at {moment}; "
             f"{payloads} payload digests in the digest index", "", "status"]
    lines += [f"  {status:<14} {statuses[status]:>10}" for status in DB_STATUSES if statuses[status]]
    lines += ["", f"{'host':<40} {'URLs':>8}  statuses"]
    for host, counts in sorted(hosts.items(), key=lambda item: (-sum(item[1].values()), item[0])):
        detail = ", ".join(f"{status} {count}" for status, count in counts.most_common())
        lines.append(f"{host:<40} {sum(counts.values()):>8}  {detail}")
    return "\n".join(lines + score_lines(score_spread(db, STATS_TOP)) + waiting_lines(waiting))


def score_lines(spread: ScoreSpread) -> list[str]:
    """How the scores spread: the URLs per bucket of score / mean score
    (score × n when the scores sum to 1), and the URLs of the highest scores."""
    if not spread.scored:
        return ["", f"scores: none yet (0 of {spread.urls} URLs scored)"]
    lines = ["", f"scores: {spread.scored} of {spread.urls} URLs scored, mean {spread.mean:.6g}",
             f"  {'score / mean':<18} {'URLs':>10}"]
    lines += [f"  {bucket_label(bucket):<18} {count:>10}" for bucket, count in spread.ranked_buckets()]
    lines += [f"top {len(spread.top)} by score"]
    lines += [f"  {top_line(entry)}" for entry in spread.top]
    return lines


def top_line(entry: ScoredUrl) -> str:
    """One URL of the top: its score, URL and status, tab-separated."""
    return f"{entry.score:.6g}\t{entry.url}\t{entry.status}"


def waiting_lines(waiting: WaitingTally) -> list[str]:
    """What waits, per pay-level domain: the URLs deferred (unfetched or due,
    by the cap or limit that deferred them) and those trapped (by guard)."""
    lines = ["", f"waiting: {waiting.deferred} URLs deferred, {waiting.trapped} trapped"]
    if waiting.by_pld:
        lines.append(f"{'pay-level domain':<40} {'deferred':>8} {'trapped':>8}  why")
    for pld, counts in waiting.ranked():
        detail = ", ".join(f"{why} {count}" for why, count in counts.why())
        lines.append(f"{pld:<40} {counts.deferred.total():>8} {counts.trapped.total():>8}  {detail}")
    return lines


def inlinks(db: Path, url: str, as_json: bool, prog: str) -> int:
    """Print the link record of `url`: exit status 1, saying whether the db
    holds the URL at all, when it has no inlinks."""
    record = find_inlinks(db, url)
    if record is None:
        held = find_record(db, url)
        known = (f"the db holds it ({held['status']}) but no page that links to it" if held is not None
                 else "the db does not hold it at all")
        print(f"{prog}: {url}: no inlinks in {db}: {known}", file=sys.stderr)
        return 1
    if as_json:
        print(json.dumps({"url": url, **record}, ensure_ascii=False))
    else:
        for source, anchor, run in record["inlinks"]:
            print(f"{source}\t{anchor}\t{run}")
    return 0


def dump(db: Path, status: str | None, format: str, output) -> int:
    records = (record for _, record in read_db(db) if status is None or record["status"] == status)
    if format == "jsonl":
        count = 0
        for record in records:
            output.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
        return count
    return _write_parquet(records, output)


def _write_parquet(records, path) -> int:
    # pyarrow is imported only by a Parquet dump.
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = _parquet_types()
    schema = pa.schema([(field, types[field]) for field in DB_FIELDS])
    count = 0
    with pq.ParquetWriter(path, schema) as writer:
        batch = []
        for record in records:
            batch.append(record)
            if len(batch) == PARQUET_ROWS:
                writer.write_table(pa.Table.from_pylist(batch, schema=schema))
                count, batch = count + len(batch), []
        writer.write_table(pa.Table.from_pylist(batch, schema=schema))
    return count + len(batch)


def _parquet_types() -> dict:
    import pyarrow as pa

    integers = {"first_layer", "hops", "fetch_count", "http_status", "failures", "deferrals", "inlinks", "inlink_hosts"}
    floats = {"interval", "score"}
    booleans = {"seed", "hub"}
    lists = {"outlinks"}
    return {field: pa.int64() if field in integers else pa.float64() if field in floats
            else pa.bool_() if field in booleans else pa.list_(pa.string()) if field in lists
            else pa.string() for field in DB_FIELDS}


class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        self.exit(2, f"{self.prog}: {message}\n")


def _utc(text: str) -> datetime:
    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}") from None


def _at_least_one(text: str) -> int:
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(f"not a whole number >= 1: {text!r}")
    return count


def main(argv: list[str] | None = None) -> int:
    parser = _ArgumentParser(prog="mrcrawl db", description="Read a crawl db (the crawl's --db), as Nutch's readdb does.",
                             allow_abbrev=False,
                             epilog="`mrcrawl db COMMAND --help` gives a command's options.")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    db_help = "the crawl db directory (the crawl's --db), or a crawl directory: the db its crawl.json names"
    stats_parser = commands.add_parser(
        "stats", help="counts per status and per host, how many URLs are due, the scores, and what waits",
        allow_abbrev=False,
        description="Count a crawl db's URLs per status and per host, the URLs due, the payload digests, the URLs "
                    "scored per bucket of score / mean score with the top 5, and, per pay-level domain, the URLs "
                    "deferred (by cap or time limit) and trapped (by guard).")
    stats_parser.add_argument("db", metavar="DB", type=Path, help=db_help)
    stats_parser.add_argument("--now", type=_utc, default=None, metavar="ISO8601",
                              help="count URLs due at this UTC time (default: now)")
    top_parser = commands.add_parser(
        "top", help="the URLs of the highest scores", allow_abbrev=False,
        description="Print the N URLs of the highest scores, highest first (equal scores by URL), one a line: "
                    "score, URL and status, tab-separated; exit 1 if no URL has a score yet.")
    top_parser.add_argument("db", metavar="DB", type=Path, help=db_help)
    top_parser.add_argument("-n", type=_at_least_one, default=TOP_DEFAULT, metavar="N",
                            help=f"how many URLs (default: {TOP_DEFAULT})")
    top_parser.add_argument("--json", action="store_true",
                            help="one JSON object a line: score, url, status, inlinks, inlink_hosts")
    get_parser = commands.add_parser("get", help="one URL's record, as JSON", allow_abbrev=False,
                                     description="Print one URL's record, as JSON; exit 1 if the db does not hold it.")
    get_parser.add_argument("db", metavar="DB", type=Path, help=db_help)
    get_parser.add_argument("url", metavar="URL", help="the URL, put in canonical form as the crawl puts the URLs it "
                                                     "finds (http://Host is http://host/)")
    inlinks_parser = commands.add_parser(
        "inlinks", help="the pages that link to one URL", allow_abbrev=False,
        description="Print the pages that link to a URL, as Nutch's readlinkdb does, one a line: the source URL, "
                    "its anchor text and the run that first saw the link, tab-separated; exit 1 if the db holds "
                    "no inlinks of the URL.")
    inlinks_parser.add_argument("db", metavar="DB", type=Path, help=db_help)
    inlinks_parser.add_argument("url", metavar="URL", help="the URL, put in canonical form as get puts it")
    inlinks_parser.add_argument("--json", action="store_true",
                                help='the link record instead, as JSON: {"url", "inlinks": [[source, anchor, run], ...]}')
    dump_parser = commands.add_parser("dump", help="every record, or those of one status", allow_abbrev=False,
                                      description="Write every record of a crawl db, or those of one status.")
    dump_parser.add_argument("db", metavar="DB", type=Path, help=db_help)
    dump_parser.add_argument("--status", choices=DB_STATUSES, help="only the records of this status (default: all)")
    dump_parser.add_argument("--format", choices=DUMP_FORMATS, default="jsonl",
                             help="one JSON object a line, or a Parquet file (default: jsonl)")
    dump_parser.add_argument("-o", "--output", type=Path, metavar="FILE",
                             help="the file to write (default: stdout; required for parquet)")
    args = parser.parse_args(argv)
    if args.command == "dump" and args.format == "parquet" and args.output is None:
        parser.error("dump --format parquet: name the file with -o")
    url = normalize_url(args.url) if args.command in ("get", "inlinks") else None
    if args.command in ("get", "inlinks") and url is None:
        parser.error(f"{args.command}: {args.url}: not an absolute http or https URL")
    try:
        db = db_of(args.db)
        if args.command == "stats":
            print(stats(db, args.now or datetime.now(timezone.utc)))
        elif args.command == "top":
            top = top_scored(db, args.n)
            if not top:
                print(f"{parser.prog}: {db}: no URL has a score yet", file=sys.stderr)
                return 1
            for entry in top:
                print(json.dumps(entry.as_json(), ensure_ascii=False) if args.json else top_line(entry))
        elif args.command == "get":
            record = find_record(db, url)
            if record is None:
                print(f"{parser.prog}: {url}: not in {db}", file=sys.stderr)
                return 1
            print(json.dumps(record, ensure_ascii=False, indent=2))
        elif args.command == "inlinks":
            return inlinks(db, url, args.json, parser.prog)
        elif args.output is None:
            dump(db, args.status, args.format, sys.stdout)
        elif args.format == "parquet":
            dump(db, args.status, args.format, str(args.output))
        else:
            with open(args.output, "w", encoding="utf-8") as output:
                dump(db, args.status, args.format, output)
    except NoCrawlDb as error:
        print(f"{parser.prog}: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(run_command(main))
