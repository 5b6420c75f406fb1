"""Duplicates: which fetched page repeats another URL's content, and which
repeats another URL's payload.

A page's content is what the revisit policy's change rule reads of it
(page/change.py): its visible text outside links, every digit and run of
whitespace aside.  Two URLs whose answers differ only in what every answer
changes (a clock, a rotating advert, a nonce in a script) show the same
content.  A page's payload is its body's bytes (records.payload_digest).

- A fetched page is a `duplicate` of another URL, its original, when that
  URL showed its content first, on this run or an earlier one: the crawl
  db says so and the page gets no XML.  Content is compared by content
  signature (content_signature()): the change signature of an HTML page,
  unless the page is a hub, whose content is its links, which the signature
  leaves out, or has no text outside links.  Any other page (not HTML, a
  hub, a page without text, a page the Parser could not read) is compared
  by payload instead.
- A fetched page whose payload another URL's fetch had first is archived as
  a WARC revisit record of that fetch (output/warc.py), whatever its
  content: only identical bytes may stand for each other there.

The crawl db's digest index (crawldb.py) holds each payload digest's
original, and each content signature's (under signature_key()).  It is kept
as Igloo keeps its URL trie, by delayed merging: a layer's digests and
signatures are gathered into one claim each (DbBatch), looked up in the
index in one pass over each digest partition (Dedup), and merged into it in
one pass (DbUpdate).  No process holds the index, or a set of the URLs.

A claim, the batch's value for a digest or a signature:
    {"claims": [[url, fetched_at], ...], "releases": [url, ...]}
- claims: the URLs fetched on this layer with that payload (content), and when;
- releases: URLs whose last 200 had that payload or content (the crawl db's
  `known` digest and signature) and whose fetch on this layer ended with
  another payload, or with none (gone, moved): a page that shows something
  else is no longer the original of what it once showed.  A page whose
  bytes changed may still show the same content (its clock moved): it then
  releases the signature and claims it again, and stays its original.

The original of a digest or signature, resolve():
- the index's original, unless that URL released it this layer (and did
  not claim it again);
- else the shortest claimant, then the first in byte order.  The choice is
  the same on every runner and every resume, and the shortest URL is most
  often the canonical one (no `?print=1`, no tracking parameters): Nutch's
  dedup also prefers the shortest URL when its other criteria tie.
Every other claimant is a duplicate of it.  The original keeps the time of
its first fetch with that payload: the capture a WARC revisit record of a
duplicate refers to.

A duplicate's record names the original it had when it was last fetched:
when the original shows something else later, the index forgets it, and the
duplicate is judged again at its own next fetch (the crawl db keeps no
validators of a duplicate, so that fetch is a full one, never a 304).
"""
from __future__ import annotations

from typing import Iterable, Iterator

from mrcrawl.frontier.crawldb import SIGNATURE_KEY, is_signature_key, signature_key
from mrcrawl.frontier.db_update import is_transient
from mrcrawl.page.change import page_signature
from mrcrawl.page.html import parse_html
from mrcrawl.store.records import (
    NOT_MODIFIED,
    is_content_duplicate,
    new_content_duplicate,
    new_duplicate,
)

# The signature of a page with no visible text outside links (an image, a
# page its scripts fill in): such pages say nothing to tell them apart by.
EMPTY_TEXT_SIGNATURE = page_signature(parse_html(""))


def content_signature(page: dict | None) -> str | None:
    """The signature a page's content is compared by, from what the Parser
    judged of it (`page`: an out record, or an update's "page" part): its
    change signature, unless it is a hub or has no text outside links.
    None for such a page, or none judged: it is compared by payload."""
    if page is None or page.get("hub"):
        return None
    signature = page.get("signature")
    return None if signature == EMPTY_TEXT_SIGNATURE else signature


