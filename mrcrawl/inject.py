"""Add URLs to a crawl db without crawling them, as Nutch's inject does:
`python -m mrcrawl.inject DB SEEDS --conf CONF [--now ISO8601] [--runner R]`.

SEEDS is read as a crawl's seed file is (seeds.py: its line format, and a
message with the line's number for each line skipped), and a URL is kept
only when the config's url_allow and url_deny let it in: the Generator
takes every due URL of the db into a run's first layer without asking the
filters again.  Then, in the db:

- a URL it does not hold is added, due at the inject's time (`--now`, by
  default the real time), so the next crawl run on the db fetches it on
  layer 0 though no seed links to it;
- a URL it holds and has never fetched (a link found beyond a crawl's
  depth) is made due the same way;
- a URL it has fetched before keeps its record: its history, and the
  revisit time the revisit policy gave it.

The db is updated as a crawl updates it: its lock is held throughout, and
the crawl's DbUpdate job merges the batch into it, partition by partition,
on the runner given, writing the next generation beside the current one,
which only db.json's rewrite commits.  An inject that dies midway leaves the
db as it was.  A crawl makes a layer's batch with DbBatch, which folds the
many records a layer holds of a URL (its frontier entry, doc and out
records, the links to it) into one update in a shuffle.  An inject's batch
is one update per URL of a list that read_seeds has already rid of repeats
and holds in memory: it is written here, sorted as DbBatch's reducer writes
it.

An inject applied twice does what it does once, so it commits without a
name of its own: db.json's `applied` keeps naming the crawl update it names,
which a crawl resumed after dying at its commit looks for.  Nor is it a run
in db.json's `runs`, whose counts the crawl report draws run by run.
"""
from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
from datetime import datetime, timezone

from jobs.db_update import MRDbUpdate
from mrcrawl.cli import run_command
from mrcrawl.config import ConfigError, load_config
from mrcrawl.crawl_dir import UsageError, crawl_db, lock, open_db, refuse_links
from mrcrawl.driver import utc_time
from mrcrawl.frontier.crawldb import CrawlDb, batch_key
from mrcrawl.frontier.db_update import injected
from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.mr.launcher import RUNNERS, JobContext, Launcher, RunnerSettings
from mrcrawl.page.urls import UrlFilter
from mrcrawl.seeds import read_seeds
from mrcrawl.store.cluster_store import is_cluster_path
from mrcrawl.store.crawl_store import pause_point
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import iso_utc

log = logging.getLogger("mrcrawl.inject")  # by name: run as `python -m`, __name__ is __main__

EXIT_OK = 0
EXIT_FAILED = 1  # the update failed: the db is as it was
EXIT_USAGE = 2  # a bad argument, config, seed file or crawl db: nothing written

_lines = Utf8JsonProtocol()


def inject(db: str, seeds: str, conf: str, now: datetime | None = None,
           settings: RunnerSettings = RunnerSettings()) -> str:
    """Inject the URLs of the seed file `seeds` into the crawl db `db` (made
    if missing), kept by the config `conf`'s filters; return what was done,
    in one line.  Raises UsageError or ConfigError, having written nothing,
    for bad input, and an Exception of the job's when the update fails."""
    if settings.reads_local_disk_only and is_cluster_path(db):
        raise UsageError(f"DB {db}: the {settings.runner} runner works on local disk; use hadoop or emr")
    config = load_config(conf)
    urls, said = read_seeds(seeds, UrlFilter(config.url_allow, config.url_deny))
    for message in said:
        log.warning("%s", message)
    database = crawl_db(db if is_cluster_path(db) else os.path.abspath(db))
    refuse_links(database.store, "DB")
    moment = iso_utc(now or datetime.now(timezone.utc))
    with lock(database.store, database.lock_path, "crawl db"):
        open_db(database, "DB")
        counters = update_db(database, urls, config.to_json(), moment, settings)
    if counters is None:
        return f"inject: {len(urls)} URLs from {seeds} merged into {database.root}, due from {moment}"
    added, known = MRDbUpdate.URLS_ADDED.of(counters), MRDbUpdate.URLS_UPDATED.of(counters)
    return (f"inject: {len(urls)} URLs from {seeds} into {database.root}: {added} added, due from {moment}; "
            f"{known} the db held already (those never fetched made due, the others left as they were)")


