"""Every Python the project claims installs it with a plain `pip install` and
crawls the test web with the installed package, and pip refuses the others.

The claimed versions are pyproject's classifiers. Each claimed version gets its
own tests, and a claimed version with no interpreter on this machine fails
them: a claim nobody ran is not shown to work. An interpreter is looked for as
`python3.X` on PATH and in pyenv's versions."""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
from functools import cache
from pathlib import Path

import pytest
from packaging.specifiers import SpecifierSet

from crawl_support import driver_command, layer_docs, layer_triples, write_inputs
from mrcrawl.store.records import FETCHED
from mrcrawl.testweb import expected_layers_for_config

CHECKOUT = Path(__file__).resolve().parent.parent
PROJECT = tomllib.loads((CHECKOUT / "pyproject.toml").read_text(encoding="utf-8"))
CLAIMED = sorted(
    tuple(int(part) for part in match.groups())
    for classifier in PROJECT["project"].get("classifiers", [])
    if (match := re.fullmatch(r"Programming Language :: Python :: (\d+)\.(\d+)", classifier))
)
# The nearest versions outside the claimed range: the ones a user is most likely to try.
NEIGHBOURS = [(3, CLAIMED[0][1] - 1), (3, CLAIMED[-1][1] + 1)] if CLAIMED else []
DEPTH = 2


def dotted(version: tuple[int, int]) -> str:
    return "%d.%d" % version


@cache
def find_cpython(version: tuple[int, int]) -> str | None:
    """A CPython interpreter of `version` (major, minor) on this machine, or None."""
    candidates = [sys.executable, shutil.which(f"python{dotted(version)}")]
    pyenv = shutil.which("pyenv")
    pyenv_root = subprocess.run([pyenv, "root"], capture_output=True, text=True, timeout=30).stdout.strip() if pyenv else ""
    versions = Path(pyenv_root or os.environ.get("PYENV_ROOT") or Path.home() / ".pyenv") / "versions"
    candidates += sorted(str(python) for python in versions.glob(f"{dotted(version)}*/bin/python3"))
    for candidate in filter(None, candidates):
        if identify(candidate) == ("CPython", *version):
            return candidate
    return None


def identify(interpreter: str) -> tuple | None:
    """(implementation, major, minor) as the interpreter reports them; None if it
    does not run (a pyenv shim of a version that is not selected exits 127)."""
    probe = "import platform, sys; print(platform.python_implementation(), *sys.version_info[:2])"
    try:
        result = subprocess.run([interpreter, "-c", probe], capture_output=True, text=True, timeout=30)
    except OSError:
        return None
    fields = result.stdout.split()
    if result.returncode != 0 or len(fields) != 3:
        return None
    return fields[0], int(fields[1]), int(fields[2])


def isolated_environment() -> dict:
    """This environment without anything that could import the source tree instead of the installed package."""
    return {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "PYTHONHOME")}


def copy_of_checkout(destination: Path) -> Path:
    """What a build of the checkout reads. A build writes `build/` and `*.egg-info`
    beside its sources, so it runs on a copy and leaves the checkout as it was."""
    destination.mkdir()
    for name in ("pyproject.toml", PROJECT["project"]["readme"]):
        shutil.copy(CHECKOUT / name, destination / name)
    for top in {package.split(".")[0] for package in PROJECT["tool"]["setuptools"]["packages"]["find"]["include"]}:
        shutil.copytree(CHECKOUT / top, destination / top, ignore=shutil.ignore_patterns("__pycache__"))
    return destination


def venv_with_pip_install(interpreter: str, directory: Path) -> tuple[Path, subprocess.CompletedProcess]:
    """A fresh venv of `interpreter`, and the result of a plain `pip install` of the checkout into it."""
    venv = directory / "venv"
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True, capture_output=True, timeout=120)
    python = venv / "bin" / "python"
    install = subprocess.run([str(python), "-m", "pip", "install", str(copy_of_checkout(directory / "checkout"))],
                             cwd=directory, env=isolated_environment(), capture_output=True, text=True, timeout=600)
    return python, install


def pip_output(result: subprocess.CompletedProcess) -> str:
    return (result.stdout + result.stderr)[-3000:]


