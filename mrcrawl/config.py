"""A crawl's configuration: one YAML file per language, checked strictly.

Unknown keys are errors because a misspelt key (`dealy: 5`) would otherwise
be ignored silently and the crawl would run with the default, which for a
politeness setting is the worst kind of mistake.

Each key is declared once, as a field of CrawlConfig or RevisitConfig made
by `setting()`: its default, its check (the rule and what it says a valid
value is), its unit and a line on what it is.  The loader's checks and
messages, its lists of known keys, the floats it makes of ints, the crawl
db's revisit policy (frontier/db_update.py) and the reference table
(settings_table) are all worked out from those declarations.

The User-Agent names whoever runs the crawl, so that a site's owner can reach
them: `mrcrawl/<version> (+<contact>)`, the contact coming from the config's
`contact` key or else the MRCRAWL_CONTACT environment variable.  Without one
the config is refused.  The checked config holds the finished User-Agent, so
the jobs that read it need no environment.

The `revisit:` mapping holds the crawl db's revisit policy (RevisitConfig):
how often hub pages and articles are fetched again, how an article's
interval grows and shrinks, how long transient failures are retried.  Each
of its keys is optional and checked like the top-level keys; an error names
it as `revisit.<key>`.
"""
from __future__ import annotations

import dataclasses
import ipaddress
import json
import math
import os
import re
import typing
from collections.abc import Callable, Mapping
from dataclasses import MISSING, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

import yaml

# The environment variable that gives the operator's contact to every config
# that sets neither `contact` nor `user_agent` (one setting for all languages).
CONTACT_VARIABLE = "MRCRAWL_CONTACT"
# The contact the shipped configs once carried: the project's page, which
# answers for no one's crawl.  A config copied from an old release must fail.
PROJECT_CONTACT = "github.com/mrcrawl/mrcrawl"
# The product token robots.txt groups and meta robots are matched against.
AGENT_NAME = "mrcrawl"


class ConfigError(ValueError):
    """A bad config or input file; the message names the file and the field."""

    def __init__(self, source: str, what: str, problem: str):
        super().__init__(f"{source}: {what}: {problem}")


# ---- what a key's value may be ------------------------------------------------

