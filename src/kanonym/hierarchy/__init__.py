"""Value generalization hierarchies (Samarati 2001; Samarati & Sweeney 1998).

A hierarchy maps each original value of a column (level 0) to ever more general
values up to a single root. Hierarchies come from ARX CSV files or from builders
that derive them from the column's values; :func:`preview` counts a column's
rows under each generalized value, level by level.

Example:
    >>> h = resolve(parse_hierarchy("mask"), ["02138", "02139"], column="zip", source="t.csv")
    >>> h.height, h.level_values(1)
    (5, ('0213*',))
"""

from kanonym.hierarchy.arx import DUPLICATES, Duplicates, load_arx
from kanonym.hierarchy.builders import (
    DateBuilder,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
)
from kanonym.hierarchy.hierarchy import Hierarchy, RepeatedLeaf
from kanonym.hierarchy.order import ORDER_NAMES, OrderBuilder, OrderName
from kanonym.hierarchy.preview import LevelPreview, preview
from kanonym.hierarchy.spec import parse_hierarchy, resolve, spec_file

__all__ = [
    "DUPLICATES",
    "ORDER_NAMES",
    "DateBuilder",
    "Duplicates",
    "Hierarchy",
    "HierarchyBuilder",
    "IntervalBuilder",
    "LevelPreview",
    "MaskBuilder",
    "OrderBuilder",
    "OrderName",
    "RepeatedLeaf",
    "SuppressBuilder",
    "load_arx",
    "parse_hierarchy",
    "preview",
    "resolve",
    "spec_file",
]
