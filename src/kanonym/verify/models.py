"""Re-checking privacy models on a finished table, from the table itself.

The released rows are regrouped with Polars by their quasi-identifier values,
the sensitive values of each class counted (with the counting ``kanonym check``
uses, in slices of bounded size), and every model's own definition
(its ``satisfied_classes``) applied to those counts. Nothing here comes from
the search: a wrong class or histogram in the search cannot pass unnoticed.
The reference distribution of t-closeness, beta-likeness and delta-disclosure
is the one of the whole input table, as in the search.

Example:
    >>> import polars as pl
    >>> from kanonym.models import DistinctLDiversity
    >>> table = pl.DataFrame({"zip": ["0213*"] * 2, "disease": ["flu", "flu"]})
    >>> verify_models(table, quasi_identifiers=["zip"], source=table,
    ...               models=[DistinctLDiversity(l=2, attribute="disease")])
    Traceback (most recent call last):
    ...
    kanonym.errors.VerificationError: release fails distinct-l-diversity ... in 1 of 1 classes
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from kanonym.errors import VerificationError
from kanonym.models import ClassStatistics, PrivacyModel
from kanonym.verify.sensitive import ValueCounts, slice_step


def verify_models(
    released: pl.DataFrame,
    *,
    quasi_identifiers: Sequence[str],
    source: pl.DataFrame,
    models: Sequence[PrivacyModel],
) -> None:
    """Raise VerificationError unless every class of ``released`` satisfies every model.

    ``source`` is the input table, whose sensitive-value distribution is the
    reference for the models that compare a class with the whole table.
    """
    if released.height == 0:
        return
    # Each attribute is counted once, however many models read it.
    counted: dict[str, ValueCounts] = {}
    for model in models:
        attributes = model.sensitive_attributes
        if not attributes:
            continue
        for a in attributes:
            if a not in counted:
                counted[a] = ValueCounts.of(
                    released, quasi_identifiers, a, reference=source.get_column(a)
                )
        counts = {a: counted[a] for a in attributes}
        n_classes = next(iter(counts.values())).n_classes
        step = slice_step(max(len(c.labels) for c in counts.values()))
        failing = 0
        # Every attribute numbers the classes alike (ranks of the same rows), so
        # the same class range of each attribute describes the same classes.
        for start in range(0, n_classes, step):
            stop = min(n_classes, start + step)
            sensitive = {a: c.matrix(start, stop) for a, c in counts.items()}
            statistics = ClassStatistics(
                next(iter(sensitive.values())).sum(axis=1),
                sensitive=sensitive,
                overall={a: c.overall for a, c in counts.items()},
                values={a: c.labels for a, c in counts.items()},
            )
            failing += int(np.count_nonzero(~model.satisfied_classes(statistics)))
        if failing:
            raise VerificationError(
                f"release fails {model.name} {model.describe()} in {failing} of {n_classes} classes"
            )
