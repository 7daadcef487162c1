"""Names a package exports but imports on first use (PEP 562).

``kanonym`` and some of its subpackages re-export names from modules that a
given command does not need (the attacks, the ledger, the HTML report); loading
them all cost about 70 ms of every command-line run. A package lists where
each of those names lives, and the module is imported the first time the name
is read. Type checkers see the names through ``if TYPE_CHECKING:`` imports.
A lazy name must not also be the name of a submodule of the package: once
that submodule is imported, the package attribute is the module, and the name
never reaches ``__getattr__``.

Example:
    >>> import kanonym
    >>> kanonym.risk.__module__
    'kanonym.attacks.api'
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def lazy_names(
    package: str, origins: Mapping[str, str]
) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package``, which exports each
    name of ``origins`` from the module it maps to."""

    def attribute(name: str) -> object:
        origin = origins.get(name)
        if origin is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(origin), name)
        setattr(sys.modules[package], name, value)  # later reads skip this function
        return value

    def names() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(origins))

    return attribute, names
