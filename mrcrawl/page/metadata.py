"""What a page says about itself, from its lxml tree: its headline, keywords,
description and publication date, read from its <title>, <meta> elements,
JSON-LD and <time> elements.

- headline(), keywords(), description(), published(): the fields of the page
  XML (mrcrawl.output.pagexml); headline() is the page index's title too.
- normalise_date(): a stated date as ISO 8601, when it reads as one.
- headline_texts(): the title and og:title, the texts an <h1> repeats when it
  is the headline (main_text leaves it out: the XML holds it on its own).
- collapse_whitespace() and HTML_WHITESPACE: HTML's whitespace collapsed as a
  browser collapses it, in metadata and main text (mrcrawl.page.maintext)
  alike.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone


# HTML's whitespace: what browsers collapse.  Other spaces (no-break,
# ideographic U+3000 between Japanese phrases) are content and are kept.
HTML_WHITESPACE = " \t\n\r\f"


def collapse_whitespace(text: str) -> str:
    # String methods, not a regex: re.sub visits every single space of a
    # paragraph, and this ran on every block of every page (20x slower on
    # a clean English paragraph, which has nothing to collapse).
    for space in "\t\n\r\f":
        if space in text:
            text = text.replace(space, " ")
    if "  " in text:
        return " ".join(filter(None, text.split(" ")))
    return text.strip(" ")


def _meta_values(root) -> dict[str, str]:
    """The first non-empty content of each <meta name|property|itemprop>, by lower-cased key."""
    values: dict[str, str] = {}
    for meta in root.iter("meta"):
        content = collapse_whitespace(meta.get("content") or "")
        if not content:
            continue
        for key in _meta_keys(meta):
            values.setdefault(key, content)
    return values


def _meta_value(root, key: str) -> str | None:
    """_meta_values(root).get(key), without collapsing every other <meta>'s
    content: main text asks for og:title alone."""
    for meta in root.iter("meta"):
        if key in _meta_keys(meta):
            content = collapse_whitespace(meta.get("content") or "")
            if content:
                return content
    return None


def _meta_keys(meta) -> list[str]:
    keys = ((meta.get(attribute) or "").strip().lower() for attribute in ("name", "property", "itemprop"))
    return [key for key in keys if key]


def _element_text(element) -> str:
    return collapse_whitespace("".join(element.itertext()))


def headline(root) -> str:
    """The page's title; else its og:title; else its first <h1>."""
    for title in root.iter("title"):
        text = _element_text(title)
        if text:
            return text
        break
    og_title = _meta_values(root).get("og:title")
    if og_title:
        return og_title
    for heading in root.iter("h1"):
        text = _element_text(heading)
        if text:
            return text
    return ""


def headline_texts(root) -> tuple[str, ...]:
    """The page's title and its og:title, those that are not empty."""
    title = next(root.iter("title"), None)
    titles = [_element_text(title)] if title is not None else []
    og_title = _meta_value(root, "og:title")
    if og_title:
        titles.append(og_title)
    return tuple(title for title in titles if title)


def keywords(root) -> str | None:
    """<meta name="keywords"> (else news_keywords, Google News' own), or None when the page has neither."""
    values = _meta_values(root)
    return values.get("keywords") or values.get("news_keywords")


def description(root) -> str | None:
    """<meta name="description">, else og:description; None when the page has neither."""
    values = _meta_values(root)
    return values.get("description") or values.get("og:description")


# Where pages state when an article was published, most explicit first.
_DATE_META_KEYS = (
    "article:published_time", "og:published_time", "datepublished", "publishdate",
    "pubdate", "date", "dc.date.issued", "dc.date", "dcterms.created",
)
_LOOSE_DATE = re.compile(
    r"(\d{4})[-/.年](\d{1,2})[-/.月](\d{1,2})日?"
    r"(?:[T\s]+(\d{1,2})[:時](\d{2})(?::(\d{2}))?(?:\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?)?"
)


def normalise_date(value: str) -> str:
    """`value` as ISO 8601 when it reads as a date (with a time and an offset
    when it has them); else `value` itself, whitespace collapsed."""
    text = collapse_whitespace(value)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00") if text.endswith("Z") else text)
    except ValueError:
        parsed = None
    if parsed is not None:
        if len(text) <= 10 and parsed.hour == parsed.minute == 0 and "T" not in text:
            return parsed.date().isoformat()
        return _iso(parsed)
    match = _LOOSE_DATE.search(text)
    if not match:
        return text
    year, month, day, hour, minute, second, offset = match.groups()
    try:
        if hour is None:
            return datetime(int(year), int(month), int(day)).date().isoformat()
        stamp = datetime(int(year), int(month), int(day), int(hour), int(minute), int(second or 0))
        if offset:
            zone = "+00:00" if offset == "Z" else offset if ":" in offset else f"{offset[:3]}:{offset[3:]}"
            stamp = datetime.fromisoformat(stamp.isoformat() + zone)
    except ValueError:
        return text
    return _iso(stamp)


def _iso(stamp: datetime) -> str:
    text = stamp.isoformat()
    if stamp.tzinfo is not None and stamp.utcoffset() == timezone.utc.utcoffset(None):
        text = text.replace("+00:00", "Z")
    return text


def _json_ld_dates(root):
    """datePublished values of the page's JSON-LD objects, in page order."""
    for script in root.iter("script"):
        if (script.get("type") or "").strip().lower() != "application/ld+json" or not script.text:
            continue
        try:
            data = json.loads(script.text)
        except ValueError:
            continue
        stack = [data]
        while stack:
            item = stack.pop()
            if isinstance(item, list):
                stack.extend(reversed(item))
            elif isinstance(item, dict):
                value = item.get("datePublished")
                if isinstance(value, str) and value.strip():
                    yield value
                graph = item.get("@graph")
                if graph is not None:
                    stack.append(graph)


def published(root) -> str | None:
    """When the article was published, as the page states it: meta
    (article:published_time, itemprop datePublished...), JSON-LD
    datePublished, an element with itemprop=datePublished, or the first
    <time datetime> inside <article>.  ISO 8601 when it parses; None when
    the page states no date."""
    values = _meta_values(root)
    for key in _DATE_META_KEYS:
        if values.get(key):
            return normalise_date(values[key])
    for value in _json_ld_dates(root):
        return normalise_date(value)
    for element in root.xpath("//*[@itemprop='datePublished'][not(self::meta)]"):
        value = element.get("datetime") or element.get("content") or _element_text(element)
        if value.strip():
            return normalise_date(value)
    for value in root.xpath("//article//time/@datetime"):
        if value.strip():
            return normalise_date(value)
    return None
