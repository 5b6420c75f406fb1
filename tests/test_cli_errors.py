"""Bad arguments, configs and seed files: exit 2, one line naming the problem, nothing written."""
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

GOOD_CONFIG = "language: en\nuser_agent: mrcrawl-test/1.0\n"
REPO = Path(__file__).resolve().parent.parent
# The driver as pip installs it: the console script of [project.scripts].
CONSOLE_SCRIPT = Path(sys.executable).parent / "mrcrawl"


def environment_without_contact(**extra):
    """This environment, less any contact the person running the tests has set."""
    environment = {key: value for key, value in os.environ.items() if key != "MRCRAWL_CONTACT"}
    return {**environment, **extra}


def run_driver(tmp_path, config_text=GOOD_CONFIG, seeds_text="http://127.0.0.2:9/\n", extra=(), depth="1",
               environment=None, program=(sys.executable, "-m", "mrcrawl.driver")):
    conf = tmp_path / "c.yaml"
    conf.write_text(config_text, encoding="utf-8")
    seeds = tmp_path / "seeds.txt"
    if seeds_text is not None:
        seeds.write_text(seeds_text, encoding="utf-8")
    output = tmp_path / "out"
    command = [*program, str(seeds), "--depth", depth, "--conf", str(conf), "--output", str(output), *extra]
    environment = environment_without_contact() if environment is None else environment
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment)
    return result, output


@pytest.mark.parametrize(
    "config_text, expected",
    [
        (GOOD_CONFIG + "dealy: 2\n", ["dealy", "unknown key"]),
        (GOOD_CONFIG + "threads: many\n", ["threads", "integer"]),
        (GOOD_CONFIG + "threads: 0\n", ["threads", ">= 1"]),
        (GOOD_CONFIG + "delay: -1\n", ["delay", ">= 0"]),
        (GOOD_CONFIG + "timeout: 0\n", ["timeout", "> 0"]),
        (GOOD_CONFIG + "obey_robots: maybe\n", ["obey_robots", "true or false"]),
        (GOOD_CONFIG + "url_allow: 'x'\n", ["url_allow", "list"]),
        ("user_agent: mrcrawl-test/1.0\n", ["language", "required"]),
        ("language: en\n", ["contact", "MRCRAWL_CONTACT"]),
        ("language: en\ncontact: 'ring the bell'\n", ["contact", "URL or an e-mail address"]),
        ("language: en\nuser_agent: 'mrcrawl/0.1 (+https://github.com/mrcrawl/mrcrawl)'\n", ["user_agent", "github.com/mrcrawl/mrcrawl"]),
        ("language: en\nuser_agent: '  '\n", ["user_agent", "non-empty"]),
        (GOOD_CONFIG + "url_allow: ['^http://(a|b']\n", ["url_allow[0]", "regular expression"]),
        (GOOD_CONFIG + "url_deny: ['[z-a]']\n", ["url_deny[0]", "regular expression"]),
        (GOOD_CONFIG + "delay: [1\n", ["line", "YAML"]),
        ("- just\n- a list\n", ["mapping"]),
        (GOOD_CONFIG + "proxy: ftp://x\n", ["proxy"]),
    ],
)
def test_bad_config_exits_2_with_one_line_and_writes_nothing(tmp_path, config_text, expected):
    result, output = run_driver(tmp_path, config_text)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "c.yaml" in lines[0]
    for word in expected:
        assert word in lines[0]
    assert not output.exists()


def test_a_bad_contact_in_the_environment_exits_2_naming_it(tmp_path):
    result, output = run_driver(tmp_path, "language: en\n", environment=environment_without_contact(MRCRAWL_CONTACT="me"))
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "c.yaml" in lines[0] and "MRCRAWL_CONTACT" in lines[0] and "'me'" in lines[0]
    assert not output.exists()


def test_the_console_scripts_crawl_is_the_driver():
    """pip installs `mrcrawl` ([project.scripts]) beside the interpreter; its crawl is the driver."""
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts == {"mrcrawl": "mrcrawl.cli:main"}
    result = subprocess.run([str(CONSOLE_SCRIPT), "crawl", "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: mrcrawl crawl ") and "--depth" in result.stdout and "--conf" in result.stdout


def test_the_console_script_refuses_a_bad_config_with_exit_2(tmp_path):
    result, output = run_driver(tmp_path, GOOD_CONFIG + "dealy: 2\n", program=(str(CONSOLE_SCRIPT), "crawl"))
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1 and "dealy" in result.stderr
    assert not output.exists()


def test_the_readme_names_the_console_script_where_the_command_line_is():
    documentation = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in documentation)
    command_line = readme.split("### Command line\n", 1)[1].split("\n#", 1)[0]
    assert "`mrcrawl`" in command_line and "python -m mrcrawl.driver" in command_line


def test_missing_seed_file(tmp_path):
    result, output = run_driver(tmp_path, seeds_text=None)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "seeds.txt" in result.stderr and "cannot read" in result.stderr
    assert not output.exists()


def test_seed_file_without_a_usable_url(tmp_path):
    result, output = run_driver(tmp_path, seeds_text="# only a comment\n\nnot a url\nftp://x/\n")
    assert result.returncode == 2
    assert "seeds.txt" in result.stderr.splitlines()[-1] and "no usable seed" in result.stderr
    assert not output.exists()


