"""The measures reported for every solution.

Each takes plain numbers or arrays, so the same code measures any node.

Example:
    >>> import numpy as np
    >>> solution_metrics(node=(1, 0), heights=(1, 2), names=("race", "zip"),
    ...                  released_sizes=np.array([2, 5]), suppressed_rows=2, k=2)["dm"]
    47
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


def precision(node: Sequence[int], heights: Sequence[int]) -> float:
    """Prec = 1 - (sum over QIs of level/height) / |QI|; suppression not counted.

    Samarati & Sweeney 1998, section 6. Example: node (1, 0) with heights
    (1, 2) has precision 1 - (1 + 0) / 2 = 0.5.
    """
    if not node:
        return 1.0
    loss = sum(level / height for level, height in zip(node, heights, strict=True) if height)
    return 1.0 - loss / len(node)


def completeness(suppressed_rows: int, n_rows: int) -> float:
    """Share of input rows released: ``1 - suppressed / n`` (Samarati & Sweeney 1998)."""
    return 1.0 - suppressed_rows / n_rows if n_rows else 1.0


def discernibility(released_sizes: npt.NDArray[np.int64], suppressed_rows: int, n_rows: int) -> int:
    """Discernibility metric DM.

    Bayardo & Agrawal 2005, "Data privacy through optimal k-anonymization":
    each released row costs the size of its class, each suppressed row costs
    the table size, ``sum(|E|^2 for released classes E) + n * suppressed``.
    """
    return int(np.sum(released_sizes.astype(np.int64) ** 2)) + n_rows * suppressed_rows


def average_class_size(released_rows: int, classes: int, k: int) -> float | None:
    """Normalized average equivalence-class size C_AVG = (rows / classes) / k.

    LeFevre, DeWitt & Ramakrishnan 2006, "Mondrian multidimensional
    k-anonymity". ``None`` when nothing is released.
    """
    return released_rows / classes / k if classes else None


def solution_metrics(
    *,
    node: Sequence[int],
    heights: Sequence[int],
    names: Sequence[str],
    released_sizes: npt.NDArray[np.int64],
    suppressed_rows: int,
    k: int,
) -> dict[str, object]:
    """Every reported measure of one solution, keyed as in the report.

    Keys: ``precision``, ``precision_by_attribute``, ``completeness``, ``dm``,
    ``equivalence_classes``, ``aecs``, ``height``.
    """
    released_rows = int(released_sizes.sum())
    n_rows = released_rows + suppressed_rows
    return {
        "precision": precision(node, heights),
        "precision_by_attribute": precision_by_attribute(node, heights, names),
        "completeness": completeness(suppressed_rows, n_rows),
        "dm": discernibility(released_sizes, suppressed_rows, n_rows),
        "equivalence_classes": len(released_sizes),
        "aecs": average_class_size(released_rows, len(released_sizes), k),
        "height": int(sum(node)),
    }
