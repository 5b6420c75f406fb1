"""What a crawl is and how far it got: `DIR/crawl.json`, as one class.

The driver writes it after every step, `--resume` reads it to go on after the
last finished step, and the report, the exports and the benchmarks read it
to know what a crawl did.  A step counts as done only once crawl.json names
it (crawl_store.py says why).

A step is named by a StepName: its kind (the word its job, its counter group
and its logic module share: `crawl`, `dbupdate`, ...) and its layer, or the
layers it spans for the steps after the last layer (`merge/0-2`).  On disk
the name is the string `kind/layer`, as crawl.json and stats.json have
always written it.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone

from mrcrawl.config import CrawlConfig, redacted_proxy
from mrcrawl.store.crawl_store import CrawlStore
from mrcrawl.store.records import iso_utc

STATE_FORMAT = 2  # 2: runs with a crawl db
# How crawl.json writes a run's start for the names of the xml/ directory and the exports.
STARTED_AT_FORMAT = "%Y_%m_%d_%H_%M_%S"


class StateMismatch(ValueError):
    """A crawl.json that this run cannot go on from; the message says why and what to do."""


@dataclass(frozen=True, order=True)
class StepName:
    """A step of a crawl: `crawl/3` (layer 3's Crawler) or `merge/0-2` (the
    Merge over layers 0 to 2: `first_layer` is set only for such a span)."""

    kind: str
    layer: int
    first_layer: int | None = None

    def __post_init__(self):
        if self.first_layer == self.layer:
            object.__setattr__(self, "first_layer", None)  # `merge/0`, not `merge/0-0`: one spelling per step

    def __str__(self) -> str:
        layers = str(self.layer) if self.first_layer is None else f"{self.first_layer}-{self.layer}"
        return f"{self.kind}/{layers}"

    @classmethod
    def parse(cls, text: str) -> "StepName":
        """The step `text` (str() of a StepName) names; ValueError if it names none."""
        kind, slash, layers = text.partition("/")
        first, dash, last = layers.partition("-")
        if not (kind and slash and first.isdigit() and (not dash or last.isdigit())):
            raise ValueError(f"not a step name: {text!r}")
        return cls(kind, int(last) if dash else int(first), int(first) if dash else None)


@dataclass
class FinishedStep:
    seconds: float
    counters: dict  # group -> name -> amount; empty when the runner reported none (a Spark step)

    def to_json(self) -> dict:
        return {"seconds": self.seconds, "counters": self.counters}


@dataclass
class CrawlState:
    """crawl.json.  The fields in the order crawl.json writes them."""

    config: dict  # the checked config as json_config() shows it: the proxy's password masked
    seeds: str  # the seed file's absolute path
    seeds_count: int
    run: str  # the run's start (iso_utc, --now's time if given): what the db's revisit times count from
    started_at: str  # the same, as STARTED_AT_FORMAT: names xml/<started_at>/ and the exports
    db: str  # the crawl db's root
    # Seconds from the wall clock to the run's clock, which stamps its times
    # (records.RunClock): `run` minus the real time the run began, 0 without
    # --now.  A resumed run keeps it, so its clock goes on as if never stopped.
    clock_offset: float = 0.0
    done: dict[StepName, FinishedStep] = field(default_factory=dict)  # in the order the steps finished
    depth: int | None = None  # the crawl's layers, once a run has begun them
    runners: list[str] = field(default_factory=list)  # every runner that worked on the crawl, for the report
    settings: dict = field(default_factory=dict)  # the run's -s overrides, as json_settings() shows them

    @classmethod
    def new(cls, config: CrawlConfig, seeds_path: str, seeds_count: int, now: datetime | None,
            db: str, settings: dict | None = None) -> "CrawlState":
        """A run that begins now, as of `now` (--now) if given, else of the real time;
        `config` is the config with the run's -s `settings` in it."""
        began = datetime.now(timezone.utc)
        start = now or began
        return cls(config=json_config(config), seeds=seeds_path, seeds_count=seeds_count, run=iso_utc(start),
                   started_at=start.astimezone(timezone.utc).strftime(STARTED_AT_FORMAT), db=db,
                   clock_offset=(start - began).total_seconds(), settings=json_settings(settings or {}))

    @classmethod
    def load(cls, store: CrawlStore) -> "CrawlState":
        """The crawl.json of `store`; StateMismatch if this version cannot read it."""
        values = json.loads(store.read_text(store.state_path))
        if not isinstance(values, dict) or values.get("format") != STATE_FORMAT:
            raise StateMismatch(f"{store.state_path}: format: not a crawl state this version can resume")
        return cls(config=values["config"], seeds=values["seeds"], seeds_count=values["seeds_count"],
                   run=values["run"], started_at=values["started_at"], db=values["db"],
                   # A crawl.json from before the run's clock was kept: its runs stamped the wall clock.
                   clock_offset=values.get("clock_offset", 0.0),
                   done={StepName.parse(name): FinishedStep(step["seconds"], step["counters"])
                         for name, step in values["done"].items()},
                   depth=values.get("depth"), runners=list(values.get("runners", [])),
                   settings=dict(values.get("settings") or {}))

    def to_json(self) -> dict:
        values = {"format": STATE_FORMAT, "config": self.config, "seeds": self.seeds, "seeds_count": self.seeds_count,
                  "run": self.run, "started_at": self.started_at, "db": self.db, "clock_offset": self.clock_offset,
                  "done": self.done_json()}
        if self.depth is not None:
            values.update(depth=self.depth, runners=self.runners)
        if self.settings:
            values["settings"] = self.settings
        return values

    def done_json(self) -> dict:
        """The finished steps as crawl.json and stats.json write them."""
        return {str(name): step.to_json() for name, step in self.done.items()}

    def save(self, store: CrawlStore) -> None:
        """crawl.json, and once a step is done stats.json beside it (the same
        steps, for people and scripts)."""
        store.write_json(store.state_path, self.to_json())
        if self.done:
            store.write_json(store.stats_path, self.done_json())

    def record(self, name: StepName, seconds: float, counters: dict) -> None:
        """A step finished; save() makes it count."""
        self.done[name] = FinishedStep(seconds, counters)

    @property
    def started(self) -> datetime:
        """When the run started (UTC), as the crawl's clock had it."""
        return datetime.strptime(self.started_at, STARTED_AT_FORMAT).replace(tzinfo=timezone.utc)

    def finished(self, kind: str) -> list[FinishedStep]:
        """The finished steps of one kind, in the order they finished."""
        return [step for name, step in self.done.items() if name.kind == kind]

    def refuse_other_run(self, store: CrawlStore, now: datetime | None) -> None:
        """A resume goes on with the run's own time: refuse another --now."""
        if now and iso_utc(now) != self.run:
            raise StateMismatch(f"--now {now.isoformat()}: the crawl in {store.root} runs as of {self.run}; "
                                "resume without --now, or with that time")

    def refuse_other_config(self, store: CrawlStore, config: CrawlConfig, config_path: str) -> None:
        """A resume goes on with the config it started with: refuse another.
        A key the crawl's config does not name, one added to mrcrawl since
        the crawl began, stands at its default there."""
        changed = config_differences(json_config(CrawlConfig.from_dict(self.config)), json_config(config))
        if changed:
            raise StateMismatch(f"{config_path}: {differences_said(changed, f'the config of the crawl in {store.root}')}; "
                                "resume with the same config, or crawl into another --output")

    def refuse_other_settings(self, store: CrawlStore, settings: dict) -> None:
        """A resume goes on with the -s overrides it started with: refuse others,
        even where the config they make is the same (the file may change back)."""
        changed = config_differences(self.settings, json_settings(settings), nested=False)
        if changed:
            raise StateMismatch(f"-s {differences_said(changed, f'the -s settings of the crawl in {store.root}')}; "
                                "resume with the same -s settings, or crawl into another --output")


