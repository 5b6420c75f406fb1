"""Seed files: the line format the crawl reads, and the shipped seed lists
and configs, one pair per crawl language.

The line format (mrcrawl/seeds.py) is read from real files, and crawled
once.  The shipped files are checked against the config contract directly
(keys, types, regexes) so that they stay valid on their own, and every seed
against the crawl's own filters: a seed the filters drop would be reported
and never fetched.
"""
import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import yaml

from crawl_support import crawl, layer_docs, seed_store, write_inputs
from mrcrawl import config as crawl_config
from mrcrawl.page.urls import UrlFilter
from mrcrawl.seeds import read_seeds as read_seed_file

SEEDS_DIR = Path(__file__).resolve().parent.parent / "seeds"

# The 27 languages of the crawl, in the order of the project's site list.
LANGUAGES = [
    "zh", "en", "ja", "ko", "ar", "de", "fr", "id", "hi", "fa", "it", "ky", "kk", "lo",
    "my", "mn", "ms", "ne", "ps", "tl", "pt", "ru", "es", "tg", "ur", "vi", "bo",
]

DEFAULT_PORTS = {"http": 80, "https": 443}


def _is_int(value):
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _is_str_list(value):
    return isinstance(value, list) and all(isinstance(item, str) for item in value)


# The config contract: key -> check of its value.  No other key is allowed.
CONTRACT = {
    "name": lambda v: isinstance(v, str) and re.fullmatch(r"\w[\w.-]{0,99}", v) is not None,
    "language": lambda v: isinstance(v, str) and v.strip() != "",
    "user_agent": lambda v: isinstance(v, str) and v.strip() != "",
    "contact": lambda v: isinstance(v, str) and v.strip() != "",
    "threads": lambda v: _is_int(v) and v >= 1,
    "delay": lambda v: _is_number(v) and v >= 0,
    "timeout": lambda v: _is_number(v) and v > 0,
    "retries": lambda v: _is_int(v) and v >= 0,
    "max_page_bytes": lambda v: _is_int(v) and v > 0,
    "url_allow": _is_str_list,
    "url_deny": _is_str_list,
    "obey_robots": lambda v: isinstance(v, bool),
    "max_crawl_delay": lambda v: _is_number(v) and v >= 0,
    "allow_private_networks": lambda v: isinstance(v, bool),
    "proxy": lambda v: v is None or (isinstance(v, str) and urlsplit(v).scheme in ("http", "https")),
}
REQUIRED = ("language",)


def load_config(code):
    with open(SEEDS_DIR / f"{code}.yaml", encoding="utf-8") as handle:
        return yaml.safe_load(handle)


def read_seeds(code):
    lines = (SEEDS_DIR / f"{code}.txt").read_text(encoding="utf-8").splitlines()
    return [line.strip() for line in lines if line.strip() and not line.strip().startswith("#")]


