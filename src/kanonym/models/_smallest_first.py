"""How many of the smallest classes a sample-based model suppresses: ARX's binary search.

ARX enforces its risk thresholds (average re-identification risk, sample and
population uniqueness) on the whole release rather than class by class: once
the class-based models' failing classes are suppressed, the kept classes are
sorted by size, smallest first, and ARX's ``suppressWhileNotFulfilledBinary``
(``HashGroupifyDistribution``) looks for the number of them to suppress as
well. The criterion depends only on the sizes of the classes left, so the
search is over prefix lengths j of the ascending sizes; its control flow is
ARX's, transcribed exactly (with Java's integer division, which truncates
toward 0), because for a criterion that is not monotone in j (population
uniqueness) the prefix it lands on is not the shortest one that holds:

* if the criterion holds with nothing more suppressed, j = 0;
* otherwise bisect over [0, n): j = mid + 1 is tried; holding, the upper end
  moves below mid, failing, the lower end above it; a failing j whose rows
  exceed the budget ends the search (the node cannot be accepted);
* at the end, if the last j fails, one more class is suppressed.

For a criterion monotone in j the result is the shortest prefix that holds.

Example (the criterion holds once at most 2 classes are left):
    >>> import numpy as np
    >>> sizes = np.array([1, 1, 2, 3, 5])
    >>> smallest_first(sizes, lambda j: len(sizes) - j <= 2, budget=10)
    3
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt


def _half(value: int) -> int:
    """Java's ``value / 2`` on ints: truncated toward 0 (``-1 / 2 == 0``)."""
    return -((-value) // 2) if value < 0 else value // 2


def smallest_first(
    sizes: npt.NDArray[np.int64], holds: Callable[[int], bool], *, budget: int
) -> int:
    """The number j of the smallest classes ARX's binary search suppresses.

    Args:
        sizes: the kept classes' sizes, ascending.
        holds: whether the criterion holds once the j smallest are suppressed.
        budget: rows that may still be suppressed; the search stops at a failing
            j suppressing more (the caller then finds the node over its limit).
    """
    n = len(sizes)
    if n == 0 or holds(0):
        return 0
    rows = np.concatenate(([0], np.cumsum(sizes)))
    known: dict[int, bool] = {}

    def fulfilled(j: int) -> bool:
        if j not in known:
            known[j] = holds(j)
        return known[j]

    def aborts(j: int) -> bool:
        return not fulfilled(j) and int(rows[j]) > budget

    low, high = 0, n - 1
    middle = _half(low + high)
    aborted = False
    while low <= high:
        j = middle + 1
        if aborts(j):
            aborted = True
            break
        if fulfilled(j):
            high = middle - 1
        else:
            low = middle + 1
        middle = _half(low + high)
    j = middle + 1
    if not aborted and not aborts(j) and not fulfilled(j) and j < n:
        j += 1
    return j
