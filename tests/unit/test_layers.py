"""The package's shape: the product never imports the laboratory (issue 35).

Every import statement counts, at module level, inside functions and under TYPE_CHECKING, and
so does a string handed to importlib: a deployment installs the product without the lab's
dependencies, and a lazy import of the lab would fail there at the first call.
"""

from __future__ import annotations

import ast
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