@dataclass(frozen=True)
class Check:
    """A rule a key's value must pass, and what a valid value is: the loader
    refuses a value with `must be <expected>, got <value>`."""

    accepts: Callable[[Any], bool]
    expected: str


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _non_empty_str(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _string_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _finite(value) -> bool:
    return _is_number(value) and math.isfinite(value)


def _share(value) -> bool:
    return _finite(value) and 0 < value <= 1


def _parses(parse, value) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


DNS_PORT = 53


def dns_server_address(text: str) -> tuple[str, int]:
    """`dns_server`'s (address, port): `address`, `address:port`, `[v6]` or
    `[v6]:port`; ValueError if it is not one.  An address, not a name: a
    name would need a resolver to find the resolver."""
    host, port = text, DNS_PORT
    if text.startswith("["):
        host, _, rest = text[1:].partition("]")
        if rest:
            if not rest.startswith(":"):
                raise ValueError(text)
            port = int(rest[1:])
    elif text.count(":") == 1:
        host, port_text = text.split(":")
        port = int(port_text)
    address = ipaddress.ip_address(host)
    if not 0 < port < 65536:
        raise ValueError(text)
    return str(address), port


def allowed_networks(texts: list[str]) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """`allow_networks` (CIDR or single addresses) as networks; ValueError on a bad one."""
    return tuple(ipaddress.ip_network(text, strict=False) for text in texts)


def _networks(value) -> bool:
    return _string_list(value) and _parses(allowed_networks, value)


def _dns_server(value) -> bool:
    return value is None or (isinstance(value, str) and _parses(dns_server_address, value))


def proxy_address(url: str) -> tuple[str, str | None]:
    """`proxy`'s URL without its `user:password@`, and the user:password
    (percent-decoded) or None.  ValueError if it is no http(s) proxy URL:
    a scheme, a host, an optional port, nothing after the port but "/".

    Only the first goes to the HTTP client, whose errors may quote the
    proxy's URL; the credentials go in the Proxy-Authorization header."""
    parts = urlsplit(url)
    if (parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/")
            or parts.query or parts.fragment or re.search(r"[\x00-\x20\x7f]", url)):
        raise ValueError("not an http(s) proxy URL")
    port = parts.port  # raises ValueError for a port that is no number, or out of range
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    address = f"{parts.scheme}://{host}" + (f":{port}" if port is not None else "")
    if parts.username is None and parts.password is None:
        return address, None
    return address, f"{unquote(parts.username or '')}:{unquote(parts.password or '')}"


def redacted_proxy(text: str) -> str:
    """A proxy URL as it may be shown or stored: `http://user:***@host:port`,
    the password masked (the whole user information, when it has no password).
    Works on any text, so that a URL the config refuses is shown masked too."""
    if "@" not in text:
        return text
    head, _, tail = text.rpartition("@")
    scheme, separator, userinfo = head.rpartition("://")
    user, colon, _ = userinfo.partition(":")
    return f"{scheme}{separator}{user + ':***' if colon else '***'}@{tail}"


def _proxy_url(value) -> bool:
    return value is None or (isinstance(value, str) and _parses(proxy_address, value))


def _regex_problem(pattern: str) -> str | None:
    try:
        re.compile(pattern)
    except re.error as error:
        return f"bad regular expression {pattern!r}: {error}"
    return None


# A crawl's name is a directory's name (crawl/<name>, the default --output)
# and begins the export files' names: one path component of letters, digits,
# `_`, `.` and `-`, starting with a letter, digit or `_`, so never `.`, `..`,
# absolute or with a `/`.
_CRAWL_NAME = re.compile(r"\w[\w.-]{0,99}")
_CRAWL_NAME_CHECK = Check(
    lambda value: isinstance(value, str) and _CRAWL_NAME.fullmatch(value) is not None,
    "a name of 1 to 100 letters, digits, '_', '.' and '-', starting with a letter, digit or '_' "
    "(it names the crawl's directory, crawl/<name>)")

# A header value must be one line of printable ASCII: anything else would be
# refused by the HTTP client on every request, or split the header.
_HEADER_TEXT = re.compile(r"^[ -~]+$")
_EMAIL = re.compile(r"^[^@\s()<>,;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def _contact(value) -> bool:
    """An http(s) URL with a host, or an e-mail address: something a site's
    owner can follow.  It goes inside `(+...)`, so no spaces or parentheses."""
    if not isinstance(value, str) or not re.fullmatch(r"[!-'*-~]+", value):
        return False
    if _EMAIL.match(value):
        return True
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and "." in parts.hostname


# The checks more than one key shares.  Numbers given as ints are accepted
# where floats are expected (the loader makes floats of them); bools are
# never numbers.
_BOOLEAN = Check(lambda value: isinstance(value, bool), "true or false")
_REGEXES = Check(_string_list, "a list of regular expressions")
_NON_NEGATIVE_SECONDS = Check(lambda value: _is_number(value) and value >= 0, "a number of seconds >= 0")
_POSITIVE_DAYS = Check(lambda value: _finite(value) and value > 0, "a number of days > 0")
_COUNT_OR_NULL = Check(lambda value: value is None or (_is_int(value) and value >= 1), "a whole number >= 1, or null")


# ---- one key's declaration ------------------------------------------------------

@dataclass(frozen=True)
class Setting:
    """A config key's declaration, kept in its field's metadata (see setting()).

    `default_text` says what a config without the key gets when that is not
    the field's default but worked out by the loader (the file's stem, a
    User-Agent with the contact); a field with neither a default nor a
    default_text is a key the file must give.  `item_problem` checks each
    item of a list value, saying what is wrong with one, the error naming
    `key[index]`.  `redact` masks a refused string value before the error
    shows it, for a key whose value may hold a password."""

    check: Check
    unit: str
    doc: str
    default_text: str = ""
    item_problem: Callable[[Any], str | None] | None = None
    redact: Callable[[str], str] | None = None


# The key of a field's metadata that holds its Setting.
_SETTING = "setting"


def setting(default: Any = MISSING, *, factory: Any = MISSING, check: Check, unit: str = "",
            doc: str, default_text: str = "", item_problem: Callable[[Any], str | None] | None = None,
            redact: Callable[[str], str] | None = None) -> Any:
    """A config dataclass's field that declares its key: the default (or the
    factory of a mutable one; neither for a key without a fixed default) and
    the Setting."""
    declaration = Setting(check, unit, doc, default_text, item_problem, redact)
    return dataclasses.field(default=default, default_factory=factory, metadata={_SETTING: declaration})


def settings_of(section: type) -> dict[str, Setting]:
    """The Setting of every field of a config dataclass, in their order."""
    return {field.name: field.metadata[_SETTING] for field in dataclasses.fields(section)}


def default_of(field: dataclasses.Field) -> Any:
    """A field's default value (a new one from its factory), or MISSING."""
    return field.default_factory() if field.default_factory is not MISSING else field.default


# ---- the declarations -----------------------------------------------------------

# The orders a capped layer's URLs can come in (`order`, frontier/caps.py's order_value).
ORDERS = ("pagerank", "indegree", "bfs")

# What one politeness queue is (`politeness`, fetch/politeness.py): a host, or
# an address and every host that resolves to it (IRLbot: many hosts, one server).
POLITENESS_UNITS = ("host", "ip")

# The User-Agent the loader makes of the contact (_user_agent), as the reference shows it.
_OUR_AGENT = f"{AGENT_NAME}/<version> (+<contact>)"

@dataclass(frozen=True)
class RevisitConfig:
    """The revisit policy of the crawl db.  Durations are in days (floats:
    0.5 is twelve hours); the loader has checked every value and relation."""

    hub_days: float = setting(1.0, check=_POSITIVE_DAYS, unit="days",
                              doc="a hub page (home, section) is revisited this often: on every daily run")
    first_days: float = setting(7.0, check=_POSITIVE_DAYS, unit="days", doc="an article's first revisit interval")
    min_days: float = setting(1.0, check=_POSITIVE_DAYS, unit="days", doc="an article's shortest interval")
    max_days: float = setting(30.0, check=_POSITIVE_DAYS, unit="days",
                              doc="an article's longest interval; gone URLs are checked again after this long")
    grow: float = setting(1.5, check=Check(lambda value: _finite(value) and value >= 1,
                                           "a number >= 1 (the factor of an unchanged article's interval)"),
                          doc="an article's interval is multiplied by this when it was unchanged")
    shrink: float = setting(0.5, check=Check(_share, "a number > 0 and <= 1 (the factor of a changed article's interval)"),
                            doc="an article's interval is multiplied by this when it changed")
    retry_days: float = setting(1.0, check=_POSITIVE_DAYS, unit="days",
                                doc="a transient failure (network, 5xx, 429) is retried after this long")
    retry_runs: int = setting(3, check=Check(lambda value: _is_int(value) and value >= 1, "a whole number >= 1"),
                              unit="runs", doc="a transient failure is retried on at most this many runs in a row; "
                                               "then the URL is gone")
    hub_link_density: float = setting(
        0.5, check=Check(_share, "a number > 0 and <= 1 (the share of a page's visible text that is link text)"),
        doc="a page is a hub when at least this share of its visible text is link text")
    announcing_hub_days: float | None = setting(
        None, check=Check(lambda value: value is None or (_finite(value) and value > 0), "a number of days > 0, or null"),
        unit="days",
        doc="a hub page (not a seed) of a host whose feed or news sitemap the crawl reads is revisited this often "
            "instead: the site announces its new articles; null: as every hub (`revisit.hub_days`)")
    # What the sites announce is revisited by its kind (page/announce.py): a
    # feed changes many times a day, a news sitemap daily, a sitemap index
    # when a sitemap is added, a plain sitemap of the whole site rarely.
    feed_days: float = setting(0.5, check=_POSITIVE_DAYS, unit="days",
                               doc="an RSS or Atom feed is revisited this often (Common Crawl's news crawler: 12 hours)")
    news_sitemap_days: float = setting(1.0, check=_POSITIVE_DAYS, unit="days",
                                       doc="a Google News sitemap is revisited this often")
    sitemap_days: float = setting(14.0, check=_POSITIVE_DAYS, unit="days",
                                  doc="a plain sitemap is revisited this often")
    sitemap_index_days: float = setting(7.0, check=_POSITIVE_DAYS, unit="days",
                                        doc="a sitemap index is revisited this often")


# The relations between revisit keys, (smaller, larger): the first may not
# exceed the second.  The loader checks them and settings_table states them.
_REVISIT_ORDER = (("min_days", "first_days"), ("first_days", "max_days"), ("hub_days", "max_days"))

_FETCHES = Check(lambda value: _is_int(value) and value >= 0, "a whole number >= 0")


@dataclass(frozen=True)
class PldBudget:
    """The `pld_budget:` mapping: a pay-level domain's fetches per run are at
    most floor + per_linking_pld * its PLD in-degree (frontier/budgets.py).
    Both keys are required: a budget's size is the operator's choice."""

    floor: int = setting(check=_FETCHES, unit="fetches per run",
                         doc="what every pay-level domain gets, linked or not: enough for a site's daily "
                             "articles that no other crawled site links")
    per_linking_pld: int = setting(check=_FETCHES, unit="fetches per run",
                                   doc="what a pay-level domain gets more for each other pay-level domain linking "
                                       "to it: links bought within one domain (a link farm) buy nothing")


@dataclass(frozen=True)
class CrawlConfig:
    """A checked crawl config, as the jobs read it (to_json); each field
    declares its key of the config file."""

    language: str = setting(check=Check(_non_empty_str, "a non-empty string (a language code such as zh)"),
                            doc="the crawl's language code")
    user_agent: str = setting(
        check=Check(lambda value: _non_empty_str(value) and _HEADER_TEXT.match(value) is not None,
                    "a non-empty string of printable ASCII on one line"),
        default_text=f"`{_OUR_AGENT}`",
        doc="instead of contact: the whole User-Agent, sent as written; its first token is the robots.txt agent")
    # "" only for a config made in code; the loader gives the file's stem.
    name: str = setting("", check=_CRAWL_NAME_CHECK, default_text="the file's stem",
                        doc="the crawl's name, and its directory's (`crawl/<name>`)")
    threads: int = setting(30, check=Check(lambda value: _is_int(value) and value >= 1, "an integer >= 1"),
                           doc="fetch threads per reducer task")
    delay: float = setting(1.0, check=_NON_NEGATIVE_SECONDS, unit="seconds",
                           doc="the time between two request starts to one host (with `politeness: ip`, to one address)")
    politeness: str = setting(
        "host", check=Check(lambda value: value in POLITENESS_UNITS, "one of " + ", ".join(POLITENESS_UNITS)),
        doc="what `delay` and the one request in flight apply to: each `host` (scheme, name and port), or each "
            "`ip`: the hosts whose names resolve to one address share one queue, in one reduce task, and one "
            "clock, which keeps the largest Crawl-delay of its hosts")
    timeout: float = setting(10.0, check=Check(lambda value: _is_number(value) and value > 0, "a number of seconds > 0"),
                             unit="seconds", doc="DNS lookup, connect and read timeout per request; a whole response "
                                                 "(connect, headers and body) must be complete within 3 times this")
    retries: int = setting(2, check=Check(lambda value: _is_int(value) and value >= 0, "an integer >= 0"),
                           doc="extra attempts after a timeout, connection error, 429 or 5xx")
    max_page_bytes: int = setting(2 * 1024 * 1024, check=Check(lambda value: _is_int(value) and value > 0, "an integer > 0"),
                                  unit="bytes", doc="longer bodies are cut here and marked `truncated`")
    url_allow: list = setting(factory=list, check=_REGEXES, item_problem=_regex_problem,
                              doc="a URL must match one (`re.search`); empty: any URL")
    url_deny: list = setting(factory=list, check=_REGEXES, item_problem=_regex_problem,
                             doc="a URL matching one is dropped")
    obey_robots: bool = setting(True, check=_BOOLEAN, doc="whether robots.txt and meta robots are obeyed")
    max_crawl_delay: float = setting(30.0, check=_NON_NEGATIVE_SECONDS, unit="seconds",
                                     doc="a robots.txt Crawl-delay is capped to this")
    allow_private_networks: bool = setting(
        False, check=_BOOLEAN,
        doc="when false, hosts that are or resolve to loopback, private, link-local or reserved addresses "
            "get outcome `blocked`")
    allow_networks: list = setting(
        factory=list,
        check=Check(_networks, "a list of networks (CIDR such as 10.1.0.0/16, or single addresses) the guard lets through"),
        doc="with the guard on, addresses in these networks pass it all the same: an intranet you mean to crawl")
    dns_server: str | None = setting(
        None, check=Check(_dns_server, "the IP address of a DNS server, with an optional port (127.0.0.1:5353, [::1]:53), "
                                       "or null"),
        doc="the DNS server that looks host names up, over UDP (TCP for a truncated answer); null: the system resolver")
    proxy: str | None = setting(
        None, check=Check(_proxy_url, "an http:// or https:// proxy URL (scheme, optional user:password@, host, optional port), "
                                      "or null"),
        redact=redacted_proxy, doc="the HTTP proxy for every request (environment proxies are ignored)")
    # What a layer fetches: caps on the frontier (deferred URLs wait in the db,
    # never dropped), the trap guards on the links a page gives (a trapped URL
    # is recorded with its guard, never fetched), and the layer's time limit.
    max_urls_per_layer: int | None = setting(
        None, check=_COUNT_OR_NULL, unit="URLs",
        doc="a layer's frontier holds at most this many URLs besides the seeds (Nutch's topN); the rest wait in "
            "the db; null: no limit")
    max_urls_per_host: int | None = setting(
        None, check=_COUNT_OR_NULL, unit="URLs",
        doc="a layer's frontier holds at most this many URLs of one host besides the seeds (Nutch's "
            "generate.max.count); the rest wait in the db; null: no limit")
    pld_budget: PldBudget | None = setting(
        None, check=Check(lambda value: value is None or isinstance(value, dict),
                          "a mapping {floor: F, per_linking_pld: K} (pld_budget.<key>: value), or null"),
        unit="fetches per run",
        doc="a pay-level domain gets at most F + K * (the pay-level domains linking to it) fetches per run, seeds "
            "not counted (IRLbot's STAR budget: a site's many pages that no one else links, a link farm, cannot "
            "take the crawl); the rest wait in the db; null: no budget")
    max_url_length: int | None = setting(
        1024, check=_COUNT_OR_NULL, unit="characters",
        doc="a linked URL longer than this is trapped, as StormCrawler's default; null: no limit")
    max_path_repeats: int | None = setting(
        3, check=_COUNT_OR_NULL, unit="times",
        doc="a linked URL whose path holds one segment more than this many times is trapped (a path that grows "
            "on every link); null: no limit")
    max_query_params: int | None = setting(
        12, check=_COUNT_OR_NULL, unit="parameters",
        doc="a linked URL with more query parameters than this is trapped (faceted and calendar navigation "
            "that multiplies without end); null: no limit")
    # What the sites announce (page/announce.py, docs/announcements.md).
    announced_max_age_days: float | None = setting(
        30.0, check=Check(lambda value: value is None or (_finite(value) and value > 0), "a number of days > 0, or null"),
        unit="days",
        doc="a URL that a feed or sitemap dated (published, else modified) this long or longer before the run's "
            "start is not fetched as new, whether announced or linked: the site said it is old news (Common "
            "Crawl's news crawler drops entries older than 30 days); null: no limit")
    sitemap_strict: bool = setting(
        True, check=_BOOLEAN,
        doc="a sitemap's entries are followed only under the sitemap's own directory (sitemaps.org's rule, Nutch's "
            "strict mode): a sitemap at /news/sitemap.xml may list /news/a.html, not /sport/b.html")
    max_sitemap_nesting: int = setting(
        2, check=Check(lambda value: _is_int(value) and value >= 0, "a whole number >= 0"), unit="indexes",
        doc="a sitemap reached through more sitemap indexes than this is not followed (an index that lists "
            "indexes without end, or itself)")
    max_layer_seconds: float | None = setting(
        None, check=Check(lambda value: value is None or (_finite(value) and value > 0), "a number of seconds > 0, or null"),
        unit="seconds",
        doc="when a layer's fetching has run this long (in each Crawler task, from its start), no new request "
            "starts; the URLs left wait in the db for the next layer and the next run (Nutch's "
            "fetcher.timelimit.mins); null: no limit")
    # Which URLs come first when a cap or the time limit leaves some out (frontier/caps.py), and the
    # scores the link-based orders read (frontier/scores.py).
    order: str = setting(
        "pagerank", check=Check(lambda value: value in ORDERS, "one of " + ", ".join(ORDERS)),
        doc="which URLs a capped layer takes first: `pagerank` (higher PageRank), `indegree` (more linking "
            "pages, then hosts) or `bfs` (fewer hops from a seed); each falls back on bfs for ties. With `bfs` "
            "and no `pld_budget`, no run computes scores")
    pagerank_iterations: int = setting(
        3, check=Check(lambda value: _is_int(value) and value >= 1, "a whole number >= 1"), unit="iterations",
        doc="PageRank's power iterations at the start of each run, each from the last one's scores: a few per "
            "run, for the scores carry over from run to run and a daily crawl's graph changes little "
            "(docs/crawl-db.md#scores)")
    revisit: RevisitConfig = setting(
        factory=RevisitConfig,
        check=Check(lambda value: value is None or isinstance(value, dict),
                    "a mapping of revisit settings (revisit.<key>: value)"),
        default_text="`{}`", doc="the crawl db's revisit policy: the `revisit.<key>` settings, each optional")

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "CrawlConfig":
        return cls.from_dict(json.loads(text))

    @classmethod
    def from_dict(cls, values: dict) -> "CrawlConfig":
        """The config a checked config's JSON object (to_json's) stands for.
        One written before `revisit` existed gets the default policy."""
        values = dict(values)
        values["revisit"] = RevisitConfig(**(values.get("revisit") or {}))
        budget = values.get("pld_budget")
        values["pld_budget"] = None if budget is None else PldBudget(**budget)
        return cls(**values)


# The one key that is no field: the loader makes the User-Agent of it, and the
# checked config keeps only that, so the jobs need neither key nor environment.
CONTACT_SETTING = Setting(
    Check(_contact, "an http(s) URL or an e-mail address where site owners can reach you (ASCII, no spaces)"),
    unit="", default_text=f"`{CONTACT_VARIABLE}`",
    doc=f"yours, for the User-Agent `{_OUR_AGENT}`")



def _file_keys() -> dict[str, Setting]:
    """Every key a config file may give at the top level: the fields', and
    contact beside user_agent, which it stands in for."""
    fields = list(settings_of(CrawlConfig).items())
    at = [key for key, _ in fields].index("user_agent")
    return dict(fields[:at] + [("contact", CONTACT_SETTING)] + fields[at:])


_FILE_KEYS = _file_keys()


# ---- the loader -----------------------------------------------------------------

def load_config(path: str | Path, environ: Mapping[str, str] | None = None,
                settings: Mapping[str, Any] | None = None) -> CrawlConfig:
    """Read and check a YAML config; raise ConfigError naming what is wrong.

    `environ` (default: this process's environment) may give the contact;
    `settings` are one run's overrides of the file's keys (with_settings)."""
    path = Path(path)
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(source, "file", f"cannot read it ({error.strerror or error})") from None
    except UnicodeDecodeError:
        raise ConfigError(source, "file", "is not UTF-8 text") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "YAML"
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(source, where, f"YAML syntax error: {problem}") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(source, "file", "must be a YAML mapping of keys to values")
    if settings:
        data, source = with_settings(data, settings), f"{source} (with -s)"
    return config_from_mapping(data, source, default_name=path.stem, environ=os.environ if environ is None else environ)


def config_from_mapping(data: dict, source: str, default_name: str, environ: Mapping[str, str]) -> CrawlConfig:
    _check_mapping(data, _FILE_KEYS, _required_keys(CrawlConfig), source)
    values = dict(data)
    values["revisit"] = _revisit_config(data.get("revisit") or {}, source)
    if data.get("pld_budget") is not None:
        _check_mapping(data["pld_budget"], settings_of(PldBudget), _required_keys(PldBudget), source, section="pld_budget")
        values["pld_budget"] = PldBudget(**data["pld_budget"])
    values["user_agent"] = _user_agent(values.pop("contact", None), values.get("user_agent"), source, environ)
    if "name" not in data and not _CRAWL_NAME_CHECK.accepts(default_name):
        raise ConfigError(source, "name", f"the file's stem {default_name!r} is no crawl name; "
                                          f"give the key name: {_CRAWL_NAME_CHECK.expected}")
    values.setdefault("name", default_name)
    return CrawlConfig(**_floats_made(CrawlConfig, values))


def _check_mapping(data: dict, settings: Mapping[str, Setting], required: list[str], source: str,
                section: str = "") -> None:
    """Refuse a key `settings` does not declare, a missing required key, and a
    value its Setting refuses; a section's keys are named `<section>.<key>`."""
    prefix, whose = (f"{section}.", f" of {section}") if section else ("", "")
    for key in data:
        if key not in settings:
            known = ", ".join(sorted(settings))
            raise ConfigError(source, f"{prefix}{key}", f"unknown key (known keys{whose}: {known})")
    for key in required:
        if key not in data:
            raise ConfigError(source, f"{prefix}{key}", "is required")
    for key, value in data.items():
        declared = settings[key]
        if not declared.check.accepts(value):
            shown = declared.redact(value) if declared.redact and isinstance(value, str) else value
            raise ConfigError(source, f"{prefix}{key}", f"must be {declared.check.expected}, got {shown!r}")
    for key, declared in settings.items():
        if declared.item_problem and key in data:
            for index, item in enumerate(data[key]):
                problem = declared.item_problem(item)
                if problem:
                    raise ConfigError(source, f"{prefix}{key}[{index}]", problem)


# ---- one run's overrides: -s KEY=VALUE ------------------------------------------

# What names an override in an error: the option that gives it.
SETTINGS_SOURCE = "-s"
# The keys whose value is a mapping of keys of their own: `revisit.max_days`.
_SECTIONS = {"revisit": RevisitConfig, "pld_budget": PldBudget}


def parse_setting(text: str) -> tuple[str, Any]:
    """`-s KEY=VALUE` as (KEY, value): the value read as YAML, as the file's
    values are (`2`, `false`, `["^http://a/"]`, and nothing for null)."""
    key, equals, value = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise ConfigError(SETTINGS_SOURCE, repr(text), "give KEY=VALUE, such as delay=2 or revisit.max_days=60")
    try:
        return key, yaml.safe_load(value)
    except yaml.YAMLError as error:
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise ConfigError(SETTINGS_SOURCE, key, f"not a YAML value: {value!r} ({problem})") from None


def with_settings(data: dict, settings: Mapping[str, Any]) -> dict:
    """A config file's mapping with one run's overrides put in, each a key
    of the file or `revisit.<key>`.  Each is checked alone, as a file's key
    is, an error naming it after `-s`; the whole is checked as a file is."""
    data = dict(data)
    for key, value in settings.items():
        section, dot, inner = key.partition(".")
        if dot and section in _SECTIONS:
            _check_mapping({inner: value}, settings_of(_SECTIONS[section]), [], SETTINGS_SOURCE, section=section)
            given = data.get(section)
            if given is None or isinstance(given, dict):  # else the file's own error is reported
                data[section] = {**(given or {}), inner: value}
            continue
        _check_mapping({key: value}, _FILE_KEYS, [], SETTINGS_SOURCE)
        if key in _SECTIONS and value:
            _check_mapping(value, settings_of(_SECTIONS[key]), [], SETTINGS_SOURCE, section=key)
        data[key] = value
    return data


def config_with_settings(config: CrawlConfig, settings: Mapping[str, Any]) -> CrawlConfig:
    """A checked config with one run's overrides put in, checked as load_config checks them."""
    data = json.loads(config.to_json())
    if "contact" in settings:  # the contact makes the User-Agent anew
        del data["user_agent"]
    return config_from_mapping(with_settings(data, settings), f"the config (with {SETTINGS_SOURCE})",
                               default_name=config.name, environ={})


def _required_keys(section: type) -> list[str]:
    """The keys a file must give: the fields with neither a default nor one
    the loader works out (default_text)."""
    return [field.name for field in dataclasses.fields(section)
            if default_of(field) is MISSING and not field.metadata[_SETTING].default_text]


def _floats_made(section: type, values: dict) -> dict:
    """`values` with the ints a file gives for float fields made floats, so
    that `delay: 2` and `delay: 2.0` make the same config (and JSON)."""
    types = typing.get_type_hints(section)
    floats = {key for key, kind in types.items() if kind is float or kind == float | None}
    return {key: float(value) if key in floats and value is not None else value for key, value in values.items()}


def _revisit_config(data: dict, source: str) -> RevisitConfig:
    """The checked `revisit:` mapping; an error names `revisit.<key>`."""
    _check_mapping(data, settings_of(RevisitConfig), _required_keys(RevisitConfig), source, section="revisit")
    defaults = RevisitConfig()
    merged = {**dataclasses.asdict(defaults), **data}

    def shown(key: str) -> str:
        return repr(data[key]) if key in data else f"{merged[key]:g}, the default"

    for smaller, larger in _REVISIT_ORDER:
        if merged[smaller] > merged[larger]:
            # Blame the key the file sets: the default of the other one is not the file's mistake.
            if larger in data:
                raise ConfigError(source, f"revisit.{larger}",
                                  f"must be >= revisit.{smaller} ({shown(smaller)}), got {data[larger]!r}")
            raise ConfigError(source, f"revisit.{smaller}",
                              f"must be <= revisit.{larger} ({shown(larger)}), got {data[smaller]!r}")
    return RevisitConfig(**_floats_made(RevisitConfig, merged))


def _user_agent(contact: str | None, user_agent: str | None, source: str, environ: Mapping[str, str]) -> str:
    """The User-Agent to send: ours with the operator's contact, from the
    `contact` key or else MRCRAWL_CONTACT, or a config's own `user_agent`."""
    if user_agent is not None:
        # Sent as written, as Nutch sends the agent it is given: whoever writes
        # a whole agent has chosen what it says (the test web's and the
        # benchmark's agents speak only to their own loopback servers).  Only
        # the project's contact, which a copied old config carries, is refused.
        if contact is not None:
            raise ConfigError(source, "contact", "give contact or user_agent, not both (user_agent is sent as written)")
        if PROJECT_CONTACT in user_agent.lower():
            raise ConfigError(source, "user_agent", f"names the mrcrawl project ({PROJECT_CONTACT}) as the contact, not you: "
                                                    f"drop user_agent and set {CONTACT_VARIABLE} or the contact key")
        return user_agent
    where = "contact"
    if contact is None:
        contact, where = environ.get(CONTACT_VARIABLE, "").strip(), CONTACT_VARIABLE
        if not contact:
            raise ConfigError(source, "contact", f"no contact for the User-Agent: set {CONTACT_VARIABLE} (or the contact key) "
                                                 "to a URL or e-mail address where site owners can reach you")
        if not CONTACT_SETTING.check.accepts(contact):
            raise ConfigError(source, CONTACT_VARIABLE, f"must be {CONTACT_SETTING.check.expected}, got {contact!r}")
    if PROJECT_CONTACT in contact.lower():
        raise ConfigError(source, where, f"{contact!r} is the mrcrawl project's page, not your contact")
    return f"{_agent_product()} (+{contact})"


def _agent_product() -> str:
    """`mrcrawl/<installed version>`, or the bare name when run from a source
    tree that was never installed (the version lives in pyproject.toml only)."""
    try:
        return f"{AGENT_NAME}/{metadata.version('mrcrawl')}"
    except metadata.PackageNotFoundError:
        return AGENT_NAME


# ---- the reference ----------------------------------------------------------------

def settings_table() -> str:
    """The Markdown reference of every key a config file may give, the
    top-level ones and then `revisit.<key>`: its default, unit, valid values
    and what it is, rendered from the declarations."""
    rows = [("key", "default", "unit", "valid values", "what it is"), ("---",) * 5]
    sections = ((CrawlConfig, _FILE_KEYS, ""), (RevisitConfig, settings_of(RevisitConfig), "revisit."),
                (PldBudget, settings_of(PldBudget), "pld_budget."))
    for section, settings, prefix in sections:
        defaults = {field.name: default_of(field) for field in dataclasses.fields(section)}
        for key, declared in settings.items():
            rows.append((f"`{prefix}{key}`", _default_shown(declared, defaults.get(key, MISSING)), declared.unit,
                         declared.check.expected + _relations_said(prefix, key), declared.doc))
    return "\n".join("| " + " | ".join(_markdown_cell(cell) for cell in row) + " |" for row in rows) + "\n"


def _markdown_cell(text: str) -> str:
    """`text` as a table cell: outside `code` spans, the characters Markdown
    would read as markup in running text (`<name>` as an HTML tag, `'_'`
    as emphasis) escaped; every `|` escaped, as a table needs even in code."""
    parts = text.split("`")
    parts[::2] = [re.sub(r"([\\*_]|<(?=[A-Za-z/!?]))", r"\\\1", part) for part in parts[::2]]
    return "`".join(parts).replace("|", "\\|")


def _default_shown(declared: Setting, default: Any) -> str:
    if declared.default_text:
        return declared.default_text
    if default is MISSING:
        return "required"
    return f"`{json.dumps(default)}`"  # JSON's true, null and [] are YAML's too


def _relations_said(prefix: str, key: str) -> str:
    """"; <= `revisit.max_days`" and the like: the _REVISIT_ORDER relations of a revisit key."""
    if prefix != "revisit.":
        return ""
    bounds = [f">= `revisit.{smaller}`" for smaller, larger in _REVISIT_ORDER if larger == key]
    bounds += [f"<= `revisit.{larger}`" for smaller, larger in _REVISIT_ORDER if smaller == key]
    return "; " + " and ".join(bounds) if bounds else ""
