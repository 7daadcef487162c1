"""Local recoding: each class gets its own generalized values (Samarati's CG_).

Full-domain generalization (:mod:`kanonym.search`) maps every value of a
column the same way; local recoding generalizes cells class by class, so two
rows with the same value may be released differently and nothing needs to be
suppressed. :class:`Mondrian` is LeFevre, DeWitt & Ramakrishnan's 2006
multidimensional partitioning, strict or relaxed; :data:`RECODINGS` maps the
``--algorithm`` names to them.
"""

from kanonym.recoding.dimensions import (
    CategoricalDimension,
    Dimension,
    NumericDimension,
    numeric_flags,
)
from kanonym.recoding.mondrian import UNION_CLOSED, Mondrian
from kanonym.recoding.partitioning import Partitioning

RECODINGS: dict[str, Mondrian] = {
    "mondrian": Mondrian(relaxed=False),
    "mondrian-relaxed": Mondrian(relaxed=True),
}

__all__ = [
    "RECODINGS",
    "UNION_CLOSED",
    "CategoricalDimension",
    "Dimension",
    "Mondrian",
    "NumericDimension",
    "Partitioning",
    "numeric_flags",
]
