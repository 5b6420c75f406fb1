"""What the Parser makes of one doc record: its out record.

Every doc record yields one out record, even with no links, so that the out
store's keys list every final URL of the layer: the Optimizer's cycle filter
reads them instead of the much larger doc store.

The out record also carries what the crawl db's revisit policy needs of the
page, judged here where the page is parsed anyway: the URL's hops, and for a
fetched page its change signature and whether it is a hub (page/change.py).
A page that says nofollow yields no links but is judged all the same.

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

from mrcrawl.config import RevisitConfig
from mrcrawl.page.change import page_signals
from mrcrawl.page.charset import decode_page
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_anchored_links
from mrcrawl.page.traps import NO_GUARDS, TrapGuards, trap_guard
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.records import FETCHED, LINKS_FROM_PAGE, REDIRECT, REDIRECT_TARGET, new_out

log = logging.getLogger(__name__)


def out_record(doc: dict, scope: UrlFilter, hub_link_density: float = RevisitConfig.hub_link_density,
               guards: TrapGuards = NO_GUARDS) -> dict:
    """The links `doc` contributes to the next layer, filtered by the crawl's
    scope, with the page's hops, signature and hub judgement (a page is a hub
    when at least `hub_link_density` of its visible text is link text:
    config.revisit.hub_link_density).  A link in scope that one of `guards`
    catches is put in `trapped`, with the guard, instead."""
    hops = doc.get("hops")
    if doc["outcome"] == REDIRECT:
        target = doc["redirect_to"]
        links, trapped = _guarded([target] if target and scope.allows(target) else [], guards)
        return new_out(links, REDIRECT_TARGET, doc["layer"], doc["fetched_at"], hops, trapped=trapped)
    anchored: dict[str, str] = {}
    links, trapped = [], []
    signature = hub = None
    if doc["outcome"] == FETCHED:
        try:
            root = parse_html(decode_page(doc))
            if doc["meta_follow"]:
                anchored = extract_anchored_links(root, doc["url"], doc["encoding"])
                links, trapped = _guarded(filter(scope.allows, anchored), guards)
            signals = page_signals(root)
            signature, hub = signals.signature, signals.is_hub(hub_link_density)
        except Exception:  # one page that breaks the parser must not stop the layer
            log.exception("page %s not read: links, signature or hub judgement missing", doc["url"])
    return new_out(links, LINKS_FROM_PAGE, doc["layer"], doc["fetched_at"], hops, signature, hub, trapped,
                   [anchored[link] for link in links], score=doc.get("score"))


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
