"""Fetch one URL as a crawl would and print what every stage makes of it,
as Nutch's `parsechecker` and Scrapy's `parse` do.

    python -m mrcrawl.parsechecker URL --conf CONF

The page goes through the crawl's own code, not a copy of it: the Fetcher
of a Crawler task (robots.txt read and obeyed, the private-network guard,
the scope, retries and redirects as the config says), the Parser's
out_record, Merge's page_record and HtmlToXml's page_to_xml.  So what it prints is what a crawl
with the same config would store for the URL on layer 0, fetched for the
first time: nothing is read from or written to a crawl directory or db.
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from mrcrawl.cli import CommandParser, run_command
from mrcrawl.config import CrawlConfig, load_config
from mrcrawl.fetch.fetcher import Fetcher
from mrcrawl.frontier.merge import page_record
from mrcrawl.logs import add_verbosity_options, configure_logging
from mrcrawl.output.pagexml import indexable
from mrcrawl.page.charset_labels import declared_encoding
from mrcrawl.page.entries import EntryRules
from mrcrawl.page.outlinks import out_record
from mrcrawl.page.robots_directives import agent_token
from mrcrawl.page.traps import TrapGuards
from mrcrawl.page.urls import UrlFilter, host_key
from mrcrawl.show import canonical_url, header_lines, page_xml, record_lines, section, xml_text
from mrcrawl.store.records import ANNOUNCED, FETCHED, ROBOTS_DENIED, body_bytes

EXIT_FETCHED = 0
EXIT_NOT_FETCHED = 1  # the URL was attempted and no page came of it: the record says why
EXIT_USAGE = 2  # a bad command line (CommandParser's status), URL or config

LAYER = 0  # the layer the page is fetched on: a seed's


def fetch_one(config: CrawlConfig, url: str) -> tuple[dict, Fetcher]:
    """The doc record a Crawler task writes for `url`, and the Fetcher that
    wrote it (its host's robots.txt rules are still there)."""
    fetcher = Fetcher(dataclasses.replace(config, threads=1), LAYER)  # one URL: one thread
    fetcher.add(url)
    [doc] = fetcher.finish()
    return doc, fetcher


def charset_line(doc: dict) -> str:
    """The charset the page was read with, and whether the page declared it."""
    if doc["outcome"] != FETCHED:
        return "charset      none (no page)"
    if doc.get("kind"):
        return f"charset      none (a {doc['kind']}: XML declares its own)"
    content_type = next((value for name, value in doc["headers"] if name.lower() == "content-type"), None)
    declared = declared_encoding(body_bytes(doc), content_type)
    how = "declared by a BOM, Content-Type or <meta>" if declared else "detected from the bytes: the page declares none"
    return f"charset      {doc['encoding']} ({how})"


def robots_lines(config: CrawlConfig, fetcher: Fetcher, doc: dict) -> list[str]:
    """What robots.txt and the page's own directives let the crawler do."""
    if not config.obey_robots:
        told = "not read (obey_robots: false)"
    else:
        host = fetcher.hosts[host_key(doc["requested_url"])]
        policy = host.robots
        if policy is None:  # the host was never requested: its address was refused or not found
            told = f"not read: {host.blocked_reason or host.unresolved}"
        elif policy.denial_reason is not None:
            told = f"denies every URL of the host: {policy.denial_reason}"
        else:
            delay = "none" if policy.crawl_delay is None else f"{policy.crawl_delay:g} s"
            # A denial names the URL it denied, which may be a redirect's target.
            if doc["outcome"] == ROBOTS_DENIED:
                verdict = doc["error"]
            else:
                verdict = f"{'allows' if policy.allowed(doc['url']) else 'disallows'} {doc['url']}"
            told = f"{verdict}; Crawl-delay {delay}, so one request every {host.delay:g} s"
    meta = "not read (no page)" if doc["outcome"] != FETCHED else (
        f"{'index' if doc['meta_index'] else 'noindex'}, {'follow' if doc['meta_follow'] else 'nofollow'} "
        "(<meta name=robots> and X-Robots-Tag)")
    return [f"robots.txt   {told}", f"meta robots  {meta}"]


def parsed(config: CrawlConfig, doc: dict) -> tuple[dict, dict]:
    """The out record the Parser writes for `doc`, and the doc record Merge
    writes of it, with what the Parser read of the page."""
    out = out_record(doc, UrlFilter(config.url_allow, config.url_deny), config.revisit.hub_link_density,
                     TrapGuards.of(config), EntryRules.of(config), agent_token(config.user_agent))
    return out, page_record(doc, out)


def outlink_lines(config: CrawlConfig, doc: dict, out: dict) -> list[str]:
    """The page's links as the Parser keeps them (in scope: its `out`
    record), those a trap guard catches, and those the scope drops."""
    kept, trapped = out["outlinks"], out["trapped"]
    every = out_record(doc, UrlFilter([], []), config.revisit.hub_link_density, rules=EntryRules.of(config),
                       agent=agent_token(config.user_agent))["outlinks"]  # no scope, no guard
    dropped = [link for link in every if link not in set(kept) | {link for link, _ in trapped}]
    what = "entries" if out["type"] == ANNOUNCED else "outlinks"
    lines = [section(f"{what}: {len(kept)} in scope, {len(trapped)} trapped (trap guards), "
                     f"{len(dropped)} out of scope (url_allow, url_deny)")]
    if not every and doc["outcome"] == FETCHED and not doc["meta_follow"]:
        lines.append("(none followed: the page says nofollow)")
    lines += [f"in   {link}" for link in kept] + [f"trap {link} ({guard})" for link, guard in trapped]
    lines += [f"out  {link}" for link in dropped]
    if out["announcers"]:  # the feeds the page names, and robots.txt's sitemaps
        lines += [section(f"feeds and sitemaps named: {len(out['announcers'])}"),
                  *(f"in   {url}" for url in out["announcers"])]
    return lines


def check(config: CrawlConfig, url: str) -> tuple[dict, list[str]]:
    """Fetch `url` with `config`'s rules; its doc record as Merge writes it, and the lines that say what each
    stage made of it."""
    fetched, fetcher = fetch_one(config, url)
    out, doc = parsed(config, fetched)
    lines = [section(f"fetch (as layer {LAYER} of a crawl: {config.name})"), *record_lines(fetched),
             section("headers"), *header_lines(fetched),
             section("parse"), charset_line(doc), *robots_lines(config, fetcher, doc),
             *outlink_lines(config, doc, out)]
    xml = page_xml(doc, config.language)
    lines += [section("title"), xml_text(xml, "headline") if xml else "(no page)",
              section("main text"), xml_text(xml, "content") if xml else "(no page)",
              section("XML")]
    if indexable(doc):
        lines.append(xml)
    elif doc.get("kind"):
        lines.append(f"(none: a {doc['kind']} is no page of the index)")
    elif xml:
        lines.append("(none: HtmlToXml writes no XML for a page that says noindex)")
    else:
        lines.append(f"(none: HtmlToXml writes XML for fetched pages only; this URL's outcome is {doc['outcome']})")
    return doc, lines


def parser() -> argparse.ArgumentParser:
    made = CommandParser(
        prog="mrcrawl parsechecker", allow_abbrev=False,
        description="Fetch one URL politely with a crawl config's rules (robots.txt obeyed, scope, network guard, "
                    "retries, redirects) through the crawl's own fetcher, parser and XML writer, and print what "
                    "each makes of it: the doc record and headers, robots.txt and meta robots, charset, outlinks "
                    "in and out of scope, title, main text and the XML record. Nothing is stored.",
        epilog="Exit status: 0 the page was fetched; 1 it was not (the record printed says why); 2 a bad command "
               "line, URL or config (one line on stderr).",
    )
    made.add_argument("url", metavar="URL", help="the URL to fetch; put in canonical form as the crawl puts URLs")
    made.add_argument("--conf", required=True, help="YAML crawl config whose rules the fetch follows; required")
    add_verbosity_options(made)
    return made


def main(argv: list[str] | None = None) -> int:
    made = parser()
    args = made.parse_args(argv)
    configure_logging(args.verbosity)
    try:
        url = canonical_url(args.url)
        config = load_config(args.conf)
    except ValueError as error:  # load_config's ConfigError among them
        print(f"{made.prog}: {error}", file=sys.stderr)
        return EXIT_USAGE
    doc, lines = check(config, url)
    print("\n".join(lines))
    return EXIT_FETCHED if doc["outcome"] == FETCHED else EXIT_NOT_FETCHED


if __name__ == "__main__":
    sys.exit(run_command(main))
