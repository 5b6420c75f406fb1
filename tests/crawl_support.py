"""Running real crawls of the generated test web, and reading their stores."""
from __future__ import annotations

import http.server
import json
import subprocess
import sys
import time
import tracemalloc
from collections import defaultdict
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace

import yaml
from lxml import etree

from mrcrawl import driver
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.store.records import DOC_FIELDS


class PageHandler(http.server.BaseHTTPRequestHandler):
    """A small test server's handler: answers with send_html, and logs nothing."""

    def send_html(self, body: bytes) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def write_inputs(server, directory: Path, **overrides) -> tuple[Path, Path, dict]:
    """A seed file and a YAML config for crawling `server`'s web."""
    config = server.web.crawl_config(**overrides)
    conf = directory / "testweb.yaml"
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    seeds = directory / "seeds.txt"
    seeds.write_text("# the test web's home pages\n" + "\n".join(server.seeds) + "\n", encoding="utf-8")
    return seeds, conf, config


def crawl(seeds: Path, conf: Path, output: Path, depth: int, runner: str = "inline", *extra: str) -> int:
    return driver.main([str(seeds), "--depth", str(depth), "--conf", str(conf), "--output", str(output), "--runner", runner, *extra])


def driver_command(seeds: Path, conf: Path, output: Path, depth: int, *extra: str) -> list[str]:
    return [sys.executable, "-m", "mrcrawl.driver", str(seeds), "--depth", str(depth), "--conf", str(conf), "--output", str(output), *extra]


def read_records(directory: Path) -> list[tuple]:
    """(key, value) of every line of a store's part files."""
    records = []
    for part in sorted(directory.glob("part-*")):
        # Lines end at "\n" only, as every runner reads them: a page's text
        # in an out record may hold U+0085 or U+2028, which JSON leaves raw
        # and str.splitlines() would break on.
        for line in part.read_text(encoding="utf-8").split("\n")[:-1]:
            key, value = line.split("\t", 1)
            records.append((json.loads(key), json.loads(value)))
    return records


def outs_by_fetch(output: Path, depth: int) -> dict[tuple[str, str], dict]:
    """Every out record of the crawl's layers, by (URL, its fetch time): what ties it to its doc record."""
    return {(url, out["timestamp"]): out for layer in range(depth) for url, out in read_records(output / "out" / str(layer))}


def crawled_test_web(server, directory: Path, depth: int) -> tuple[Path, Path, dict, Path]:
    """The served test web crawled `depth` layers deep into DIRECTORY/crawl: (seeds, conf, config, output)."""
    seeds, conf, config = write_inputs(server, directory)
    output = directory / "crawl"
    assert crawl(seeds, conf, output, depth) == 0
    return seeds, conf, config, output


def layer_docs(output: Path, layer: int) -> list[dict]:
    return [doc for _, doc in read_records(output / "doc" / str(layer))]


def layer_triples(output: Path, layer: int) -> set[tuple[str, str, str]]:
    return {(doc["requested_url"], doc["outcome"], doc["url"]) for doc in layer_docs(output, layer)}


def frontier(output: Path, layer: int) -> list[str]:
    """The URLs of layer L's frontier entries, as stored."""
    return [url for url, _ in read_records(output / "in" / str(layer))]


def seed_store(output: Path) -> list[str]:
    """The run's canonical seeds, in the order of the seed file."""
    lines = []
    for part in sorted((output / "seeds").glob("part-*")):
        lines += [line for line in part.read_text(encoding="utf-8").splitlines() if line]
    return lines


