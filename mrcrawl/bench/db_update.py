"""The db-update scenario: one layer's update of a large crawl db, done the
crawler's way and Apache Nutch's way, timed at two db sizes.

The crawler's way is three jobs: DbBatch sorts only the layer's updates and
digest claims, Dedup looks the claims up in the digest index, and
DbUpdate merges each partition file, URL records and digest index alike,
with its share in one sequential pass (frontier/crawldb.py).  Nutch's
updatedb sorts the whole db with the updates at every update:
jobs/db_resort.py does that, on the same inputs, digest index included.  Both run
with `-r local`, each job in a process of its own (run_measured), and both
must leave the same records, or the comparison would not be fair.

The db is news-like: many sites of `urls_per_host` articles each, every
article fetched once on an earlier run.  It is written straight into sorted
partition files, one host at a time, so a 10M-URL db is never in memory.
Its records are what apply_update() makes of the updates DbBatch would have
made of that fetch (frontier entry, doc record and out record): each article
links ARTICLE_LINKS others of its site, the graph PageRank reads.  The db's digest
index holds every article's payload digest and content signature, and its
link store every article's inlinks.  The
layer is a daily run's first: `fetches` articles the db holds, fetched
again with new bodies (new digests and signatures: each claims its new
payload and content and releases its old ones), whose out records link
`new_urls` articles of their own sites that the db has never seen.

With scores on (a third row), the same update also merges the layer's link
updates into the link partitions, and the run's PageRank iterations
(pagerank_iterations of them, each two jobs) run over the db, as the plan
makes them (plan.scoring_steps) and the driver's launcher runs them
(bench/step.py).
"""
from __future__ import annotations

import hashlib
import os
import shutil
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import chain
from multiprocessing import Pool
from pathlib import Path

from mrcrawl.bench.scenarios import CORES, Measured, Sizes, bench_config, fetched_doc, row, run_measured
from mrcrawl.bench.step import SCORE
from mrcrawl.config import RevisitConfig, load_config
from mrcrawl.crawl_dir import crawl_db as open_crawl_db
from mrcrawl.crawl_dir import open_crawl
from mrcrawl.frontier.crawldb import (
    CrawlDb,
    create_db,
    digest_partition_of,
    key_bytes,
    partition_of,
    partition_path,
    signature_key,
)
from mrcrawl.frontier.db_update import (
    RevisitPolicy,
    apply_update,
    fetch_part,
    fold,
    parse_time,
    updates_from_doc,
    updates_from_entry,
    updates_from_out,
)
from mrcrawl.frontier.links import fold_links
from mrcrawl.mr.launcher import local_task_args
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.protocols import Utf8JsonProtocol
from mrcrawl.store.records import LINKS_FROM_PAGE, iso_utc, new_frontier_entry, new_out, utc_now_iso

LAYER = 0  # the run's first layer: the pages that were due
ARTICLE_HOPS = 2  # seed (home page) -> section page -> article
DAYS_SINCE_LAST_FETCH = 7
STORED_BODY_BYTES = 100  # only the digest of the earlier fetch's body is kept in the db
ARTICLE_LINKS = 10  # other articles of its site that a stored article links
LAYER_BODY_BYTES = 20_000  # as the fetch scenarios' pages: DbBatch reads whole doc records, bodies included
SECTIONS = ("world", "politics", "business", "technology", "science", "sport", "culture", "opinion")
SLUG_WORDS = ("council", "budget", "vote", "river", "festival", "minister", "league", "storm", "market",
              "school", "energy", "court", "museum", "election", "harbour", "hospital", "transit", "summit")
FILLER = b" ".join(word.encode("ascii") for word in SLUG_WORDS * 200)
_records = Utf8JsonProtocol()


