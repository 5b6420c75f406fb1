"""A crawl's seeds: the URLs of a seed file, checked and made canonical.

A seed line is a URL, then, optionally, whitespace-separated `key=value`
metadata (as Nutch's seed files carry it) and a `#` comment, which runs to
the end of the line from a word that starts with `#`:

    https://news.example/            # the home page
    https://news.example/world/      nutch.score=2.0

A `#` inside the URL is its fragment, not a comment.  A space inside a URL
is written %20: a word after the URL that is neither metadata nor a comment
would otherwise make another URL of the line, so the line is skipped.  The
crawl uses no metadata key: each line that carries some is reported, the
keys named, and its URL kept.  A line that is not UTF-8 is skipped.  Every
line skipped or cut is reported with its number.
"""
from __future__ import annotations

import re

from mrcrawl.config import ConfigError
from mrcrawl.page.urls import UrlFilter, normalize_url

# A metadata word: a key, `=`, and a value that may be empty.
_METADATA = re.compile(r"[^=\s]+=\S*")


def read_seeds(path: str, scope: UrlFilter) -> tuple[list[str], list[str]]:
    """The canonical seeds of a seed file, and a message for each line skipped or cut."""
    try:
        with open(path, "rb") as seed_file:
            raw_lines = seed_file.read().splitlines()
    except OSError as error:
        raise ConfigError(path, "file", f"cannot read the seed file ({error.strerror or error})") from None
    lines: list[str | None] = []
    for number, raw in enumerate(raw_lines, start=1):
        try:
            lines.append(raw.decode("utf-8-sig" if number == 1 else "utf-8"))
        except UnicodeDecodeError:
            lines.append(None)  # seed_urls reports it with its number
    return seed_urls(lines, scope, path)


def seed_urls(lines: list[str | None], scope: UrlFilter, source: str) -> tuple[list[str], list[str]]:
    """The canonical seeds among seed lines (see the module's docstring; a
    line that is None was not UTF-8), and a message for each line skipped or
    cut; `source` names where they come from."""
    seeds, said, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        where = f"{source}:{number}"
        if line is None:
            said.append(f"{where}: skipped: not UTF-8 text")
            continue
        words = line.split()
        comment = next((index for index, word in enumerate(words) if word.startswith("#")), len(words))
        if comment == 0:  # a blank line, or a comment
            continue
        text, extra = words[0], words[1:comment]
        stray = [word for word in extra if not _METADATA.fullmatch(word)]
        if stray:
            said.append(f"{where}: skipped {line.strip()!r}: {stray[0]!r} after the URL is neither key=value "
                        "metadata nor a # comment (write a space inside a URL as %20)")
            continue
        url = normalize_url(text)
        if url is None:
            said.append(f"{where}: skipped {text!r}: not an absolute http(s) URL")
            continue
        if not scope.allows(url):
            said.append(f"{where}: skipped {url}: outside url_allow/url_deny")
            continue
        if extra:
            keys = ", ".join(word.split("=", 1)[0] for word in extra)
            said.append(f"{where}: ignored the metadata {keys} of {url}: the crawl uses no seed metadata")
        if url not in seen:
            seen.add(url)
            seeds.append(url)
    if not seeds:
        raise ConfigError(source, "seeds", f"no usable seed URL ({len(said)} line(s) skipped)")
    return seeds, said
