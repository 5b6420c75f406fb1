"""The package's layout follows the data, and its imports keep to the layout.

Each stage folder of mrcrawl/ may import config.py and the stages below it
(its __init__.py says which); nothing under mrcrawl/ imports another module
in a circle; mrjob is imported only by the jobs, the mrjob glue (mr/) and
the cluster store; no module imports a `_`-name from another module.
Imports are read from the source, as written.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# What each stage may import, besides itself and config.py: stages below it.
MAY_IMPORT = {
    "store": set(),
    "page": {"store"},
    "fetch": {"store", "page"},
    "frontier": {"store", "page"},
    "output": {"store", "page", "fetch", "frontier"},
    "mr": {"store", "page", "fetch", "frontier", "output"},  # the glue may use any stage; none uses it
}
IMPORTS_MRJOB = {"mrcrawl.store.cluster_store"}  # and jobs.*, mrcrawl.mr.*
# The tools beside the stages: they use the stages, and no stage uses them.
TOOLS = {"testweb", "bench"}


def module_name(path: Path) -> str:
    name = path.relative_to(REPO).with_suffix("").as_posix().replace("/", ".")
    return name.removesuffix(".__init__")


def project_modules() -> dict[str, Path]:
    paths = [*(REPO / "mrcrawl").rglob("*.py"), *(REPO / "jobs").glob("*.py")]
    return {module_name(path): path for path in paths}


MODULES = project_modules()


def imported_modules(name: str) -> set[str]:
    """Every module `name` imports, anywhere in its source, resolved to a full name."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{parent}.{base}" if base else parent
            # `from mrcrawl.page import charset` names a module of the package.
            submodules = {f"{base}.{alias.name}" for alias in node.names} & MODULES.keys()
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(base)
    return found


def stage_of(name: str) -> str | None:
    parts = name.split(".")
    if parts[0] == "mrcrawl" and len(parts) > 2 and parts[1] in MAY_IMPORT:
        return parts[1]
    if parts[0] == "mrcrawl" and len(parts) == 2 and parts[1] in MAY_IMPORT:
        return parts[1]  # the stage's __init__
    return None


def test_the_stages_exist_and_each_says_what_it_may_import():
    for stage, allowed in MAY_IMPORT.items():
        init = REPO / "mrcrawl" / stage / "__init__.py"
        tree = ast.parse(init.read_text(encoding="utf-8"))
        docstring = ast.get_docstring(tree)
        assert docstring and "Imports:" in docstring, f"{init} must say what the stage may import"
        # Importing a stage runs nothing: its modules are imported by name.
        assert len(tree.body) == 1, f"{init} holds code besides its docstring"
        named = {word.strip(".,()") for word in docstring.split("Imports:", 1)[1].split()}
        assert allowed <= named, f"{init} does not name {allowed - named}"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if stage_of(name)))
def test_a_stage_imports_only_config_and_the_stages_below(name):
    stage = stage_of(name)
    allowed = {"mrcrawl.config", f"mrcrawl.{stage}"} | {f"mrcrawl.{below}" for below in MAY_IMPORT[stage]}
    for imported in imported_modules(name):
        if imported == "mrcrawl" or not imported.startswith("mrcrawl."):
            continue
        assert any(imported == room or imported.startswith(room + ".") for room in allowed), (
            f"{name} ({stage}) imports {imported}"
        )


def test_config_imports_nothing_of_the_package():
    assert not {imported for imported in imported_modules("mrcrawl.config") if imported.startswith("mrcrawl")}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_only_the_jobs_the_glue_and_the_cluster_store_import_mrjob(name):
    uses_mrjob = any(imported == "mrjob" or imported.startswith("mrjob.") for imported in imported_modules(name))
    may = name.startswith(("jobs.", "mrcrawl.mr.")) or name in IMPORTS_MRJOB
    assert may or not uses_mrjob, f"{name} imports mrjob"


def test_no_stage_imports_the_commands_or_the_tools():
    outside = ({"mrcrawl.cli", "mrcrawl.driver", "mrcrawl.export", "mrcrawl.db", "mrcrawl.show", "mrcrawl.parsechecker",
                "mrcrawl.inject", "mrcrawl.report", "mrcrawl.plan",
                "mrcrawl.pipeline", "mrcrawl.crawl_dir", "mrcrawl.seeds", "mrcrawl.interrupts", "mrcrawl.progress"}
               | {f"mrcrawl.{tool}" for tool in TOOLS})
    for name in MODULES:
        if stage_of(name) or name == "mrcrawl.config":
            for imported in imported_modules(name):
                assert not any(imported == room or imported.startswith(room + ".") for room in outside), (
                    f"{name} imports {imported}"
                )


def test_no_module_imports_itself_through_a_circle():
    graph = {name: {imported for imported in imported_modules(name) if imported in MODULES and imported != name}
             for name in MODULES}
    state: dict[str, str] = {}  # "open" while on the current path, "done" after

    def visit(name: str, path: list[str]) -> None:
        state[name] = "open"
        for imported in sorted(graph[name]):
            if state.get(imported) == "open":
                circle = path[path.index(imported):] + [imported]
                pytest.fail("import circle: " + " -> ".join(circle))
            if imported not in state:
                visit(imported, path + [imported])
        state[name] = "done"

    for name in sorted(MODULES):
        if name not in state:
            visit(name, [name])


def test_the_moved_flat_modules_are_gone():
    """The old flat layout: a module left behind would be a second copy."""
    flat = {path.stem for path in (REPO / "mrcrawl").glob("*.py")}
    assert flat == {"__init__", "__main__", "cli", "config", "crawl_dir", "db", "driver", "export", "inject",
                    "interrupts", "logs", "parsechecker", "pipeline", "plan", "progress", "seeds", "show"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_no_module_imports_a_private_name_of_another(name):
    """A `_`-name is its module's own: what another module needs is public."""
    path = MODULES[name]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] in ("mrcrawl", "jobs"):
            private = [alias.name for alias in node.names if alias.name.startswith("_")]
            assert not private, f"{name} imports {private} from {node.module}"