def canonical(url):
    """Lower-case scheme and host, default port dropped, '/' for an empty path."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    netloc = parts.hostname.lower()
    if parts.port is not None and parts.port != DEFAULT_PORTS.get(scheme):
        netloc += f":{parts.port}"
    result = f"{scheme}://{netloc}{parts.path or '/'}"
    if parts.query:
        result += "?" + parts.query
    return result


def allowed(config, url):
    allow = [re.compile(p) for p in config.get("url_allow", [])]
    deny = [re.compile(p) for p in config.get("url_deny", [])]
    if allow and not any(rx.search(url) for rx in allow):
        return False
    return not any(rx.search(url) for rx in deny)


def test_every_language_is_present_and_nothing_else():
    assert len(LANGUAGES) == 27 and len(set(LANGUAGES)) == 27
    stems_txt = {p.stem for p in SEEDS_DIR.glob("*.txt")}
    stems_yaml = {p.stem for p in SEEDS_DIR.glob("*.yaml")}
    assert stems_txt == set(LANGUAGES)
    assert stems_yaml == set(LANGUAGES)


@pytest.mark.parametrize("code", LANGUAGES)
def test_both_files_exist(code):
    assert (SEEDS_DIR / f"{code}.txt").is_file()
    assert (SEEDS_DIR / f"{code}.yaml").is_file()


@pytest.mark.parametrize("code", LANGUAGES)
def test_config_follows_the_contract(code):
    config = load_config(code)
    assert isinstance(config, dict)
    unknown = set(config) - set(CONTRACT)
    assert not unknown, f"unknown keys {sorted(unknown)}"
    for key in REQUIRED:
        assert key in config, f"{key} missing"
    for key, value in config.items():
        assert CONTRACT[key](value), f"{key}: bad value {value!r}"
    assert config["language"] == code
    assert config.get("name", code) == code
    assert config["url_allow"], "an empty url_allow would let the crawl leave the sites"


@pytest.mark.parametrize("code", LANGUAGES)
def test_shipped_configs_send_the_operator_s_contact_not_ours(code):
    """No shipped config names a contact: the crawl is refused until the
    operator gives theirs, and then every request carries it."""
    config = load_config(code)
    assert "user_agent" not in config and "contact" not in config
    with pytest.raises(crawl_config.ConfigError, match="MRCRAWL_CONTACT"):
        crawl_config.load_config(SEEDS_DIR / f"{code}.yaml", environ={})
    checked = crawl_config.load_config(SEEDS_DIR / f"{code}.yaml", environ={"MRCRAWL_CONTACT": "ops@news-archive.example.org"})
    assert checked.user_agent.startswith("mrcrawl/") and checked.user_agent.endswith(" (+ops@news-archive.example.org)")


# Sites of the crawl's original list that are dead or publish no news, by the
# language that listed them; its seed file says why each was taken out.
RETIRED = {
    "ftd.de": "de", "maktoob.com": "ar", "dm.gov.ae": "ar", "president.gov.af": "ps", "bancomoc.mz": "pt",
    "usa.gov": "en", "cia.gov": "en", "nsa.gov": "en", "australia.gov.au": "en", "pmc.gov.au": "en",
    "tibetology.ac.cn": "bo", "malaysia.gov.my": "ms", "pakistan.gov.pk": "ur",
}


def taken_out_note(code):
    """The seed file's comment naming the sites taken out of it."""
    text = (SEEDS_DIR / f"{code}.txt").read_text(encoding="utf-8")
    return text.split("# Taken out", 1)[1].split("\n\n", 1)[0] if "# Taken out" in text else ""


@pytest.mark.parametrize("code", LANGUAGES)
def test_dead_and_non_news_sites_are_not_crawled(code):
    config = load_config(code)
    hosts = {urlsplit(seed).hostname for seed in read_seeds(code)}
    for domain, listed_by in RETIRED.items():
        assert not hosts & {domain, f"www.{domain}"}, f"a {code} seed is on {domain}, taken out of {listed_by}.txt"
        for pattern in config["url_allow"]:
            for home_page in (f"https://{domain}/", f"https://www.{domain}/"):
                assert not re.search(pattern, home_page), f"url_allow {pattern} keeps {domain}, taken out of {listed_by}.txt"
        if listed_by == code:
            assert f"({domain})" in taken_out_note(code), f"{code}.txt does not say why {domain} was taken out"


@pytest.mark.parametrize("code", LANGUAGES)
def test_regexes_compile(code):
    config = load_config(code)
    for key in ("url_allow", "url_deny"):
        for pattern in config.get(key, []):
            re.compile(pattern)


@pytest.mark.parametrize("code", LANGUAGES)
def test_allow_rules_are_anchored_at_the_scheme(code):
    for pattern in load_config(code)["url_allow"]:
        assert pattern.startswith("^https?://"), pattern


@pytest.mark.parametrize("code", LANGUAGES)
def test_seed_file_has_header_and_seeds(code):
    lines = [l for l in (SEEDS_DIR / f"{code}.txt").read_text(encoding="utf-8").splitlines() if l.strip()]
    assert lines[0].startswith("#")
    seeds = read_seeds(code)
    assert seeds
    assert len(seeds) == len(set(seeds)), "duplicate seed"


