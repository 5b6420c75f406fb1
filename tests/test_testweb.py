"""Tests of the test web itself: the model, the server, and the oracle.

The end-to-end crawl tests trust these three parts, so they are checked here
against a real server on loopback with plain `requests`.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import string
import subprocess
import sys
import time
from pathlib import Path

import ada_url
import protego
import pytest
import requests

from crawl_support import layer_triples
from mrcrawl.testweb import AGENT_TOKEN, Host, Page, Robots, RobotsGroup, Web, generate_web, seeds
from mrcrawl.testweb.daily import DailySpec, DailyWeb
from mrcrawl.testweb.markup import query_escape
from mrcrawl.testweb.oracle import expected_layers, expected_layers_for_config, outcome_counts
from mrcrawl.testweb.server import LogEntry, TestWebServer, bind_same_port, start_test_web
from mrcrawl.testweb.sites import CHARSET_PAGES, MIN_HOSTS
from test_resume import wait_for_step

STALL = 3.0  # seconds the slow pages stall in these tests

# Python codecs that decode what browsers decode for these labels: supersets
# where the label's own codec is too strict for real pages.
SUPERSET_CODEC = {"gb2312": "gb18030", "gbk": "gb18030", "big5": "big5hkscs",
                  "shift_jis": "cp932", "euc-kr": "cp949"}


@pytest.fixture(scope="module")
def server():
    with start_test_web(seed=1, hosts=MIN_HOSTS + 1, stall_seconds=STALL) as running:
        yield running


@pytest.fixture(scope="module")
def web(server) -> Web:
    return server.web


def get(url: str, **kwargs) -> requests.Response:
    kwargs.setdefault("timeout", 5)
    return requests.get(url, allow_redirects=False, **kwargs)


def all_model_urls(web: Web) -> set[str]:
    urls = set(web.pages) | set(web.seed_urls)
    for page in web.pages.values():
        urls.update(page.links)
        if page.redirect_to:
            urls.add(page.redirect_to)
    return urls


# -- the model -----------------------------------------------------------------

def test_same_seed_gives_the_same_web_and_another_seed_another():
    first = generate_web(seed=7, hosts=9, port=41000)
    assert first == generate_web(seed=7, hosts=9, port=41000)
    other = generate_web(seed=8, hosts=9, port=41000)
    assert other != first
    assert set(other.pages) != set(first.pages)  # the article graph differs
    assert len(generate_web(seed=7, hosts=9, port=41001).pages) == len(first.pages)


def test_too_few_hosts_is_refused():
    with pytest.raises(ValueError, match="at least"):
        generate_web(seed=1, hosts=MIN_HOSTS - 1, port=41000)


def test_every_url_in_the_model_is_canonical():
    web = generate_web(seed=3, port=41000)
    for url in all_model_urls(web):
        # A WHATWG parser leaves a canonical URL alone...
        assert ada_url.URL(url).href == url, url
        assert "#" not in url
        # ...and percent-escapes are upper-case and never encode unreserved characters.
        for escape in url.split("%")[1:]:
            code = escape[:2]
            assert code == code.upper(), url
            assert chr(int(code, 16)) not in string.ascii_letters + string.digits + "-._~", url


def test_non_utf8_query_is_encoded_in_the_page_charset():
    assert query_escape("中文", "gbk") == "%D6%D0%CE%C4"
    assert query_escape("新闻", "gb2312") == "%D0%C2%CE%C5"
    # WHATWG leaves ASCII bytes inside a multi-byte character alone when they
    # are not in the query percent-encode set.
    assert query_escape("日本語", "shift_jis") == "%93%FA%96{%8C%EA"
    assert query_escape("夜市", "big5") == "%A9]%A5%AB"
    assert query_escape("книга", "windows-1251") == "%EA%ED%E8%E3%E0"


def test_robots_rules_mean_what_protego_says():
    web = generate_web(seed=1, port=41000)
    for host in web.hosts:
        if host.robots.status != 200:
            continue
        parser = protego.Protego.parse(host.robots.body.decode())
        urls = [u for u in all_model_urls(web) if u.startswith(host.origin + "/")]
        for url in urls:
            path = url[len(host.origin):]
            assert host.robots.allows(path, AGENT_TOKEN) == parser.can_fetch(url, AGENT_TOKEN), url
        assert host.robots.crawl_delay(AGENT_TOKEN) == parser.crawl_delay(AGENT_TOKEN)
    hub = web.role("hub")
    assert not hub.robots.allows("/private/secret.html", AGENT_TOKEN)
    assert hub.robots.allows("/private/open.html", AGENT_TOKEN)
    assert hub.robots.allows("/search?q=crawler", AGENT_TOKEN)  # only * is kept out
    assert not hub.robots.allows("/search?q=crawler", "someotherbot")
    assert web.role("robots-500").robots.allows("/", AGENT_TOKEN) is False
    assert web.role("charsets-cjk").robots.allows("/", AGENT_TOKEN) is True


def test_the_web_holds_every_case_the_contract_names():
    web = generate_web(seed=1, port=41000)
    kinds = {}
    for page in web.pages.values():
        kinds[page.kind] = kinds.get(page.kind, 0) + 1
    assert kinds["charset"] == len(CHARSET_PAGES) * 3 + 2  # + UTF-8 with BOM, header beats meta
    for kind in ("article", "redirect", "meta", "base", "links", "frames", "binary", "xhtml",
                 "oversized", "gzip", "slow", "flaky", "client_error", "server_error"):
        assert kinds.get(kind), kind
    statuses = {page.status for page in web.pages.values()}
    assert {200, 301, 302, 303, 307, 308, 403, 404, 410, 500} <= statuses
    assert {host.robots.status for host in web.hosts} == {200, 404, 500}
    assert any(host.robots.crawl_delay(AGENT_TOKEN) for host in web.hosts)
    oversized = web.pages_of_kind("oversized")[0]
    assert len(oversized.body) > 2 * web.crawl_config()["max_page_bytes"]


def test_charset_pages_record_text_that_their_bytes_decode_to():
    web = generate_web(seed=1, port=41000)
    for page in web.pages_of_kind("charset"):
        body = page.body.removeprefix(b"\xef\xbb\xbf")
        assert body.decode(SUPERSET_CODEC.get(page.charset, page.charset)) == page.text, page.url
        assert len("".join(page.paragraphs)) >= 230, page.url  # enough for detection
        assert page.title in page.text and all(p in page.text for p in page.paragraphs)
        in_header = "charset=" in page.content_type
        assert in_header == (page.declared in ("header", "header-over-meta")), page.url
        assert (b"charset=" in body[:1024]) == (page.declared in ("meta", "header-over-meta")), page.url
        if page.charset != "utf-8":
            with pytest.raises(UnicodeDecodeError):
                body.decode("utf-8")


# -- the server ------------------------------------------------------------------

def test_every_host_answers_on_its_own_address_and_one_port(server, web):
    assert len(web.hosts) == MIN_HOSTS + 1
    for host in web.hosts:
        response = get(host.url("/robots.txt"))
        assert response.status_code == host.robots.status
        assert response.content == host.robots.body
    assert get(web.role("charsets-cjk").url("/robots.txt")).status_code == 404
    assert get(web.role("robots-500").url("/robots.txt")).status_code == 500
    assert get(web.hosts[0].url("/no/such/page.html")).status_code == 404


def test_pages_answer_as_the_model_says(server, web):
    with requests.Session() as session:
        for page in web.pages.values():
            if page.stall or page.flaky:
                continue  # tested on their own below
            response = session.get(page.url, allow_redirects=False, timeout=5)
            assert response.status_code == page.status, page.url
            assert response.content == page.body, page.url
            assert response.headers.get("Content-Type") == page.content_type, page.url
            for name, value in page.headers:
                assert response.headers[name] == value, page.url
            if page.is_redirect:
                # The Location as sent resolves to the recorded canonical target.
                location = ada_url.join_url(page.url, response.headers["Location"])
                assert ada_url.URL(location).href.split("#")[0] == page.redirect_to


def test_charset_bytes_on_the_wire_decode_to_the_recorded_text(server, web):
    for page in web.pages_of_kind("charset"):
        raw = get(page.url).content.removeprefix(b"\xef\xbb\xbf")
        assert raw.decode(SUPERSET_CODEC.get(page.charset, page.charset)) == page.text


def test_query_in_the_page_charset_reaches_its_target(server, web):
    for label, text, _, role in CHARSET_PAGES:
        host = web.role(role)
        target = host.url(f"/text/{label}/search.html?q={query_escape(text.query, label)}")
        assert target in web.page(host.url(f"/text/{label}/none.html")).links
        assert get(target).status_code == 200, target


def test_gzip_only_when_the_client_accepts_it(server, web):
    page = web.pages_of_kind("gzip")[0]
    zipped = get(page.url, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip" and zipped.content == page.body
    plain = get(page.url, headers={"Accept-Encoding": "identity"})
    assert "Content-Encoding" not in plain.headers and plain.content == page.body


def test_flaky_page_fails_its_first_request_only(server, web):
    page = web.pages_of_kind("flaky")[0]
    server.reset_flaky()
    assert get(page.url).status_code == 503
    assert get(page.url).status_code == 200
    assert get(page.url).status_code == 200
    server.reset_flaky()
    assert get(page.url).status_code == 503


def log_entries_for(server, url: str) -> list[LogEntry]:
    address, path = url.split("//")[1].split(":")[0], "/" + url.split("/", 3)[3]
    return [e for e in server.log if e.address == address and e.path == path]


def test_slow_page_ends_when_the_client_gives_up(server, web):
    page = web.role("charsets-world").url("/slow.html")
    started = time.monotonic()
    with pytest.raises(requests.exceptions.ReadTimeout):
        requests.get(page, timeout=0.4)
    gave_up = time.monotonic()
    assert gave_up - started < 1.0
    assert server.wait_idle(timeout=STALL + 1)
    [entry] = log_entries_for(server, page)
    assert entry.status is None and not entry.completed
    assert abs(entry.end - gave_up) < 0.15  # not STALL seconds later
    assert abs((entry.end_wall - entry.start_wall) - (entry.end - entry.start)) < 0.05


def test_page_stalling_mid_body_times_out_too(server, web):
    page = web.role("plain").url("/slow-body.html")
    with pytest.raises(requests.exceptions.ConnectionError):  # a read timeout inside the body
        requests.get(page, timeout=0.4)
    gave_up = time.monotonic()
    assert server.wait_idle(timeout=STALL + 1)
    [entry] = log_entries_for(server, page)
    assert entry.status == 200 and not entry.completed
    assert abs(entry.end - gave_up) < 0.15


def test_log_has_start_end_path_and_connection_of_every_request(server, web):
    host = web.role("charsets-cjk")
    since = time.monotonic()
    target = "/text/gbk/search.html?q=%D6%D0%CE%C4"
    with requests.Session() as session:
        session.headers["User-Agent"] = "mrcrawl-test/1.0"
        for path in ("/", target, "/missing-page.html"):
            session.get(host.url(path), timeout=5)
        session.head(host.url("/"), timeout=5)
    with requests.Session() as other:
        other.get(host.url("/"), timeout=5)
    assert server.wait_idle()
    entries = [e for e in server.log if e.start >= since and e.address == host.address]
    assert [(e.method, e.path, e.status) for e in entries] == [
        ("GET", "/", 200), ("GET", target, 200), ("GET", "/missing-page.html", 404),
        ("HEAD", "/", 200), ("GET", "/", 200)]
    for entry in entries:
        assert entry.address == host.address and entry.port == server.port
        assert entry.start <= entry.end and entry.start_wall <= entry.end_wall and entry.completed
    # Keep-alive: one session, one connection; another session, another one.
    assert len({e.connection for e in entries[:4]}) == 1
    assert entries[4].connection != entries[0].connection
    assert entries[0].user_agent == "mrcrawl-test/1.0"


def test_concurrent_requests_are_all_logged(server, web):
    from concurrent.futures import ThreadPoolExecutor
    urls = [page.url for page in web.pages_of_kind("article")][:24]
    since = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        statuses = list(pool.map(lambda url: get(url).status_code, urls))
    assert statuses == [200] * len(urls)
    assert server.wait_idle()
    logged = {(e.address, e.path) for e in server.log if e.start >= since}
    assert {(url.split("/")[2].split(":")[0], "/" + url.split("/", 3)[3]) for url in urls} <= logged


def test_server_stops_and_frees_its_port():
    hand_made = tiny_web_factory()
    server = TestWebServer(hosts=2, web_factory=hand_made).start()
    url = server.web.seed_urls[0]
    with requests.Session() as session:  # leaves an idle keep-alive connection open
        assert session.get(url, timeout=5).status_code == 200
        started = time.monotonic()
        server.stop()
        assert time.monotonic() - started < 2
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", server.port), timeout=1).close()


# -- the oracle ----------------------------------------------------------------------

def tiny_web_factory():
    """A hand-made two-host web: a -> b (same-host 301) -> c; a -> x on the
    other host via a 302; robots.txt of host 2 disallows /no/; a nofollow page."""
    def build(port: int) -> Web:
        one, two = f"http://127.0.0.2:{port}", f"http://127.0.0.3:{port}"
        hosts = (Host("127.0.0.2", port, "one", Robots(404)),
                 Host("127.0.0.3", port, "two", Robots(200, (RobotsGroup(("*",), disallow=("/no/",)),))))
        page = lambda url, *links, **kw: Page(url=url, kind="test", body=b"<html></html>", links=links, **kw)
        moved = lambda url, to: Page(url=url, kind="redirect", status=301, redirect_to=to,
                                     headers=(("Location", to),))
        pages = [
            page(f"{one}/", f"{one}/b", f"{one}/away", f"{two}/no/secret", f"{one}/hush", f"{one}/loop",
                 "http://127.0.0.250/offsite"),
            moved(f"{one}/b", f"{one}/c"),
            page(f"{one}/c", f"{one}/d"),
            page(f"{one}/d", f"{one}/e"),
            moved(f"{one}/away", f"{two}/x"),
            page(f"{two}/x", f"{one}/c", f"{two}/y"),
            page(f"{two}/y"),
            page(f"{two}/no/secret"),
            page(f"{one}/hush", f"{one}/never", follow=False),
            moved(f"{one}/loop", f"{one}/loop"),
        ]
        return Web(seed=0, port=port, hosts=hosts, pages={p.url: p for p in pages},
                   seed_urls=(f"{one}/",), seed_spellings={f"HTTP://127.0.0.2:{port}/#x": f"{one}/"})
    return build


def test_oracle_on_a_hand_made_web():
    web = tiny_web_factory()(9)
    one, two = "http://127.0.0.2:9", "http://127.0.0.3:9"
    layers = expected_layers(web, ["HTTP://127.0.0.2:9/#x", "not a url"], 5,
                             url_allow=[r"^http://127\.0\.0\.[23]:9/"], retries=1, timeout=1)
    assert layers == [
        {(f"{one}/", "fetched", f"{one}/")},
        {(f"{one}/b", "fetched", f"{one}/c"),  # same-host redirect followed
         (f"{one}/away", "redirect", f"{one}/away"),  # cross-host: ends the fetch
         (f"{two}/no/secret", "robots_denied", f"{two}/no/secret"),
         (f"{one}/hush", "fetched", f"{one}/hush"),  # nofollow: /never is not found
         (f"{one}/loop", "http_error", f"{one}/loop")},
        # /c was attempted as a final URL: only /d and the redirect target are new.
        {(f"{one}/d", "fetched", f"{one}/d"), (f"{two}/x", "fetched", f"{two}/x")},
        {(f"{one}/e", "http_error", f"{one}/e"), (f"{two}/y", "fetched", f"{two}/y")},
    ]  # then the frontier is empty
    assert len(expected_layers(web, [f"{one}/"], 2)) == 2
    unobeyed = expected_layers(web, [f"{one}/"], 2, obey_robots=False, url_allow=[r"127\.0\.0\.[23]"])
    assert (f"{two}/no/secret", "fetched", f"{two}/no/secret") in unobeyed[1]
    assert expected_layers(web, [f"{one}/"], 1, allow_private_networks=False) == [
        {(f"{one}/", "blocked", f"{one}/")}]


def test_oracle_on_the_generated_web_covers_every_outcome_and_layer():
    web = generate_web(seed=1, port=41000)
    config = web.crawl_config()
    layers = expected_layers_for_config(web, config, seeds(web, spellings=True), 5)
    assert len(layers) == 5 and all(layers)
    assert {url for url, _, _ in layers[0]} == set(web.seed_urls)
    assert set(outcome_counts(layers)) == {"fetched", "not_html", "redirect", "http_error",
                                           "network_error", "robots_denied", "blocked"}
    records = set().union(*layers)
    meta, hub = web.role("meta"), web.role("hub")
    expected = {
        (meta.url("/r/five/0"), "fetched", meta.url("/r/five/5")),
        (meta.url("/r/six/0"), "http_error", meta.url("/r/six/5")),
        (meta.url("/r/loop/a"), "http_error", meta.url("/r/loop/b")),
        (meta.url("/r/to-denied"), "blocked", meta.url("/r/to-denied")),
        (meta.url("/r/hop/1"), "redirect", meta.url("/r/hop/2")),
        (hub.url("/go/private"), "robots_denied", hub.url("/go/private")),
        (web.role("errors").url("/flaky.html"), "fetched", web.role("errors").url("/flaky.html")),
        (web.role("errors").url("/broken.html"), "http_error", web.role("errors").url("/broken.html")),
        (web.role("charsets-world").url("/slow.html"), "network_error",
         web.role("charsets-world").url("/slow.html")),
        (web.role("robots-500").url("/moved.html"), "robots_denied", web.role("robots-500").url("/moved.html")),
    }
    assert expected <= records
    attempted = [url for layer in layers for url, _, _ in layer]
    assert len(attempted) == len(set(attempted))  # each URL once
    assert not any("127.0.0.250" in url or "127.0.0.1:" in url or "https:" in url for url in attempted)
    # Nofollow (meta, header, rel) targets are never reached.
    assert not any("/meta/t/nofollow" in url or "/meta/t/rel-nofollow" in url or "/comments/" in url
                   for url in attempted)
    # Settings change the outcomes as the contract says.
    flaky = web.role("errors").url("/flaky.html")
    no_retry = expected_layers_for_config(web, {**config, "retries": 0}, seeds(web), 3)
    assert (flaky, "http_error", flaky) in no_retry[2]
    patient = expected_layers_for_config(web, {**config, "timeout": 10.0}, seeds(web), 3)
    slow = web.role("charsets-world").url("/slow.html")
    assert (slow, "fetched", slow) in patient[2]


# -- the command line --------------------------------------------------------------------

def test_serve_command_prints_seeds_and_writes_a_config(tmp_path: Path):
    seeds_file, config_file = tmp_path / "seeds.txt", tmp_path / "crawl.yaml"
    done = subprocess.run(
        [sys.executable, "-m", "mrcrawl.testweb", "serve", "--seconds", "0.2",
         "--seeds-file", str(seeds_file), "--config-file", str(config_file)],
        capture_output=True, text=True, timeout=30, cwd=Path(__file__).resolve().parent.parent)
    assert done.returncode == 0, done.stderr
    seed_urls = seeds_file.read_text().split()
    assert len(seed_urls) == 3 and all(url in done.stdout for url in seed_urls)
    config = json.loads(config_file.read_text())
    assert config["user_agent"].startswith(AGENT_TOKEN) and config["allow_private_networks"] is True


def serve_command(*options: str) -> list[str]:
    return [sys.executable, "-m", "mrcrawl.testweb", "serve", *options]


def start_serving(command: list[str], cwd: Path | None = None, env: dict | None = None) -> tuple[subprocess.Popen, str]:
    """A `serve` command, started as in a terminal of its own (with
    `env`, by default checkout_env()), and what it printed up to the line
    that says it serves; fails if it exits first."""
    process = subprocess.Popen(command, cwd=cwd, env=env or checkout_env(), text=True,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    printed = ""
    while "Ctrl-C stops" not in printed:
        line = process.stdout.readline()
        if not line:
            _, stderr = process.communicate(timeout=30)
            pytest.fail(f"{command} exited {process.returncode} without serving:\n{stderr}")
        printed += line
    return process, printed


def ctrl_c(process: subprocess.Popen) -> str:
    """Stop a `serve` as Ctrl-C does; what it said on stderr."""
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 0 and "stopped after" in stderr, stderr
    return stderr


def test_serve_day_serves_that_day_of_the_daily_web_on_the_port_given(tmp_path: Path):
    addresses = [f"127.0.0.{2 + site}" for site in range(4)]
    port, probes = bind_same_port(addresses)  # a port free on every address a moment ago
    for probe in probes:
        probe.close()
    seeds_file, config_file = tmp_path / "daily.txt", tmp_path / "daily.yaml"
    process, printed = start_serving(serve_command("--day", "2", "--sites", "4", "--port", str(port),
                                                   "--seeds-file", str(seeds_file), "--config-file", str(config_file)))
    try:
        web = DailyWeb(DailySpec(sites=4), port)
        assert f"day 2 of 7, port {port}" in printed and f"--now {web.date_iso(2)}" in printed
        assert seeds_file.read_text().split() == list(web.seed_urls) == [f"http://{a}:{port}/" for a in addresses]
        assert json.loads(config_file.read_text()) == web.crawl_config()
        new_article = web.events(2).published[0]
        for url in [*web.seed_urls, new_article]:  # day 2's pages: its hubs' edition, its new articles
            answer = requests.get(url, timeout=5)
            assert (answer.status_code, answer.content) == (200, web.page(url, 2).body), url
    finally:
        stderr = ctrl_c(process)
    assert "stopped after 5 requests" in stderr, stderr


@pytest.mark.parametrize("options, named", [
    (["--day", "0"], "--day: the daily news web has days 1 to 7, got 0"),
    (["--day", "8"], "--day: the daily news web has days 1 to 7, got 8"),
    (["--day", "1", "--sites", "0"], "--sites: "),
    (["--sites", "4"], "--sites: only with --day"),
    (["--day", "1", "--hosts", "8"], "--hosts: not with --day"),
    (["--day", "1", "--port", "65536"], "--port: must be 1 to 65535"),
])
def test_serve_refuses_bad_options_naming_them(options, named):
    done = subprocess.run(serve_command("--seconds", "0.2", *options), capture_output=True, text=True, timeout=30,
                          env=checkout_env())
    assert done.returncode == 2 and done.stdout == ""
    assert named in one_line(done.stderr)


def test_serve_on_a_port_in_use_says_so():
    with socket.create_server(("127.0.0.2", 0)) as taken:
        port = taken.getsockname()[1]
        done = subprocess.run(serve_command("--day", "2", "--port", str(port)), capture_output=True, text=True,
                              timeout=30, env=checkout_env())
    assert done.returncode == 2 and done.stdout == ""
    assert f"port {port} is in use" in one_line(done.stderr)


# -- the demo ----------------------------------------------------------------------------

DEMO_INPUTS = Path("crawl/demo-inputs")


def run_demo(cwd: Path, *options: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`python -m mrcrawl.testweb demo` as a user runs it, from `cwd`."""
    return subprocess.run([*demo_command(), *options], capture_output=True, text=True, timeout=timeout,
                          cwd=cwd, env=checkout_env())


