"""A crawl's configuration: one YAML file per language, checked strictly.

Unknown keys are errors because a misspelt key (`dealy: 5`) would otherwise
be ignored silently and the crawl would run with the default, which for a
politeness setting is the worst kind of mistake.

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
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
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


@dataclass(frozen=True)
class RevisitConfig:
    """The revisit policy of the crawl db.  Durations are in days (floats:
    0.5 is twelve hours); the loader has checked every value and relation."""

    hub_days: float = 1.0  # a hub page (home, section) is revisited this often: on every daily run
    first_days: float = 7.0  # an article's first revisit interval
    min_days: float = 1.0  # the shortest interval of an article
    max_days: float = 30.0  # the longest; gone URLs are checked again after this long
    grow: float = 1.5  # the interval's factor when an article was unchanged
    shrink: float = 0.5  # the interval's factor when an article changed
    retry_days: float = 1.0  # a transient failure is retried after this long...
    retry_runs: int = 3  # ...on at most this many runs in a row; then the URL is gone
    hub_link_density: float = 0.5  # a page whose visible text is this much link text is a hub


@dataclass(frozen=True)
class CrawlConfig:
    language: str
    user_agent: str
    name: str = ""
    threads: int = 30
    delay: float = 1.0
    timeout: float = 10.0
    retries: int = 2
    max_page_bytes: int = 2 * 1024 * 1024
    url_allow: list = field(default_factory=list)
    url_deny: list = field(default_factory=list)
    obey_robots: bool = True
    max_crawl_delay: float = 30.0
    allow_private_networks: bool = False
    allow_networks: list = field(default_factory=list)
    dns_server: str | None = None
    proxy: str | None = None
    revisit: RevisitConfig = field(default_factory=RevisitConfig)

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
        return cls(**values)


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _non_empty_str(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _string_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


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


def _parses(parse, value) -> bool:
    try:
        parse(value)
    except ValueError:
        return False
    return True


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


# A crawl's name is a directory's name (crawl/<name>, the default --output)
# and begins the export files' names: one path component of letters, digits,
# `_`, `.` and `-`, starting with a letter, digit or `_`, so never `.`, `..`,
# absolute or with a `/`.
_CRAWL_NAME = re.compile(r"\w[\w.-]{0,99}")
_CRAWL_NAME_FORM = ("a name of 1 to 100 letters, digits, '_', '.' and '-', starting with a letter, digit or '_' "
                    "(it names the crawl's directory, crawl/<name>)")


def _crawl_name(value) -> bool:
    return isinstance(value, str) and _CRAWL_NAME.fullmatch(value) is not None


# A header value must be one line of printable ASCII: anything else would be
# refused by the HTTP client on every request, or split the header.
_HEADER_TEXT = re.compile(r"^[ -~]+$")
_EMAIL = re.compile(r"^[^@\s()<>,;:]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$")


def _agent(value) -> bool:
    return _non_empty_str(value) and _HEADER_TEXT.match(value) is not None


def _contact(value) -> bool:
    """An http(s) URL with a host, or an e-mail address: something a site's
    owner can follow.  It goes inside `(+...)`, so no spaces or parentheses."""
    if not isinstance(value, str) or not re.fullmatch(r"[!-'*-~]+", value):
        return False
    if _EMAIL.match(value):
        return True
    parts = urlsplit(value)
    return parts.scheme in ("http", "https") and bool(parts.hostname) and "." in parts.hostname


_CONTACT_FORM = "an http(s) URL or an e-mail address where site owners can reach you (ASCII, no spaces)"


# key -> (accepts the value?, what a valid value is).  Numbers given as
# ints are accepted where floats are expected; bools are never numbers.
_RULES = {
    "name": (_crawl_name, _CRAWL_NAME_FORM),
    "language": (_non_empty_str, "a non-empty string (a language code such as zh)"),
    "user_agent": (_agent, "a non-empty string of printable ASCII on one line"),
    "contact": (_contact, _CONTACT_FORM),
    "threads": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "delay": (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0"),
    "timeout": (lambda v: _is_number(v) and v > 0, "a number of seconds > 0"),
    "retries": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "max_page_bytes": (lambda v: _is_int(v) and v > 0, "an integer > 0"),
    "url_allow": (_string_list, "a list of regular expressions"),
    "url_deny": (_string_list, "a list of regular expressions"),
    "obey_robots": (lambda v: isinstance(v, bool), "true or false"),
    "max_crawl_delay": (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0"),
    "allow_private_networks": (lambda v: isinstance(v, bool), "true or false"),
    "allow_networks": (_networks, "a list of networks (CIDR such as 10.1.0.0/16, or single addresses) the guard lets through"),
    "dns_server": (_dns_server, "the IP address of a DNS server, with an optional port (127.0.0.1:5353, [::1]:53), or null"),
    "proxy": (_proxy_url, "an http:// or https:// proxy URL (scheme, optional user:password@, host, optional port), or null"),
    "revisit": (lambda v: v is None or isinstance(v, dict), "a mapping of revisit settings (revisit.<key>: value)"),
}
_REQUIRED = ("language",)
_FLOATS = ("delay", "timeout", "max_crawl_delay")


def _finite(value) -> bool:
    return _is_number(value) and math.isfinite(value)


def _days(value) -> bool:
    return _finite(value) and value > 0


def _share(value) -> bool:
    return _finite(value) and 0 < value <= 1


# The keys of `revisit:`, checked as _RULES checks the top level.
_REVISIT_RULES = {
    "hub_days": (_days, "a number of days > 0"),
    "first_days": (_days, "a number of days > 0"),
    "min_days": (_days, "a number of days > 0"),
    "max_days": (_days, "a number of days > 0"),
    "grow": (lambda v: _finite(v) and v >= 1, "a number >= 1 (the factor of an unchanged article's interval)"),
    "shrink": (_share, "a number > 0 and <= 1 (the factor of a changed article's interval)"),
    "retry_days": (_days, "a number of days > 0"),
    "retry_runs": (lambda v: _is_int(v) and v >= 1, "a whole number >= 1"),
    "hub_link_density": (_share, "a number > 0 and <= 1 (the share of a page's visible text that is link text)"),
}
# (smaller, larger): the first may not exceed the second.
_REVISIT_ORDER = (("min_days", "first_days"), ("first_days", "max_days"), ("hub_days", "max_days"))


def load_config(path: str | Path, environ: Mapping[str, str] | None = None) -> CrawlConfig:
    """Read and check a YAML config; raise ConfigError naming what is wrong.

    `environ` (default: this process's environment) may give the contact."""
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
    return config_from_mapping(data, source, default_name=path.stem, environ=os.environ if environ is None else environ)


def config_from_mapping(data: dict, source: str, default_name: str, environ: Mapping[str, str]) -> CrawlConfig:
    for key in data:
        if key not in _RULES:
            known = ", ".join(sorted(_RULES))
            raise ConfigError(source, str(key), f"unknown key (known keys: {known})")
    for key in _REQUIRED:
        if key not in data:
            raise ConfigError(source, key, "is required")
    for key, value in data.items():
        accepts, expected = _RULES[key]
        if not accepts(value):
            shown = redacted_proxy(value) if key == "proxy" and isinstance(value, str) else value
            raise ConfigError(source, key, f"must be {expected}, got {shown!r}")
    for key in ("url_allow", "url_deny"):
        for index, pattern in enumerate(data.get(key, [])):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ConfigError(source, f"{key}[{index}]", f"bad regular expression {pattern!r}: {error}") from None
    values = dict(data)
    values["revisit"] = _revisit_config(data.get("revisit") or {}, source)
    values["user_agent"] = _user_agent(values.pop("contact", None), values.get("user_agent"), source, environ)
    if "name" not in data and not _crawl_name(default_name):
        raise ConfigError(source, "name", f"the file's stem {default_name!r} is no crawl name; "
                                          f"give the key name: {_CRAWL_NAME_FORM}")
    values.setdefault("name", default_name)
    for key in _FLOATS:
        if key in values:
            values[key] = float(values[key])
    return CrawlConfig(**values)


def _revisit_config(data: dict, source: str) -> RevisitConfig:
    """The checked `revisit:` mapping; an error names `revisit.<key>`."""
    for key in data:
        if key not in _REVISIT_RULES:
            known = ", ".join(sorted(_REVISIT_RULES))
            raise ConfigError(source, f"revisit.{key}", f"unknown key (known keys of revisit: {known})")
    for key, value in data.items():
        accepts, expected = _REVISIT_RULES[key]
        if not accepts(value):
            raise ConfigError(source, f"revisit.{key}", f"must be {expected}, got {value!r}")
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
    return RevisitConfig(**{key: value if key == "retry_runs" else float(value) for key, value in merged.items()})


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
        if not _contact(contact):
            raise ConfigError(source, CONTACT_VARIABLE, f"must be {_CONTACT_FORM}, got {contact!r}")
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