def politeness_violations(log, web, config: dict) -> list[str]:
    """Every pair of consecutive requests to one host that overlap, or start
    closer together than max(delay, the host's capped Crawl-delay)."""
    by_host = defaultdict(list)
    for entry in log:
        by_host[entry.address].append(entry)
    problems = []
    for address, entries in by_host.items():
        host = web.host(f"http://{address}:{web.port}/")
        crawl_delay = host.robots.crawl_delay(web_agent_token()) if host else None
        delay = max(config["delay"], min(crawl_delay or 0.0, config["max_crawl_delay"]))
        entries.sort(key=lambda entry: entry.start)
        for before, after in zip(entries, entries[1:]):
            if after.start < before.end:
                problems.append(f"{address}: {after.path} started before {before.path} ended")
            gap = after.start - before.start
            if gap < delay:
                problems.append(f"{address}: {before.path} -> {after.path} only {gap:.4f}s apart (delay {delay})")
    return problems


def web_agent_token() -> str:
    from mrcrawl.testweb import AGENT_TOKEN

    return AGENT_TOKEN


def assert_doc_schema(doc: dict) -> None:
    assert set(DOC_FIELDS) <= set(doc), f"missing fields: {set(DOC_FIELDS) - set(doc)}"


class LoopbackProxy:
    """A minimal forward HTTP proxy on 127.0.0.1 that relays GETs to loopback hosts only.

    With `credentials` ("user:password", which may be changed while it
    runs) it asks for them, as a proxy that needs a login does: a request
    without them, or with others, is answered 407, and a CONNECT that has
    them 502 (it tunnels nowhere).  It keeps every Proxy-Authorization it
    was sent, and relays none."""

    def __init__(self, credentials: str | None = None):
        import base64
        import http.client
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
        from urllib.parse import urlsplit

        proxy = self
        self.seen: list[str] = []
        self.authorizations: list[str | None] = []  # each request's Proxy-Authorization, None if it had none
        self.credentials = credentials

        class Relay(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def handle(self):
                try:
                    super().handle()
                # The crawler hung up on a slow page, or the page's server
                # cut its answer short (the test web's truncated pages): the
                # relay hangs up without an answer, as a proxy does.
                except (OSError, http.client.HTTPException):
                    pass

            def authorized(self) -> bool:
                given = self.headers.get("Proxy-Authorization")
                proxy.authorizations.append(given)
                if proxy.credentials is None or given == "Basic " + base64.b64encode(proxy.credentials.encode()).decode():
                    return True
                self.send_response(407, "Proxy Authentication Required")
                self.send_header("Proxy-Authenticate", 'Basic realm="loopback"')
                self.send_header("Content-Length", "0")
                self.end_headers()
                return False

            def do_CONNECT(self):
                if self.authorized():
                    self.send_error(502, "no tunnels")

            def do_GET(self):
                if not self.authorized():
                    return
                target = urlsplit(self.path)
                if not (target.hostname or "").startswith("127."):
                    self.send_error(403, "loopback targets only")
                    return
                proxy.seen.append(self.path)
                self.relay(target)

            def relay(self, target):
                upstream = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("proxy-connection", "connection", "proxy-authorization")}
                upstream.request("GET", target.path + (f"?{target.query}" if target.query else ""), headers=headers)
                response = upstream.getresponse()
                body = response.read()
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                upstream.close()

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Relay)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._server.shutdown()
        self._server.server_close()


def write_daily_inputs(server, directory: Path, revisit: dict | None = None, order: str | None = None,
                       **overrides) -> tuple[Path, Path, dict]:
    """write_inputs() for a daily web's server, with a `revisit:` mapping
    and an `order` in the config.  `order: bfs` with no caps computes no
    scores: a week whose test reads none runs no scoring step."""
    seeds, conf, config = write_inputs(server, directory, **overrides)
    extra = {key: value for key, value in (("revisit", revisit), ("order", order)) if value is not None}
    if extra:
        config = {**config, **extra}
        conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    return seeds, conf, config


def crawl_docs(output: Path) -> list[dict]:
    """Every doc record of every layer of a crawl directory (not the merged store)."""
    layers = sorted((int(path.name) for path in (output / "doc").iterdir() if path.name.isdigit()), key=int)
    return [doc for layer in layers for doc in layer_docs(output, layer)]


def db_records(db: Path) -> list[tuple[str, dict]]:
    """Every (URL, record) of a crawl db, partition by partition."""
    from mrcrawl.frontier.crawldb import read_db

    return list(read_db(db))


