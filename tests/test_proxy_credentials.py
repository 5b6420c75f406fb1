"""A proxy's credentials reach the proxy, and nothing the crawler writes or
prints: not its output, its logs, its stats, its records, its exports.

The crawls run the real driver through a real proxy on loopback (crawl_support's
LoopbackProxy, which asks for a login; FaultServer for a proxy that hangs up),
and then everything the run wrote and printed is searched for the password,
the user:password pair and its base64 form in a Proxy-Authorization header.
"""
from __future__ import annotations

import base64
import gzip
import json
import os
import sys
import re
import stat
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import yaml

from crawl_support import LoopbackProxy, crawl_docs, driver_command, write_inputs
from mrcrawl.config import ConfigError, load_config, proxy_address, redacted_proxy
from mrcrawl.driver import EXIT_NOTHING_FETCHED, EXIT_OK, EXIT_USAGE
from mrcrawl.fetch.connection import basic_credentials
from mrcrawl.store.failures import FailureKind
from mrcrawl.testweb.faults import CLOSED_BEFORE_STATUS, FaultServer
from test_failed_crawls import closed_port

USER = "crawler"
PASSWORD = "pw-5ecr3t-Zq"
CREDENTIALS = f"{USER}:{PASSWORD}"
# What must never be found: the password (alone, as it is in the pair), and
# the pair as the Basic scheme sends it.
SECRETS = (PASSWORD, base64.b64encode(CREDENTIALS.encode()).decode())


def proxy_url(origin: str, credentials: str = CREDENTIALS) -> str:
    return origin.replace("://", f"://{credentials}@", 1)


def written_texts(root: Path):
    """(path, text) of every file under `root`, WARC files ungzipped and
    Parquet files read, so that nothing is hidden by compression."""
    for path in sorted(root.rglob("*")):
        if not path.is_file():
            continue
        if path.name.endswith(".gz"):
            data = gzip.decompress(path.read_bytes())
        elif path.suffix == ".parquet":
            data = repr(pq.read_table(path).to_pylist()).encode()
        else:
            data = path.read_bytes()
        yield path, data.decode("utf-8", errors="replace")


def places_holding_the_secret(texts) -> list[str]:
    return [str(where) for where, text in texts if any(secret in text for secret in SECRETS)]


def run_driver(seeds: Path, conf: Path, output: Path, tmp_path: Path, depth: int, *extra: str):
    """The driver in its own process, its temporary files (mrjob's logs and
    scratch, the fetcher's spill files) under tmp_path/tmp to be searched too."""
    scratch = tmp_path / "tmp"
    scratch.mkdir(exist_ok=True)
    environment = {**os.environ, "TMPDIR": str(scratch)}
    return subprocess.run(driver_command(seeds, conf, output, depth, *extra), capture_output=True, text=True,
                          timeout=300, env=environment)


def export(output: Path, kind: str) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "mrcrawl.export", kind, str(output)]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def assert_only_config_json_holds_the_secret(tmp_path: Path, output: Path, *printed: str) -> None:
    """Every file under tmp_path but the operator's YAML config, and what the
    runs printed: only the crawl's config.json, which the jobs read the proxy
    from, holds the password, and only its owner may read that."""
    conf = tmp_path / "testweb.yaml"
    files = [(path, text) for path, text in written_texts(tmp_path) if path != conf]
    assert len(files) > 10  # the crawl and its exports were searched, not an empty directory
    assert places_holding_the_secret(files) == [str(output / "config.json")]
    assert stat.S_IMODE((output / "config.json").stat().st_mode) == 0o600
    assert places_holding_the_secret(enumerate(printed)) == []


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_a_crawl_through_a_proxy_that_needs_a_login_sends_it_and_writes_it_nowhere(web_server, tmp_path, runner):
    """The login goes in every request's Proxy-Authorization (CONNECT's too);
    pages, a 404, a target that refuses and an https URL the proxy cannot
    tunnel become records, stats, XML, WARC and index without it."""
    dead = closed_port()
    with LoopbackProxy(credentials=CREDENTIALS) as proxy:
        extra_targets = [f"{web_server.seeds[0]}no-such-page", f"http://127.0.0.2:{dead}/", f"https://127.0.0.2:{dead}/"]
        seeds, conf, config = write_inputs(web_server, tmp_path, proxy=proxy_url(proxy.url),
                                           url_allow=[web_server.web.url_allow, rf"^https?://127\.0\.0\.2:{dead}/"])
        seeds.write_text(seeds.read_text() + "\n".join(extra_targets) + "\n")
        output = tmp_path / "crawl"
        result = run_driver(seeds, conf, output, tmp_path, 2, "--runner", runner, "--export", "warc,index")
    assert result.returncode == EXIT_OK, result.stderr
    assert proxy.authorizations and set(proxy.authorizations) == {basic_credentials(CREDENTIALS)}
    docs = crawl_docs(output)
    assert sum(doc["outcome"] == "fetched" for doc in docs) >= len(web_server.seeds)
    by_url = {doc["requested_url"]: doc for doc in docs}
    assert by_url[extra_targets[0]]["status"] == 404
    assert by_url[f"http://127.0.0.2:{dead}/"]["outcome"] == "robots_denied"  # the proxy could not reach it: no robots.txt
    assert "502" in by_url[f"https://127.0.0.2:{dead}/"]["error"]
    # The proxy hung up on the one and refused to tunnel to the other.
    assert {by_url[f"{scheme}://127.0.0.2:{dead}/"]["error_kind"] for scheme in ("http", "https")} == {
        FailureKind.PROXY}
    assert (output / "warc").is_dir() and (output / "index").is_dir()
    assert_only_config_json_holds_the_secret(tmp_path, output, result.stdout, result.stderr)
    state = json.loads((output / "crawl.json").read_text())
    assert state["config"]["proxy"] == redacted_proxy(proxy_url(proxy.url)) == proxy_url(proxy.url, f"{USER}:***")


