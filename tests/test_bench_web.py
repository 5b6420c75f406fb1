"""The benchmark web: content, latency, keep-alive, request log, politeness report."""
from __future__ import annotations

import re
import socket
import statistics
import threading
import time

import pytest
import requests

from mrcrawl.bench.web import BenchWeb, BenchWebSpec, pages_per_host, politeness_report
from mrcrawl.testweb import LogEntry

HREF = re.compile(r'href="([^"]+)"')


def small_spec(**overrides) -> BenchWebSpec:
    options = dict(hosts=4, pages=24, page_bytes=3000, links_per_page=6, latency=0.0)
    return BenchWebSpec(**(options | overrides))


def test_every_page_answers_and_every_link_points_at_a_page():
    with BenchWeb(small_spec(distribution="zipf")) as web:
        urls = web.urls()
        assert len(urls) == len(set(urls)) == 24
        assert set(web.seeds()) <= set(urls)
        assert {url.split("/")[2].split(":")[0] for url in urls} == set(web.host_addresses)
        assert web.host_addresses == ["127.0.1.1", "127.0.1.2", "127.0.1.3", "127.0.1.4"]
        linked = set()
        with requests.Session() as session:
            for url in urls:
                response = session.get(url, timeout=5)
                assert response.status_code == 200, url
                assert len(response.content) == 3000
                links = HREF.findall(response.text)
                assert len(links) == 6
                page_host = url.split("/")[2]
                assert {link.split("/")[2] == page_host for link in links} == {True, False}
                linked.update(links)
            robots = session.get(f"http://{web.host_addresses[2]}:{web.port}/robots.txt", timeout=5)
            missing = session.get(f"http://{web.host_addresses[0]}:{web.port}/p/999.html", timeout=5)
        assert linked <= set(urls)
        assert robots.status_code == 200 and "Allow: /" in robots.text
        assert missing.status_code == 404


def test_zipf_host_sizes_are_skewed_and_deterministic():
    spec = BenchWebSpec(hosts=200, pages=10_000, distribution="zipf")
    sizes = pages_per_host(spec)
    assert sum(sizes) == 10_000 and min(sizes) >= 1
    assert max(sizes) > 20 * statistics.median(sizes)
    assert sizes == pages_per_host(spec)
    assert sizes != pages_per_host(BenchWebSpec(hosts=200, pages=10_000, distribution="zipf", seed=2))
    uniform = pages_per_host(BenchWebSpec(hosts=200, pages=10_010))
    assert sum(uniform) == 10_010 and max(uniform) - min(uniform) == 1


def test_latency_keep_alive_and_log_of_every_request():
    latency = 0.05
    with BenchWeb(small_spec(latency=latency)) as web:
        urls = web.urls()[:3]
        with requests.Session() as session:
            for url in urls:
                began = time.monotonic()
                assert session.get(url, timeout=5).status_code == 200
                assert time.monotonic() - began >= latency
        log = web.request_log()
    assert [entry.path for entry in log] == ["/p/0.html", "/p/1.html", "/p/2.html"]
    assert len({entry.connection for entry in log}) == 1
    for entry in log:
        assert entry.address == "127.0.1.1" and entry.status == 200 and entry.completed
        assert entry.start + latency <= entry.end


def test_politeness_report_finds_two_requests_in_flight_on_one_host():
    with BenchWeb(small_spec(latency=0.2)) as web:
        url = web.seeds()[0]

        def fetch():
            with requests.Session() as session:
                session.get(url, timeout=5)

        threads = [threading.Thread(target=fetch) for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(10)
        report = politeness_report(web.request_log(), delay=0.0)
    assert report["requests"] == 2
    assert report["overlaps"] == 1 and report["overlaps_by_host"] == {"127.0.1.1": 1}
    assert not report["polite"]


def test_politeness_report_passes_sequential_requests_spaced_by_the_delay():
    delay = 0.05
    with BenchWeb(small_spec(latency=0.01)) as web:
        with requests.Session() as session:
            for url in web.urls()[:4] + web.seeds()[1:2]:
                session.get(url, timeout=5)
                # Counted from the answer, as the crawler counts: the server
                # logged this request before answering it, so its next start
                # is surely `delay` later, whatever the first connection's
                # set-up cost (counting from our own start was not enough).
                time.sleep(delay)
        report = politeness_report(web.request_log(), delay=delay)
    assert report["requests"] == 5
    assert report["requests_per_host"] == {"127.0.1.1": 4, "127.0.1.2": 1}
    assert report["overlaps"] == 0 and report["gaps_below_delay"] == 0 and report["polite"]
    assert delay <= report["worst_gap_s"] < 1.0
    assert report["worst_gap_by_host"]["127.0.1.2"] is None  # one request: no gap


def test_politeness_report_counts_gaps_below_the_delay():
    def entry(address: str, start: float, end: float) -> LogEntry:
        return LogEntry(address, 80, "GET", "/", 200, start, end, start, end, 1, None, True)

    log = [entry("127.0.1.1", 0.0, 0.1), entry("127.0.1.1", 0.3, 0.4), entry("127.0.1.1", 0.5, 0.6),
           entry("127.0.1.2", 0.0, 0.1)]
    report = politeness_report(log, delay=0.25)
    assert report["gaps_below_delay"] == 1 and report["overlaps"] == 0 and not report["polite"]
    assert report["worst_gap_s"] == pytest.approx(0.2)
    assert report["worst_gap_by_host"]["127.0.1.1"] == pytest.approx(0.2)


def test_the_server_process_is_gone_after_stop():
    web = BenchWeb(small_spec()).start()
    process, address, port = web.process, web.host_addresses[0], web.port
    assert process.poll() is None
    web.stop()
    assert process.poll() is not None
    with pytest.raises(OSError):
        socket.create_connection((address, port), timeout=1).close()
    with pytest.raises(RuntimeError):
        web.urls()
