"""Host names looked up once, within the timeout, by the DNS server the config
names: a real DNS server on loopback (dnslib's) answers the crawler."""
import datetime
import http.server
import ipaddress
import socket
import ssl
import threading
import time
from collections import Counter
from contextlib import contextmanager

# cryptography comes with Scrapy (a test extra): it signs the TLS server's certificate.
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from dnslib import AAAA, QTYPE, RCODE, RR, A
from dnslib.server import BaseResolver, DNSLogger, DNSServer

from crawl_support import PageHandler
from mrcrawl.config import CrawlConfig
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.store.failures import FailureKind

# The test's two web addresses: the guard lets the first through
# (allow_networks) and refuses the second, like any loopback address.
ALLOWED, BLOCKED = "127.0.0.2", "127.0.0.3"
REBINDING = "rebinding.test"  # answers ALLOWED, then BLOCKED
STEADY = "steady.test"  # always answers ALLOWED
# Names with IPv6 addresses only (AAAA records, no A record).
IPV6_ONLY = {"loopback6.test": "::1", "mapped6.test": "::ffff:10.0.0.1"}


class LoopbackZone(BaseResolver):
    """Answers A queries for its names; NXDOMAIN for any other; counts every question."""

    def __init__(self):
        self.questions = Counter()
        self._lock = threading.Lock()

    def resolve(self, request, handler):
        name = str(request.q.qname).rstrip(".")
        with self._lock:
            self.questions[name] += 1
            asked = self.questions[name]
        reply = request.reply()
        if name == REBINDING:
            address = ALLOWED if asked == 1 else BLOCKED
        elif name == STEADY:
            address = ALLOWED
        elif name in IPV6_ONLY:
            if request.q.qtype == QTYPE.AAAA:
                reply.add_answer(RR(name, QTYPE.AAAA, rdata=AAAA(ipaddress.IPv6Address(IPV6_ONLY[name]).exploded), ttl=0))
            return reply
        else:
            reply.header.rcode = RCODE.NXDOMAIN
            return reply
        if request.q.qtype == QTYPE.A:
            reply.add_answer(RR(name, QTYPE.A, rdata=A(address), ttl=0))
        return reply


@contextmanager
def dns_server(zone: BaseResolver | None = None):
    """A DNS server on loopback answering from `zone` (a LoopbackZone by default): (zone, "host:port")."""
    zone = zone or LoopbackZone()
    server = DNSServer(zone, address="127.0.0.1", port=0, logger=DNSLogger(logf=lambda line: None))
    server.start_thread()
    try:
        host, port = server.server.server_address
        yield zone, f"{host}:{port}"
    finally:
        server.stop()
        server.server.server_close()


@contextmanager
def silent_dns_server():
    """A UDP socket that takes queries and never answers them."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        host, port = sock.getsockname()
        yield f"{host}:{port}"


class RecordingHandler(PageHandler):
    def do_GET(self):
        self.server.requests.append((self.server.server_address[0], self.headers["Host"], self.path))
        self.send_html(b"<html><body><p>hello</p></body></html>")


@contextmanager
def web_servers():
    """A web server on each test address, on one port: what each was asked."""
    first = http.server.ThreadingHTTPServer((ALLOWED, 0), RecordingHandler)
    port = first.server_address[1]
    second = http.server.ThreadingHTTPServer((BLOCKED, port), RecordingHandler)
    servers = {ALLOWED: first, BLOCKED: second}
    for server in servers.values():
        server.requests = []
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    try:
        yield port, {address: server.requests for address, server in servers.items()}
    finally:
        for server in servers.values():
            server.shutdown()
            server.server_close()


def crawl(urls, **options) -> tuple[list[dict], dict]:
    """One task's fetch of `urls` with the guard on and only ALLOWED let
    through: its doc records and its stats."""
    settings = dict(language="en", user_agent="mrcrawl-test/1.0", threads=4, delay=0.0, retries=0,
                    obey_robots=False, allow_networks=[f"{ALLOWED}/32"], timeout=2.0)
    fetcher = Fetcher(CrawlConfig(**{**settings, **options}), layer=0)
    for url in urls:
        fetcher.add(url)
    return list(fetcher.finish()), fetcher.stats


def test_the_crawler_connects_to_the_address_it_checked_and_a_rebinding_name_cannot_reach_another():
    with dns_server() as (zone, resolver), web_servers() as (port, asked):
        urls = [f"http://{REBINDING}:{port}/{n}" for n in range(6)]
        docs, stats = crawl(urls, dns_server=resolver)
        # The name was asked once; every request went to the address the
        # guard passed, with the name in the Host header.  The DNS server
        # would have answered BLOCKED to a second question.
        assert zone.questions == {REBINDING: 1}
        assert {doc["outcome"] for doc in docs} == {"fetched"}
        assert sorted(path for _, _, path in asked[ALLOWED]) == [f"/{n}" for n in range(6)]
        assert {host for _, host, _ in asked[ALLOWED]} == {f"{REBINDING}:{port}"}
        # The next task asks again and gets BLOCKED: the guard refuses the
        # host, and nothing reaches that address.
        docs, stats = crawl(urls[:1], dns_server=resolver)
        assert zone.questions == {REBINDING: 2}
        assert [(doc["outcome"], doc["error"], doc["error_kind"]) for doc in docs] == [
            ("blocked", f"{REBINDING} resolves to non-public address {BLOCKED}", FailureKind.BLOCKED_PRIVATE)]
        assert asked[BLOCKED] == []
        assert stats["requests"] == 0


@contextmanager
def tls_listener(tmp_path, address: str):
    """A TLS server on `address` with a self-signed certificate: the server
    names (SNI) its clients' hellos carried, whatever became of the handshake."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, STEADY)])
    now = datetime.datetime.now(datetime.timezone.utc)
    certificate = (x509.CertificateBuilder().subject_name(subject).issuer_name(subject).public_key(key.public_key())
                   .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                   .sign(key, hashes.SHA256()))
    (tmp_path / "cert.pem").write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "key.pem").write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                         serialization.NoEncryption()))
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "cert.pem", tmp_path / "key.pem")
    server_names = []
    context.sni_callback = lambda connection, name, context: server_names.append(name)
    listener = socket.create_server((address, 0))
    listener.settimeout(0.1)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except TimeoutError:
                continue
            with client:
                client.settimeout(2)
                try:
                    context.wrap_socket(client, server_side=True).close()
                except OSError:
                    pass  # the client refuses a certificate it cannot trust

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], server_names
    finally:
        stop.set()
        thread.join()
        listener.close()


