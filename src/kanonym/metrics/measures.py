"""Measures reported for every solution besides the utility metrics.

The utility metrics (:mod:`kanonym.metrics.utility`) give ``precision``,
``dm``, ``dm-star``, ``entropy``, ``loss``, ``aecs`` and ``height``; these
functions add what a reviewer reads beside them.

Example:
    >>> import numpy as np
    >>> report_measures(node=(1, 0), heights=(1, 2), names=("race", "zip"),
    ...                 released_sizes=np.array([2, 5]), suppressed_rows=2)["completeness"]
    0.7777777777777778
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt


def precision_by_attribute(
    node: Sequence[int], heights: Sequence[int], names: Sequence[str]
) -> dict[str, float]:
    """Per quasi-identifier, ``1 - level / height``.

    Samarati & Sweeney 1998 (section 6) and Sweeney 2002 ("Achieving
    k-anonymity privacy protection using generalization and suppression"):
    precision is one minus the share of the hierarchy climbed. A hierarchy of
    height 0 cannot be climbed and keeps precision 1.
    """
    return {
        name: 1.0 - (level / height if height else 0.0)
        for name, level, height in zip(names, node, heights, strict=True)
    }


def completeness(suppressed_rows: int, n_rows: int) -> float:
    """Share of input rows released: ``1 - suppressed / n`` (Samarati & Sweeney 1998)."""
    return 1.0 - suppressed_rows / n_rows if n_rows else 1.0


def report_measures(
    *,
    node: Sequence[int],
    heights: Sequence[int],
    names: Sequence[str],
    released_sizes: npt.NDArray[np.int64],
    suppressed_rows: int,
) -> dict[str, object]:
    """``precision_by_attribute``, ``completeness`` and ``equivalence_classes``."""
    released_rows = int(released_sizes.sum())
    return {
        "precision_by_attribute": precision_by_attribute(node, heights, names),
        "completeness": completeness(suppressed_rows, released_rows + suppressed_rows),
        "equivalence_classes": len(released_sizes),
    }


def reported_score(name: str, score: float) -> float | int:
    """The score of metric ``name`` as reports show it (full-domain and cell releases alike).

    Example:
        >>> reported_score("precision", 0.25), reported_score("dm", 12.0)
        (0.75, 12)
    """
    if name == "precision":
        score = 1.0 - score  # reports show precision; the search minimizes 1 - precision
    # Counting metrics stay whole numbers in reports.
    return int(score) if name in ("dm", "dm-star") else score
