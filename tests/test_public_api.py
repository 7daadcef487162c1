"""The public API is exactly what ``kanonym.__all__`` lists."""

from __future__ import annotations

import inspect

import kanonym

SUBPACKAGES = {
    "attacks",
    "cli",
    "config",
    "datasets",
    "encode",
    "errors",
    "hierarchy",
    "io",
    "lattice",
    "metrics",
    "models",
    "recoding",
    "release",
    "report",
    "search",
    "technique",
    "transform",
    "verify",
}


def test_all_names_exist() -> None:
    for name in kanonym.__all__:
        assert hasattr(kanonym, name), name


def test_all_is_complete() -> None:
    public = {
        name
        for name, value in vars(kanonym).items()
        if not name.startswith("_") and not inspect.ismodule(value)
    }
    assert public == set(kanonym.__all__) - {"__version__"}


def test_no_unexpected_submodules_are_public() -> None:
    modules = {
        name
        for name, value in vars(kanonym).items()
        if inspect.ismodule(value) and not name.startswith("_")
    }
    assert modules <= SUBPACKAGES


def test_version_is_a_release_number() -> None:
    parts = kanonym.__version__.split(".")
    assert len(parts) == 3 and all(p.isdigit() for p in parts)