@pytest.mark.parametrize("code", LANGUAGES)
def test_seeds_are_http_urls_kept_by_the_filters(code):
    config = load_config(code)
    allow = [re.compile(p) for p in config["url_allow"]]
    deny = [re.compile(p) for p in config.get("url_deny", [])]
    for seed in read_seeds(code):
        assert " " not in seed, seed
        parts = urlsplit(seed)
        assert parts.scheme in ("http", "https"), seed
        assert parts.hostname, seed
        url = canonical(seed)
        assert any(rx.search(url) for rx in allow), f"{seed}: matched by no url_allow rule"
        denied_by = [rx.pattern for rx in deny if rx.search(url)]
        assert not denied_by, f"{seed}: matched by url_deny {denied_by}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_every_allow_rule_matches_a_seed(code):
    """Each rule stands for a seeded site; a rule no seed reaches is a typo."""
    config = load_config(code)
    urls = [canonical(seed) for seed in read_seeds(code)]
    for pattern in config["url_allow"]:
        assert any(re.search(pattern, url) for url in urls), f"no seed for {pattern}"


@pytest.mark.parametrize("code", LANGUAGES)
def test_other_languages_seeds_stay_out(code):
    """Multilingual sites (BBC, APP, ...) are split by language."""
    config = load_config(code)
    for other in LANGUAGES:
        if other == code:
            continue
        for seed in read_seeds(other):
            assert not allowed(config, canonical(seed)), f"{other} seed {seed} is in the {code} crawl"


@pytest.mark.parametrize(
    "code, url, kept",
    [
        ("zh", "http://www.news.cn/politics/20240101/abc/c.html", True),
        ("zh", "http://english.news.cn/20240101/abc/c.html", False),
        ("zh", "https://www.notxinhuanet.com/", False),
        ("zh", "https://example.com/?u=www.xinhuanet.com/", False),
        ("en", "https://www.bbc.com/news/world-12345", True),
        ("en", "https://www.bbc.com/hindi/articles/abc", False),
        ("en", "https://www.nytimes.com/es/2019/01/01/x.html", False),
        ("en", "https://www.canada.ca/fr.html", False),
        ("en", "https://www.gov.uk/guidance/x.cy", False),
        ("en", "https://edition.cnn.com/2024/01/01/world/x/index.html", True),
        ("en", "https://www.nytimes.com/2024/01/01/world/x.html?utm_source=y", False),
        ("en", "https://apnews.com/search?q=x", False),
        ("en", "https://apnews.com/article/x/photo.JPG", False),
        ("en", "https://www.reuters.com/login", False),
        ("hi", "https://www.bbc.com/hindi/articles/abc", True),
        ("hi", "https://www.bbc.com/urdu/articles/abc", False),
        ("ur", "https://urdu.app.com.pk/urdu/news/1", True),
        ("ps", "https://urdu.app.com.pk/urdu/news/1", False),
        ("ar", "https://www.aljazeera.com/news/", False),
        ("ar", "https://www.aps.dz/fr/economie", False),
        ("ar", "https://www.aps.dz/ar/algerie", True),
        ("fr", "https://www.afp.com/en/news", False),
        ("kk", "https://www.gov.kz/memleket/entities/mfa/press/news?lang=ru", False),
        ("lo", "https://kpl.gov.la/En/Detail.aspx?id=1", False),
        ("ja", "https://www.mofa.go.jp/region/asia-paci/", False),
        ("ja", "https://www.mofa.go.jp/mofaj/press/", True),
        ("de", "https://www.bundesregierung.de/breg-en/news", False),
        ("de", "https://www.bundesregierung.de/breg-de/aktuelles", True),
        ("es", "https://www.lavanguardia.com/encatala/20240101/x.html", False),
    ],
)
def test_filters_on_sample_urls(code, url, kept):
    assert allowed(load_config(code), url) is kept


# ---- the seed line format ---------------------------------------------------------

EVERYWHERE = UrlFilter([], [])


def seeds_of(tmp_path, content: bytes, scope: UrlFilter = EVERYWHERE) -> tuple[list[str], list[str]]:
    path = tmp_path / "seeds.txt"
    path.write_bytes(content)
    return read_seed_file(str(path), scope)