def failing_proxy_crawl(web_server, tmp_path, proxy: str, seeds_text: str | None = None):
    seeds, conf, _ = write_inputs(web_server, tmp_path, proxy=proxy, retries=1, url_allow=[])
    if seeds_text is not None:
        seeds.write_text(seeds_text)
    output = tmp_path / "crawl"
    result = run_driver(seeds, conf, output, tmp_path, 1)
    exports = [export(output, kind) for kind in ("warc", "index")]
    assert [done.returncode for done in exports] == [0, 0], [done.stderr for done in exports]
    return result, output, exports


def test_a_proxy_that_refuses_the_login_is_named_and_the_password_is_not(web_server, tmp_path):
    with LoopbackProxy(credentials=f"{USER}:another-password") as proxy:
        result, output, exports = failing_proxy_crawl(web_server, tmp_path, proxy_url(proxy.url))
    assert result.returncode == EXIT_NOTHING_FETCHED
    assert set(proxy.authorizations) == {basic_credentials(CREDENTIALS)}
    assert "HTTP 407" in result.stderr, result.stderr
    assert {(doc["status"], doc["error_kind"]) for doc in crawl_docs(output)} == {(407, FailureKind.HTTP_407)}
    assert_only_config_json_holds_the_secret(tmp_path, output, result.stdout, result.stderr,
                                             *(done.stdout + done.stderr for done in exports))


def test_a_proxy_that_is_not_there_is_named_and_the_password_is_not(web_server, tmp_path):
    proxy = proxy_url(f"http://127.0.0.2:{closed_port()}")
    result, output, exports = failing_proxy_crawl(web_server, tmp_path, proxy)
    assert result.returncode == EXIT_NOTHING_FETCHED
    assert FailureKind.PROXY_REFUSED.label in result.stderr, result.stderr
    assert "nothing listens at the address of the proxy" in result.stderr
    errors = [doc["error"] for doc in crawl_docs(output)]
    assert errors and all("Unable to connect to proxy" in error for error in errors), errors
    assert {doc["error_kind"] for doc in crawl_docs(output)} == {FailureKind.PROXY_REFUSED}
    assert_only_config_json_holds_the_secret(tmp_path, output, result.stdout, result.stderr,
                                             *(done.stdout + done.stderr for done in exports))


def test_a_proxy_that_hangs_up_is_named_and_the_password_is_not(web_server, tmp_path):
    with FaultServer() as server:
        # The fault server answers absolute URLs too: as the proxy, it closes
        # each connection before its answer.
        seeds_text = server.url(CLOSED_BEFORE_STATUS) + "\n"
        result, output, exports = failing_proxy_crawl(
            web_server, tmp_path, proxy_url(server.origin), seeds_text)
        server.wait_idle()
    assert result.returncode == EXIT_NOTHING_FETCHED
    assert FailureKind.PROXY.label in result.stderr, result.stderr
    errors = [doc["error"] for doc in crawl_docs(output)]
    assert errors and all("RemoteDisconnected" in error for error in errors), errors
    assert {doc["error_kind"] for doc in crawl_docs(output)} == {FailureKind.PROXY}
    assert server.log  # the proxy was asked
    assert_only_config_json_holds_the_secret(tmp_path, output, result.stdout, result.stderr,
                                             *(done.stdout + done.stderr for done in exports))


