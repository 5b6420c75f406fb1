"""What the Parser makes of one doc record: its out record.

Every doc record yields one out record, even with no links, so that the out
store's keys list every final URL of the layer: the Optimizer's cycle filter
reads them instead of the much larger doc store.
"""
from __future__ import annotations

import logging

from mrcrawl.page.charset import decode_page
from mrcrawl.page.html import parse_html
from mrcrawl.page.links import extract_links
from mrcrawl.page.urls import UrlFilter
from mrcrawl.store.records import FETCHED, LINKS_FROM_PAGE, REDIRECT, REDIRECT_TARGET, new_out

log = logging.getLogger(__name__)


def out_record(doc: dict, scope: UrlFilter) -> dict:
    """The links `doc` contributes to the next layer, filtered by the crawl's scope."""
    if doc["outcome"] == REDIRECT:
        target = doc["redirect_to"]
        links = [target] if target and scope.allows(target) else []
        return new_out(links, REDIRECT_TARGET, doc["layer"], doc["fetched_at"])
    links = []
    if doc["outcome"] == FETCHED and doc["meta_follow"]:
        try:
            root = parse_html(decode_page(doc))
            links = list(filter(scope.allows, extract_links(root, doc["url"], doc["encoding"])))
        except Exception:  # one page that breaks the parser must not stop the layer
            log.exception("no links taken from %s", doc["url"])
    return new_out(links, LINKS_FROM_PAGE, doc["layer"], doc["fetched_at"])
