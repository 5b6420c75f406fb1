"""The config loader's defaults and types, the operator's contact in the
User-Agent, and the revisit policy's keys, on real files; each key declared
once, and what is made of the declarations."""
import dataclasses
import json
import os
import subprocess
from importlib import metadata
from pathlib import Path

import pytest
import yaml

from crawl_support import driver_command, write_inputs
from mrcrawl.config import (
    ConfigError,
    CrawlConfig,
    PldBudget,
    RevisitConfig,
    Setting,
    config_with_settings,
    default_of,
    dns_server_address,
    load_config,
    parse_setting,
    settings_of,
    settings_table,
)
from mrcrawl.page.robots_directives import agent_token
from mrcrawl.frontier.db_update import DAY, RevisitPolicy
from mrcrawl.store.crawl_state import config_differences


def test_defaults_follow_the_contract(tmp_path):
    path = tmp_path / "zh.yaml"
    path.write_text("language: zh\nuser_agent: mrcrawl/0.1\n", encoding="utf-8")
    config = load_config(path)
    assert config.name == "zh"
    assert (config.threads, config.delay, config.timeout, config.retries) == (30, 1.0, 10.0, 2)
    assert config.max_page_bytes == 2097152
    assert config.url_allow == [] and config.url_deny == []
    assert config.obey_robots is True and config.allow_private_networks is False
    assert config.max_crawl_delay == 30.0 and config.proxy is None
    assert config.dns_server is None and config.allow_networks == []


