"""The exponential mechanism: pick a candidate with probability growing exponentially in its score.

McSherry & Talwar (2007, "Mechanism Design via Differential Privacy", FOCS)
select candidate i with probability proportional to
exp(epsilon * score_i / (2 * sensitivity)), where sensitivity bounds how much
one record can change any score; the choice is epsilon-differentially
private. SafePub (Bild, Kuhn & Prasser 2018, PoPETs) searches the
generalization lattice with it: from the most general transformation, each
step adds the current pivot's direct specializations to the candidates, draws
the next pivot among them, and finally releases the best pivot visited, the
search budget split evenly over the steps.

:func:`exponential_mechanism` is kanonym's draw (NumPy generator).
:func:`exponential_mechanism_arx` is ARX's, reproduced draw for draw with
:class:`~kanonym.differential_privacy.java_random.JavaRandom`; what ARX does
is stated there.

Example:
    >>> import numpy as np
    >>> rng = np.random.default_rng(1)
    >>> exponential_mechanism(np.array([0.0, 5.0, 1.0]), epsilon=2.0, sensitivity=1.0, rng=rng)
    1
"""

from __future__ import annotations

import bisect
import math
from itertools import accumulate

import numpy as np
import numpy.typing as npt

from kanonym.differential_privacy._checks import check_number, check_positive, check_whole
from kanonym.differential_privacy.java_random import JavaRandom
from kanonym.errors import InputError

_DOUBLE_MAX = 1.7976931348623157e308


def _check_scores(scores: npt.ArrayLike) -> npt.NDArray[np.float64]:
    try:
        values = np.asarray(scores, dtype=np.float64)
    except (TypeError, ValueError) as error:
        raise InputError(f"`scores` must be numbers: {error}") from None
    if values.ndim != 1 or values.shape[0] == 0:
        raise InputError(f"`scores` must be a non-empty list of numbers, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise InputError("`scores` must be finite numbers (no NaN or infinity)")
    return values


def exponential_mechanism(
    scores: npt.ArrayLike, epsilon: float, sensitivity: float, rng: np.random.Generator
) -> int:
    """The index of a candidate drawn with probability ~ exp(epsilon * score / (2 * sensitivity)).

    The largest exponent is subtracted before exponentiating, which leaves the
    probabilities as they are (the factor cancels in the normalization) but
    keeps every weight at most 1, the best's exactly 1: scores of 1e300 work,
    and a score so far below the best that its weight underflows is never
    drawn. One uniform from ``rng`` is consumed.

    Example:
        >>> rng = np.random.default_rng(0)
        >>> exponential_mechanism([1e300, -1e300], epsilon=1.0, sensitivity=1.0, rng=rng)
        0
    """
    values = _check_scores(scores)
    budget = check_positive(epsilon, "epsilon")
    scale = budget / 2.0 / check_positive(sensitivity, "sensitivity")
    with np.errstate(over="ignore"):
        if math.isinf(scale):
            # Only the best scores keep any weight.
            exponents = np.where(values == values.max(), 0.0, -np.inf)
        elif scale >= 1.0:
            # A gap or product that overflows is -inf: a weight of 0, as it is to
            # double precision anyway.
            exponents = (values - values.max()) * scale
        else:
            # Scaling first cannot overflow, and the best's exponent stays exactly 0.
            scaled = values * scale
            exponents = scaled - scaled.max()
    weights = np.exp(exponents)
    cumulative = np.cumsum(weights)
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    if index >= weights.shape[0]:
        # Rounding put the draw at the total: take the last candidate that can be drawn.
        index = int(np.flatnonzero(weights)[-1])
    return index


def arx_epsilon_per_step(search_epsilon: float, steps: int) -> float:
    """The budget of each draw of ARX's search: the lower bound of search_epsilon / steps.

    ARX gives 0 when there are no steps.

    Example:
        >>> arx_epsilon_per_step(0.1, 100) < 0.1 / 100
        True
    """
    budget = check_positive(search_epsilon, "search_epsilon")
    if check_whole(steps, "steps", 0) == 0:
        return 0.0
    return math.nextafter(budget / steps, -math.inf)


def exponential_mechanism_arx(scores: npt.ArrayLike, epsilon: float, random: JavaRandom) -> int:
    """ARX's draw (``org.deidentifier.arx.dp.ExponentialMechanism``), index for index.

    What ARX does, and this reproduces:

    * scores are taken as already divided by the sensitivity; each candidate's
      exponent is ``0.5 * epsilon * score`` (in that order of multiplication)
      and ``shift`` the largest exponent (at least ``-Double.MAX_VALUE``);
    * the unnormalized probabilities are ``Math.exp(exponent - shift)`` in
      doubles (no exact arithmetic: ARX's older versions used ``BigDecimal``
      and then ``BigFraction`` with base e^(epsilon / 3); its current one,
      reproduced here, does not);
    * Commons Math's ``EnumeratedDistribution`` normalizes them by their sum,
      accumulated left to right, and accumulates the normalized values left
      to right into a cumulative distribution;
    * one ``nextDouble()`` u is drawn; ``Arrays.binarySearch`` looks u up: the
      first candidate whose cumulative value exceeds u is returned, the last
      candidate if none does or if u equals a cumulative value exactly;
    * ARX's search (``DataDependentEDDPAlgorithm``) uses one mechanism, hence
      one ``Random`` (``new Random(0xDEADBEEF)`` when deterministic), for all
      steps, with :func:`arx_epsilon_per_step` as epsilon, and lists the
      candidates in the iteration order of a ``java.util.HashMap`` from
      transformation identifiers to scores: pass them in that order to get
      ARX's choice.

    The exponentials are Python's (the C library's); Java's ``Math.exp`` may
    differ in the last bit, which changes a draw only if u lies within a few
    ulps of a cumulative value.

    Example:
        >>> from kanonym.differential_privacy.java_random import ARX_DETERMINISTIC_SEED
        >>> random = JavaRandom(ARX_DETERMINISTIC_SEED)
        >>> scores = [-3.5, -1.25, 0.0, -2.0, -0.75, -10.0, -1.25]
        >>> [exponential_mechanism_arx(scores, 2.0, random) for _ in range(5)]
        [2, 6, 2, 0, 4]
    """
    values = _check_scores(scores)
    factor = 0.5 * check_number(epsilon, "epsilon")
    exponents = [factor * score for score in values.tolist()]
    if not all(math.isfinite(exponent) for exponent in exponents):
        raise InputError("`scores` times `epsilon` overflow a double; scale the scores down")
    shift = max(-_DOUBLE_MAX, *exponents)
    weights = [math.exp(exponent - shift) for exponent in exponents]
    total = list(accumulate(weights))[-1]
    if total == 0.0:
        raise InputError("every candidate's weight is zero")
    cumulative = list(accumulate(weight * 1.0 / total for weight in weights))
    drawn = random.next_double()
    index = bisect.bisect_right(cumulative, drawn)
    if index < len(cumulative) and (index == 0 or cumulative[index - 1] != drawn):
        return index
    return len(cumulative) - 1