@pytest.mark.parametrize("line, url", [
    ("http://news.example/", "http://news.example/"),
    ("  http://news.example/a  ", "http://news.example/a"),
    ("http://news.example/  # the home page", "http://news.example/"),
    ("http://news.example/\t# the home page", "http://news.example/"),
    ("http://news.example/#top", "http://news.example/"),  # a fragment, not a comment
    ("http://news.example/a#b # c", "http://news.example/a"),
    ("http://news.example/my%20page.html", "http://news.example/my%20page.html"),
    ("http://news.example/?q=a%20b", "http://news.example/?q=a%20b"),
])
def test_a_seed_line_is_a_url_then_an_optional_comment(tmp_path, line, url):
    assert seeds_of(tmp_path, f"{line}\n".encode()) == ([url], [])


def test_key_value_metadata_after_the_url_is_named_with_its_line_and_the_url_kept(tmp_path):
    seeds, said = seeds_of(tmp_path, b"# Nutch's format\nhttp://a.example/\tnutch.score=2.5\tnutch.fetchInterval=86400\n"
                                     b"http://b.example/ section=world # the world desk\n")
    assert seeds == ["http://a.example/", "http://b.example/"]
    assert said == [
        f"{tmp_path / 'seeds.txt'}:2: ignored the metadata nutch.score, nutch.fetchInterval of http://a.example/: "
        "the crawl uses no seed metadata",
        f"{tmp_path / 'seeds.txt'}:3: ignored the metadata section of http://b.example/: the crawl uses no seed metadata",
    ]


@pytest.mark.parametrize("line, stray", [
    ("http://news.example/\thub", "hub"),
    ("http://news.example/my page.html", "page.html"),
    ("http://news.example/ score=1 home", "home"),
])
def test_a_word_after_the_url_that_is_no_metadata_nor_comment_skips_the_line(tmp_path, line, stray):
    seeds, said = seeds_of(tmp_path, f"http://kept.example/\n{line}\n".encode())
    assert seeds == ["http://kept.example/"]
    assert said == [f"{tmp_path / 'seeds.txt'}:2: skipped {line!r}: {stray!r} after the URL is neither key=value "
                    "metadata nor a # comment (write a space inside a URL as %20)"]


def test_a_line_that_is_not_utf8_is_skipped_with_its_number_and_the_others_kept(tmp_path):
    seeds, said = seeds_of(tmp_path, b"\xef\xbb\xbfhttp://a.example/\nhttp://b.example/caf\xe9\nhttp://c.example/\n")
    assert seeds == ["http://a.example/", "http://c.example/"]  # a byte order mark starts no URL
    assert said == [f"{tmp_path / 'seeds.txt'}:2: skipped: not UTF-8 text"]


def test_a_seed_file_of_bad_lines_alone_is_refused(tmp_path):
    with pytest.raises(crawl_config.ConfigError, match=r"seeds\.txt: seeds: no usable seed URL \(2 line\(s\) skipped\)"):
        seeds_of(tmp_path, b"http://a.example/\xff\nhttp://b.example/ hub\n# and a comment\n")


def test_seeds_with_comments_and_metadata_crawl_the_urls_they_name(tmp_path, web_server):
    """The real driver: each home page's line carries a comment or metadata,
    and the crawl fetches the home pages, not other URLs made of the lines."""
    seeds, conf, _ = write_inputs(web_server, tmp_path)
    homes = web_server.seeds
    annotated = [f"{homes[0]}  # the first home page", f"{homes[1]}\tnutch.score=1.0", *homes[2:]]
    seeds.write_text("\n".join(annotated) + "\n", encoding="utf-8")
    output = tmp_path / "crawl"
    assert crawl(seeds, conf, output, 1) == 0
    assert seed_store(output) == homes
    assert {doc["requested_url"] for doc in layer_docs(output, 0)} == set(homes)
    web_server.wait_idle()
    assert not [entry.path for entry in web_server.log if "%20" in entry.path or "nutch" in entry.path]
