"""The re-check's own arithmetic of SafePub's (epsilon, delta)-differential privacy.

Li, Qardaji & Su (2012, "On sampling, anonymization, and differential privacy
or, k-anonymization meets differential privacy", ASIACCS): drawing
each record with probability beta <= 1 - e^-epsilon, generalizing without
looking at the data and suppressing every class of fewer than k records is
(epsilon, delta)-differentially private for every delta >= d(k), where

    d(k) = max over n >= ceil(k / gamma - 1) of  P[Bin(n, beta) > gamma * n],
    gamma = (e^epsilon - 1 + beta) / e^epsilon.

SafePub (Bild, Kuhn & Prasser 2018, PoPETs) and ARX take beta = 1 - e^-epsilon
and one more than the first k with d(k) < delta. :func:`li_delta` computes
d(k) here with exact binomial tails (log-probabilities by ``math.lgamma``,
every term summed), stopping the maximum over n by the Chernoff-Hoeffding bound
P[Bin(n, beta) >= gamma n] <= exp(-n KL(gamma || beta)): once that falls to
the maximum so far, no later n can raise it. It shares nothing with
:mod:`kanonym.differential_privacy`, which derived the k: a wrong k cannot
pass both.

Example:
    >>> beta = 1 - math.exp(-2.0)
    >>> li_delta(113, beta, 2.0) < 1e-5 <= li_delta(112, beta, 2.0)
    True
    >>> scheme_levels("low-medium", [1, 4, 2])
    [0, 2, 1]
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

# ARX's DataGeneralizationScheme: each degree's share of a hierarchy's height.
SCHEME_SHARES: dict[str, float] = {
    "none": 0.0,
    "low": 0.2,
    "low-medium": 0.4,
    "medium": 0.5,
    "medium-high": 0.6,
    "high": 0.8,
    "complete": 1.0,
}

# The bound's exponent is computed in floating point; shrinking it by this share
# keeps the stop on the safe side of its rounding.
_MARGIN = 1e-9


def scheme_levels(degree: str, heights: Sequence[int]) -> list[int]:
    """Each hierarchy's level under a scheme: ``floor(share * height + 0.5)``.

    Raises:
        KeyError: ``degree`` is no scheme.
    """
    share = SCHEME_SHARES[degree]
    return [math.floor(share * h + 0.5) for h in heights]


def li_delta(k: int, beta: float, epsilon: float) -> float:
    """d(k, beta, epsilon) of Li, Qardaji & Su (2012): the delta that suppressing the classes
    below k buys (see the module).

    Example:
        >>> li_delta(1, 0.5, math.log(2)) >= 0.5  # n = 1: the one record drawn, half the time
        True
    """
    grow = math.exp(epsilon)
    gamma = (grow - 1.0 + beta) / grow
    log_p, log_q = math.log(beta), math.log1p(-beta)
    rate = gamma * math.log(gamma / beta) + (1.0 - gamma) * math.log((1.0 - gamma) / (1.0 - beta))
    rate *= 1.0 - _MARGIN
    log_factorial = [0.0]
    best = 0.0
    n = max(math.ceil(k / gamma - 1.0), 0)
    while math.exp(-n * rate) > best:
        log_factorial.extend(math.lgamma(i + 1.0) for i in range(len(log_factorial), n + 1))
        table = np.asarray(log_factorial)
        j = np.arange(math.floor(gamma * n) + 1, n + 1)
        terms = table[n] - table[j] - table[n - j] + j * log_p + (n - j) * log_q
        best = max(best, float(np.exp(terms).sum()))
        n += 1
    return best


def sufficient_k(k: int, beta: float, epsilon: float, delta: float) -> bool:
    """Whether classes of at least ``k`` rows give delta: d(k - 1) < delta (ARX's k is one more
    than the first k meeting delta, so its k - 1 meets it too).

    Example:
        >>> beta = 1 - math.exp(-2.0)
        >>> sufficient_k(114, beta, 2.0, 1e-5), sufficient_k(113, beta, 2.0, 1e-5)
        (True, False)
    """
    return li_delta(k - 1, beta, epsilon) < delta