def masked(values: dict) -> dict:
    """Config keys and values as crawl.json keeps them and messages show
    them: the proxy's password masked."""
    if isinstance(values.get("proxy"), str):
        return {**values, "proxy": redacted_proxy(values["proxy"])}
    return values


def json_config(config: CrawlConfig) -> dict:
    """The config as crawl.json keeps it and messages show it: the proxy's
    password masked.  Only config.json, which the jobs read, holds it."""
    return masked(json.loads(config.to_json()))


def json_settings(settings: dict) -> dict:
    """A run's -s overrides (key -> value) as crawl.json keeps them."""
    return masked(dict(settings))


# How long a value's text may be in a message before its middle is cut out.
SHOWN_VALUE_CHARS = 60
# How many items of a list a message names, of those added and of those removed.
SHOWN_ITEMS = 3
_ABSENT = object()


def config_differences(crawled: dict, given: dict, nested: bool = True) -> list[tuple[str, str]]:
    """(key, what differs) for each key whose value differs: both values, a
    list's items added and removed, and a mapping's keys (`revisit.grow`)
    one by one when `nested`."""
    differences = []
    for key in sorted(set(crawled) | set(given)):
        before, now = crawled.get(key, _ABSENT), given.get(key, _ABSENT)
        if before == now:
            continue
        if nested and isinstance(before, dict) and isinstance(now, dict):
            differences += [(f"{key}.{inner}", said) for inner, said in config_differences(before, now)]
        elif isinstance(before, list) and isinstance(now, list):
            differences.append((key, list_difference(before, now)))
        else:
            differences.append((key, f"{shown_value(before)} in the crawl, {shown_value(now)} here"))
    return differences


def list_difference(before: list, now: list) -> str:
    added = [item for item in now if item not in before]
    removed = [item for item in before if item not in now]
    if not added and not removed:
        return f"the same items in another order or number: {shown_value(before)} in the crawl, {shown_value(now)} here"

    def named(items: list, what: str) -> list[str]:
        more = len(items) - SHOWN_ITEMS
        return [f"{shown_value(item)} {what}" for item in items[:SHOWN_ITEMS]] + ([f"{more} more {what}"] if more > 0 else [])

    return ", ".join(named(added, "added here") + named(removed, "only in the crawl"))


def shown_value(value) -> str:
    """A value as a message shows it: its repr, its middle cut out when long."""
    if value is _ABSENT:
        return "not given"
    text = repr(value)
    if len(text) <= SHOWN_VALUE_CHARS:
        return text
    half = (SHOWN_VALUE_CHARS - 1) // 2
    return f"{text[:half]}…{text[-half:]}"


def differences_said(differences: list[tuple[str, str]], other: str) -> str:
    """`key, key: differs from <other>: key (what); key (what)`."""
    keys = ", ".join(key for key, _ in differences)
    details = "; ".join(f"{key} ({said})" for key, said in differences)
    return f"{keys}: differs from {other}: {details}"
