"""What the Parser makes of one doc record: its out record.

Every doc record yields one out record, even with no links, so that the out
store's keys list every final URL of the layer: the Optimizer's cycle filter
reads them instead of the much larger doc store.

The out record also carries what the crawl db's revisit policy needs of the
page, judged here where the page is parsed anyway: the URL's hops, and for a
fetched page its change signature and whether it is a hub (page/change.py).
A page that says nofollow yields no links but is judged all the same.

This is the one place a fetched page is parsed in a crawl.  Whatever a later
stage needs of it is read here and kept in the out record's `page`
(records.PAGE_FIELDS): whether its robots directives (X-Robots-Tag, which
the Crawler read, and <meta name="robots">) let it be followed and indexed,
its headline, and, for a page that may be indexed and that the index does
not have as it is now, its metadata and main text (page/index_fields.py),
which HtmlToXml writes.

The trap guards (page/traps.py) are asked of every link in scope, a
redirect's target among them (the server gave it, as a page gives a link):
a link one catches goes into the out record's `trapped`, with the guard,
instead of its outlinks, so that the crawl db records why it is never
fetched.

Each outlink of a page has its anchor text in the out record's `anchors`
(page/links.py's anchor_text), for the crawl db's link store.
"""
from __future__ import annotations

import logging
from typing import Callable

from mrcrawl.config import AGENT_NAME, RevisitConfig
from mrcrawl.page.change import page_signals
from mrcrawl.page.announce import feed_links
from mrcrawl.page.charset import decode_page
from mrcrawl.page.entries import EntryRules, announcers_of, followed_entries
from mrcrawl.page.html import parse_html
from mrcrawl.page.index_fields import index_fields, indexed_before
from mrcrawl.page.links import extract_anchored_links
from mrcrawl.page.robots_directives import page_directives
from mrcrawl.page.traps import NO_GUARDS, TrapGuards, trap_guard
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.records import ANNOUNCED, FETCHED, LINKS_FROM_PAGE, REDIRECT, REDIRECT_TARGET, new_out

log = logging.getLogger(__name__)


def _every_page(url: str, judged: dict) -> bool:
    return True


def out_record(doc: dict, scope: UrlFilter, hub_link_density: float = RevisitConfig.hub_link_density,
               guards: TrapGuards = NO_GUARDS, rules: EntryRules = EntryRules(), agent: str = AGENT_NAME,
               needs_text: Callable[[str, dict], bool] = _every_page) -> dict:
    """The links `doc` contributes to the next layer, filtered by the crawl's
    scope, with the page's hops, signature and hub judgement (a page is a hub
    when at least `hub_link_density` of its visible text is link text:
    config.revisit.hub_link_density).  A link in scope that one of `guards`
    catches is put in `trapped`, with the guard, instead.  A feed's or
    sitemap's entries that `rules` follow are its links (type ANNOUNCED);
    the feeds a page names, and its host's robots.txt sitemaps, its
    `announcers`.  `agent` is the crawler's robots token
    (robots_directives.agent_token), which <meta name="TOKEN"> names.
    `needs_text(url, judged)` says whether a page that may be indexed, with
    its signature and hub judgement in `judged`, may need its main text in
    the XML: a page that repeats another's content gets none
    (frontier/dedup.py's ContentSeen); by default every page does."""
    hops = doc.get("hops")
    if doc.get("kind") is not None and doc["outcome"] == FETCHED:
        entries, announced = followed_entries(doc, scope, rules)
        links, trapped = _guarded(entries, guards)
        kept = set(links)
        return new_out(links, ANNOUNCED, doc["layer"], doc["fetched_at"], hops, trapped=trapped,
                       announced=[said for url, said in zip(entries, announced) if url in kept],
                       announcers=announcers_of(doc, [], scope))
    if doc["outcome"] == REDIRECT:
        target = doc["redirect_to"]
        links, trapped = _guarded([target] if target and scope.allows(target) else [], guards)
        return new_out(links, REDIRECT_TARGET, doc["layer"], doc["fetched_at"], hops, trapped=trapped,
                       announcers=announcers_of(doc, [], scope))
    anchored: dict[str, str] = {}
    links, trapped, feeds = [], [], []
    signature = hub = page = None
    if doc["outcome"] == FETCHED:
        try:
            root = parse_html(decode_page(doc))
            follow, index = page_directives(root, agent)
            page = {"follow": doc["meta_follow"] and follow, "index": doc["meta_index"] and index}
            if page["follow"]:
                anchored = extract_anchored_links(root, doc["url"], doc["encoding"])
                links, trapped = _guarded(filter(scope.allows, anchored), guards)
                feeds = feed_links(root, doc["url"], doc["encoding"])
            signals = page_signals(root)
            signature, hub = signals.signature, signals.is_hub(hub_link_density)
            indexed = page["index"] and not indexed_before(doc.get("known"), signature)
            page.update(index_fields(root, indexed and needs_text(doc["url"], {"signature": signature, "hub": hub})))
        except Exception:  # one page that breaks the parser must not stop the layer
            log.exception("page %s not read: links, signature, hub judgement or text missing", doc["url"])
    return new_out(links, LINKS_FROM_PAGE, doc["layer"], doc["fetched_at"], hops, signature, hub, trapped,
                   [anchored[link] for link in links], score=doc.get("score"),
                   announcers=announcers_of(doc, feeds, scope), page=page)


def _guarded(links, guards: TrapGuards) -> tuple[list[str], list[list[str]]]:
    """`links` split into those to follow and those a guard catches, as [url, guard]."""
    if guards == NO_GUARDS:
        return list(links), []
    followed, trapped = [], []
    for link in links:
        guard = trap_guard(link, guards)
        if guard is None:
            followed.append(link)
        else:
            trapped.append([link, guard])
    return followed, trapped
