"""Duplicates by payload digest: which fetched page repeats another URL's.

A URL fetched with a payload that an earlier fetch of another URL had, on
this run or an earlier one, is a `duplicate` of that URL, its original.  The
crawl db's digest index (crawldb.py) holds each digest's original.  It is
kept as Igloo keeps its URL trie, by delayed merging: a layer's digests are
gathered into one claim per digest (DbBatch), looked up in the index in one
pass over each digest partition (Dedup), and merged into it in one pass
(DbUpdate).  No process holds the index, or a set of the URLs.

A claim, the batch's value for a digest:
    {"claims": [[url, fetched_at], ...], "releases": [url, ...]}
- claims: the URLs fetched on this layer with that payload, and when;
- releases: URLs whose last 200 had that payload (the crawl db's `known`
  digest) and whose fetch on this layer ended with another payload, or with
  none (gone, moved): a page that shows something else is no longer the
  original of what it once showed.

The original of a digest, resolve():
- the index's original, unless that URL released the digest this layer
  (and did not claim it again);
- else the shortest claimant, then the first in byte order.  The choice is
  the same on every runner and every resume, and the shortest URL is most
  often the canonical one (no `?print=1`, no tracking parameters): Nutch's
  dedup also prefers the shortest URL when its other criteria tie.
Every other claimant is a duplicate of it.  The original keeps the time of
its first fetch with that payload: the capture a WARC revisit record of a
duplicate refers to.
"""
from __future__ import annotations

from typing import Iterable, Iterator

from mrcrawl.frontier.db_update import is_transient
from mrcrawl.store.records import NOT_MODIFIED, new_duplicate


def claims_from_doc(doc: dict, fetch: dict) -> Iterator[tuple[str, dict]]:
    """(digest, claim) for what one doc record's fetch (`fetch`: db_update.fetch_part
    of it) says of payloads: the digest it was fetched with, and the digest its
    requested URL's last 200 had, when this fetch ended that."""
    digest = fetch["digest"]
    if digest is not None:
        yield digest, {"claims": [[doc["url"], doc["fetched_at"]]], "releases": []}
    known = (doc.get("known") or {}).get("digest")
    if known is None or fetch["outcome"] == NOT_MODIFIED or is_transient(fetch):
        return
    if known != digest or doc["url"] != doc["requested_url"]:
        yield known, {"claims": [], "releases": [doc["requested_url"]]}


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
        url = min(claimants, key=lambda claimant: (len(claimant), claimant))
        original = {"url": url, "fetched_at": claimants[url]}
    return original


def duplicates_of(digest: str, original: dict | None, claim: dict) -> Iterator[tuple[str, dict]]:
    """(URL, duplicate record) for each claimant that is not the digest's original."""
    for url, _ in claim["claims"]:
        if url != original["url"]:
            yield url, new_duplicate(original, digest)
