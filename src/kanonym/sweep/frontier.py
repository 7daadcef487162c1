"""The Pareto frontier of a sweep: the releases no other release beats on both axes.

Each feasible point of a sweep is a pair (utility loss, risk), both to be
minimized. A point *dominates* another when it is no worse on both and better
on at least one; the *frontier* is the set of points no point dominates (the
Pareto-optimal points, Pareto 1906; as multi-objective optimization defines
them, e.g. Deb 2001, "Multi-Objective Optimization using Evolutionary
Algorithms", section 2.4). Two points equal on both axes do not dominate each
other, so both are on the frontier or neither is. Dominance is a strict partial
order on a finite set, so every point off the frontier is dominated by some
point on it.

The test is vectorized: all pairs at once, which for a sweep of tens to a few
hundred points is a few thousand comparisons.

Example:
    >>> import numpy as np
    >>> on_frontier(np.array([1.0, 2.0, 3.0, 2.0]), np.array([0.5, 0.2, 0.3, 0.2])).tolist()
    [True, True, False, True]
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt


def dominates(
    loss: npt.NDArray[np.float64], risk: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """The dominance matrix: entry ``[i, j]`` says point i dominates point j.

    Point i dominates point j when ``loss[i] <= loss[j]`` and ``risk[i] <=
    risk[j]``, one of them strictly.

    Example:
        >>> dominates(np.array([1.0, 2.0]), np.array([0.1, 0.1])).tolist()
        [[False, True], [False, False]]
    """
    loss = np.asarray(loss, dtype=np.float64)
    risk = np.asarray(risk, dtype=np.float64)
    no_worse = (loss[:, None] <= loss[None, :]) & (risk[:, None] <= risk[None, :])
    better = (loss[:, None] < loss[None, :]) | (risk[:, None] < risk[None, :])
    return no_worse & better


def on_frontier(
    loss: npt.NDArray[np.float64], risk: npt.NDArray[np.float64]
) -> npt.NDArray[np.bool_]:
    """Per point, whether no other point dominates it (:func:`dominates`).

    Example:
        >>> on_frontier(np.array([0.3, 0.1]), np.array([0.1, 0.3])).tolist()
        [True, True]
    """
    return np.logical_not(dominates(loss, risk).any(axis=0))
