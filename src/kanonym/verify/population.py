"""A release's classes and the population rows each one stands for, counted apart.

The models that know the population a sample was drawn from (delta-presence,
k-map with a population table) judge each released class by its rows and by
the rows of the population that generalize to the same values. Here the
population's raw quasi-identifier tuples are generalized with the hierarchies'
own tables of levels (not the search's codes), grouped with Polars, and joined
to the release's classes on their released values; a released class that no
population row generalizes to fails the check.

Example (the population's 02138 and 02139 both become 0213*: 3 rows):
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02139", "02141"), ("0213*", "0213*", "0214*"),
    ...                       ("*",) * 3))
    >>> grouped = pl.DataFrame({"zip": ["02138", "02139", "02141"], "n": [2, 1, 4]})
    >>> classes = population_classes(grouped, "n", {"zip": h}, {"zip": 1})
    >>> released = pl.DataFrame({"zip": ["0213*", "0213*"]})
    >>> class_population(released, ["zip"], classes)
    [(2, 3)]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import polars as pl

from kanonym.errors import VerificationError
from kanonym.hierarchy import Hierarchy

POPULATION = "__kanonym_population"
"""The column of :func:`population_classes` holding each class's population rows."""


def population_classes(
    population: pl.DataFrame,
    weight: str,
    hierarchies: Mapping[str, Hierarchy],
    levels: Mapping[str, int],
) -> pl.DataFrame:
    """The population's classes at ``levels``: its quasi-identifier values generalized
    by each hierarchy's level table, with the rows of each class (column
    :data:`POPULATION`).

    ``population`` holds raw tuples as text, each standing for ``weight`` rows.

    Raises:
        VerificationError: a population value is no leaf of its hierarchy.
    """
    columns = list(levels)
    mapped = []
    for name in columns:
        hierarchy = hierarchies[name]
        labels = hierarchy.levels[levels[name]]
        leaves = pl.Series("leaf", list(hierarchy.leaves), pl.String)
        shown = pl.Series("label", list(labels), pl.String)
        lookup = pl.DataFrame([leaves, shown]).rename({"leaf": name, "label": "__label"})
        values = population.select(pl.col(name).cast(pl.String))
        joined = values.join(lookup, on=name, how="left", nulls_equal=True, maintain_order="left")
        unknown = joined.filter(pl.col("__label").is_null() & ~_missing_leaf(name, hierarchy))
        if unknown.height:
            raise VerificationError(
                f"the population's column '{name}' holds a value that is no leaf of its hierarchy"
            )
        mapped.append(joined.get_column("__label").alias(name))
    generalized = pl.DataFrame(mapped).with_columns(
        population.get_column(weight).cast(pl.Int64).alias(POPULATION)
    )
    return generalized.group_by(columns).agg(pl.col(POPULATION).sum())


def _missing_leaf(name: str, hierarchy: Hierarchy) -> pl.Expr:
    """Whether a row's value is the missing value and the hierarchy generalizes it to a
    missing label (a null label is then no lookup failure)."""
    return pl.col(name).is_null() & pl.lit(None in hierarchy.leaves)


def class_population(
    released: pl.DataFrame,
    columns: Sequence[str],
    classes: pl.DataFrame,
    weight: str | None = None,
) -> list[tuple[int, int]]:
    """Per class of ``released`` on ``columns`` (each row standing for ``weight`` rows
    when named): its rows and the population's rows of the same values (from
    :func:`population_classes`).

    Raises:
        VerificationError: a released class has no population row.
    """
    keys = list(columns)
    rows = "__kanonym_rows"
    counted = (
        released.select(
            *(pl.col(c).cast(pl.String) for c in keys),
            (pl.lit(1) if weight is None else pl.col(weight)).cast(pl.Int64).alias(rows),
        )
        .group_by(keys)
        .agg(pl.col(rows).sum())
    )
    joined = counted.join(classes, on=keys, how="left", nulls_equal=True)
    if joined.get_column(POPULATION).null_count():
        raise VerificationError(
            "a released class holds values that no population row generalizes to"
        )
    return list(
        zip(
            joined.get_column(rows).to_list(),
            joined.get_column(POPULATION).to_list(),
            strict=True,
        )
    )