def test_a_resume_takes_a_changed_password_and_shows_none_when_the_proxy_differs(web_server, tmp_path):
    """Credentials change: a crawl resumed with the proxy's new password
    sends it (crawl.json keeps no password, so it is no changed config).
    Another user, or another proxy, is a changed config, named without the
    password."""
    old_credentials = f"{USER}:old-{PASSWORD}"
    with LoopbackProxy(credentials=old_credentials) as proxy:
        seeds, conf, config = write_inputs(web_server, tmp_path, proxy=proxy_url(proxy.url, old_credentials))
        output = tmp_path / "crawl"
        first = run_driver(seeds, conf, output, tmp_path, 1)
        assert first.returncode == EXIT_OK, first.stderr
        proxy.credentials = CREDENTIALS
        conf.write_text(yaml.safe_dump({**config, "proxy": proxy_url(proxy.url, f"someone:{PASSWORD}")}))
        refused = run_driver(seeds, conf, output, tmp_path, 2, "--resume")
        assert refused.returncode == EXIT_USAGE
        assert "testweb.yaml: proxy: differs from the config of the crawl" in refused.stderr
        conf.write_text(yaml.safe_dump({**config, "proxy": proxy_url(proxy.url)}))
        sent_before = len(proxy.authorizations)
        resumed = run_driver(seeds, conf, output, tmp_path, 2, "--resume")
    assert resumed.returncode == EXIT_OK, resumed.stderr
    assert set(proxy.authorizations[sent_before:]) == {basic_credentials(CREDENTIALS)}
    assert sum(doc["outcome"] == "fetched" for doc in crawl_docs(output) if doc["layer"] == 1) > 0
    # The old password is in no file either.
    assert not [path for path, text in written_texts(output) if f"old-{PASSWORD}" in text]
    assert_only_config_json_holds_the_secret(tmp_path, output, first.stdout, first.stderr, refused.stdout,
                                             refused.stderr, resumed.stdout, resumed.stderr)


@pytest.mark.parametrize("proxy, shown", [
    (f"ftp://{CREDENTIALS}@127.0.0.1:3128", f"ftp://{USER}:***@127.0.0.1:3128"),
    (f"http://{CREDENTIALS}@127.0.0.1:port", f"http://{USER}:***@127.0.0.1:port"),
    (f"http://{CREDENTIALS}@127.0.0.1:3128/path", f"http://{USER}:***@127.0.0.1:3128/path"),
    (f"http://{PASSWORD}@127.0.0.1:3128?x", "http://***@127.0.0.1:3128?x"),
    (f"http://{CREDENTIALS}@", f"http://{USER}:***@"),
    (f"http://{USER}:pass word {PASSWORD}@127.0.0.1:3128", f"http://{USER}:***@127.0.0.1:3128"),
], ids=["scheme", "port", "path", "query", "no host", "space"])
def test_a_bad_proxy_url_is_refused_naming_it_without_its_password(tmp_path, proxy, shown):
    conf = tmp_path / "c.yaml"
    conf.write_text(yaml.safe_dump({"language": "en", "user_agent": "mrcrawl-test/1.0", "proxy": proxy}))
    with pytest.raises(ConfigError) as refused:
        load_config(conf)
    message = str(refused.value)
    assert f"proxy: must be an http:// or https:// proxy URL" in message and repr(shown) in message
    assert not any(secret in message for secret in SECRETS)


def test_the_proxy_address_and_credentials_are_taken_apart():
    assert proxy_address("http://127.0.0.1:3128") == ("http://127.0.0.1:3128", None)
    assert proxy_address("HTTPS://u%40x:p%3Aw%2F@[::1]:8443/") == ("https://[::1]:8443", "u@x:p:w/")
    assert proxy_address("http://token@proxy.example") == ("http://proxy.example", "token:")
    assert redacted_proxy("http://token@proxy.example") == "http://***@proxy.example"
    assert redacted_proxy("http://proxy.example:3128") == "http://proxy.example:3128"


def test_the_archived_request_has_no_proxy_authorization(web_server, tmp_path):
    """The WARC request record is the request the server got, which the
    proxy relays without the header meant for it alone."""
    with LoopbackProxy(credentials=CREDENTIALS) as proxy:
        seeds, conf, _ = write_inputs(web_server, tmp_path, proxy=proxy_url(proxy.url))
        output = tmp_path / "crawl"
        result = run_driver(seeds, conf, output, tmp_path, 1, "--export", "warc")
    assert result.returncode == EXIT_OK, result.stderr
    requests = [text for path, text in written_texts(output / "warc") if path.name.endswith(".warc.gz")]
    assert requests and all("WARC-Type: request" in text for text in requests)
    assert not any(re.search(r"(?im)^proxy-authorization:", text) for text in requests)
    assert all(f"GET {web_server.seeds[0]}" in text or "GET http://" in text for text in requests)
