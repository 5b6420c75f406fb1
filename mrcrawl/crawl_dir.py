"""Opening a crawl directory and its crawl db for one run: refusing what the
run would damage or misread, holding their locks, and starting the crawl
(crawl.json, the config, the seeds) or reopening it for `--resume`.
"""
from __future__ import annotations

import contextlib
import fcntl
import os
import shlex
import sys
from datetime import datetime
from pathlib import Path

from mrcrawl.config import CrawlConfig
from mrcrawl.frontier.crawldb import CREATE_LEFTOVERS, DB_META, CrawlDb, NoCrawlDb
from mrcrawl.store.cluster_store import ClusterCrawlStore, is_cluster_path
from mrcrawl.store.crawl_state import CrawlState, StateMismatch
from mrcrawl.store.crawl_store import CRAWL_STATE, STARTUP_LEFTOVERS, CrawlStore


class UsageError(Exception):
    """A bad command line, config, seed file, crawl directory or crawl db: exit 2, nothing written."""


def store_at(root: str) -> CrawlStore:
    return ClusterCrawlStore(root) if is_cluster_path(root) else CrawlStore(root)


def crawl_db(root: str) -> CrawlDb:
    return CrawlDb(store_at(root))


def db_root(db: str | None, store: CrawlStore) -> str:
    """Where the crawl db is: `db` (--db), else the crawl directory's db/
    (absolute, so that a resume from another directory finds the same db)."""
    root = db or str(store.join("db"))
    return root if is_cluster_path(root) else os.path.abspath(root)


def db_of_run(store: CrawlStore, db: str | None, resume: bool) -> str:
    """The crawl db of this run: a resumed crawl's own, else db_root()."""
    if not resume:
        return db_root(db, store)
    state = load_state(store)
    if db and db_root(db, store) != state.db:
        raise UsageError(f"--db {db}: the crawl in {store.root} works on the crawl db {state.db}; "
                         "resume without --db, or with that one")
    return state.db


def check_db_place(store: CrawlStore, db: str | None) -> None:
    """Refuse a --db that overlaps the crawl directory: each needs a
    directory the other does not write into.  Inside the crawl directory the
    db's place is DIR/db, the default; the crawl's stores have the others."""
    if not db:
        return
    crawl, given, default = (comparable(place) for place in (str(store.root), db, str(store.join("db"))))
    if given == crawl:
        raise UsageError(f"--db {db}: is the crawl directory (--output) itself; the crawl db needs a directory of "
                         f"its own: leave --db out for {store.join('db')}, or give another")
    if is_inside(given, crawl) and given != default:
        raise UsageError(f"--db {db}: is inside the crawl directory {store.root}, where the crawl writes its stores; "
                         f"give {store.join('db')} (the default) or a directory outside it")
    if is_inside(crawl, given):
        raise UsageError(f"--output {store.root}: is inside the crawl db {db}; give the crawl a directory outside it")


def comparable(place: str) -> str:
    """A local path absolute with its links resolved, or a cluster URI without
    a trailing slash: two spellings of one directory compare equal."""
    return place.rstrip("/") if is_cluster_path(place) else os.path.realpath(place)


def is_inside(place: str, directory: str) -> bool:
    return place.startswith(directory.rstrip("/") + "/")


def load_state(store: CrawlStore) -> CrawlState:
    try:
        return CrawlState.load(store)
    except StateMismatch as error:
        raise UsageError(str(error)) from None


def check_directory(store: CrawlStore, resume: bool) -> None:
    """Refuse a crawl directory that this run would damage or misread."""
    try:
        entries = store.entries()
    except NotADirectoryError:
        raise UsageError(f"--output {store.root}: exists and is not a directory") from None
    holds_crawl = entries is not None and CRAWL_STATE in entries
    if resume and not holds_crawl:
        what = "does not exist" if entries is None else "holds no crawl (no crawl.json)"
        raise UsageError(f"--resume: {store.root} {what}; check the path, or drop --resume to start a new crawl there")
    if not resume and holds_crawl:
        raise UsageError(f"{store.root}: already holds a crawl; use --resume to continue it or another --output")
    if not resume and entries and not entries <= STARTUP_LEFTOVERS:
        # Someone else's files: a crawl written among them could not be told
        # apart from them, and a later clean-up could delete them.
        shown = ", ".join(sorted(entries - STARTUP_LEFTOVERS)[:3])
        raise UsageError(f"--output {store.root}: holds other files ({shown}…); give a new or empty directory")


def refuse_links(store: CrawlStore, option: str) -> None:
    """Refuse a crawl directory or crawl db that holds a symbolic link: what
    the crawler writes there could land outside both (CrawlStore.links)."""
    refusal = store.link_refusal()
    if refusal:
        raise UsageError(f"{option} {refusal}")