def xml_urls(output: Path) -> list[str]:
    """The URLs of the pages in a crawl's xml/<start>/ store (one run: one start)."""
    urls = []
    for directory in (output / "xml").iterdir():
        for part in sorted(directory.glob("part-*")):
            urls += [line.split("\t", 1)[0] for line in part.read_text(encoding="utf-8").splitlines() if line]
    return urls


def xml_pages(output: Path) -> dict[str, etree._Element]:
    """The pages of a crawl's xml/<start>/ store (one run: one start), each
    line parsed by lxml's strict parser, by URL."""
    pages = {}
    for directory in (output / "xml").iterdir():
        for part in sorted(directory.glob("part-*")):
            for line in part.read_text(encoding="utf-8").splitlines():
                url, xml = line.split("\t", 1)
                pages[url] = etree.fromstring(xml.encode("utf-8"))
    return pages


# One layer's fetch on its own, as a test wants it: one thread, no
# robots.txt, no retries, loopback allowed; any CrawlConfig key overrides.
FETCH_DEFAULTS = dict(language="en", user_agent="mrcrawl-test/1.0", threads=1, delay=0.0, retries=0,
                      obey_robots=False, allow_private_networks=True)


def fetch_urls(urls: list[str], **options) -> tuple[list[dict], float]:
    """Fetch `urls` in one Fetcher (one task of a layer): its doc records,
    and the seconds the whole fetch took."""
    fetcher = Fetcher(CrawlConfig(**{**FETCH_DEFAULTS, **options}), layer=0)
    started = time.monotonic()
    for url in urls:
        fetcher.add(url)
    docs = list(fetcher.finish())
    return docs, time.monotonic() - started


def fetch_urls_measured(urls: list[str], **options) -> tuple[list[dict], float, int]:
    """fetch_urls, and the peak of the memory Python allocated meanwhile
    (a server's allocations too: a test builds a large answer first)."""
    tracemalloc.start()
    try:
        docs, seconds = fetch_urls(urls, **options)
        return docs, seconds, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


# ---- a whole crawl of fault servers beside the test web ---------------------

_MEASURED_CRAWL = """
import resource, sys
from mrcrawl import driver
status = driver.main(sys.argv[1:])
print("peak-rss-kib", resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
sys.exit(status)
"""

# An ordinary host's share of a layer may take this much longer beside
# the faults: scheduling noise, not a fault holding a thread.
PACE_FACTOR, PACE_SLACK = 1.5, 1.5


class CrawlBeside(SimpleNamespace):
    def __repr__(self) -> str:  # pytest prints the fixture with a failure: not its megabytes
        return f"<the crawl beside the test web in {self.output}>"


def measured_crawl(seeds: Path, conf: Path, output: Path, depth: int) -> tuple[int, float]:
    """Crawl (inline runner, WARC export) in a process of its own: its peak
    RSS in bytes, and the seconds it took."""
    command = driver_command(seeds, conf, output, depth, "--runner", "inline", "--export", "warc")
    started = time.monotonic()
    finished = subprocess.run([sys.executable, "-c", _MEASURED_CRAWL, *command[3:]], capture_output=True,
                              text=True, timeout=600)
    seconds = time.monotonic() - started
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    line = [line for line in finished.stdout.splitlines() if line.startswith("peak-rss-kib")][-1]
    return int(line.split()[1]) * 1024, seconds


def write_config(directory: Path, config: dict, seeds: list[str]) -> tuple[Path, Path]:
    directory.mkdir()
    conf = directory / "crawl.yaml"
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    seed_file = directory / "seeds.txt"
    seed_file.write_text("\n".join(seeds) + "\n", encoding="utf-8")
    return seed_file, conf