@pytest.fixture(scope="module", params=CLAIMED, ids=dotted)
def installed_python(request, tmp_path_factory) -> Path:
    """The python of a fresh venv of a claimed version, with the checkout installed (not editable)."""
    version = request.param
    interpreter = find_cpython(version)
    if interpreter is None:
        pytest.fail(f"pyproject claims Python {dotted(version)}, but no CPython {dotted(version)} was found as "
                    f"python{dotted(version)} on PATH or in pyenv's versions to test it with "
                    f"(install one, e.g. `pyenv install {dotted(version)}`)")
    python, install = venv_with_pip_install(interpreter, tmp_path_factory.mktemp(f"python{dotted(version)}"))
    assert install.returncode == 0, f"pip install on {interpreter} failed:\n{pip_output(install)}"
    return python


def test_the_install_is_complete_and_imported_from_the_venv(installed_python, tmp_path):
    # Every module of the checkout, so that a package the build leaves out fails here.
    modules = sorted(
        path.relative_to(CHECKOUT).with_suffix("").as_posix().replace("/", ".").removesuffix(".__init__")
        for top in ("mrcrawl", "jobs") for path in (CHECKOUT / top).rglob("*.py")
    )
    where = subprocess.run(
        [str(installed_python), "-c", "import importlib, sys\nfor name in sys.argv[1:]: print(importlib.import_module(name).__file__)",
         *modules], cwd=tmp_path, env=isolated_environment(), capture_output=True, text=True, timeout=60,
    )
    assert where.returncode == 0, where.stderr
    venv = installed_python.parent.parent
    assert len(where.stdout.split()) == len(modules)
    for module in where.stdout.split():
        assert Path(module).is_relative_to(venv / "lib"), module
    consistent = subprocess.run([str(installed_python), "-m", "pip", "check"], capture_output=True, text=True, timeout=120)
    assert consistent.returncode == 0, consistent.stdout + consistent.stderr


# Both runners import mrjob, whose mrjob.util imports `pipes` and `distutils`;
# only local then calls `pipes.quote`, for every task and sort it starts.
@pytest.mark.parametrize("runner", ["inline", "local"])
def test_the_installed_package_crawls_the_test_web(installed_python, runner, web_server, tmp_path):
    seeds, conf, config = write_inputs(web_server, tmp_path)
    output = tmp_path / "crawl"
    command = [str(installed_python), *driver_command(seeds, conf, output, DEPTH, "--runner", runner)[1:]]
    result = subprocess.run(command, cwd=tmp_path, env=isolated_environment(), capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, (result.stdout + result.stderr)[-3000:]
    expected = expected_layers_for_config(web_server.web, config, web_server.seeds, depth=DEPTH)
    for layer, oracle in enumerate(expected):
        assert layer_triples(output, layer) == oracle, f"layer {layer}"
    assert all(any(doc["outcome"] == FETCHED for doc in layer_docs(output, layer)) for layer in range(DEPTH))


def test_requires_python_admits_exactly_the_claimed_versions():
    requires_python = SpecifierSet(PROJECT["project"]["requires-python"])
    for minor in range(40):
        claimed = (3, minor) in CLAIMED
        for patch in (0, 99):
            assert requires_python.contains(f"3.{minor}.{patch}") == claimed, \
                f"requires-python {requires_python} and the classifiers disagree on 3.{minor}.{patch}"


def test_pip_refuses_a_python_outside_requires_python(tmp_path):
    # The versions just outside the range that this machine has (3.10 among
    # pyenv's here); test_requires_python_admits_exactly_the_claimed_versions
    # covers the ones it has not.
    outside = [(version, interpreter) for version in NEIGHBOURS if (interpreter := find_cpython(version))]
    assert outside, f"no CPython {' or '.join(map(dotted, NEIGHBOURS))} here to try pip's refusal with"
    for version, interpreter in outside:
        python, install = venv_with_pip_install(interpreter, tmp_path / dotted(version))
        assert install.returncode != 0
        assert "requires a different Python" in install.stderr, pip_output(install)
        nothing_installed = subprocess.run([str(python), "-c", "import mrcrawl"], cwd=tmp_path, env=isolated_environment(),
                                           capture_output=True, timeout=60)
        assert nothing_installed.returncode != 0