def update_db(db: CrawlDb, urls: list[str], config_json: str, moment: str, settings: RunnerSettings) -> dict | None:
    """Merge the injection of `urls` as of `moment` into the db with DbUpdate,
    and commit it; DbUpdate's counters, or None when the runner reported none."""
    with tempfile.TemporaryDirectory(prefix="mrcrawl-inject-") as scratch, Launcher(settings) as launcher:
        config_path = os.path.join(scratch, "config.json")
        # The config may hold the proxy's password: readable by its owner only, as a crawl's config.json.
        with open(os.open(config_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w", encoding="utf-8") as file:
            file.write(config_json + "\n")
        batch = os.path.join(scratch, "part-00000")
        with open(batch, "wb") as file:
            file.writelines(line + b"\n" for line in sorted(
                _lines.write(batch_key(url, db.partitions), injected()) for url in urls))
        written = db.next_dir()
        context = JobContext(config_path=config_path, layer=0, db_partitions=db.partitions, run=moment,
                             clock_offset=0.0)
        options = ["--batch-part", batch, *(["--batch-sorted"] if settings.sorts_reduce_output else [])]
        try:
            counters = launcher.run(MRDbUpdate, db.files(), written, context, options)
        except Exception:
            db.store.remove(written)  # a half generation; on a full disk it holds the space needed
            raise
        pause_point("written inject")
        db.commit(db.meta()["applied"])
        return counters


# ---- the command line ---------------------------------------------------------------------------

class _ArgumentParser(argparse.ArgumentParser):
    def error(self, message):
        raise UsageError(f"{self.prog}: {message}")


def build_parser() -> argparse.ArgumentParser:
    parser = _ArgumentParser(
        prog="mrcrawl inject", allow_abbrev=False,
        description="Add the URLs of a seed file to a crawl db without crawling them, as Nutch's inject does. "
                    "A URL the db does not hold, or holds and never fetched, is due from now: the next crawl on "
                    "the db fetches it on layer 0. A URL fetched before keeps its record and its revisit time.",
        epilog="Exit status: 0 the db holds the URLs; 1 the update failed, and the db is as it was; 2 a bad "
               "command line, config, seed file or crawl db (one line on stderr), nothing written.")
    parser.add_argument("db", metavar="DB", help="the crawl db (the crawl's --db), made if missing")
    parser.add_argument("seeds", metavar="SEEDS",
                        help="the URLs, in a seed file's format: one URL per line, then optional key=value "
                             "metadata and a # comment")
    parser.add_argument("--conf", required=True, metavar="CONF",
                        help="the YAML crawl config of the crawls on the db: its url_allow and url_deny keep "
                             "the URLs that may be crawled; required")
    parser.add_argument("--now", type=utc_time, metavar="ISO8601",
                        help="make the URLs due as of this UTC time, as a crawl's --now (default: now)")
    parser.add_argument("--runner", default="inline", choices=RUNNERS,
                        help="mrjob runner of the db's update (default: inline)")
    parser.add_argument("--spark-master", metavar="URL",
                        help="Spark master for --runner spark (default: the --mrjob-conf's spark_master, else local[*])")
    parser.add_argument("--mrjob-conf", metavar="FILE",
                        help="mrjob.conf for the runner: clusters, EMR; examples in jobs/conf/ (default: none)")
    add_verbosity_options(parser)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    configure_logging()  # until the command line says otherwise: it may be refused
    try:
        args = build_parser().parse_args(argv)
        configure_logging(args.verbosity)
        said = inject(args.db, args.seeds, args.conf, args.now, RunnerSettings(args.runner, args.mrjob_conf,
                                                                                 args.spark_master))
    except (UsageError, ConfigError) as error:
        log.error("%s", error)
        return EXIT_USAGE
    except Exception as error:  # the job's: the db is as it was
        log.exception("mrcrawl: inject failed, with this traceback:")
        log.error(f"mrcrawl: inject failed: {type(error).__name__}: {error}; the crawl db is as it was")
        return EXIT_FAILED
    log.info(said)
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(run_command(main))
