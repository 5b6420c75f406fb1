"""The crawl db on disk, and its update: a sort-merge that sorts only the batch.

A db directory holds one record per URL ever discovered (store/records.py's
db record) in P URL partition files, a digest index in P digest partition
files, the link store (which pages link to each URL, frontier/links.py) in P
link partition files, and `db.json`:

    DB/db.json                 {"format", "partitions": P, "slots": M, "generation": G, "applied": ..., "runs": ...}
    DB/gen-<G>/part-00000 ..   the URL partitions 0 .. P-1
    DB/gen-<G>/part-<P> ..     the digest partitions 0 .. P-1, as files P .. 2P-1
    DB/gen-<G>/part-<2P> ..    the link partitions 0 .. P-1, as files 2P .. 3P-1
    DB/.lock                   held by the run that works on the db

A db of format 2, written before the link store, has no link files: it is
read as a db with no links, and upgraded when opened for a run (upgrade()).

A URL lives in the URL partition of its host's slot (frontier/placement.py:
one of M logical slots, a stable hash of the host; P divides M, and the
partition is the slot modulo P), so a host's URLs stay together, as
IRLbot's DRUM buckets keep them, and in one slot for the crawl's life.  The digest index maps
each payload digest a fetch has shown, and each content signature
(`sig:<signature>`, frontier/dedup.py), to its original, the first URL
fetched with it (records.DIGEST_FIELDS); a digest or signature lives in the
digest partition of a hash of itself.  Each partition file is sorted by the
bytes of its keys, the URLs or digests as the store's protocol encodes them.
An update writes generation G+1 beside G; rewriting db.json (one small file,
replaced whole) is what commits it, so a run that dies midway leaves the db
as it was.
`applied` names the last update committed, so a resumed run knows whether
the update it was running got that far.

An update is DRUM's check+update, done as three jobs:
1. DbBatch folds a layer's frontier, doc and out records into one update per
   URL, keyed with its partition: `"<partition> <url>"`; and the payload
   digests and content signatures the layer fetched into one claim each,
   keyed `"#<digest partition> <digest or signature>"` (frontier/dedup.py);
   and each page's outlinks into one link update per target, keyed
   `"@<partition> <target>"` (frontier/links.py).
   Only this batch is shuffled and sorted, never the db.
2. Dedup (map-only, one task per digest partition file, read whole)
   looks the batch's digests and signatures up in the index and writes
   which fetched URLs repeat another's payload or content: the duplicate
   store.  It writes nothing into the db.
3. DbUpdate (map-only, one task per partition file of any kind, read
   whole).  A task takes its partition's updates from the batch (found by
   binary search in each sorted batch file, no other line decoded), sorts
   them in memory (one partition of one batch, never the db), and merges
   them into the partition in one
   sequential pass: URL updates, with the duplicates of its URLs, into a
   URL partition; claims into a digest partition, deciding each digest's
   original exactly as Dedup did; link updates into a link partition.  A record the batch does not touch
   is copied as the bytes it was, undecoded.

Nutch's updatedb instead maps every record of the old CrawlDb and sorts them
all again at every update, and its dedup job sorts the whole CrawlDb again
by signature; the benchmark's db-update scenario measures the first.
"""
from __future__ import annotations

import json
import mmap
import os
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from mrcrawl.frontier.placement import slot_of, slots_for, stable_hash
from mrcrawl.page.urls import host_key
from mrcrawl.store.crawl_reader import read_part
from mrcrawl.store.crawl_store import CrawlStore, pause_point
from mrcrawl.store.protocols import Utf8JsonProtocol