def crawl_alone_then_beside(directory: Path, web_server, config: dict, seeds_beside: list[str], depth: int,
                            servers_beside) -> CrawlBeside:
    """The test web crawled alone, then with `servers_beside` (whose URLs
    `seeds_beside` are) next to it, by the real driver in a process of its
    own each time; what both crawls recorded, and what the servers saw."""
    from test_export import read_warc_files

    seeds, conf = write_config(directory / "alone", config, web_server.seeds)
    baseline_rss, baseline_seconds = measured_crawl(seeds, conf, directory / "alone" / "crawl", depth)
    web_server.wait_idle()
    baseline_log = web_server.log
    web_server.clear_log()
    web_server.reset_flaky()
    seeds, conf = write_config(directory / "beside", config, [*web_server.seeds, *seeds_beside])
    output = directory / "beside" / "crawl"
    rss, seconds = measured_crawl(seeds, conf, output, depth)
    web_server.wait_idle()
    for server in servers_beside:
        server.wait_idle()
    return CrawlBeside(
        web=web_server.web, web_seeds=web_server.seeds, config=config, depth=depth, output=output,
        docs=crawl_docs(output), baseline=directory / "alone" / "crawl", baseline_log=baseline_log,
        log=web_server.log, baseline_rss=baseline_rss, rss=rss, baseline_seconds=baseline_seconds,
        seconds=seconds, xml=xml_documents(output), warc=read_warc_files(output / "warc"),
    )


def xml_documents(output: Path) -> dict[str, str]:
    """The XML line of each page of a crawl's xml/<start>/ store, by URL, as stored."""
    documents = {}
    for directory in (output / "xml").iterdir():
        for part in sorted(directory.glob("part-*")):
            for line in part.read_text(encoding="utf-8").splitlines():
                url, document = line.split("\t", 1)
                assert url not in documents
                documents[url] = document
    return documents


def warc_records_for(warc: dict[str, list], url: str) -> dict[str, list]:
    """The WARC records whose target is `url`, by record type."""
    by_type = defaultdict(list)
    for records in warc.values():
        for record in records:
            if record.headers.get_header("WARC-Target-URI") == url:
                by_type[record.type].append(record)
    return by_type


def assert_crawled_as_alone(crawled: CrawlBeside, origins_beside: tuple[str, ...]) -> None:
    """The test web's pages, beside the other servers, are those it has alone,
    fetched politely and at the pace they were fetched alone."""
    from mrcrawl.testweb import expected_layers_for_config

    web, config = crawled.web, crawled.config
    expected = expected_layers_for_config(web, config, crawled.web_seeds, depth=crawled.depth)
    for layer, oracle in enumerate(expected):
        ordinary = {triple for triple in layer_triples(crawled.output, layer)
                    if not triple[0].startswith(origins_beside)}
        assert ordinary == oracle, f"layer {layer}"
    assert politeness_violations(crawled.log, web, config) == []
    # Pace: each host's requests of each layer took about as long as they did
    # when the test web was crawled alone.
    alone = host_layer_spans(crawled.baseline_log, crawl_docs(crawled.baseline))
    beside = host_layer_spans(crawled.log, crawled.docs)
    assert set(beside) == set(alone)
    for key, (count, span) in beside.items():
        alone_count, alone_span = alone[key]
        assert count == alone_count, key
        assert span <= PACE_FACTOR * alone_span + PACE_SLACK, (key, span, alone_span)


def host_layer_spans(log, docs) -> dict[tuple[str, int], tuple[int, float]]:
    """(address, layer) -> (requests, seconds from the first's start to the
    last's end).  A request belongs to the layer of the record fetched
    nearest in time: layers are seconds apart, their requests are not."""
    moments = sorted((datetime.fromisoformat(doc["fetched_at"].replace("Z", "+00:00")).timestamp(), doc["layer"])
                     for doc in docs)
    by_key = defaultdict(list)
    for entry in log:
        layer = min(moments, key=lambda moment: abs(moment[0] - entry.start_wall))[1]
        by_key[entry.address, layer].append(entry)
    return {key: (len(entries), max(e.end for e in entries) - min(e.start for e in entries))
            for key, entries in by_key.items()}
