"""Shared fixtures: the seed papers' small tables and their hierarchies.

Also the check that property tests test something: every test call runs inside
:func:`tests.meaningful.counting`, and a test that passed although
:func:`tests.meaningful.assume_meaningful` discarded more than half of its
examples fails (see :mod:`tests.meaningful` for why the count is ours rather
than hypothesis' statistics).
"""

from __future__ import annotations

from collections.abc import Generator
from pathlib import Path

import polars as pl
import pytest

from kanonym.hierarchy import Hierarchy
from tests.meaningful import counting

SHARED_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def race_hierarchy() -> Hierarchy:
    """Samarati's race hierarchy: R0 = {asian, black, white} -> R1 = {person}."""
    return Hierarchy("race", (("asian", "black", "white"), ("person",) * 3))


def zip_hierarchy() -> Hierarchy:
    """Samarati's ZIP hierarchy: Z0 -> Z1 = {9413*, 9414*} -> Z2 = {941**}."""
    leaves = ("94138", "94139", "94141", "94142")
    return Hierarchy("zip", (leaves, ("9413*", "9413*", "9414*", "9414*"), ("941**",) * 4))


def samarati_table() -> pl.DataFrame:
    """The private table PT of Samarati's FOSAD 2008 slides (Race, ZIP; 9 rows)."""
    return pl.DataFrame(
        {
            "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
            "zip": [
                "94142",
                "94141",
                "94139",
                "94139",
                "94139",
                "94138",
                "94139",
                "94139",
                "94141",
            ],
        }
    )


@pytest.fixture
def samarati() -> tuple[pl.DataFrame, dict[str, Hierarchy]]:
    """Samarati's table with its two hierarchies."""
    return samarati_table(), {"race": race_hierarchy(), "zip": zip_hierarchy()}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Generator[None, object, object]:
    """Fail a passing test whose examples were mostly discarded as not meaningful."""
    with counting(getattr(item, "obj", None)) as tally:
        outcome = yield
    problem = tally.problem()
    if problem is not None:
        pytest.fail(f"{item.nodeid}: {problem}", pytrace=False)
    return outcome
