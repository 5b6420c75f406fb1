"""A crawl's seeds: the URLs of a seed file, checked and made canonical."""
from __future__ import annotations

from mrcrawl.config import ConfigError
from mrcrawl.page.urls import UrlFilter, normalize_url


def read_seeds(path: str, scope: UrlFilter) -> tuple[list[str], list[str]]:
    """The canonical seeds of a seed file, and a message for each line skipped."""
    try:
        with open(path, encoding="utf-8") as seed_file:
            lines = seed_file.read().splitlines()
    except OSError as error:
        raise ConfigError(path, "file", f"cannot read the seed file ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(path, "file", "the seed file is not UTF-8 text") from None
    return seed_urls(lines, scope, path)


def seed_urls(lines: list[str], scope: UrlFilter, source: str) -> tuple[list[str], list[str]]:
    """The canonical seeds among `lines` (blank lines and # comments ignored),
    and a message for each line skipped; `source` names where they come from."""
    seeds, skipped, seen = [], [], set()
    for number, line in enumerate(lines, start=1):
        text = line.strip()
        if not text or text.startswith("#"):
            continue
        url = normalize_url(text)
        if url is None:
            skipped.append(f"{source}:{number}: skipped {text!r}: not an absolute http(s) URL")
        elif not scope.allows(url):
            skipped.append(f"{source}:{number}: skipped {url}: outside url_allow/url_deny")
        elif url not in seen:
            seen.add(url)
            seeds.append(url)
    if not seeds:
        raise ConfigError(source, "seeds", f"no usable seed URL ({len(skipped)} line(s) skipped)")
    return seeds, skipped
