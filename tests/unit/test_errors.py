"""Every exception class in the product and the laboratory roots at FactstreamError and sits in
errors.py's tree."""

from __future__ import annotations

import importlib
import pkgutil
import re

import factstream
import factstream_lab
from factstream import errors
from factstream.errors import FactstreamError

# One branch of the tree: "│   " or "    " per level above it, then "├── " or "└── ".
_BRANCH = re.compile(r"^((?:│   |    )*)[├└]── (\w+)( \*)?\s")


def _exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined at module level anywhere in the packages, by name."""
    found: dict[str, type[BaseException]] = {}
    walks = [
        pkgutil.walk_packages(package.__path__, f"{package.__name__}.")
        for package in (factstream, factstream_lab)
    ]
    for info in (info for walk in walks for info in walk):
        module = importlib.import_module(info.name)
        for obj in vars(module).values():
            if (
                isinstance(obj, type)
                and issubclass(obj, BaseException)
                and obj.__module__ == module.__name__
            ):
                assert obj.__name__ not in found, f"two exception classes named {obj.__name__}"
                found[obj.__name__] = obj
    return found


def _tree() -> dict[str, tuple[str, bool]]:
    """errors.py's docstring tree: each name's parent and whether it is marked ``*``."""
    lines = (errors.__doc__ or "").splitlines()
    path = ["FactstreamError"]  # the names from the root down to the last branch read
    tree: dict[str, tuple[str, bool]] = {}
    for line in lines[lines.index("FactstreamError") + 1 :]:
        if not line.strip():
            break
        branch = _BRANCH.match(line + " ")
        assert branch, f"not a branch of the tree: {line!r}"
        depth, name = len(branch[1]) // 4, branch[2]
        assert name not in tree, f"{name} is in the tree twice"
        tree[name] = (path[depth], bool(branch[3]))
        path[depth + 1 :] = [name]
    return tree


def test_every_exception_derives_from_factstream_error() -> None:
    strays = sorted(
        f"{cls.__module__}.{name}"
        for name, cls in _exception_classes().items()
        if not issubclass(cls, FactstreamError)
    )
    assert not strays, f"not derived from FactstreamError: {strays}"


def test_the_docstring_tree_names_every_exception_once() -> None:
    found = set(_exception_classes()) - {"FactstreamError"}
    tree = set(_tree())
    assert not found - tree, f"missing from errors.py's tree: {sorted(found - tree)}"
    assert not tree - found, f"in errors.py's tree but not defined: {sorted(tree - found)}"


def test_the_docstring_tree_is_the_class_hierarchy() -> None:
    classes = _exception_classes()
    for name, (parent, starred) in _tree().items():
        cls = classes[name]
        assert classes[parent] in cls.__bases__, (
            f"{name} derives from {cls.__bases__}, not {parent}"
        )
        outside = cls.__module__ != errors.__name__
        assert starred == outside, f"{name}: '*' marks exactly the classes outside errors.py"


def test_errors_module_exports_its_classes() -> None:
    defined = {
        name for name, cls in _exception_classes().items() if cls.__module__ == "factstream.errors"
    }
    assert defined == set(errors.__all__)
