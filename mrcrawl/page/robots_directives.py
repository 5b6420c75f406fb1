"""What one page lets the crawler do with it: (follow, index).

From the page's <meta name="robots"> and <meta name="TOKEN"> tags and from
its X-Robots-Tag headers, where TOKEN is the crawler's robots.txt agent
token.  Whether the page may be fetched at all is robots.txt's business
(mrcrawl/fetch/robots.py).
"""
from __future__ import annotations

import re

_DIRECTIVE_SEPARATORS = re.compile(r"[\s,]+")
_TOKEN_END = re.compile(r"[/\s;()]")


def agent_token(user_agent: str) -> str:
    """The product token robots.txt groups and <meta name="TOKEN"> are
    matched against: the first token of the User-Agent, e.g. "mrcrawl" for
    "mrcrawl/0.1 (+http://x/)"."""
    return _TOKEN_END.split(user_agent.strip(), 1)[0]


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