def lock(store: CrawlStore, lock_path, what: str):
    """Keep two runs out of one local crawl directory or crawl db; the lock
    dies with the process.

    A directory on HDFS or S3 has no such lock: run_depth.sh's per-language
    lock on the machine that drives the crawl keeps runs apart there.
    """
    if isinstance(store, ClusterCrawlStore):
        return contextlib.nullcontext()
    try:
        store.make_root()
    except (FileExistsError, NotADirectoryError):
        raise UsageError(f"{store.root}: exists and is not a directory; give the {what} a directory") from None
    # Not truncated while another run may hold it (its pid is there for a
    # refusal to name), and never through a link (refuse_links ran before).
    handle = open(os.open(lock_path, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o666), "w")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise UsageError(f"{store.root}: another run is working on this {what}{lock_holder(lock_path)}") from None
    # Who holds it, for the refusal of the next run to name.
    handle.truncate(0)
    handle.write(f"{os.getpid()} {shlex.join(sys.argv)}\n")
    handle.flush()
    return handle


# How much of a lock file is read for the holder's pid and command line:
# a command with a long path or two is some hundreds of bytes.
LOCK_HOLDER_BYTES = 8192


def lock_holder(lock_path) -> str:
    """` (pid N: its command line)`, as the run holding a lock wrote it
    there; empty if it wrote nothing (yet)."""
    try:
        with open(os.open(lock_path, os.O_RDONLY | os.O_NOFOLLOW), encoding="utf-8", errors="replace") as held:
            pid, _, command = held.read(LOCK_HOLDER_BYTES).strip().partition(" ")
    except OSError:
        return ""
    return f" (pid {pid}: {command})" if pid.isdigit() else ""


def open_db(db: CrawlDb, option: str = "--db") -> None:
    """Check the run's crawl db, or make an empty one where there is none
    yet, and upgrade one of an older format; `option` is what names the db
    on the command line."""
    try:
        entries = db.store.entries()
    except NotADirectoryError:
        raise UsageError(f"{option} {db.root}: exists and is not a directory") from None
    if entries and CRAWL_STATE in entries and DB_META not in entries:
        try:
            named = f"; that crawl's db is {CrawlState.load(db.store).db}"
        except (OSError, ValueError, KeyError):  # a crawl.json this version cannot read names none
            named = ""
        raise UsageError(f"{option} {db.root}: is a crawl directory (it holds {CRAWL_STATE}), not a crawl db{named}")
    if entries and DB_META not in entries and not entries <= CREATE_LEFTOVERS:
        raise UsageError(f"{option} {db.root}: holds other files and no crawl db; give a crawl db or a new directory")
    if not entries or DB_META not in entries:
        db.create()
    try:
        db.meta()
    except NoCrawlDb as error:
        raise UsageError(f"{option}: {error}") from None
    db.upgrade()


def open_crawl(store: CrawlStore, config: CrawlConfig, config_path: str, seeds_path: str, seeds_shown: str,
               seeds: list[str], db: CrawlDb, now: datetime | None, resume: bool,
               settings: dict | None = None) -> CrawlState:
    """Start the crawl in the store's directory, or reopen it for a resume
    (check_directory() has refused a directory that fits neither).  The
    seeds came from `seeds_path` (absolute), given as `seeds_shown`; the
    config is the file's with the run's -s `settings` in it."""
    if resume:
        state = load_state(store)
        try:
            state.refuse_other_run(store, now)
            state.refuse_other_settings(store, settings or {})
            state.refuse_other_config(store, config, config_path)
        except StateMismatch as error:
            raise UsageError(str(error)) from None
        check_same_seeds(store, seeds_shown, seeds)
        # The same config but perhaps for the proxy's password, which
        # crawl.json does not keep: a password changed since takes effect.
        store.write_text(store.config_path, config.to_json() + "\n", private=True)
        return state
    store.make_root()
    store.write_text(store.config_path, config.to_json() + "\n", private=True)
    state = CrawlState.new(config, seeds_path, len(seeds), now, str(db.root), settings)
    written = store.begin_output("seeds", store.seeds())
    store.write_text(store.part_file(written), "".join(url + "\n" for url in seeds))
    store.commit(written, store.seeds())
    state.save(store)
    return state


def check_same_seeds(store: CrawlStore, seeds_path: str, seeds: list[str]) -> None:
    """A resume continues the seeds it started from; refuse a seed file that says otherwise."""
    crawled = {url for part in store.parts(store.seeds()) for url in store.read_text(part).splitlines() if url}
    added, dropped = sorted(set(seeds) - crawled), sorted(crawled - set(seeds))
    if added or dropped:
        example = f"{added[0]} is new" if added else f"{dropped[0]} is missing"
        raise UsageError(
            f"{seeds_path}: differs from the seeds of the crawl in {store.root} "
            f"({len(added)} added, {len(dropped)} missing; {example}); resume with the same seeds")


def default_output(config: CrawlConfig) -> str:
    """A crawl's directory when no --output is given: crawl/<config name>."""
    return str(Path("crawl") / config.name)