def demo_command() -> list[str]:
    return [sys.executable, "-m", "mrcrawl.testweb", "demo"]


def checkout_env() -> dict:
    """This checkout's package first on the path, whatever the current directory."""
    checkout = str(Path(__file__).resolve().parent.parent)
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [checkout, os.environ.get("PYTHONPATH")]))}


def demo_port(cwd: Path) -> int:
    """The port the demo's saved seeds name."""
    first_seed = (cwd / DEMO_INPUTS / "seeds.txt").read_text(encoding="utf-8").split()[0]
    return int(first_seed.split("/")[2].split(":")[1])


def files_under(directory: Path) -> dict[str, bytes]:
    return {str(path.relative_to(directory)): path.read_bytes() for path in sorted(directory.rglob("*")) if path.is_file()}


def assert_demo_crawl_matches_the_oracle(cwd: Path, depth: int) -> None:
    web = generate_web(seed=1, port=demo_port(cwd))
    expected = expected_layers_for_config(web, web.crawl_config(), seeds(web), depth=depth)
    output = cwd / "crawl" / "demo"
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    assert not (output / "doc" / str(len(expected))).exists()
    assert list((output / "warc").glob("*.warc.gz")) and list((output / "index").glob("*.parquet"))


def one_line(stderr: str) -> str:
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("options, named", [
    (["--depth", "0"], "--depth"),
    (["--depth", "-2", "--output", "elsewhere"], "--depth"),
    (["--depth", "three"], "--depth"),
    (["--runner", "spark"], "--runner"),
    (["--output", "/"], "--output"),
    (["--resume"], "no demo crawl"),
])
def test_demo_refuses_bad_arguments_before_it_serves_or_writes(tmp_path, options, named):
    done = run_demo(tmp_path, *options, timeout=60)
    assert done.returncode == 2, done.stderr
    assert named in one_line(done.stderr)
    assert done.stdout == ""  # no test web was served: the demo says so when it serves one
    assert list(tmp_path.iterdir()) == []


