"""robots.txt policies and the per-page meta robots / X-Robots-Tag directives."""
from __future__ import annotations

import pytest

from mrcrawl.fetch.robots import MAX_ROBOTS_BYTES, RobotsPolicy
from mrcrawl.store.failures import FailureKind
from mrcrawl.page.html import parse_html
from mrcrawl.page.robots_directives import agent_token, header_directives, page_directives

USER_AGENT = "mrcrawl/0.1 (+http://127.0.0.1/about-the-crawler)"
TOKEN = agent_token(USER_AGENT)
HOST = "http://127.0.0.5:8080"

ROBOTS_TXT = b"""# A robots.txt with a group for everyone and one for us.
User-agent: *
Disallow: /private/
Crawl-delay: 5

User-agent: MrCrawl
Disallow: /no-mrcrawl/
Allow: /no-mrcrawl/except-this
Disallow: /*.pdf$
Crawl-delay: 2.5

User-agent: otherbot
Disallow: /
"""


def test_agent_token_is_the_first_product_token():
    assert TOKEN == "mrcrawl"
    assert agent_token("MyBot") == "MyBot"
    assert agent_token("  spaced-bot/2.0 extra") == "spaced-bot"
    assert agent_token("Mozilla/5.0 (compatible; Foo)") == "Mozilla"
    assert agent_token("bot(compatible)") == "bot"


def test_2xx_rules_apply_for_our_group():
    policy = RobotsPolicy.from_response(200, ROBOTS_TXT, TOKEN)
    assert policy.denial_reason is None
    assert not policy.allowed(f"{HOST}/no-mrcrawl/page.html")
    assert policy.allowed(f"{HOST}/no-mrcrawl/except-this")
    assert not policy.allowed(f"{HOST}/files/report.pdf")
    assert policy.allowed(f"{HOST}/files/report.pdf?download=1")
    # Our own group replaces the "*" group entirely.
    assert policy.allowed(f"{HOST}/private/page.html")
    assert policy.allowed(f"{HOST}/")
    assert policy.crawl_delay == 2.5


def test_2xx_rules_of_star_group_for_unnamed_agents():
    policy = RobotsPolicy.from_response(200, ROBOTS_TXT, "somebot")
    assert not policy.allowed(f"{HOST}/private/page.html")
    assert policy.allowed(f"{HOST}/no-mrcrawl/page.html")
    assert policy.crawl_delay == 5.0
    otherbot = RobotsPolicy.from_response(200, ROBOTS_TXT, "otherbot")
    assert not otherbot.allowed(f"{HOST}/")
    assert otherbot.crawl_delay is None


def test_agent_groups_match_whole_tokens():
    body = b"User-agent: mrcrawler\nDisallow: /\n\nUser-agent: crawl\nDisallow: /\n"
    policy = RobotsPolicy.from_response(200, body, TOKEN)
    assert policy.allowed(f"{HOST}/anything")


@pytest.mark.parametrize("status", [400, 401, 403, 404, 410])
def test_4xx_allows_everything(status):
    policy = RobotsPolicy.from_response(status, b"User-agent: *\nDisallow: /\n", TOKEN)
    assert policy.allowed(f"{HOST}/private/x")
    assert policy.crawl_delay is None
    assert policy.denial_reason is None


@pytest.mark.parametrize("status", [500, 502, 503, 504, 429])
def test_5xx_and_429_deny_everything_with_a_reason(status):
    policy = RobotsPolicy.from_response(status, b"", TOKEN)
    assert not policy.allowed(f"{HOST}/")
    assert not policy.allowed(f"{HOST}/index.html")
    assert str(status) in policy.denial_reason


def test_explicit_allow_all_and_deny_all():
    assert RobotsPolicy.allow_all().allowed(f"{HOST}/x")
    assert RobotsPolicy.allow_all().denial_reason is None
    denied = RobotsPolicy.deny_all("robots.txt timed out after 10 s", FailureKind.TIMEOUT)
    assert not denied.allowed(f"{HOST}/x")
    assert denied.denial_reason == "robots.txt timed out after 10 s"
    assert denied.crawl_delay is None and denied.denial_kind == FailureKind.TIMEOUT