DB_FORMAT = 3  # 2: with the digest index; 3: with the link store
LINKLESS_FORMAT = 2  # read as a db with no links; upgrade() makes it DB_FORMAT
DB_META = "db.json"
DB_LOCK = ".lock"
DEFAULT_PARTITIONS = 16
GENERATION = "gen-{:06d}"  # the directory of a generation of the db
# What CrawlDb.create() writes before db.json, which makes the db: a run
# killed while making its db left some of these, and it is made again over them.
CREATE_LEFTOVERS = frozenset({DB_LOCK, GENERATION.format(0), DB_META + ".tmp"})
# What db.json keeps of each run that updated the db, in `runs`, by the
# run's start: how the crawl moves from day to day, summed over the run's
# layers.  The DbUpdate job counts them under these names (jobs/db_update.py),
# and the crawl report draws them as its trend across runs.
URLS_ADDED, URLS_FETCHED, URLS_NOT_MODIFIED, URLS_GONE = RUN_COUNTS = (
    "urls added", "urls fetched", "urls not modified", "urls gone")
PARTITION_DIGITS = 5  # a batch key's prefix has a fixed width, so it sorts as the partition does

_lines = Utf8JsonProtocol()


def partition_of(url: str, partitions: int) -> int:
    """The partition that holds `url`: the slot of its host (placement.py)
    modulo the partitions, which divide the db's slots: a host's records
    are in the partition of its slot, whatever the slots are assigned to."""
    return slot_of(host_key(url), partitions)


def digest_partition_of(digest: str, partitions: int) -> int:
    """The digest partition that holds `digest` (a stable hash, as partition_of)."""
    return stable_hash(digest) % partitions


def batch_key(url: str, partitions: int) -> str:
    """The key of a URL's update in the batch: its partition, then the URL."""
    return f"{partition_of(url, partitions):0{PARTITION_DIGITS}d} {url}"


def batch_prefix(partition: int) -> bytes:
    """How every batch line of `partition` starts: the opening quote of the
    JSON key, then digits and a space, which JSON writes as they are."""
    return f'"{partition:0{PARTITION_DIGITS}d} '.encode("ascii")


def claim_key(digest: str, partitions: int) -> str:
    """The key of a digest's (or signature_key's) claim in the batch: `#`, its digest partition, then the digest."""
    return f"#{digest_partition_of(digest, partitions):0{PARTITION_DIGITS}d} {digest}"


# How the digest index keys a content signature, beside the payload digests
# (`sha1:...`): a hex digest of the page's text (page/change.py).
SIGNATURE_KEY = "sig:"


def signature_key(signature: str) -> str:
    """The digest index's key of a content signature."""
    return SIGNATURE_KEY + signature


def is_signature_key(key: str) -> bool:
    """Whether a digest index key (or a claim key's digest) is a content signature's."""
    return key.startswith(SIGNATURE_KEY)


def is_claim_key(key: str) -> bool:
    return key.startswith("#")


def claim_prefix(digest_partition: int) -> bytes:
    """How every batch line of a digest partition's claims starts (see batch_prefix)."""
    return f'"#{digest_partition:0{PARTITION_DIGITS}d} '.encode("ascii")


def partition_number(part_file: str) -> int:
    """The partition a db part file holds, from its name (`.../part-00007` -> 7)."""
    return int(str(part_file).rsplit("/", 1)[-1].removeprefix("part-"))


def digest_partition_number(part_file: str, partitions: int) -> int | None:
    """The digest partition a db part file holds, or None for a URL or link partition's file."""
    number = partition_number(part_file)
    return number - partitions if partitions <= number < 2 * partitions else None


def link_partition_number(part_file: str, partitions: int) -> int | None:
    """The link partition a db part file holds, or None for a URL or digest partition's file."""
    number = partition_number(part_file)
    return number - 2 * partitions if number >= 2 * partitions else None


def url_of_batch_key(key: str) -> str:
    """The URL of an update's batch key, or the digest of a claim's."""
    return key.split(" ", 1)[1]


def key_bytes(url: str) -> bytes:
    """A URL as the db's lines start with it: what a partition file is sorted by."""
    return _lines.write(url, None).split(b"\t", 1)[0]