def test_demo_resume_goes_deeper_on_the_port_of_the_first_run(tmp_path):
    first = run_demo(tmp_path, "--depth", "1")
    assert first.returncode == 0, first.stderr
    assert 'crawl = "crawl/demo"' in first.stdout  # where the crawl is, as the README's snippets name it
    port = demo_port(tmp_path)
    assert f"port {port}" in first.stdout
    inputs = files_under(tmp_path / DEMO_INPUTS)
    crawl = files_under(tmp_path / "crawl" / "demo")
    first_layer = files_under(tmp_path / "crawl" / "demo" / "doc" / "0")

    again = run_demo(tmp_path)
    assert again.returncode == 2
    refusal = one_line(again.stderr)
    assert "python -m mrcrawl.testweb demo --resume" in refusal and "--output" in refusal
    assert again.stdout == ""

    with socket.create_server(("127.0.0.2", port)):  # someone else now serves on the demo's port
        taken = run_demo(tmp_path, "--resume", "--depth", "3", timeout=60)
    assert taken.returncode == 2
    assert f"port {port}" in one_line(taken.stderr)
    assert files_under(tmp_path / "crawl" / "demo") == crawl and files_under(tmp_path / DEMO_INPUTS) == inputs

    deeper = run_demo(tmp_path, "--resume", "--depth", "3")
    assert deeper.returncode == 0, deeper.stderr
    assert f"port {port}" in deeper.stdout
    assert files_under(tmp_path / DEMO_INPUTS) == inputs  # the same seeds and config, unchanged
    assert_demo_crawl_matches_the_oracle(tmp_path, depth=3)
    assert files_under(tmp_path / "crawl" / "demo" / "doc" / "0") == first_layer  # not fetched again


def test_interrupted_demo_resumes_to_the_full_crawl(tmp_path):
    process = subprocess.Popen(demo_command(), cwd=tmp_path, env=checkout_env(), text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for_step(tmp_path / "crawl" / "demo", "parse/1", process)
        process.send_signal(signal.SIGINT)  # Ctrl-C
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, stderr
    assert "python -m mrcrawl.testweb demo --resume" in stderr.strip().splitlines()[-1]
    assert "Traceback" not in stderr
    inputs = files_under(tmp_path / DEMO_INPUTS)

    resumed = run_demo(tmp_path, "--resume")
    assert resumed.returncode == 0, resumed.stderr
    assert files_under(tmp_path / DEMO_INPUTS) == inputs
    assert_demo_crawl_matches_the_oracle(tmp_path, depth=3)
