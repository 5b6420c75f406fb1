"""What a site's robots.txt lets the crawler fetch.

robots.txt is parsed by protego and matched for the crawler's agent token,
the first token of its User-Agent ("mrcrawl" for "mrcrawl/0.1 (+url)":
robots_directives.agent_token).
How the robots.txt request ended decides the policy (RFC 9309):
- 2xx: its rules apply;
- 4xx (the file does not exist, or may not be read): everything is allowed;
- 5xx, 429, timeout or connection failure: the site may be overloaded or
  broken, so nothing is fetched from it for this layer.

What one page lets the crawler do with it (meta robots, X-Robots-Tag) is
read in mrcrawl/page/robots_directives.py.
"""
from __future__ import annotations

from protego import Protego

from mrcrawl.store.failures import FailureKind, status_kind

# RFC 9309: crawlers must parse at least 500 KiB of a robots.txt; more is
# neither read nor parsed, so that a huge file cannot stall a fetch thread.
MAX_ROBOTS_BYTES = 512 * 1024


class RobotsPolicy:
    """The robots.txt rules of one host, for one agent token."""

    def __init__(self, parser: Protego | None, agent_token: str, denial_reason: str | None,
                 denial_kind: FailureKind | None = None):
        self._parser = parser
        self._agent = agent_token
        self.denial_reason = denial_reason
        self.denial_kind = denial_kind  # what kept robots.txt from being read, with denial_reason

    @classmethod
    def allow_all(cls) -> RobotsPolicy:
        return cls(None, "*", None)

    @classmethod
    def deny_all(cls, reason: str, kind: FailureKind) -> RobotsPolicy:
        """Nothing may be fetched: robots.txt could not be read (`reason`),
        for a failure of `kind`."""
        return cls(None, "*", reason, kind)

    @classmethod
    def from_response(cls, status: int, body: bytes, agent_token: str, truncated: bool = False) -> RobotsPolicy:
        """The policy a robots.txt response gives (see the module docstring);
        `truncated`: the body was cut short of what the server sent."""
        if 200 <= status < 300:
            return cls(Protego.parse(_robots_text(body, truncated)), agent_token, None)
        if status == 429 or status >= 500:
            return cls.deny_all(f"robots.txt answered HTTP {status}", status_kind(status))
        # 4xx, and a redirect the fetcher did not follow to the end: the
        # file is unavailable, which RFC 9309 treats as no rules at all.
        return cls.allow_all()

    def allowed(self, url: str) -> bool:
        if self.denial_reason is not None:
            return False
        if self._parser is None:
            return True
        return self._parser.can_fetch(url, self._agent)

    @property
    def sitemaps(self) -> list[str]:
        """The URLs of its `Sitemap:` lines, as written (any group's: they name the site's sitemaps for every agent)."""
        return [] if self._parser is None else list(self._parser.sitemaps)

    @property
    def crawl_delay(self) -> float | None:
        """The Crawl-delay of the group matching the agent, in seconds."""
        if self._parser is None:
            return None
        return self._parser.crawl_delay(self._agent)


def _robots_text(body: bytes, truncated: bool) -> str:
    if truncated or len(body) > MAX_ROBOTS_BYTES:
        # A line cut off at the limit is not the rule the site wrote
        # ("Disallow: /shop/cart" cut to "Disallow: /").
        body = body[: body.rfind(b"\n", 0, MAX_ROBOTS_BYTES) + 1]
    # RFC 9309: robots.txt is UTF-8.
    text = body.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