def lines_starting(path, prefix: bytes, sorted_by_key: bool) -> Iterator[bytes]:
    """The lines of a batch part file that start with `prefix`, with their newlines.

    A reducer's output file is sorted by key (on every runner but Spark's,
    whose shuffle groups keys without sorting them), so a partition's lines
    are together in it: with `sorted_by_key`, the first is found by binary
    search over the file mapped into memory, and only they are read.
    Otherwise every line is tested, as a task of a db of P partitions then
    does for each of its 2P files.
    """
    if not sorted_by_key:
        with open(path, "rb") as lines:
            yield from (line for line in lines if line.startswith(prefix))
        return
    if os.path.getsize(path) == 0:
        return  # mmap maps no empty file
    with open(path, "rb") as part, mmap.mmap(part.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
        start = _first_line_from(mapped, 0, prefix)  # a key starting with `prefix` is not below it
        while start < len(mapped) and mapped[start:start + len(prefix)] == prefix:
            end = mapped.find(b"\n", start) + 1 or len(mapped)
            yield mapped[start:end]
            start = end


def sorted_updates(partition_lines: Iterable[bytes]) -> list[tuple[bytes, str, dict]]:
    """One partition's batch lines (lines_starting gives them): a URL
    partition's updates or a digest partition's claims, as (the URL's or
    digest's key bytes in the db, URL or digest, update or claim), sorted as
    the partition file is."""
    updates = []
    for line in partition_lines:
        key, update = _lines.read(line.rstrip(b"\r\n"))
        stored_key = url_of_batch_key(key)
        updates.append((key_bytes(stored_key), stored_key, update))
    updates.sort(key=lambda item: item[0])
    return updates


def partition_duplicates(duplicate_lines: Iterable[bytes], partition: int, partitions: int) -> dict[str, list[dict]]:
    """The duplicate records (by URL: its payload's and its content's) of
    this URL partition's URLs: a layer's duplicates are few beside its
    fetches, so each line is decoded."""
    found: dict[str, list[dict]] = {}
    for line in duplicate_lines:
        if line.strip():
            url, duplicate = _lines.read(line.rstrip(b"\r\n"))
            if partition_of(url, partitions) == partition:
                found.setdefault(url, []).append(duplicate)
    return found


def join_sorted(stored_lines: Iterable[bytes], items: list[tuple]) -> Iterator[tuple[bytes | None, tuple | None]]:
    """Walk a partition file and `items`, both sorted by key, in one pass.

    `items` are tuples whose first element is a key as key_bytes() gives it.
    Yields (line, item) in key order: the stored line and the item of the
    same key, (line, None) for a line no item has, (None, item) for an item
    with no line.  Blank lines are skipped.
    """
    pending = iter(items)
    next_item = next(pending, None)
    for line in stored_lines:
        line = line.rstrip(b"\r\n")
        if not line:
            continue
        key = line.split(b"\t", 1)[0]
        while next_item is not None and next_item[0] < key:
            yield None, next_item
            next_item = next(pending, None)
        if next_item is not None and next_item[0] == key:
            yield line, next_item
            next_item = next(pending, None)
        else:
            yield line, None
    while next_item is not None:
        yield None, next_item
        next_item = next(pending, None)


def merge_partition(stored: BinaryIO, updates: list[tuple[bytes, str, dict]], apply) -> Iterator[bytes]:
    """The partition after the update, as chunks of whole lines in key order,
    each chunk without its last newline.

    `stored` is the partition file (sorted, one record per key), read in
    blocks of whole lines, so that memory stays flat however large it is;
    `updates` is sorted_updates()'s list.  `apply(record or None, url,
    update)` returns the URL's new record (None drops it).  Each update's
    place in a block is found by binary search over the block's bytes, and
    the lines between two updates are passed on as one slice, never split
    into lines: an untouched record costs a copy and nothing else.
    """
    pending = iter(updates)
    next_update = next(pending, None)
    for block in _blocks(stored):
        position = 0
        last_key = _last_key(block)
        while next_update is not None and next_update[0] <= last_key:
            key, url, update = next_update
            start = _first_line_from(block, position, key)
            if start > position:
                yield block[position:start - 1]  # the untouched lines before it
            end = block.index(b"\n", start) + 1
            if block[start:block.index(b"\t", start)] == key:
                stored_url, record = _lines.read(block[start:end - 1])
                yield from _written(stored_url, apply(record, stored_url, update))
                position = end
            else:
                yield from _written(url, apply(None, url, update))
                position = start
            next_update = next(pending, None)
        if position < len(block):
            yield block[position:-1]
    while next_update is not None:  # beyond the partition's last key
        yield from _written(next_update[1], apply(None, next_update[1], next_update[2]))
        next_update = next(pending, None)


def find_sorted(stored: BinaryIO, items: list[tuple]) -> Iterator[tuple[tuple, dict | None]]:
    """Each of `items` with the stored record of its key, or None.

    `stored` is a partition file; `items` are tuples sorted by their first
    element, a key as key_bytes() gives it, one item per key.  The file is
    read once in blocks, as merge_partition reads it, each item's line found
    by binary search, and only the lines found are decoded.
    """
    pending = iter(items)
    item = next(pending, None)
    for block in _blocks(stored):
        if item is None:
            return
        position = 0
        last_key = _last_key(block)
        while item is not None and item[0] <= last_key:
            start = _first_line_from(block, position, item[0])
            line = block[start:block.index(b"\n", start)]
            found = line.split(b"\t", 1)[0] == item[0]
            yield item, _lines.read(line)[1] if found else None
            position = start
            item = next(pending, None)
    while item is not None:  # beyond the partition's last key
        yield item, None
        item = next(pending, None)


MERGE_BLOCK_BYTES = 4 * 1024 * 1024


def _blocks(stored: BinaryIO) -> Iterator[bytes]:
    """The file in blocks of about MERGE_BLOCK_BYTES, each whole lines ending with a newline."""
    while True:
        block = stored.read(MERGE_BLOCK_BYTES)
        if not block:
            return
        if not block.endswith(b"\n"):
            block += stored.readline()  # the rest of the line the read cut
            if not block.endswith(b"\n"):
                block += b"\n"  # the file's last line had none
        yield block


def _last_key(block: bytes) -> bytes:
    """The key of a block's last line (a block ends with a newline)."""
    return block[block.rfind(b"\n", 0, len(block) - 1) + 1:].split(b"\t", 1)[0]


def _first_line_from(stored: bytes | mmap.mmap, start: int, key: bytes) -> int:
    """The offset of the first line at or after `start` (a line's start)
    whose key is not below `key`; len(stored) if there is none.  `stored`
    holds whole lines, sorted by key from `start` on."""
    low, high = start, len(stored)
    while low < high:
        middle = (low + high) // 2
        line = stored.rfind(b"\n", low, middle) + 1 or low  # the start of the line holding `middle`
        if stored[line:stored.find(b"\t", line)] < key:
            following = stored.find(b"\n", line)
            low = len(stored) if following < 0 else following + 1
        else:
            high = line
    return low


def _written(url: str, record: dict | None) -> Iterator[bytes]:
    if record is not None:
        yield _lines.write(url, record)


# The kinds of partition file a db of each format holds: URL, digest, link.
_FILE_KINDS = {LINKLESS_FORMAT: 2, DB_FORMAT: 3}


class NoCrawlDb(Exception):
    """The directory holds no crawl db; the message says what is missing."""


class CrawlDb:
    """A crawl db directory, reached through a crawl store's file operations
    (CrawlStore for local disk, ClusterCrawlStore for HDFS or S3)."""

    def __init__(self, store: CrawlStore):
        self.store = store
        self.root = store.root
        self.meta_path = store.join(DB_META)
        self.lock_path = store.join(DB_LOCK)
        self._meta: dict | None = None

    def create(self, partitions: int = DEFAULT_PARTITIONS) -> None:
        """An empty db: generation 0 of `partitions` empty URL partition files, and as many digest and link ones."""
        self.store.make_root()
        self.store.remove(self.generation_dir(0))  # what a create that was killed left, .tmp files and all
        for partition in range(_FILE_KINDS[DB_FORMAT] * partitions):
            self.store.write_text(self.store.part_file(self.generation_dir(0), partition), "")
        self._write_meta({"format": DB_FORMAT, "partitions": partitions, "slots": slots_for(partitions),
                          "generation": 0, "applied": None})

    def meta(self) -> dict:
        """db.json, checked once (see _read_meta) and then kept: only the
        run that holds the db's lock writes it, through this object."""
        if self._meta is None:
            self._meta = self._read_meta()
        return self._meta

    @property
    def partitions(self) -> int:
        return self.meta()["partitions"]

    @property
    def slots(self) -> int:
        """The crawl's logical slots (placement.py), fixed when the db was made;
        a db made before slots were kept has the slots a new one would."""
        return self.meta().get("slots") or slots_for(self.partitions)

    def partition_files(self) -> list:
        """The current generation's URL partition files, in partition order."""
        return self.files()[:self.partitions]

    def digest_files(self) -> list:
        """The current generation's digest partition files, in partition order."""
        return self.files()[self.partitions:2 * self.partitions]

    def link_files(self) -> list:
        """The current generation's link partition files, in partition order; none in a format-2 db."""
        return self.files()[2 * self.partitions:]

    def files(self) -> list:
        """Every partition file of the current generation: the URL partitions,
        then the digest partitions, then the link partitions."""
        current = self.current_dir()
        kinds = _FILE_KINDS[self.meta()["format"]]
        return [self.store.part_file(current, number) for number in range(kinds * self.partitions)]

    def upgrade(self) -> None:
        """Make a format-2 db one of DB_FORMAT, before a run writes to it:
        empty link files into its current generation, then db.json names
        the format.  A run killed between the two leaves a format-2 db with
        empty files it does not read, which the next run upgrades again."""
        meta = self.meta()
        if meta["format"] == DB_FORMAT:
            return
        current = self.current_dir()
        for number in range(2 * self.partitions, 3 * self.partitions):
            self.store.write_text(self.store.part_file(current, number), "")
        pause_point("db upgrading")
        self._write_meta({**meta, "format": DB_FORMAT})

    def _read_meta(self) -> dict:
        """db.json, after checking that it describes a db whose files are all there."""
        try:
            entries = self.store.entries()
        except NotADirectoryError:
            raise NoCrawlDb(f"{self.root}: is not a directory") from None
        if entries is None:
            raise NoCrawlDb(f"{self.root}: no such directory")
        if DB_META not in entries:
            raise NoCrawlDb(f"{self.root}: holds no crawl db (no {DB_META})")
        try:
            meta = json.loads(self.store.read_text(self.meta_path))
        except (ValueError, UnicodeDecodeError) as error:
            raise NoCrawlDb(f"{self.meta_path}: not a crawl db's {DB_META} ({error})") from None
        if (not isinstance(meta, dict) or meta.get("format") not in _FILE_KINDS
                or not all(isinstance(meta.get(key), int) for key in ("partitions", "generation"))):
            raise NoCrawlDb(f"{self.meta_path}: not a crawl db of format {DB_FORMAT} or {LINKLESS_FORMAT}")
        present = {Path(str(part)).name for part in self.store.parts(self.generation_dir(meta["generation"]))}
        kinds = _FILE_KINDS[meta["format"]]
        missing = [n for n in range(kinds * meta["partitions"]) if f"part-{n:05d}" not in present]
        if missing:
            raise NoCrawlDb(f"{self.generation_dir(meta['generation'])}: partition file part-{missing[0]:05d} is missing")
        return meta

    def generation_dir(self, generation: int):
        return self.store.join(GENERATION.format(generation))

    def current_dir(self):
        return self.generation_dir(self.meta()["generation"])

    def next_dir(self):
        """Where an update writes the next generation; cleared of an unfinished one."""
        written = self.generation_dir(self.meta()["generation"] + 1)
        self.store.remove(written)
        return written

    @staticmethod
    def update_name(run: str, step: str) -> str:
        """How db.json's `applied` names the update that `step` of the run starting at `run` commits."""
        return f"{run} {step}"

    def has_applied(self, update: str) -> bool:
        """Whether `update` is the last one committed: a run that died after
        committing it, before its crawl.json said so, must not apply it twice."""
        return self.meta()["applied"] == update

    def commit(self, applied: str, run: str | None = None, counts: dict | None = None) -> None:
        """Make the next generation the db (the update `applied` wrote it), then drop the old ones.

        `counts` are the update's RUN_COUNTS; they are added to the run's
        entry in db.json's `runs` (by `run`, its start) in the same write, so
        an update is counted exactly when it is committed."""
        meta = dict(self.meta())
        meta.update(generation=meta["generation"] + 1, applied=applied)
        if run is not None and counts:
            runs = dict(meta.get("runs") or {})
            entry = dict(runs.get(run) or dict.fromkeys(RUN_COUNTS, 0))
            for name in RUN_COUNTS:
                entry[name] = entry.get(name, 0) + counts.get(name, 0)
            runs[run] = entry
            meta["runs"] = runs
        self._write_meta(meta)  # the commit: readers now see the new generation
        pause_point(f"db committed {applied}")
        # Every older generation, not only the last: a run killed at this
        # point left its old one behind, a whole copy of the db.
        current = Path(str(self.current_dir())).name
        for name in sorted(self.store.entries() or ()):
            if name.startswith("gen-") and name != current:
                self.store.remove(self.store.join(name))

    def _write_meta(self, meta: dict) -> None:
        self.store.write_text(self.meta_path, json.dumps(meta) + "\n")
        self._meta = meta


def _local_db(directory) -> CrawlDb:
    return CrawlDb(CrawlStore(directory))


def create_db(directory: Path, partitions: int = DEFAULT_PARTITIONS) -> None:
    """An empty db on local disk."""
    if Path(directory).exists():
        raise FileExistsError(str(directory))
    _local_db(directory).create(partitions)


def partition_path(directory: Path, partition: int) -> Path:
    """The file of one partition of the db's current generation."""
    return Path(_local_db(directory).partition_files()[partition])


def read_db(directory: Path) -> Iterator[tuple[str, dict]]:
    """Every (URL, record) of the db, partition by partition, in key order."""
    for part in _local_db(directory).partition_files():
        yield from read_part(Path(part))


def read_digest_index(directory: Path) -> Iterator[tuple[str, dict]]:
    """Every (payload digest, original) of the db's digest index, partition by partition."""
    for part in _local_db(directory).digest_files():
        yield from ((digest, original) for digest, original in read_part(Path(part)) if not is_signature_key(digest))


def read_signature_index(directory: Path) -> Iterator[tuple[str, dict]]:
    """Every (content signature, original) of the db's digest index, partition by partition."""
    for part in _local_db(directory).digest_files():
        yield from ((key.removeprefix(SIGNATURE_KEY), original) for key, original in read_part(Path(part))
                    if is_signature_key(key))


def records_of(directory: Path, urls: Iterable[str]) -> dict[str, dict]:
    """The db records of `urls` that the db holds, by URL.  Only their
    partitions are read, and only their lines decoded."""
    db = _local_db(directory)
    wanted: dict[int, set[bytes]] = {}
    for url in urls:
        wanted.setdefault(partition_of(url, db.partitions), set()).add(key_bytes(url))
    files = db.partition_files()
    found = {}
    for partition, keys in wanted.items():
        with open(files[partition], "rb") as lines:
            for line in lines:
                if line.split(b"\t", 1)[0] in keys:
                    url, record = _lines.read(line.rstrip(b"\r\n"))
                    found[url] = record
    return found


def find_record(directory: Path, url: str) -> dict | None:
    """The db record of `url`, read from its partition only, or None."""
    return records_of(directory, [url]).get(url)
