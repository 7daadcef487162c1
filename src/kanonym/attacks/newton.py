"""ARX's two-dimensional Newton-Raphson solver, as the SNB estimator uses it.

ARX (Prasser, Kohlmayer et al., "ARX - a comprehensive tool for anonymizing
biomedical data", AMIA 2014) fits the two parameters of its population models
with the solver of its ``newtonraphson`` library: Newton steps
``x <- x - J(x)^-1 F(x)`` from a start value, at most ``iterations_per_try + 1``
steps a try; when a try fails (a step leaves the constraint or gives NaN, or
the try's steps run out) the next of sixteen prepared start values
(every pair of 0, 0.33, 0.66, 0.99, in that order) is taken, and after the
last start value has served one step the solver gives up (NaN). A solution is
accepted when both components of F are within ``accuracy`` of 0. Arithmetic
follows IEEE doubles as Java does (a division by zero gives an infinity, a
power of a negative base with a fractional exponent NaN), which the threshold
decisions of ARX's models depend on; the wall-clock limits of ARX's solver
(100 ms a try, 1 s in all) are not reproduced.

Example (the root of x^2 = 2, y = 3 from the start (1, 1)):
    >>> import numpy as np
    >>> def master(p):
    ...     x, y = p
    ...     return (x * x - 2.0, y - 3.0), (2.0 * x, 0.0, 0.0, 1.0)
    >>> x, y = solve(master, (1.0, 1.0))
    >>> round(x, 6), round(y, 6)
    (1.414214, 3.0)
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

Pair = tuple[float, float]
Master = Callable[[Pair], tuple[Pair, tuple[float, float, float, float]]]
"""F(x) and its Jacobian ``(dF1/dx1, dF1/dx2, dF2/dx1, dF2/dx2)`` at a point."""

ACCURACY = 1e-6
"""ARX's default accuracy: both components of F within it of 0."""


def _starts() -> tuple[Pair, ...]:
    """The sixteen prepared start values, accumulated as ARX adds 0.33 (0.33, 0.66, 0.99)."""
    values = []
    a = 0.0
    while a < 1.0:
        values.append(a)
        a += 0.33
    return tuple((x, y) for x in values for y in values)


STARTS = _starts()


def solve(
    master: Master,
    start: Pair,
    *,
    iterations_per_try: int = 15,
    accuracy: float = ACCURACY,
    constraint: Callable[[Pair], bool] | None = None,
) -> Pair:
    """A root of F from ``start`` then the prepared start values, or (NaN, NaN).

    ``iterations_per_try`` is 15 in ARX's tests (its default is 1000); the
    total budget is ``(16 + 1) * iterations_per_try`` steps, as ARX sets it
    when it uses prepared start values.
    """
    total_limit = (len(STARTS) + 1) * iterations_per_try
    total = 0
    offset = 0
    solution: Pair | None = None
    with np.errstate(all="ignore"):
        while total <= total_limit:
            if solution is None:
                solution = start
            else:
                solution = STARTS[offset]
                offset += 1
            iterations = 0
            while True:
                total += 1
                (fx, fy), (x1, x2, y1, y2) = master(solution)
                if abs(fx) <= accuracy and abs(fy) <= accuracy:
                    return solution
                scale = np.float64(1.0) / (np.float64(x1) * y2 - np.float64(x2) * y1)
                dx = (y2 * scale) * fx + (-x2 * scale) * fy
                dy = (-y1 * scale) * fx + (x1 * scale) * fy
                solution = (float(solution[0] - dx), float(solution[1] - dy))
                if offset == len(STARTS):
                    return (math.nan, math.nan)
                if constraint is not None and not constraint(solution):
                    break
                if math.isnan(solution[0]) or math.isnan(solution[1]):
                    break
                if iterations >= iterations_per_try:
                    break
                iterations += 1
    return (math.nan, math.nan)
