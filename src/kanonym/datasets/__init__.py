"""Small data shipped with kanonym, so that the demo and the tests need nothing else.

The UCI Adult census extract as used by ARX (30,162 rows without missing
values; Becker & Kohavi 1996, UCI Machine Learning Repository, CC BY 4.0), with
ARX's generalization hierarchies for its nine attributes, and ARX's research
subset of it (3,016 of its rows), the sample of ARX's delta-presence and k-map
tests.

Example:
    >>> frame = load_adult()
    >>> frame.shape, sorted(adult_hierarchies())[:2]
    ((30162, 9), ['age', 'education'])
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

import polars as pl

from kanonym.hierarchy import Hierarchy, load_arx
from kanonym.io import read_table

ADULT_COLUMNS = (
    "sex",
    "age",
    "race",
    "marital-status",
    "education",
    "native-country",
    "workclass",
    "occupation",
    "salary-class",
)


def adult_path() -> Path:
    """Path of the bundled, gzip-compressed Adult CSV (``;``-separated, CRLF)."""
    with as_file(files("kanonym.datasets") / "adult" / "adult.csv.gz") as path:
        return Path(path)


def adult_subset_path() -> Path:
    """Path of the bundled research subset of Adult (ARX's ``adult_subset.csv``, gzip)."""
    with as_file(files("kanonym.datasets") / "adult" / "adult_subset.csv.gz") as path:
        return Path(path)


def adult_hierarchy_path(column: str) -> Path:
    """Path of the ARX-format hierarchy file of an Adult column."""
    if column not in ADULT_COLUMNS:
        raise KeyError(f"adult has no column {column!r}")
    with as_file(files("kanonym.datasets") / "adult" / "hierarchies" / f"{column}.csv") as path:
        return Path(path)


def load_adult() -> pl.DataFrame:
    """The Adult table, every column as text."""
    return read_table(adult_path()).frame


def load_adult_subset() -> pl.DataFrame:
    """ARX's research subset of Adult: 3,016 of its rows, every column as text.

    Example:
        >>> load_adult_subset().height
        3016
    """
    return read_table(adult_subset_path()).frame


def adult_hierarchies() -> dict[str, Hierarchy]:
    """ARX's hierarchies for the nine Adult columns, in column order."""
    return {column: load_arx(adult_hierarchy_path(column)) for column in ADULT_COLUMNS}