def test_tls_connects_to_the_checked_address_and_names_the_host_in_its_hello(tmp_path):
    with dns_server() as (zone, resolver), tls_listener(tmp_path, ALLOWED) as (port, server_names):
        [doc], stats = crawl([f"https://{STEADY}:{port}/"], dns_server=resolver)
    # The hello reached the address the guard passed and carried the name.
    # The certificate is refused, as it should be: no authority signed it.
    assert server_names == [STEADY]
    assert doc["outcome"] == "network_error" and "CERTIFICATE_VERIFY_FAILED" in doc["error"]
    assert doc["error_kind"] == FailureKind.TLS
    assert zone.questions == {STEADY: 1}


def test_each_host_name_is_looked_up_once_a_task_and_the_lookups_are_counted():
    with dns_server() as (zone, resolver), web_servers() as (port, asked):
        # Two names, each on two host keys (the politeness units): one
        # question a name, however many threads want it at once.
        urls = [f"http://{name}:{port}/{n}" for name in (STEADY, REBINDING) for n in range(10)]
        urls += [f"https://{name}:{port}/" for name in (STEADY, REBINDING)]
        docs, stats = crawl(urls, dns_server=resolver, threads=8)
    assert zone.questions == {STEADY: 1, REBINDING: 1}
    assert Counter(doc["outcome"] for doc in docs)["fetched"] == 20
    assert stats["dns_lookups"] == 2
    assert stats["dns_milliseconds"] >= 0


def test_a_name_with_ipv6_addresses_only_is_judged_by_them():
    # The A question finds nothing, so the AAAA question is asked; an
    # IPv4-mapped address counts as the IPv4 address it maps.
    with dns_server() as (zone, resolver):
        docs, stats = crawl([f"http://{name}/" for name in IPV6_ONLY], dns_server=resolver)
    assert zone.questions == {name: 2 for name in IPV6_ONLY}
    assert {doc["url"]: (doc["outcome"], doc["error"], doc["error_kind"]) for doc in docs} == {
        f"http://{name}/": ("blocked", f"{name} resolves to non-public address {ipaddress.ip_address(address)}",
                            FailureKind.BLOCKED_PRIVATE)
        for name, address in IPV6_ONLY.items()}
    assert stats["requests"] == 0


def test_a_name_the_dns_server_does_not_know_is_a_network_error_naming_dns():
    with dns_server() as (zone, resolver):
        docs, stats = crawl([f"http://unknown.test/{n}" for n in range(3)], dns_server=resolver)
    assert zone.questions == {"unknown.test": 1}
    errors = {(doc["outcome"], doc["error"], doc["error_kind"]) for doc in docs}
    assert errors == {("network_error", f"DNSLookupError: DNS lookup of unknown.test: "
                                        f"the DNS server at {resolver} answered NXDOMAIN", FailureKind.DNS)}
    assert stats["requests"] == 0


def test_a_dns_server_that_never_answers_is_a_network_error_naming_dns_within_the_timeout():
    timeout, margin = 1.0, 1.0
    with silent_dns_server() as resolver:
        started = time.monotonic()
        docs, stats = crawl(["http://steady.test/", "http://steady.test/other"], dns_server=resolver, timeout=timeout)
        seconds = time.monotonic() - started
    assert {(doc["outcome"], doc["error"], doc["error_kind"]) for doc in docs} == {
        ("network_error", f"DNSLookupError: DNS lookup of steady.test: "
                          f"the DNS server at {resolver} gave no answer within the timeout", FailureKind.DNS)}
    assert timeout <= seconds <= timeout + margin  # once for the host, not once a URL


def test_the_system_resolver_is_bounded_by_the_timeout_too():
    # Without dns_server the system resolver answers: from its cache or
    # files at once, or from a DNS server this machine may not reach; the
    # lookup is given up at the timeout either way.
    timeout, margin = 1.0, 1.0
    started = time.monotonic()
    [doc], _ = crawl(["http://no-such-host.invalid/"], timeout=timeout)
    assert time.monotonic() - started <= timeout + margin
    assert (doc["outcome"], doc["error_kind"]) == ("network_error", FailureKind.DNS)
    assert doc["error"].startswith("DNSLookupError: DNS lookup of no-such-host.invalid")
