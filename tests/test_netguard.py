"""The private-network guard, on literals and on a name that resolves locally (no traffic)."""
import pytest

from mrcrawl.fetch.netguard import blocked_reason


@pytest.mark.parametrize("host", ["127.0.0.1", "127.0.0.2", "10.1.2.3", "172.16.0.1", "192.168.1.1",
                                  "169.254.169.254", "0.0.0.0", "::1", "fe80::1", "::ffff:10.0.0.1", "224.0.0.1"])
def test_non_public_literals_are_blocked(host):
    assert blocked_reason(host) is not None


@pytest.mark.parametrize("host", ["8.8.8.8", "93.184.216.34", "2606:2800:220:1:248:1893:25c8:1946"])
def test_public_literals_pass_without_a_lookup(host):
    assert blocked_reason(host) is None


def test_a_name_resolving_to_loopback_is_blocked():
    # "localhost" resolves from /etc/hosts, so this needs no network.
    reason = blocked_reason("localhost")
    assert reason is not None and "resolves to" in reason


def test_an_unresolvable_name_is_left_to_fail_as_a_network_error():
    assert blocked_reason("no-such-host.invalid") is None