def claims_from_doc(doc: dict, fetch: dict) -> Iterator[tuple[str, dict]]:
    """(key, claim) for what one doc record's fetch (`fetch`: db_update.fetch_part
    of it) says of payloads: the digest it was fetched with; and the digest
    and content signature its requested URL's last 200 had, when this fetch
    ended that payload (its out record claims the signature again if the
    content is the same)."""
    digest = fetch["digest"]
    if digest is not None:
        yield digest, {"claims": [[doc["url"], doc["fetched_at"]]], "releases": []}
    known = doc.get("known") or {}
    if known.get("digest") is None or fetch["outcome"] == NOT_MODIFIED or is_transient(fetch):
        return
    if known["digest"] != digest or doc["url"] != doc["requested_url"]:
        release = {"claims": [], "releases": [doc["requested_url"]]}
        yield known["digest"], release
        # A page that is not HTML has its digest for a signature, and no content signature.
        if known.get("signature") not in (None, known["digest"]):
            yield signature_key(known["signature"]), release


def claims_from_out(out: dict, url: str) -> Iterator[tuple[str, dict]]:
    """(key, claim) for the content of the page an out record judged: its content signature."""
    signature = content_signature(out)
    if signature is not None:
        yield signature_key(signature), {"claims": [[url, out["timestamp"]]], "releases": []}


def fold_claims(claims: Iterable[dict]) -> dict:
    """One claim from several of a digest: each claimant once, at its earliest fetch."""
    fetched: dict[str, str] = {}
    released: set[str] = set()
    for claim in claims:
        for url, fetched_at in claim["claims"]:
            fetched[url] = min(fetched_at, fetched.get(url, fetched_at))
        released.update(claim["releases"])
    return {"claims": sorted([url, at] for url, at in fetched.items()), "releases": sorted(released)}


def resolve(original: dict | None, claim: dict) -> dict | None:
    """The digest's original (records.DIGEST_FIELDS) after this layer's
    claim, from the index's (`original`, None when it has none); None when
    the digest is left without one."""
    claimants = {url: fetched_at for url, fetched_at in claim["claims"]}
    if original is not None and original["url"] in claim["releases"] and original["url"] not in claimants:
        original = None
    if original is None and claimants:
        url = min(claimants, key=original_order)
        original = {"url": url, "fetched_at": claimants[url]}
    return original


def original_order(url: str) -> tuple[int, str]:
    """How claimants rank for a digest's or signature's original: the
    shortest URL first, then the first in byte order (see the module docstring)."""
    return len(url), url


# A Parser task remembers this many content signatures at most, then forgets
# them all at once: a task can hold millions of pages, and forgetting only
# makes it read text it could have left.
SIGNATURES_SEEN = 100_000


class ContentSeen:
    """The content signatures a Parser task has seen, each with the claimant
    of it that ranks first (original_order) among the pages it read.

    A page showing content that a page of the same layer showed under a URL
    ranking before its own is a duplicate (of that page, or of an original
    the index already has): it gets no XML, so its main text need not be
    read (jobs/parser.py).  Were the guess wrong, HtmlToXml would read the
    text itself; resolve() makes it right, since both pages claim the
    signature on this layer."""

    def __init__(self, limit: int = SIGNATURES_SEEN):
        self.limit = limit
        self._first: dict[str, tuple[int, str]] = {}

    def needs_text(self, url: str, judged: dict) -> bool:
        """Whether the page at `url`, with what the Parser `judged` of it
        (its signature and hub judgement, as content_signature reads them),
        may be its content's original, and so needs its text read."""
        signature = content_signature(judged)
        if signature is None:  # compared by payload: no guess
            return True
        order, first = original_order(url), self._first.get(signature)
        if first is not None and first < order:
            return False
        if first is None and len(self._first) >= self.limit:
            self._first.clear()
        self._first[signature] = order
        return True


def duplicates_of(key: str, original: dict | None, claim: dict) -> Iterator[tuple[str, dict]]:
    """(URL, duplicate record) for each claimant of a digest or signature
    (`key`, as the index keys it) that is not its original."""
    for url, _ in claim["claims"]:
        if url != original["url"]:
            if is_signature_key(key):
                yield url, new_content_duplicate(original, key.removeprefix(SIGNATURE_KEY))
            else:
                yield url, new_duplicate(original, key)


def content_duplicate(duplicates: Iterable[dict], page: dict | None) -> dict | None:
    """Of a fetched page's duplicate records (the Dedup job's: one by payload,
    one by content, or none), the one that makes it a `duplicate`, or None:
    by content when the page has a content signature (`page` as for
    content_signature), else by payload."""
    by_content = content_signature(page) is not None
    return next((duplicate for duplicate in duplicates if is_content_duplicate(duplicate) == by_content), None)
