"""The package's shape: the product never imports the laboratory, and no import runs upward
(issue 35).

Every import statement counts, at module level, inside functions and under TYPE_CHECKING, and
so does a string handed to importlib: a deployment installs the product without the lab's
dependencies, and a lazy import of the lab would fail there at the first call.

A part is a top-level module or subpackage (``factstream.edit``, ``factstream.lm``); parts
stand on floors when the graph of imports between them has no cycle: an import that closes a
cycle runs upward (``lm`` building ``lm.tasks``' runner while ``tasks`` imported ``lm`` was one).
"""

from __future__ import annotations

import ast
from collections import defaultdict
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PRODUCT = ROOT / "factstream"
LAB = "factstream_lab"


def imported_modules(source: str) -> list[tuple[int, str]]:
    """(line, module) for each import in ``source`` and each literal given to import_module."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute | ast.Name)
            and (node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id)
            in {"import_module", "__import__"}
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def lab_imports(source: str) -> list[tuple[int, str]]:
    """The imports of ``source`` that reach into the laboratory."""
    return [
        (line, module)
        for line, module in imported_modules(source)
        if module == LAB or module.startswith(f"{LAB}.")
    ]


def test_the_product_never_imports_the_laboratory() -> None:
    modules = sorted(PRODUCT.rglob("*.py"))
    assert len(modules) > 100  # the walk sees the whole product
    offenders = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules
        for line, module in lab_imports(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []


@pytest.mark.parametrize(
    "source",
    [
        "import factstream_lab.stack\n",
        "from factstream_lab.demo.run import run_demo\n",
        "def f():\n    from factstream_lab import up\n",
        "if TYPE_CHECKING:\n    from factstream_lab.stack import x\n",
        "import importlib\nimportlib.import_module('factstream_lab.eval')\n",
    ],
)
def test_the_walk_finds_every_kind_of_lab_import(source: str) -> None:
    assert [module.split(".")[0] for _, module in lab_imports(source)] == [LAB]


def test_the_walk_leaves_the_products_own_imports_alone() -> None:
    source = "import factstream.config\nfrom factstream.lm import base\nimport factstream_labels\n"
    assert lab_imports(source) == []


def part_graph(package: Path) -> dict[str, set[str]]:
    """For each part of ``package``, the other parts of it that its modules import."""
    name = package.name
    graph: dict[str, set[str]] = defaultdict(set)
    for path in package.rglob("*.py"):
        inner = path.relative_to(package).parts
        part = inner[0].removesuffix(".py") if len(inner) > 1 or inner[0] != "__init__.py" else ""
        graph[part]  # every part is a node, importing or not
        for _, module in imported_modules(path.read_text(encoding="utf-8")):
            bits = module.split(".")
            if bits[0] == name and len(bits) > 1 and bits[1] != part:
                graph[part].add(bits[1])
    return graph


def cycle_of(graph: dict[str, set[str]]) -> list[str]:
    """One cycle of ``graph`` (its parts in order), or [] when the parts stand on floors."""
    try:
        TopologicalSorter(graph).prepare()
    except CycleError as exc:
        return list(exc.args[1])
    return []


@pytest.mark.parametrize("package", ["factstream", LAB])
def test_no_import_runs_upward(package: str) -> None:
    graph = part_graph(ROOT / package)
    assert len(graph) > 5
    assert cycle_of(graph) == []


def test_the_floor_check_finds_a_cycle() -> None:
    graph = {"lm": {"prompts", "tasks"}, "tasks": {"lm", "prompts"}, "prompts": set()}
    assert sorted(set(cycle_of(graph))) == ["lm", "tasks"]
    assert cycle_of({"lm": {"prompts"}, "tasks": {"lm"}, "prompts": set()}) == []


def test_test_modules_have_unique_names() -> None:
    # pytest imports test modules by basename (rootdir mode): two of one name stop collection.
    names = [path.name for path in (ROOT / "tests").rglob("test_*.py")]
    assert len(names) > 100
    assert sorted({name for name in names if names.count(name) > 1}) == []
