"""No config or seed file makes the crawler read or write outside its crawl
directory and its crawl db.

The driver runs in its own process with a Python audit hook (sys.addaudithook)
that logs every file the process, and the tasks it forks, opens, makes,
renames or removes, and the tests check that log: every write lands in the
crawl directory, the crawl db or the temporary directory, and a file the
config or the seeds name is never opened.  A value that would lead elsewhere
(a crawl name with `..` or `/`, a link in the crawl directory) is refused
with exit 2 before anything is written.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from http.server import ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml

from crawl_support import PageHandler, crawl_docs
from mrcrawl.driver import EXIT_OK, EXIT_USAGE
from mrcrawl.mr.onewave import WRAPPER_LOCK

# Run as `python AUDITED LOG ARGS...`: the driver with ARGS, every file
# event of it and of its forked tasks appended to LOG as a JSON line.
AUDITED = r'''
import json, os, sys

log = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
# event: the positions of its paths, and of the directory descriptor they are relative to
PATH_EVENTS = {"os.mkdir": ((0,), 2), "os.remove": ((0,), 1), "os.rmdir": ((0,), 1), "shutil.rmtree": ((0,), 1),
               "os.rename": ((0, 1), 2), "os.link": ((0, 1), 2), "os.symlink": ((1,), 2), "os.chmod": ((0,), 2),
               "os.truncate": ((0,), None), "os.utime": ((0,), 3), "sqlite3.connect": ((0,), None)}


def absolute(path, dir_fd=None):
    if isinstance(path, int):
        return os.readlink(f"/proc/self/fd/{path}")
    path = os.fsdecode(path)
    base = os.readlink(f"/proc/self/fd/{dir_fd}") if isinstance(dir_fd, int) and dir_fd >= 0 else os.getcwd()
    return os.path.normpath(os.path.join(base, path))


def hook(event, args):
    if event == "open":
        path, mode, flags = args
        if path is None or isinstance(path, int):
            return
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or bool((flags or 0) & WRITE_FLAGS)
        entries = [(absolute(path), writes)]
    elif event in PATH_EVENTS:
        positions, dir_position = PATH_EVENTS[event]
        dir_fd = args[dir_position] if dir_position is not None and dir_position < len(args) else None
        entries = [(absolute(args[p], dir_fd), True) for p in positions if args[p] not in (None, ":memory:")]
    else:
        return
    for path, writes in entries:
        os.write(log, (json.dumps({"event": event, "path": path, "writes": writes}) + "\n").encode())


sys.addaudithook(hook)
from mrcrawl import driver
sys.exit(driver.main(sys.argv[2:]))
'''

SECRET_TEXT = "contents nobody may read"


class FileLinks(PageHandler):
    """A page that links to a local file, and a redirect to one."""

    secret: str = ""

    def do_GET(self):
        if self.path == "/":
            self.send_html(f'<html><body><a href="file://{self.secret}">a file</a> <a href="/go">on</a>'
                           f'<a href="{self.secret}">a path</a></body></html>'.encode())
        elif self.path == "/go":
            self.send_response(302)
            self.send_header("Location", f"file://{self.secret}")
            self.send_header("Content-Length", "0")
            self.end_headers()
        else:
            self.send_error(404)


@pytest.fixture
def file_links(tmp_path):
    """A server on loopback whose page leads to tmp_path/secret.txt, and that file."""
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET_TEXT)
    handler = type("Handler", (FileLinks,), {"secret": str(secret)})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/", secret
    server.shutdown()
    server.server_close()


class Audited:
    """The driver run under the audit hook, from `cwd`, its temporary files under tmp_path/tmp."""

    def __init__(self, tmp_path: Path, args: list[str], cwd: Path):
        self.log = tmp_path / "audit.jsonl"
        self.log.unlink(missing_ok=True)
        self.scratch = tmp_path / "tmp"
        self.scratch.mkdir(exist_ok=True)
        script = tmp_path / "audited.py"
        script.write_text(AUDITED)
        environment = {**os.environ, "TMPDIR": str(self.scratch), "PYTHONDONTWRITEBYTECODE": "1"}
        self.result = subprocess.run([sys.executable, str(script), str(self.log), *args], cwd=cwd, env=environment,
                                     capture_output=True, text=True, timeout=300)
        self.events = [json.loads(line) for line in self.log.read_text().splitlines()] if self.log.exists() else []

    def writes_outside(self, *roots: Path) -> list[dict]:
        """The writes outside `roots` and the temporary directory, but for
        making the directories on the way to a root."""
        inside = [str(root.resolve()) for root in (*roots, self.scratch)]
        on_the_way = {str(parent) for root in roots for parent in root.resolve().parents}
        return [event for event in self.writes()
                if not any(event["path"] == root or event["path"].startswith(root + os.sep) for root in inside)
                and not (event["event"] == "os.mkdir" and event["path"] in on_the_way)
                and not is_mrjobs_wrapper_lock(event)]

    def opened(self, path: Path) -> list[dict]:
        return [event for event in self.events if event["path"] == str(path.resolve())]

    def writes(self) -> list[dict]:
        return [event for event in self.events if event["writes"] and event["path"] != "/dev/null"]


def is_mrjobs_wrapper_lock(event: dict) -> bool:
    """The local runner's removal of the lock mrjob's task wrapper scripts
    take, a name of the job's own that mrjob puts in /tmp whatever TMPDIR says
    (mr/onewave.py); this runs no wrapper script, so there is none to remove."""
    lock = WRAPPER_LOCK.format(job_key="")
    return event["event"] == "os.remove" and event["path"].startswith(lock) and "/" not in event["path"][len(lock):]


def write_config(directory: Path, **values) -> Path:
    conf = directory / "news.yaml"
    config = {"language": "en", "user_agent": "mrcrawl-test/1.0 (+http://127.0.0.1/)", "allow_private_networks": True,
              "delay": 0, "timeout": 2, "retries": 0, **values}
    conf.write_text(yaml.safe_dump(config))
    return conf


@pytest.mark.parametrize("runner", ["inline", "local"])
def test_a_crawl_writes_only_in_its_directory_and_db_and_reads_no_file_its_seeds_or_pages_name(tmp_path, file_links, runner):
    """The seeds name a local file every way a seed line can (file:, a path,
    a relative path) and the page links and redirects to it; the crawl
    directory is the default crawl/<name>.  Nothing is written outside it
    (its db included) and the temporary directory, exports too, and the file
    is never opened."""
    site, secret = file_links
    work = tmp_path / "work"
    work.mkdir()
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(f"file://{secret}\n{secret}\n../secret.txt\nfile:secret.txt\nftp://127.0.0.1/secret.txt\n{site}\n")
    conf = write_config(tmp_path, name="news.en-1")
    run = Audited(tmp_path, [str(seeds), "--depth", "2", "--conf", str(conf), "--runner", runner, "--export", "warc,index"],
                  cwd=work)
    assert run.result.returncode == EXIT_OK, run.result.stderr
    output = work / "crawl" / "news.en-1"
    assert (output / "crawl.json").is_file() and (output / "warc").is_dir() and (output / "index").is_dir()
    assert run.result.stderr.count("not an absolute http(s) URL") == 5
    assert run.writes() and run.writes_outside(output) == []
    assert run.opened(secret) == []
    assert any(event["path"].startswith(str(output / "doc")) for event in run.writes())  # the tasks were heard too
    docs = crawl_docs(output)
    # The page's path link is a path on the site, a 404 there.
    assert {doc["requested_url"] for doc in docs} == {site, f"{site}go", f"{site.rstrip('/')}{secret}"}
    assert all(SECRET_TEXT not in json.dumps(doc) for doc in docs)


def write_seeds(tmp_path: Path, file_links) -> Path:
    """A seed file of the file-links site."""
    site, _ = file_links
    seeds = tmp_path / "seeds.txt"
    seeds.write_text(site + "\n")
    return seeds


def refusal(run) -> str:
    """The one line a run refused as a usage error (exit 2) printed."""
    assert run.result.returncode == EXIT_USAGE, run.result.stderr
    [line] = run.result.stderr.strip().splitlines()
    return line


@pytest.mark.parametrize("name", ["../../outside", "/tmp/absolute", "a/b", "a\0b", "", ".", "..", " ", "-x", "a\nb",
                                  "x" * 101])
def test_a_crawl_name_that_is_no_plain_directory_name_is_refused_and_nothing_is_written(tmp_path, file_links, name):
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path, name=name)
    run = Audited(tmp_path, [str(seeds), "--depth", "1", "--conf", str(conf)], cwd=work)
    line = refusal(run)
    assert line.startswith(f"{conf}: name: must be a name of 1 to 100 letters, digits")
    assert run.writes() == []
    assert list(work.iterdir()) == [] and sorted(path.name for path in tmp_path.iterdir()) == [
        "audit.jsonl", "audited.py", "news.yaml", "secret.txt", "seeds.txt", "tmp", "work"]


@pytest.mark.parametrize("stem", ["..", "my crawl", "-"])
def test_a_config_file_whose_stem_is_no_crawl_name_must_give_one(tmp_path, file_links, stem):
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path).rename(tmp_path / f"{stem}.yaml")
    run = Audited(tmp_path, [str(seeds), "--depth", "1", "--conf", str(conf)], cwd=tmp_path)
    line = refusal(run)
    assert f"name: the file's stem {Path(conf).stem!r} is no crawl name; give the key name" in line
    assert run.writes() == []


def test_any_letters_make_a_crawl_name(tmp_path, file_links):
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path, name="新闻_zh.2026")
    run = Audited(tmp_path, [str(seeds), "--depth", "1", "--conf", str(conf)], cwd=tmp_path)
    assert run.result.returncode == EXIT_OK, run.result.stderr
    assert run.writes_outside(tmp_path / "crawl" / "新闻_zh.2026") == []


# What a link in a new crawl directory would have made the crawler do: the
# names a new crawl may start over (STARTUP_LEFTOVERS).
NEW_CRAWL_LINKS = [".lock", ".work", "db", "seeds", "config.json.tmp"]
# ... and in a crawl being resumed: any of its files and stores.
RESUMED_CRAWL_LINKS = [".lock", "stats.json", "doc/0", "doc/0/part-00000", "db", "db/db.json", "xml"]


def planted_link(root: Path, name: str, target_directory: Path) -> Path:
    """A link at root/name to a file or directory in target_directory,
    replacing what is there; the target holds a file to be kept."""
    link = root / name
    target_directory.mkdir(exist_ok=True)
    target = target_directory / ("dir" if name.endswith((".work", "db", "seeds", "doc/0", "xml")) else "file")
    if target.name == "dir":
        target.mkdir(exist_ok=True)
        (target / "kept").write_text("kept")
    else:
        target.write_text("kept")
    if link.is_dir() and not link.is_symlink():
        shutil.rmtree(link)
    elif link.exists():
        link.unlink()
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to(target)
    return link


def target_untouched(target_directory: Path) -> bool:
    files = {path.relative_to(target_directory): path.read_text() for path in target_directory.rglob("*") if path.is_file()}
    return set(files.values()) == {"kept"} and len(files) == 1


@pytest.mark.parametrize("name", NEW_CRAWL_LINKS)
def test_a_link_in_a_new_crawl_directory_is_refused(tmp_path, file_links, name):
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path)
    output = tmp_path / "crawl"
    output.mkdir()
    link = planted_link(output, name, tmp_path / "elsewhere")
    run = Audited(tmp_path, [str(seeds), "--depth", "1", "--conf", str(conf), "--output", str(output)], cwd=tmp_path)
    line = refusal(run)
    assert line.startswith(f"--output {output}: {link} is a symbolic link (to ")
    assert run.writes() == []
    assert target_untouched(tmp_path / "elsewhere")


@pytest.fixture
def finished_crawl(tmp_path, file_links):
    """A finished crawl of the file-links site in tmp_path/crawl, and the command that resumes it deeper."""
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path)
    output = tmp_path / "crawl"
    args = [str(seeds), "--depth", "1", "--conf", str(conf), "--output", str(output)]
    first = Audited(tmp_path, args, cwd=tmp_path)
    assert first.result.returncode == EXIT_OK, first.result.stderr
    return output, [*args, "--depth", "2", "--resume"]


@pytest.mark.parametrize("name", RESUMED_CRAWL_LINKS)
def test_a_link_in_a_crawl_being_resumed_is_refused(tmp_path, finished_crawl, name):
    output, resume = finished_crawl
    link = planted_link(output, name, tmp_path / "elsewhere")
    run = Audited(tmp_path, resume, cwd=tmp_path)
    line = refusal(run)
    assert line.startswith(f"--output {output}: {link} is a symbolic link (to "), line
    assert run.writes() == []
    assert target_untouched(tmp_path / "elsewhere")


def test_a_link_in_a_crawl_db_elsewhere_is_refused(tmp_path, file_links):
    seeds = write_seeds(tmp_path, file_links)
    conf = write_config(tmp_path)
    db = tmp_path / "shared-db"
    db.mkdir()
    link = planted_link(db, ".lock", tmp_path / "elsewhere")
    output = tmp_path / "crawl"
    run = Audited(tmp_path, [str(seeds), "--depth", "1", "--conf", str(conf), "--output", str(output), "--db", str(db)],
                  cwd=tmp_path)
    line = refusal(run)
    assert line.startswith(f"--db {db}: {link} is a symbolic link (to ")
    assert target_untouched(tmp_path / "elsewhere")
    # Only the crawl directory's lock was taken before the db was looked at.
    assert {event["path"] for event in run.writes()} <= {str(output), str(output / ".lock")}


@pytest.mark.parametrize("name", [".work", "warc"])
def test_an_export_refuses_a_crawl_directory_holding_a_link(tmp_path, finished_crawl, name):
    output, _ = finished_crawl
    planted_link(output, name, tmp_path / "elsewhere")
    command = [sys.executable, "-m", "mrcrawl.export", "warc", str(output)]
    result = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert result.returncode == EXIT_USAGE
    assert f"{output / name} is a symbolic link" in result.stderr
    assert target_untouched(tmp_path / "elsewhere")