def test_integers_are_accepted_for_seconds_and_round_trip_through_json(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("name: news\nlanguage: ru\nuser_agent: a/1\ndelay: 2\nurl_allow: ['^https?://x\\.ru/']\n", encoding="utf-8")
    config = load_config(path)
    assert config.delay == 2.0 and isinstance(config.delay, float)
    assert CrawlConfig.from_json(config.to_json()) == config


# ---- the resolver and the networks the guard lets through ------------------------

@pytest.mark.parametrize("text, address", [
    ("127.0.0.1:5353", ("127.0.0.1", 5353)),
    ("10.0.0.53", ("10.0.0.53", 53)),
    ("'[::1]:5353'", ("::1", 5353)),
    ("::1", ("::1", 53)),
])
def test_dns_server_is_an_address_with_an_optional_port(tmp_path, text, address):
    config = load_config(write_config(tmp_path, f"user_agent: a/1\ndns_server: {text}\n"))
    assert dns_server_address(config.dns_server) == address
    assert CrawlConfig.from_json(config.to_json()) == config


@pytest.mark.parametrize("text, key", [
    ("dns_server: resolver.example.org\n", "dns_server"),
    ("dns_server: 127.0.0.1:99999\n", "dns_server"),
    ("dns_server: '127.0.0.1:'\n", "dns_server"),
    ("dns_server: 53\n", "dns_server"),
    ("allow_networks: 10.0.0.0/8\n", "allow_networks"),
    ("allow_networks: ['10.0.0.0/33']\n", "allow_networks"),
    ("allow_networks: ['intranet']\n", "allow_networks"),
])
def test_bad_dns_server_and_allow_networks_are_refused_naming_the_key(tmp_path, text, key):
    message = config_error(write_config(tmp_path, "user_agent: a/1\n" + text), {})
    assert message.startswith(f"{tmp_path / 'zh.yaml'}: {key}: must be "), message


# ---- the operator's contact in the User-Agent --------------------------------

CONTACT = "https://crawler.example.org/about"
OUR_AGENT = f"mrcrawl/{metadata.version('mrcrawl')}"
# The contact every shipped config used to send: the project's, not the operator's.
OLD_SHIPPED_AGENT = "'mrcrawl/0.1 (+https://github.com/mrcrawl/mrcrawl)'"


def write_config(tmp_path, text):
    path = tmp_path / "zh.yaml"
    path.write_text("language: zh\n" + text, encoding="utf-8")
    return path


def config_error(path, environ) -> str:
    with pytest.raises(ConfigError) as error:
        load_config(path, environ)
    return str(error.value)


def test_a_config_without_a_contact_is_refused_naming_file_key_and_variable(tmp_path):
    message = config_error(write_config(tmp_path, ""), environ={})
    assert message.startswith(f"{tmp_path / 'zh.yaml'}: contact: ")
    assert "MRCRAWL_CONTACT" in message
    assert "\n" not in message


@pytest.mark.parametrize("contact", [CONTACT, "http://crawler.example.org", "crawl-ops@example.org"])
def test_the_agent_is_ours_with_the_contact_from_the_environment(tmp_path, contact):
    config = load_config(write_config(tmp_path, ""), {"MRCRAWL_CONTACT": contact})
    assert config.user_agent == f"{OUR_AGENT} (+{contact})"
    assert agent_token(config.user_agent) == "mrcrawl"
    # The checked config the jobs read holds the finished agent: they need no environment.
    assert CrawlConfig.from_json(config.to_json()).user_agent == config.user_agent


def test_the_contact_key_wins_over_the_environment(tmp_path):
    path = write_config(tmp_path, "contact: ops@example.org\n")
    config = load_config(path, {"MRCRAWL_CONTACT": CONTACT})
    assert config.user_agent == f"{OUR_AGENT} (+ops@example.org)"
    assert "contact" not in json.loads(config.to_json())


def test_a_config_s_own_user_agent_is_sent_as_written(tmp_path):
    config = load_config(write_config(tmp_path, "user_agent: 'newsbot/2.0 (+https://news.example.org/bot)'\n"), {"MRCRAWL_CONTACT": CONTACT})
    assert config.user_agent == "newsbot/2.0 (+https://news.example.org/bot)"


@pytest.mark.parametrize(
    "text, environ, key",
    [
        ("", {"MRCRAWL_CONTACT": "call me"}, "MRCRAWL_CONTACT"),
        ("", {"MRCRAWL_CONTACT": "ftp://crawler.example.org/"}, "MRCRAWL_CONTACT"),
        ("", {"MRCRAWL_CONTACT": "https://localhost/"}, "MRCRAWL_CONTACT"),
        ("", {"MRCRAWL_CONTACT": "ops@example.org)"}, "MRCRAWL_CONTACT"),
        ("contact: 'the night shift'\n", {}, "contact"),
        ("contact: 'ops@example'\n", {}, "contact"),
        ("contact: 'https://crawler.exämple.org/'\n", {}, "contact"),
        ("contact: 'https://github.com/mrcrawl/mrcrawl'\n", {}, "contact"),
        ("", {"MRCRAWL_CONTACT": "https://GitHub.com/mrcrawl/mrcrawl"}, "MRCRAWL_CONTACT"),
        (f"user_agent: {OLD_SHIPPED_AGENT}\n", {"MRCRAWL_CONTACT": CONTACT}, "user_agent"),
        ("user_agent: \"bot/1\\r\\nX-Evil: 1\"\n", {}, "user_agent"),
        (f"contact: ops@example.org\nuser_agent: 'bot/1 (+{CONTACT})'\n", {}, "contact"),
    ],
)
def test_bad_contacts_and_agents_are_refused_naming_the_key(tmp_path, text, environ, key):
    message = config_error(write_config(tmp_path, text), environ)
    assert message.startswith(f"{tmp_path / 'zh.yaml'}: {key}: "), message


def test_a_crawl_sends_the_contact_of_the_environment_and_stores_it(tmp_path, web_server):
    """The real driver and jobs: the contact comes from MRCRAWL_CONTACT, reaches
    every request, and is kept in config.json, which the jobs read."""
    config = web_server.web.crawl_config()
    del config["user_agent"]
    conf = tmp_path / "testweb.yaml"
    conf.write_text(yaml.safe_dump(config), encoding="utf-8")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("\n".join(web_server.seeds) + "\n", encoding="utf-8")
    output = tmp_path / "crawl"
    environment = {**os.environ, "MRCRAWL_CONTACT": CONTACT}
    result = subprocess.run(driver_command(seeds, conf, output, 1),
                            env=environment, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    web_server.wait_idle()
    agents = {entry.user_agent for entry in web_server.log}
    assert agents == {f"{OUR_AGENT} (+{CONTACT})"}
    assert json.loads((output / "config.json").read_text(encoding="utf-8"))["user_agent"] == f"{OUR_AGENT} (+{CONTACT})"


# ---- revisit: the crawl db's revisit policy ----------------------------------

REVISIT_DEFAULTS = {"hub_days": 1.0, "first_days": 7.0, "min_days": 1.0, "max_days": 30.0, "grow": 1.5,
                    "shrink": 0.5, "retry_days": 1.0, "retry_runs": 3, "hub_link_density": 0.5,
                    "announcing_hub_days": None, "feed_days": 0.5, "news_sitemap_days": 1.0, "sitemap_days": 14.0,
                    "sitemap_index_days": 7.0}


def revisit_config(tmp_path, text: str):
    return load_config(write_config(tmp_path, f"user_agent: a/1\n{text}"), {})


def test_without_revisit_the_policy_is_the_default(tmp_path):
    for text in ("", "revisit:\n", "revisit: {}\n"):
        config = revisit_config(tmp_path, text)
        assert config.revisit == RevisitConfig()
        assert dataclasses.asdict(config.revisit) == REVISIT_DEFAULTS


def test_revisit_keys_are_read_days_as_floats_and_round_trip_through_json(tmp_path):
    config = revisit_config(tmp_path, "revisit:\n  hub_days: 0.5\n  first_days: 3\n  min_days: 0.25\n  max_days: 60\n"
                                      "  grow: 2\n  shrink: 0.25\n  retry_days: 2\n  retry_runs: 5\n  hub_link_density: 0.7\n")
    assert config.revisit == RevisitConfig(hub_days=0.5, first_days=3.0, min_days=0.25, max_days=60.0, grow=2.0,
                                           shrink=0.25, retry_days=2.0, retry_runs=5, hub_link_density=0.7)
    assert isinstance(config.revisit.first_days, float) and isinstance(config.revisit.grow, float)
    assert isinstance(config.revisit.retry_runs, int)
    again = CrawlConfig.from_json(config.to_json())
    assert again == config and isinstance(again.revisit, RevisitConfig)
    assert json.loads(config.to_json())["revisit"]["max_days"] == 60.0
    # One key given, the others keep their defaults.
    assert revisit_config(tmp_path, "revisit:\n  grow: 3\n").revisit == RevisitConfig(grow=3.0)


def test_a_config_json_written_before_revisit_existed_loads_with_the_default_policy(tmp_path):
    old = json.loads(revisit_config(tmp_path, "").to_json())
    del old["revisit"]
    config = CrawlConfig.from_json(json.dumps(old))
    assert config.revisit == RevisitConfig()
    assert config == revisit_config(tmp_path, "")
    assert CrawlConfig.from_dict(old) == config


@pytest.mark.parametrize(
    "text, key, says",
    [
        ("revisit: 7\n", "revisit", "mapping"),
        ("revisit: [hub_days]\n", "revisit", "mapping"),
        ("revisit:\n  hub_dayz: 2\n", "revisit.hub_dayz", "unknown key"),
        ("revisit:\n  max_days: 30\n  interval: 3\n", "revisit.interval", "unknown key"),
        ("revisit:\n  hub_days: 0\n", "revisit.hub_days", "> 0"),
        ("revisit:\n  first_days: -1\n", "revisit.first_days", "> 0"),
        ("revisit:\n  min_days: '1'\n", "revisit.min_days", "> 0"),
        ("revisit:\n  max_days: .inf\n", "revisit.max_days", "> 0"),
        ("revisit:\n  retry_days: .nan\n", "revisit.retry_days", "> 0"),
        ("revisit:\n  retry_days: true\n", "revisit.retry_days", "> 0"),
        ("revisit:\n  grow: 0.9\n", "revisit.grow", ">= 1"),
        ("revisit:\n  shrink: 0\n", "revisit.shrink", "<= 1"),
        ("revisit:\n  shrink: 1.5\n", "revisit.shrink", "<= 1"),
        ("revisit:\n  retry_runs: 0\n", "revisit.retry_runs", "whole number"),
        ("revisit:\n  retry_runs: 2.5\n", "revisit.retry_runs", "whole number"),
        ("revisit:\n  hub_link_density: 0\n", "revisit.hub_link_density", "<= 1"),
        ("revisit:\n  hub_link_density: 1.01\n", "revisit.hub_link_density", "<= 1"),
        # The relations name the key the file sets, and the other key's value.
        ("revisit:\n  first_days: 0.5\n", "revisit.first_days", ">= revisit.min_days (1, the default)"),
        ("revisit:\n  first_days: 40\n", "revisit.first_days", "<= revisit.max_days (30, the default), got 40"),
        ("revisit:\n  min_days: 10\n", "revisit.min_days", "<= revisit.first_days (7, the default)"),
        ("revisit:\n  max_days: 5\n", "revisit.max_days", ">= revisit.first_days (7, the default), got 5"),
        ("revisit:\n  min_days: 2\n  first_days: 1.5\n", "revisit.first_days", ">= revisit.min_days (2)"),
        ("revisit:\n  hub_days: 31\n", "revisit.hub_days", "<= revisit.max_days (30, the default)"),
        ("revisit:\n  first_days: 10\n  max_days: 8\n", "revisit.max_days", ">= revisit.first_days (10)"),
    ],
)
def test_bad_revisit_settings_are_refused_naming_the_key(tmp_path, text, key, says):
    message = config_error(write_config(tmp_path, f"user_agent: a/1\n{text}"), {})
    assert message.startswith(f"{tmp_path / 'zh.yaml'}: {key}: "), message
    assert says in message, message
    assert "\n" not in message


def test_the_bounds_themselves_are_allowed(tmp_path):
    text = ("revisit:\n  min_days: 2\n  first_days: 2\n  max_days: 2\n  hub_days: 2\n  grow: 1\n  shrink: 1\n"
            "  retry_runs: 1\n  hub_link_density: 1\n")
    assert revisit_config(tmp_path, text).revisit == RevisitConfig(
        hub_days=2.0, first_days=2.0, min_days=2.0, max_days=2.0, grow=1.0, shrink=1.0, retry_runs=1,
        hub_link_density=1.0)



def test_the_revisit_policy_is_the_config_s_in_seconds():
    policy = RevisitPolicy.from_config(RevisitConfig(hub_days=0.5, max_days=60.0, retry_runs=5))
    assert (policy.hub_interval, policy.first_interval, policy.max_interval) == (0.5 * DAY, 7 * DAY, 60 * DAY)
    assert (policy.grow, policy.shrink, policy.retry_runs) == (1.5, 0.5, 5)


# ---- each key declared once ----------------------------------------------------

SECTIONS = (CrawlConfig, RevisitConfig, PldBudget)
# The one key a file may give that is no field: the loader makes the User-Agent of it.
INPUT_ONLY = {"contact"}


def field_names(section) -> set[str]:
    return {field.name for field in dataclasses.fields(section)}


def known_keys(message: str) -> set[str]:
    """The keys an `unknown key (known keys: a, b)` error lists."""
    return set(message.rpartition(": ")[2].rstrip(")").split(", "))


@pytest.mark.parametrize("section", SECTIONS)
def test_every_field_declares_its_key(section):
    settings = settings_of(section)  # a field without a declaration raises KeyError
    assert set(settings) == field_names(section)
    for key, declared in settings.items():
        assert isinstance(declared, Setting) and declared.doc and declared.check.expected, key


def test_the_loader_knows_the_declared_keys_and_no_others(tmp_path):
    message = config_error(write_config(tmp_path, "user_agent: a/1\nno_such_key: 1\n"), {})
    assert known_keys(message) == field_names(CrawlConfig) | INPUT_ONLY
    message = config_error(write_config(tmp_path, "user_agent: a/1\nrevisit:\n  no_such_key: 1\n"), {})
    assert known_keys(message) == field_names(RevisitConfig)


@pytest.mark.parametrize("section", SECTIONS)
def test_every_default_passes_its_own_check(section):
    """A key whose default the loader works out (default_text: the file's
    stem, the User-Agent) has none of its own to check."""
    settings = settings_of(section)
    for field in dataclasses.fields(section):
        declared, default = settings[field.name], default_of(field)
        if default is not dataclasses.MISSING and not declared.default_text:
            assert declared.check.accepts(default), field.name


def test_a_file_giving_every_default_makes_the_default_config(tmp_path):
    """The defaults pass the loader whole, the relations between revisit keys too."""
    def given(section):
        settings = settings_of(section)
        return {field.name: default_of(field) for field in dataclasses.fields(section)
                if default_of(field) is not dataclasses.MISSING and not settings[field.name].default_text}

    text = yaml.safe_dump({**given(CrawlConfig), "user_agent": "a/1", "revisit": given(RevisitConfig)})
    assert load_config(write_config(tmp_path, text), {}) == load_config(write_config(tmp_path, "user_agent: a/1\n"), {})


def test_the_settings_table_lists_every_key_with_its_default():
    lines = settings_table().splitlines()
    assert lines[0] == "| key | default | unit | valid values | what it is |"
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines[2:]]
    assert all(len(row) == 5 for row in rows)
    keys = [row[0].strip("`") for row in rows]
    top_level = field_names(CrawlConfig) | INPUT_ONLY
    assert set(keys[:len(top_level)]) == top_level
    assert keys[len(top_level):] == [f"{prefix}{field.name}" for section, prefix in
                                     ((RevisitConfig, "revisit."), (PldBudget, "pld_budget."))
                                     for field in dataclasses.fields(section)]
    defaults = dict(zip(keys, (row[1] for row in rows)))
    for section, prefix in ((CrawlConfig, ""), (RevisitConfig, "revisit."), (PldBudget, "pld_budget.")):
        settings = settings_of(section)
        for field in dataclasses.fields(section):
            default, shown = default_of(field), defaults[prefix + field.name]
            if settings[field.name].default_text:
                assert shown == settings[field.name].default_text
            elif default is dataclasses.MISSING:
                assert shown == "required"
            else:
                assert shown == f"`{json.dumps(default)}`"
    assert (defaults["threads"], defaults["max_page_bytes"], defaults["proxy"]) == ("`30`", "`2097152`", "`null`")
    assert (defaults["language"], defaults["name"], defaults["contact"]) == ("required", "the file's stem", "`MRCRAWL_CONTACT`")


def test_the_documented_table_is_the_declared_one():
    """docs/configuration.md shows settings_table() as it is: paste it there when a setting changes."""
    page = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert settings_table() in page


# ---- -s KEY=VALUE: one run's overrides ----------------------------------------------

@pytest.mark.parametrize("text, key, value", [
    ("delay=2", "delay", 2),
    ("obey_robots=false", "obey_robots", False),
    ('url_allow=["^http://a/", "^http://b/"]', "url_allow", ["^http://a/", "^http://b/"]),
    ("revisit.max_days=60", "revisit.max_days", 60),
    ("proxy=", "proxy", None),
    ("contact=ops@example.org", "contact", "ops@example.org"),
    ("url_deny=[a=b]", "url_deny", ["a=b"]),  # the first = ends the key
])
def test_a_setting_is_a_key_and_a_yaml_value(text, key, value):
    assert parse_setting(text) == (key, value)


@pytest.mark.parametrize("text, says", [
    ("delay", "-s: 'delay': give KEY=VALUE"),
    ("=2", "-s: '=2': give KEY=VALUE"),
    ("delay=[1", "-s: delay: not a YAML value: '[1'"),
])
def test_a_setting_that_is_no_key_and_value_is_refused(text, says):
    with pytest.raises(ConfigError) as error:
        parse_setting(text)
    assert str(error.value).startswith(says), error.value


def test_settings_override_the_file_s_keys_nested_ones_too(tmp_path):
    path = write_config(tmp_path, "user_agent: a/1\ndelay: 5\nrevisit:\n  grow: 2\n")
    config = load_config(path, {}, {"delay": 2, "obey_robots": False, "url_allow": ["^http://a/"],
                                    "revisit.max_days": 60, "revisit.first_days": 3})
    assert (config.delay, config.obey_robots, config.url_allow) == (2.0, False, ["^http://a/"])
    assert isinstance(config.delay, float)
    assert config.revisit == RevisitConfig(max_days=60.0, first_days=3.0, grow=2.0)
    # The file is read as it was without them.
    assert load_config(path, {}).delay == 5.0


def test_settings_of_a_checked_config_are_checked_alike(tmp_path):
    config = load_config(write_config(tmp_path, "user_agent: a/1\n"), {})
    assert config_with_settings(config, {"delay": 3, "revisit.max_days": 40}) == dataclasses.replace(
        config, delay=3.0, revisit=RevisitConfig(max_days=40.0))
    assert config_with_settings(config, {"contact": "ops@example.org"}).user_agent.endswith(" (+ops@example.org)")
    with pytest.raises(ConfigError, match=r"^-s: delay: must be a number of seconds >= 0, got -1$"):
        config_with_settings(config, {"delay": -1})


@pytest.mark.parametrize("settings, says", [
    ({"dealy": 2}, "-s: dealy: unknown key (known keys: "),
    ({"delay": -1}, "-s: delay: must be a number of seconds >= 0, got -1"),
    ({"threads": "many"}, "-s: threads: must be an integer >= 1, got 'many'"),
    ({"obey_robots": "maybe"}, "-s: obey_robots: must be true or false, got 'maybe'"),
    ({"url_allow": "^http://a/"}, "-s: url_allow: must be a list of regular expressions"),
    ({"url_allow": ["^http://(a"]}, "-s: url_allow[0]: bad regular expression"),
    ({"revisit.max_dayz": 60}, "-s: revisit.max_dayz: unknown key (known keys of revisit: "),
    ({"revisit.max_days": 0}, "-s: revisit.max_days: must be a number of days > 0, got 0"),
    ({"revisit": {"grow": 0.5}}, "-s: revisit.grow: must be a number >= 1"),
    ({"fetch.delay": 2}, "-s: fetch.delay: unknown key (known keys: "),
    # A relation between keys is the whole config's: the file's with the settings.
    ({"revisit.max_days": 5}, "zh.yaml (with -s): revisit.max_days: must be >= revisit.first_days (7, the default), got 5"),
])
def test_a_bad_setting_is_refused_as_the_file_s_key_would_be_naming_it(tmp_path, settings, says):
    with pytest.raises(ConfigError) as error:
        load_config(write_config(tmp_path, "user_agent: a/1\n"), {}, settings)
    assert says in str(error.value), error.value
    assert "\n" not in str(error.value)


def driver(arguments, **run):
    return subprocess.run([*driver_command(*arguments[:4]), *arguments[4:]], capture_output=True, text=True,
                          timeout=300, **run)


def test_a_crawl_takes_settings_keeps_them_in_crawl_json_and_a_resume_needs_the_same(tmp_path, web_server):
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    settings = ["-s", "delay=0", "--set", "revisit.max_days=60", "-s", "url_deny=['/denied/', '/science/']"]
    first = driver([seeds, conf, output, 1, *settings])
    assert first.returncode == 0, first.stderr
    checked = json.loads((output / "config.json").read_text(encoding="utf-8"))
    assert (checked["delay"], checked["revisit"]["max_days"], checked["url_deny"]) == (0.0, 60.0, ["/denied/", "/science/"])
    state = json.loads((output / "crawl.json").read_text(encoding="utf-8"))
    assert state["settings"] == {"delay": 0, "revisit.max_days": 60, "url_deny": ["/denied/", "/science/"]}
    assert state["config"]["delay"] == 0.0

    other = driver([seeds, conf, output, 2, "-s", "delay=1", *settings[2:], "--resume"])
    assert other.returncode == 2 and other.stderr.strip().splitlines() == [
        f"-s delay: differs from the -s settings of the crawl in {output}: delay (0 in the crawl, 1 here); "
        "resume with the same -s settings, or crawl into another --output"]
    missing = driver([seeds, conf, output, 2, "--resume"])
    assert missing.returncode == 2 and "-s delay, revisit.max_days, url_deny: differs from the -s settings" in missing.stderr
    assert ": delay (0 in the crawl, not given here); revisit.max_days (60 in the crawl, not given here); " in missing.stderr

    resumed = driver([seeds, conf, output, 2, *settings, "--resume"])
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads((output / "crawl.json").read_text(encoding="utf-8"))["depth"] == 2
    # The home pages link /science/ pages, which url_deny as -s set it kept out of both layers.
    assert any("/science/" in link for home in web_server.seeds for link in web_server.web.page(home).links)
    assert not [entry.path for entry in web_server.log if "/science/" in entry.path]


def test_mrcrawl_crawl_takes_settings_as_a_keyword(tmp_path):
    """The Python entry point: `settings=` is the command's -s, with a
    config file or a checked config; a bad one is refused before anything
    is written.  Its one seed is on loopback, which the config does not
    allow: the crawl ends with no page fetched, and sends no request."""
    import mrcrawl

    path = write_config(tmp_path, "user_agent: a/1\n")
    output = tmp_path / "crawl"
    result = mrcrawl.crawl(["http://127.0.0.2:9/"], 1, path, output=str(output),
                           settings={"delay": 0.5, "revisit.max_days": 60})
    assert result.status == 3
    checked = CrawlConfig.from_json((output / "config.json").read_text(encoding="utf-8"))
    assert (checked.delay, checked.revisit.max_days) == (0.5, 60.0)
    again = mrcrawl.crawl(["http://127.0.0.2:9/"], 1, load_config(path, {}), output=str(tmp_path / "again"),
                          settings={"threads": 2})
    assert again.status == 3
    assert CrawlConfig.from_json((tmp_path / "again" / "config.json").read_text(encoding="utf-8")).threads == 2
    with pytest.raises(ConfigError, match="-s: threads: must be an integer >= 1, got 0"):
        mrcrawl.crawl(["http://127.0.0.2:9/"], 1, path, output=str(tmp_path / "refused"), settings={"threads": 0})
    assert not (tmp_path / "refused").exists()


# ---- a resume with another config names what changed ---------------------------------------------

def test_config_differences_show_both_values_and_a_list_s_items():
    before = {"delay": 1.0, "url_allow": ["^http://a/", "^http://c/"], "revisit": {"grow": 1.5, "shrink": 0.5},
              "user_agent": "newsbot/1.0 (+https://news.example.org/about/our/crawler/and/whom/to/call)", "name": "zh"}
    given = {"delay": 2.0, "url_allow": ["^http://a/", "^http://b/"], "revisit": {"grow": 2.0, "shrink": 0.5},
             "user_agent": "newsbot/1.1 (+https://news.example.org/about/our/crawler/and/whom/to/call)", "name": "zh"}
    assert config_differences(before, given) == [
        ("delay", "1.0 in the crawl, 2.0 here"),
        ("revisit.grow", "1.5 in the crawl, 2.0 here"),
        ("url_allow", "'^http://b/' added here, '^http://c/' only in the crawl"),
        ("user_agent", "'newsbot/1.0 (+https://news.e…ur/crawler/and/whom/to/call)' in the crawl, "
                       "'newsbot/1.1 (+https://news.e…ur/crawler/and/whom/to/call)' here"),
    ]
    many = [f"^http://site{number}/" for number in range(6)]
    assert config_differences({"url_deny": []}, {"url_deny": many}) == [
        ("url_deny", "'^http://site0/' added here, '^http://site1/' added here, '^http://site2/' added here, "
                     "3 more added here")]
    assert config_differences({"url_deny": ["a", "b"]}, {"url_deny": ["b", "a"]}) == [
        ("url_deny", "the same items in another order or number: ['a', 'b'] in the crawl, ['b', 'a'] here")]


def test_a_resume_with_a_changed_url_allow_names_the_values(tmp_path):
    """The crawl's one seed is refused by the guard (no request is sent):
    it still leaves a crawl to resume."""
    path = write_config(tmp_path, "user_agent: a/1\nurl_allow: ['^http://127\\.0\\.0\\.2:9/']\n")
    seeds = tmp_path / "seeds.txt"
    seeds.write_text("http://127.0.0.2:9/\n", encoding="utf-8")
    output = tmp_path / "crawl"
    assert driver([seeds, path, output, 1]).returncode == 3
    path.write_text("language: zh\nuser_agent: a/1\nurl_allow: ['^http://127\\.0\\.0\\.2:9/', '^http://127\\.0\\.0\\.3:9/']\n",
                    encoding="utf-8")
    refused = driver([seeds, path, output, 1, "--resume"])
    assert refused.returncode == 2
    assert refused.stderr.strip().splitlines() == [
        f"{path}: url_allow: differs from the config of the crawl in {output}: "
        "url_allow ('^http://127\\\\.0\\\\.0\\\\.3:9/' added here); "
        "resume with the same config, or crawl into another --output"]


@pytest.mark.parametrize("text, key, says", [
    ("pld_budget: {floor: 2, per_linking_pld: 1, ceiling: 9}\n", "pld_budget.ceiling", "unknown key"),
    ("pld_budget: {floor: 2}\n", "pld_budget.per_linking_pld", "is required"),
    ("pld_budget: {floor: -1, per_linking_pld: 1}\n", "pld_budget.floor", "a whole number >= 0"),
    ("pld_budget: {floor: 1.5, per_linking_pld: 1}\n", "pld_budget.floor", "a whole number >= 0"),
    ("pld_budget: 10\n", "pld_budget", "a mapping {floor: F, per_linking_pld: K}"),
])
def test_a_bad_pld_budget_is_refused_naming_the_key(tmp_path, text, key, says):
    message = config_error(write_config(tmp_path, "user_agent: a/1\n" + text), {})
    assert f": {key}: " in message and says in message, message


def test_a_pld_budget_is_read_and_round_trips_through_json(tmp_path):
    assert load_config(write_config(tmp_path, "user_agent: a/1\n"), {}).pld_budget is None
    config = load_config(write_config(tmp_path, "user_agent: a/1\npld_budget: {floor: 20, per_linking_pld: 5}\n"), {})
    assert config.pld_budget == PldBudget(floor=20, per_linking_pld=5)
    assert CrawlConfig.from_json(config.to_json()) == config
    with_s = load_config(write_config(tmp_path, "user_agent: a/1\n"), {},
                         settings={"pld_budget.floor": 3, "pld_budget.per_linking_pld": 0})
    assert with_s.pld_budget == PldBudget(floor=3, per_linking_pld=0)