@dataclass(frozen=True)
class NewsDb:
    """A synthetic db of `urls` articles and the layer that updates it."""

    urls: int
    urls_per_host: int
    fetches: int
    new_urls: int
    partitions: int

    def __post_init__(self):
        if self.new_urls and self.fetches < self.hosts:
            raise ValueError(f"{self.fetches} fetches for {self.hosts} hosts: every host needs a fetched page "
                             "to link its new articles")

    @property
    def hosts(self) -> int:
        return max(1, self.urls // self.urls_per_host)

    def stored_articles(self, host: int) -> int:
        """Articles 0 .. n-1 of a host are in the db."""
        return _share(self.urls, self.hosts, host)

    def fetched_articles(self, host: int) -> list[int]:
        """The host's articles fetched again by the layer, spread over its site."""
        count, stored = _share(self.fetches, self.hosts, host), self.stored_articles(host)
        return [index * stored // count for index in range(count)]

    def new_articles(self, host: int) -> range:
        """The host's articles the layer links and the db does not hold: numbered after the stored ones."""
        first = self.stored_articles(host)
        return range(first, first + _share(self.new_urls, self.hosts, host))


def _share(total: int, parts: int, index: int) -> int:
    """Part `index` of `total` split as evenly as whole numbers allow."""
    return total // parts + (index < total % parts)


def site_url(host: int) -> str:
    # A fixed width, so that no site's URLs sort between another's: a
    # partition file is its sites' sorted URLs, site after site.
    return f"https://www.news{host:05d}.example/"


def article_url(host: int, article: int) -> str:
    day = date(2020, 1, 1) + timedelta(days=article // 5)  # five articles a day
    slug = "-".join(SLUG_WORDS[(article * 7 + step * step) % len(SLUG_WORDS)] for step in range(5))
    return f"{site_url(host)}{SECTIONS[article % len(SECTIONS)]}/{day:%Y/%m/%d}/{slug}-{article}.html"


def article_body(url: str, version: int, size: int) -> bytes:
    head = f"<html><body><h1>{url}</h1><p>Edition {version}.</p><p>".encode("ascii")
    return head + FILLER[:max(0, size - len(head))]


def fetched_article(url: str, version: int, body_bytes: int, links: list[str]) -> tuple[dict, dict]:
    """The doc record the Crawler and the out record the Parser write for one fetch of an article."""
    # Shaped as page/change.py's signature (blake2b-128 hex of the text); each version's text differs.
    signature = hashlib.blake2b(f"{url} {version}".encode("ascii"), digest_size=16).hexdigest()
    doc = fetched_doc(url, article_body(url, version, body_bytes))
    doc.update(layer=LAYER, hops=ARTICLE_HOPS)
    doc["headers"].append(["ETag", f'"{signature[:16]}"'])  # kept by the db for a conditional request
    out = new_out(links, LINKS_FROM_PAGE, LAYER, doc["fetched_at"], hops=ARTICLE_HOPS, signature=signature,
                  hub=False)
    return doc, out


def linked_articles(article: int, stored: int) -> list[int]:
    """The articles of its site a stored article links: ARTICLE_LINKS spread over the site, never itself."""
    targets = ((article + 1 + step * 37 + (article * 7) % 11) % stored for step in range(ARTICLE_LINKS))
    return list(dict.fromkeys(target for target in targets if target != article))


def stored_record(url: str, links: list[str], run: str, policy: RevisitPolicy) -> dict:
    """The db record of an article fetched on the run `run` and not since."""
    doc, out = fetched_article(url, 0, STORED_BODY_BYTES, links)
    doc["fetched_at"] = run
    entry = new_frontier_entry(1, False, ARTICLE_HOPS, None)  # of the entry, the db keeps the hops
    updates = chain(updates_from_entry(url, entry, LAYER), updates_from_doc(doc, fetch_part(doc)), updates_from_out(out, url))
    return apply_update(None, url, fold(update for _, update in updates), run, LAYER, policy)


def write_db(directory: Path, news: NewsDb, run: str) -> None:
    """The db as the crawler keeps it: partition files of sorted records, and
    the digest index of their payloads and contents."""
    create_db(directory, news.partitions)
    hosts_by_partition: list[list[int]] = [[] for _ in range(news.partitions)]
    for host in range(news.hosts):
        hosts_by_partition[partition_of(site_url(host), news.partitions)].append(host)
    unsorted = directory / "digests-unsorted"
    unsorted.mkdir()
    link_files = CrawlDb(CrawlStore(directory)).link_files()
    work = [(partition_path(directory, partition), Path(link_files[partition]), unsorted / str(partition), news,
             hosts, run) for partition, hosts in enumerate(hosts_by_partition)]
    # A record takes about 25 µs to make (the update's own functions make
    # it): four minutes for 10M on one core, so every core writes partitions.
    with Pool(CORES) as pool:
        for _ in pool.imap_unordered(_write_partition, work):
            pass
        # Each URL partition's digests went to one file per digest partition; each is sorted now.
        digest_files = CrawlDb(CrawlStore(directory)).digest_files()
        work = [(Path(path), sorted(unsorted.glob(f"*/{number}"))) for number, path in enumerate(digest_files)]
        for _ in pool.imap_unordered(_write_digest_partition, work):
            pass
    shutil.rmtree(unsorted)


def _write_partition(work: tuple[Path, Path, Path, NewsDb, list[int], str]) -> None:
    path, link_path, digests_dir, news, hosts, run = work
    policy = RevisitPolicy.from_config(RevisitConfig())  # the bench's config sets no revisit keys
    digests_dir.mkdir()
    digest_files = [open(digests_dir / str(number), "wb") for number in range(news.partitions)]
    try:
        with open(path, "wb") as part, open(link_path, "wb") as link_part:
            # One site's URLs in memory at a time (see site_url).
            for host in sorted(hosts, key=lambda host: key_bytes(site_url(host))):
                stored = news.stored_articles(host)
                urls = {article: article_url(host, article) for article in range(stored)}
                inlinks: dict[str, list[dict]] = {}
                for article in sorted(urls, key=lambda article: key_bytes(urls[article])):
                    url = urls[article]
                    links = [urls[target] for target in linked_articles(article, stored)]
                    record = stored_record(url, links, run, policy)
                    part.write(_records.write(url, record) + b"\n")
                    for target in links:
                        inlinks.setdefault(target, []).append({"inlinks": [[url, "", run]]})
                    original = {"url": url, "fetched_at": record["fetched_at"]}
                    for key in (record["digest"], signature_key(record["signature"])):
                        digest_files[digest_partition_of(key, news.partitions)].write(
                            _records.write(key, original) + b"\n")
                for target in sorted(inlinks, key=key_bytes):
                    link_part.write(_records.write(target, fold_links(inlinks[target])) + b"\n")
    finally:
        for digest_file in digest_files:
            digest_file.close()


def _write_digest_partition(work: tuple[Path, list[Path]]) -> None:
    path, pieces = work
    lines = [line for piece in pieces for line in piece.read_bytes().splitlines()]
    lines.sort(key=lambda line: line.split(b"\t", 1)[0])
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def write_config(crawl_dir: Path) -> Path:
    """The crawl's config as the driver hands it to every job (`--crawl-config`)."""
    store = CrawlStore(crawl_dir)
    store.make_root()
    config = load_config(bench_config(crawl_dir, threads=1, delay=0.0))
    store.write_text(store.config_path, config.to_json() + "\n")
    return Path(store.config_path)


def write_layer(crawl_dir: Path, news: NewsDb) -> list[Path]:
    """The layer's doc and out stores, as the Crawler and the Parser write them: their part files."""
    store = CrawlStore(crawl_dir)
    docs, outs = Path(store.docs(LAYER)), Path(store.outlinks(LAYER))
    for directory in (docs, outs):
        directory.mkdir(parents=True, exist_ok=True)
    doc_part, out_part = Path(store.part_file(docs)), Path(store.part_file(outs))
    with open(doc_part, "wb") as doc_lines, open(out_part, "wb") as out_lines:
        for host in range(news.hosts):
            fetched, new = news.fetched_articles(host), news.new_articles(host)
            for index, article in enumerate(fetched):
                url = article_url(host, article)
                links = [article_url(host, linked) for linked in new[index::len(fetched)]]
                doc, out = fetched_article(url, 1, LAYER_BODY_BYTES, links)
                # As the frontier entry gave it: the digest and signature of the db's earlier fetch.
                earlier, earlier_out = fetched_article(url, 0, STORED_BODY_BYTES, [])
                doc["known"] = {"digest": fetch_part(earlier)["digest"], "signature": earlier_out["signature"]}
                doc_lines.write(_records.write(url, doc) + b"\n")
                out_lines.write(_records.write(url, out) + b"\n")
    return [doc_part, out_part]


def records_digest(part_files: list[Path]) -> tuple[int, str]:
    """How many records the files hold, and a digest of them that ignores
    their order (the sum of the lines' hashes): the db in partition order
    and the re-sort's output in URL order compare equal when they hold the
    same records, written as the same bytes."""
    count = total = 0
    for path in part_files:
        with open(path, "rb") as lines:
            for line in lines:
                count += 1
                total += int.from_bytes(hashlib.blake2b(line.rstrip(b"\n"), digest_size=8).digest(), "big")
    return count, f"{total % 2**64:016x}"


def run_job(job: str, output: Path, news: NewsDb, config: Path | None, inputs: list[Path], *options: str) -> Measured:
    """One db job, `-r local` with the task options the driver gives it
    (`config`: None for a job that takes no crawl config)."""
    crawl_args = ["--crawl-config", str(config), "--layer", str(LAYER)] if config else []
    # Each job starts with nothing written before it (the db, the layer, the
    # previous job's output: gigabytes) still waiting for the disk; that
    # writeback would be timed as the job's, the first job's most.
    os.sync()
    return run_measured(["-m", f"jobs.{job}", "-r", "local", *local_task_args(), "--output-dir", str(output),
                         "--db-partitions", str(news.partitions), *crawl_args, *options, *map(str, inputs)])


def parts(directory: Path) -> list[Path]:
    return sorted(directory.glob("part-*"))


def measure_size(news: NewsDb, directory: Path, say) -> list[dict]:
    """The partitioned update's row and the re-sort's, for one db size."""
    crawl_dir = directory / "crawl"
    config = write_config(crawl_dir)
    run = utc_now_iso()
    db = directory / "db"
    say(f"db-update: writing a db of {news.urls:,} URLs on {news.hosts:,} hosts, {news.partitions} partitions")
    write_db(db, news, iso_utc(parse_time(run) - timedelta(days=DAYS_SINCE_LAST_FETCH)))
    layer = write_layer(crawl_dir, news)
    crawl_db = CrawlDb(CrawlStore(db))
    # The URL and digest partitions: the re-sort's way has no link store, so neither has the update it is
    # compared with; the scoring row adds the link partitions' update.
    digest_parts = [Path(part) for part in crawl_db.digest_files()]
    db_parts = [Path(part) for part in crawl_db.partition_files()] + digest_parts

    say(f"db-update: {news.fetches:,} fetched and {news.new_urls:,} new URLs into {news.urls:,}: "
        "DbBatch + Dedup + DbUpdate")
    batch = run_job("db_batch", directory / "batch", news, config, layer)
    batch_parts = [arg for part in parts(directory / "batch") for arg in ("--batch-part", str(part))]
    batch_parts.append("--batch-sorted")  # as the driver passes it on every runner but Spark
    dedup = run_job("dedup", directory / "dup", news, None, digest_parts, "--run", run, *batch_parts)
    dup_parts = [arg for part in parts(directory / "dup") for arg in ("--duplicates-part", str(part))]
    merge = run_job("db_update", directory / "merged", news, config, db_parts, "--run", run, *batch_parts, *dup_parts)
    # The URL and digest files: the re-sort, as Nutch's updatedb, keeps no link store.
    merged = records_digest(parts(directory / "merged")[:2 * news.partitions])
    shutil.rmtree(directory / "merged")  # the re-sort needs disk for several copies of the db

    say(f"db-update: the same update as a full re-sort of {news.urls:,} URLs and their digests")
    resort = run_job("db_resort", directory / "resorted", news, config, db_parts + layer, "--run", run)
    resorted = records_digest(parts(directory / "resorted"))
    shutil.rmtree(directory / "resorted")

    link_parts = [Path(part) for part in crawl_db.link_files()]
    say("db-update: with scores, the layer's links into the link store, then the run's PageRank iterations")
    links = run_job("db_update", directory / "links-merged", news, config, link_parts, "--run", run,
                    *batch_parts, *dup_parts)
    shutil.rmtree(directory / "links-merged")
    scores, iterations = run_scoring(directory, db)

    common = {"urls": news.urls, "fetches": news.fetches, "new_urls": news.new_urls, "partitions": news.partitions,
              "same_records": merged == resorted}
    ours = (batch, dedup, merge)
    scored = (*ours, links, scores)
    return [row("db-update", "local", wall_s=sum(job.wall_s for job in ours), cpu_s=sum(job.cpu_s for job in ours),
                peak_rss_mb=max(job.peak_rss_mb for job in ours), batch_s=batch.wall_s, dedup_s=dedup.wall_s,
                merge_s=merge.wall_s, records=merged[0], **common),
            row("db-update re-sort", "local", wall_s=resort.wall_s, cpu_s=resort.cpu_s,
                peak_rss_mb=resort.peak_rss_mb, records=resorted[0], **common),
            row("db-update scoring", "local", wall_s=sum(job.wall_s for job in scored),
                cpu_s=sum(job.cpu_s for job in scored), peak_rss_mb=max(job.peak_rss_mb for job in scored),
                update_s=sum(job.wall_s for job in ours), links_s=links.wall_s, scores_s=scores.wall_s,
                iterations=iterations, **common)]


def run_scoring(directory: Path, db: Path) -> tuple[Measured, int]:
    """The run's PageRank iterations over the db, as the driver runs them
    (bench/step.py), `-r local`, in a process of their own; and how many."""
    crawl_dir = directory / "scoring"
    store = CrawlStore(crawl_dir)
    config = load_config(bench_config(directory, threads=1, delay=0.0))
    seeds = [site_url(0)]
    seed_file = directory / "seeds.txt"
    seed_file.write_text(seeds[0] + "\n", encoding="utf-8")
    open_crawl(store, config, str(directory / "bench.yaml"), str(seed_file), str(seed_file), seeds, open_crawl_db(db),
               now=None, resume=False)
    os.sync()
    measured = run_measured(["-m", "mrcrawl.bench.step", str(crawl_dir), SCORE, "--runner", "local"])
    return measured, config.pagerank_iterations


def db_update(sizes: Sizes, work: Path, say) -> list[dict]:
    rows = []
    for urls in sizes.db_update_sizes:
        news = NewsDb(urls, sizes.db_update_urls_per_host, sizes.db_update_fetches, sizes.db_update_new_urls,
                      sizes.db_update_partitions)
        directory = work / f"db-update-{urls}"
        try:
            rows += measure_size(news, directory, say)
        finally:
            shutil.rmtree(directory, ignore_errors=True)  # gigabytes at the full sizes
    resorts = {r["urls"]: r for r in rows if r["name"] == "db-update re-sort"}
    for name in ("db-update", "db-update scoring"):
        ways = {r["urls"]: r for r in rows if r["name"] == name}
        smallest, largest = ways[min(ways)], ways[max(ways)]
        for size, ours in ways.items():
            # Ratios within this run, as the other scenarios take theirs.
            ours.update(ratio_to_resort=ours["wall_s"] / resorts[size]["wall_s"],
                        urls_growth=largest["urls"] / smallest["urls"],
                        time_growth=largest["wall_s"] / smallest["wall_s"],
                        rss_growth=largest["peak_rss_mb"] / smallest["peak_rss_mb"])
    return rows
