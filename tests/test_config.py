"""The config loader's defaults and types, on real files."""
from mrcrawl.config import CrawlConfig, load_config


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


def test_integers_are_accepted_for_seconds_and_round_trip_through_json(tmp_path):
    path = tmp_path / "x.yaml"
    path.write_text("name: news\nlanguage: ru\nuser_agent: a/1\ndelay: 2\nurl_allow: ['^https?://x\\.ru/']\n", encoding="utf-8")
    config = load_config(path)
    assert config.delay == 2.0 and isinstance(config.delay, float)
    assert CrawlConfig.from_json(config.to_json()) == config
