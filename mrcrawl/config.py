"""A crawl's configuration: one YAML file per language, checked strictly.

Unknown keys are errors because a misspelt key (`dealy: 5`) would otherwise
be ignored silently and the crawl would run with the default, which for a
politeness setting is the worst kind of mistake.
"""
from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

import yaml


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


# key -> (accepts the value?, what a valid value is).  Numbers given as
# ints are accepted where floats are expected; bools are never numbers.
_RULES = {
    "name": (_non_empty_str, "a non-empty string"),
    "language": (_non_empty_str, "a non-empty string (a language code such as zh)"),
    "user_agent": (_non_empty_str, "a non-empty string"),
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
_REQUIRED = ("language", "user_agent")
_FLOATS = ("delay", "timeout", "max_crawl_delay")


def load_config(path: str | Path) -> CrawlConfig:
    """Read and check a YAML config; raise ConfigError naming what is wrong."""
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
    return config_from_mapping(data, source, default_name=path.stem)


def config_from_mapping(data: dict, source: str, default_name: str) -> CrawlConfig:
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
    values.setdefault("name", default_name)
    for key in _FLOATS:
        if key in values:
            values[key] = float(values[key])
    return CrawlConfig(**values)
