"""A crawl's configuration: one YAML file per language, checked strictly.

Unknown keys are errors because a misspelt key (`dealy: 5`) would otherwise
be ignored silently and the crawl would run with the default, which for a
politeness setting is the worst kind of mistake.

The User-Agent names whoever runs the crawl, so that a site's owner can reach
them: `mrcrawl/<version> (+<contact>)`, the contact coming from the config's
`contact` key or else the MRCRAWL_CONTACT environment variable.  Without one
the config is refused.  The checked config holds the finished User-Agent, so
the jobs that read it need no environment.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from urllib.parse import urlsplit

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
    proxy: str | None = None

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> "CrawlConfig":
        return cls(**json.loads(text))


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _non_empty_str(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _regex_list(value) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


def _proxy_url(value) -> bool:
    return value is None or (isinstance(value, str) and re.match(r"^https?://[^/\s]+", value) is not None)


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
    "name": (_non_empty_str, "a non-empty string"),
    "language": (_non_empty_str, "a non-empty string (a language code such as zh)"),
    "user_agent": (_agent, "a non-empty string of printable ASCII on one line"),
    "contact": (_contact, _CONTACT_FORM),
    "threads": (lambda v: _is_int(v) and v >= 1, "an integer >= 1"),
    "delay": (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0"),
    "timeout": (lambda v: _is_number(v) and v > 0, "a number of seconds > 0"),
    "retries": (lambda v: _is_int(v) and v >= 0, "an integer >= 0"),
    "max_page_bytes": (lambda v: _is_int(v) and v > 0, "an integer > 0"),
    "url_allow": (_regex_list, "a list of regular expressions"),
    "url_deny": (_regex_list, "a list of regular expressions"),
    "obey_robots": (lambda v: isinstance(v, bool), "true or false"),
    "max_crawl_delay": (lambda v: _is_number(v) and v >= 0, "a number of seconds >= 0"),
    "allow_private_networks": (lambda v: isinstance(v, bool), "true or false"),
    "proxy": (_proxy_url, "an http:// or https:// proxy URL, or null"),
}
_REQUIRED = ("language",)
_FLOATS = ("delay", "timeout", "max_crawl_delay")


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
            raise ConfigError(source, key, f"must be {expected}, got {value!r}")
    for key in ("url_allow", "url_deny"):
        for index, pattern in enumerate(data.get(key, [])):
            try:
                re.compile(pattern)
            except re.error as error:
                raise ConfigError(source, f"{key}[{index}]", f"bad regular expression {pattern!r}: {error}") from None
    values = dict(data)
    values["user_agent"] = _user_agent(values.pop("contact", None), values.get("user_agent"), source, environ)
    values.setdefault("name", default_name)
    for key in _FLOATS:
        if key in values:
            values[key] = float(values[key])
    return CrawlConfig(**values)


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
