"""The digamma and trigamma functions, for Pitman's likelihood equations.

ψ(x) = d/dx ln Γ(x) and ψ'(x), computed as ARX computes them (its ``Gamma``,
a port of T. Minka's Lightspeed toolbox): reflection for negative arguments,
``ψ(−x) = ψ(x + 1) + π cot(πx)`` and ``ψ'(−x) = −ψ'(x + 1) + (π csc(πx))²``;
the Taylor series at 0 for tiny ones; otherwise the recurrences
``ψ(x) = ψ(x + 1) − 1/x`` and ``ψ'(x) = ψ'(x + 1) + 1/x²`` up to x >= 12 and
de Moivre's asymptotic expansions there (to the 1/x^10 and 1/x^11 terms).
ARX's trigamma recurs only up to 8 while its expansion starts at 12, which
drops the expansion between 8 and 12; here both recur up to 12, the accurate
value (Pitman's fit has the same root either way: the Jacobian only steers
Newton's steps).

Example (ψ(1) = −γ, ψ'(1) = π²/6):
    >>> round(digamma(1.0), 14), round(trigamma(1.0) - math.pi**2 / 6, 14)
    (-0.57721566490153, 0.0)
"""

from __future__ import annotations

import math

EULER = 0.57721566490153286060651209008240243104215933593992
_ZETA_3 = 1.202056903159594285399738161511449990764986292
_PI2_6 = math.pi * math.pi / 6.0
_LARGE = 12.0


def digamma(x: float) -> float:
    """ψ(x) (module docstring): NaN for NaN or an infinity, −∞ at 0."""
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:
        return digamma(1.0 - x) + math.pi / math.tan(-math.pi * x)
    if x <= 1e-6:
        return (-EULER - 1.0 / x) + _PI2_6 * x
    result = 0.0
    while x < _LARGE:
        result -= 1.0 / x
        x += 1.0
    r = 1.0 / x
    result += math.log(x) - 0.5 * r
    r *= r
    s3, s4, s5, s6, s7 = 1.0 / 12.0, 1.0 / 120.0, 1.0 / 252.0, 1.0 / 240.0, 1.0 / 132.0
    return result - r * (s3 - r * (s4 - r * (s5 - r * (s6 - r * s7))))


def trigamma(x: float) -> float:
    """ψ'(x) (module docstring): NaN for NaN or an infinity, −∞ at 0 (as ARX)."""
    if math.isnan(x) or math.isinf(x):
        return math.nan
    if x == 0.0:
        return -math.inf
    if x < 0.0:
        r = math.pi / math.sin(-math.pi * x)
        return -trigamma(1.0 - x) + r * r
    if x <= 1e-4:
        return 1.0 / (x * x) + _PI2_6 - 2.0 * _ZETA_3 * x
    result = 0.0
    while x < _LARGE:
        result += 1.0 / (x * x)
        x += 1.0
    r = 1.0 / (x * x)
    b2, b4, b6, b8, b10 = 1.0 / 6.0, -1.0 / 30.0, 1.0 / 42.0, -1.0 / 30.0, 5.0 / 66.0
    return result + 0.5 * r + (1.0 + r * (b2 + r * (b4 + r * (b6 + r * (b8 + r * b10))))) / x