def test_missing_config_file(tmp_path):
    result, output = run_driver(tmp_path)
    (tmp_path / "c.yaml").unlink()
    command = [sys.executable, "-m", "mrcrawl.driver", str(tmp_path / "seeds.txt"), "--depth", "1", "--conf", str(tmp_path / "c.yaml"), "--output", str(tmp_path / "o2")]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2
    assert "c.yaml" in result.stderr and "cannot read" in result.stderr
    assert not (tmp_path / "o2").exists()


@pytest.mark.parametrize("depth", ["0", "-3"])
def test_depth_below_one(tmp_path, depth):
    result, output = run_driver(tmp_path, depth=depth)
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--depth" in result.stderr
    assert not output.exists()


def test_unknown_runner(tmp_path):
    result, output = run_driver(tmp_path, extra=["--runner", "mapreduce2000"])
    assert result.returncode == 2
    assert len(result.stderr.strip().splitlines()) == 1
    assert "--runner" in result.stderr
    assert not output.exists()


def test_an_abbreviated_option_is_refused_naming_it(tmp_path):
    """`--out` is no `--output`: a typo is not taken for the option it begins."""
    elsewhere = tmp_path / "elsewhere"
    result, output = run_driver(tmp_path, extra=("--out", str(elsewhere)))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"mrcrawl crawl: unrecognized arguments: --out {elsewhere}"]
    assert not output.exists() and not elsewhere.exists()


def test_now_that_is_not_a_time(tmp_path):
    result, output = run_driver(tmp_path, extra=("--now", "yesterday"))
    assert result.returncode == 2 and not output.exists()
    assert result.stderr.strip().splitlines() == ["mrcrawl crawl: argument --now: not an ISO 8601 time: 'yesterday' (e.g. 2026-01-05T06:00:00Z)"]


def test_a_db_path_that_is_a_file_is_refused_and_left_as_it_was(tmp_path):
    not_a_db = tmp_path / "notes.txt"
    not_a_db.write_text("mine\n", encoding="utf-8")
    result, output = run_driver(tmp_path, extra=("--db", str(not_a_db)))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"{not_a_db}: exists and is not a directory; give the crawl db a directory"]
    assert not_a_db.read_text(encoding="utf-8") == "mine\n"
    assert not (output / "crawl.json").exists()


def test_a_db_directory_holding_other_files_is_refused(tmp_path):
    other = tmp_path / "photos"
    other.mkdir()
    (other / "cat.jpg").write_bytes(b"\xff\xd8")
    result, output = run_driver(tmp_path, extra=("--db", str(other)))
    assert result.returncode == 2 and "holds other files and no crawl db" in result.stderr
    assert sorted(path.name for path in other.iterdir()) == [".lock", "cat.jpg"]
    assert not (output / "crawl.json").exists()


def test_a_second_run_on_a_db_in_use_is_refused(tmp_path):
    import fcntl

    db = tmp_path / "db"
    db.mkdir()
    with open(db / ".lock", "w") as held:  # the lock a running crawl holds
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        result, output = run_driver(tmp_path, extra=("--db", str(db)))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [f"{db}: another run is working on this crawl db"]
    assert not (output / "crawl.json").exists() and sorted(path.name for path in db.iterdir()) == [".lock"]


def test_a_db_that_is_the_crawl_directory_is_refused_naming_the_mistake(tmp_path):
    output = tmp_path / "out"
    result, _ = run_driver(tmp_path, extra=("--db", str(output)))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"--db {output}: is the crawl directory (--output) itself; the crawl db needs a directory of its own: "
        f"leave --db out for {output / 'db'}, or give another"]
    assert not output.exists()


@pytest.mark.parametrize("db, says", [
    ("out/in", "is inside the crawl directory {output}, where the crawl writes its stores; give {output}/db "
               "(the default) or a directory outside it"),
    ("out/./", "is the crawl directory (--output) itself"),
])
def test_a_db_among_the_crawl_directory_s_stores_is_refused(tmp_path, db, says):
    output = tmp_path / "out"
    result, _ = run_driver(tmp_path, extra=("--db", str(tmp_path / db)))
    assert result.returncode == 2 and says.format(output=output) in result.stderr, result.stderr
    assert not output.exists()


def test_a_crawl_directory_inside_the_db_is_refused(tmp_path):
    result, output = run_driver(tmp_path, extra=("--db", str(tmp_path)))
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"--output {output}: is inside the crawl db {tmp_path}; give the crawl a directory outside it"]
    assert not output.exists()


def test_a_db_that_is_another_crawl_s_directory_is_refused_naming_that_crawl_s_db(tmp_path):
    first, yesterday = run_driver(tmp_path)  # its seed is blocked: no page, but a crawl directory
    assert first.returncode == 3 and (yesterday / "crawl.json").exists()
    other = tmp_path / "today"
    command = [sys.executable, "-m", "mrcrawl.driver", str(tmp_path / "seeds.txt"), "--depth", "1",
               "--conf", str(tmp_path / "c.yaml"), "--output", str(other), "--db", str(yesterday)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, env=environment_without_contact())
    assert result.returncode == 2
    assert result.stderr.strip().splitlines() == [
        f"--db {yesterday}: is a crawl directory (it holds crawl.json), not a crawl db; "
        f"that crawl's db is {yesterday / 'db'}"]
    assert not (other / "crawl.json").exists() and not (yesterday / "db.json").exists()
