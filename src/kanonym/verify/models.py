"""Re-checking privacy models on a finished table, from the table itself.

The released rows are regrouped with Polars by their quasi-identifier values,
the sensitive values of each class counted, and every model's own definition
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
    qis = list(quasi_identifiers)
    classes = released.group_by(qis, maintain_order=True).len().with_row_index("class_")
    labelled = released.join(classes.select([*qis, "class_"]), on=qis, how="left", nulls_equal=True)
    class_of = labelled.get_column("class_").cast(pl.Int64).to_numpy()
    sizes = classes.get_column("len").cast(pl.Int64).to_numpy()
    for model in models:
        attributes = model.sensitive_attributes
        if not attributes:
            continue
        sensitive, overall, values = {}, {}, {}
        for attribute in attributes:
            reference = source.get_column(attribute).cast(pl.String)
            labels = tuple(reference.unique(maintain_order=True).to_list())
            code_of = {label: code for code, label in enumerate(labels)}
            codes = (
                labelled.get_column(attribute)
                .cast(pl.String)
                .replace_strict(code_of, return_dtype=pl.Int64)
                .to_numpy()
            )
            n_values = len(labels)
            sensitive[attribute] = np.bincount(
                class_of * n_values + codes, minlength=len(sizes) * n_values
            ).reshape(len(sizes), n_values)
            overall[attribute] = np.bincount(
                reference.replace_strict(code_of, return_dtype=pl.Int64).to_numpy(),
                minlength=n_values,
            )
            values[attribute] = labels
        statistics = ClassStatistics(sizes, sensitive=sensitive, overall=overall, values=values)
        satisfied = model.satisfied_classes(statistics)
        failing = int(np.count_nonzero(~satisfied))
        if failing:
            raise VerificationError(
                f"release fails {model.name} {model.describe()} in {failing} of "
                f"{len(sizes)} classes"
            )
