"""What a site lets the crawler do: robots.txt, meta robots, X-Robots-Tag.

robots.txt is parsed by protego and matched for the crawler's agent token,
the first token of its User-Agent ("mrcrawl" for "mrcrawl/0.1 (+url)").
How the robots.txt request ended decides the policy (RFC 9309):
- 2xx: its rules apply;
- 4xx (the file does not exist, or may not be read): everything is allowed;
- 5xx, 429, timeout or connection failure: the site may be overloaded or
  broken, so nothing is fetched from it for this layer.

Meta robots tags and X-Robots-Tag headers give per-page (follow, index).
"""
from __future__ import annotations

import re

from protego import Protego

# RFC 9309: crawlers must parse at least 500 KiB of a robots.txt; more is
# ignored so that a huge file cannot stall a fetch thread.
MAX_ROBOTS_BYTES = 512 * 1024


class RobotsPolicy:
    """The robots.txt rules of one host, for one agent token."""

    def __init__(self, parser: Protego | None, agent_token: str, denial_reason: str | None):
        self._parser = parser
        self._agent = agent_token
        self.denial_reason = denial_reason

    @classmethod
    def allow_all(cls) -> RobotsPolicy:
        return cls(None, "*", None)

    @classmethod
    def deny_all(cls, reason: str) -> RobotsPolicy:
        return cls(None, "*", reason)

    @classmethod
    def from_response(cls, status: int, body: bytes, agent_token: str) -> RobotsPolicy:
        """The policy a robots.txt response gives (see the module docstring)."""
        if 200 <= status < 300:
            return cls(Protego.parse(_robots_text(body)), agent_token, None)
        if status == 429 or status >= 500:
            return cls.deny_all(f"robots.txt answered HTTP {status}")
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
    def crawl_delay(self) -> float | None:
        """The Crawl-delay of the group matching the agent, in seconds."""
        if self._parser is None:
            return None
        return self._parser.crawl_delay(self._agent)


def _robots_text(body: bytes) -> str:
    if len(body) > MAX_ROBOTS_BYTES:
        body = body[: body.rfind(b"\n", 0, MAX_ROBOTS_BYTES) + 1 or MAX_ROBOTS_BYTES]
    # RFC 9309: robots.txt is UTF-8.
    text = body.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


_TOKEN_END = re.compile(r"[/\s;()]")


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups are matched against: the first
    token of the User-Agent, e.g. "mrcrawl" for "mrcrawl/0.1 (+http://x/)"."""
    return _TOKEN_END.split(user_agent.strip(), 1)[0]


# --------------------------------------------------------------------------
# Per-page directives

_DIRECTIVE_SEPARATORS = re.compile(r"[\s,]+")


def _apply(words: list[str], follow: bool, index: bool) -> tuple[bool, bool]:
    """Folds directive words into (follow, index).  The most restrictive
    wins: a later "index" or "all" does not undo a "noindex"."""
    for word in words:
        word = word.lower()
        if word == "noindex":
            index = False
        elif word == "nofollow":
            follow = False
        elif word == "none":
            follow = index = False
    return follow, index


def page_directives(root, agent_token: str) -> tuple[bool, bool]:
    """(follow, index) from <meta name="robots"> and <meta name="TOKEN">.

    Names are matched case-insensitively; content tokens (noindex,
    nofollow, none, all, index, follow) may be separated by commas or spaces.
    """
    follow = index = True
    names = {"robots", agent_token.lower()}
    for meta in root.iter("meta"):
        name = meta.get("name")
        if name is None or name.strip().lower() not in names:
            continue
        content = meta.get("content") or ""
        follow, index = _apply(_DIRECTIVE_SEPARATORS.split(content), follow, index)
    return follow, index


# "agent: directives".  Directives that take a value ("max-snippet: 20",
# "unavailable_after: 25 Jun 2010") look the same, so they are told apart
# by name.
_AGENT_PREFIX = re.compile(r"^\s*([A-Za-z0-9_.-]+)\s*:\s*(.*)$", re.DOTALL)
_VALUED_DIRECTIVES = frozenset(
    {"unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"}
)


def header_directives(values: list[str], agent_token: str) -> tuple[bool, bool]:
    """(follow, index) from X-Robots-Tag header values.

    "noindex, nofollow" and "none" apply to every crawler; "agent: noindex"
    only when agent is our token (case-insensitive).  An agent prefix holds
    for the directives after it in the same value.
    """
    follow = index = True
    token = agent_token.lower()
    for value in values:
        applies = True  # until an agent prefix says otherwise
        for part in value.split(","):
            match = _AGENT_PREFIX.match(part)
            if match and match.group(1).lower() not in _VALUED_DIRECTIVES:
                applies = match.group(1).lower() == token
                part = match.group(2)
            if applies:
                follow, index = _apply(_DIRECTIVE_SEPARATORS.split(part.strip()), follow, index)
    return follow, index