def test_empty_or_html_robots_txt_allows_everything():
    for body in (b"", b"<html><body>Welcome to our site!</body></html>", b"\x00\xff\xfe garbage"):
        policy = RobotsPolicy.from_response(200, body, TOKEN)
        assert policy.allowed(f"{HOST}/private/x")
        assert policy.crawl_delay is None


def test_byte_order_mark_and_crlf():
    body = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /x\r\nCrawl-delay: 1\r\n"
    policy = RobotsPolicy.from_response(200, body, TOKEN)
    assert not policy.allowed(f"{HOST}/x/y")
    assert policy.allowed(f"{HOST}/y")
    assert policy.crawl_delay == 1.0


def test_rules_past_the_size_limit_are_ignored():
    padding = b"# " + b"padding " * 100 + b"\n"
    body = (b"User-agent: *\nDisallow: /early\n"
            + padding * (MAX_ROBOTS_BYTES // len(padding) + 10)
            + b"Disallow: /late\n")
    assert len(body) > MAX_ROBOTS_BYTES
    policy = RobotsPolicy.from_response(200, body, TOKEN)
    assert not policy.allowed(f"{HOST}/early")
    assert policy.allowed(f"{HOST}/late")


def test_the_line_a_cut_robots_txt_ends_with_is_dropped():
    # What the server sent went on past the read limit: "Disallow: /" is
    # the start of a longer rule, not a rule that disallows everything.
    policy = RobotsPolicy.from_response(200, b"User-agent: *\nDisallow: /a/\nDisallow: /", TOKEN, truncated=True)
    assert not policy.allowed(f"{HOST}/a/page")
    assert policy.allowed(f"{HOST}/b/page")


def meta_page(*metas: str) -> object:
    return parse_html("<html><head>" + "".join(metas) + "<title>t</title></head><body><p>x</p></body></html>")


@pytest.mark.parametrize(
    "metas, expected",
    [
        ((), (True, True)),
        (('<meta name="robots" content="noindex, nofollow">',), (False, False)),
        (('<meta name="ROBOTS" content="NOINDEX">',), (True, False)),
        (('<meta name="robots" content="nofollow">',), (False, True)),
        (('<meta name="robots" content="none">',), (False, False)),
        (('<meta name="robots" content="noindex nofollow">',), (False, False)),
        (('<meta name="robots" content="index, follow">',), (True, True)),
        (('<meta name="robots" content="all">',), (True, True)),
        (('<meta name="mrcrawl" content="nofollow">',), (False, True)),
        (('<meta name="MrCrawl" content="noindex">',), (True, False)),
        (('<meta name="googlebot" content="noindex, nofollow">',), (True, True)),
        (('<meta name="description" content="noindex">',), (True, True)),
        (('<meta name="robots" content="noindex">', '<meta name="mrcrawl" content="nofollow">'), (False, False)),
        # The most restrictive directive wins.
        (('<meta name="robots" content="noindex">', '<meta name="robots" content="index,follow">'), (True, False)),
        (('<meta name=" robots " content=",nofollow,">',), (False, True)),
        (('<meta content="noindex">',), (True, True)),
    ],
)
def test_meta_robots(metas, expected):
    assert page_directives(meta_page(*metas), TOKEN) == expected


def test_meta_robots_in_body_of_broken_page():
    root = parse_html('<p>text<meta name="robots" content="nofollow"></p>')
    assert page_directives(root, TOKEN) == (False, True)


@pytest.mark.parametrize(
    "values, expected",
    [
        ([], (True, True)),
        (["noindex, nofollow"], (False, False)),
        (["none"], (False, False)),
        (["NOINDEX"], (True, False)),
        (["nofollow"], (False, True)),
        (["all"], (True, True)),
        (["mrcrawl: noindex"], (True, False)),
        (["MRCRAWL:nofollow"], (False, True)),
        (["mrcrawl: noindex, nofollow"], (False, False)),
        (["otherbot: noindex"], (True, True)),
        (["otherbot: noindex, nofollow"], (True, True)),
        (["otherbot: noindex", "nofollow"], (False, True)),
        (["googlebot: noindex, mrcrawl: nofollow"], (False, True)),
        (["unavailable_after: 25 Jun 2010 15:00:00 PST"], (True, True)),
        (["max-snippet: 20, noindex"], (True, False)),
        (["mrcrawler: noindex"], (True, True)),
    ],
)
def test_x_robots_tag(values, expected):
    assert header_directives(values, TOKEN) == expected
