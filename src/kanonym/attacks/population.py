"""Population uniqueness estimated from a sample: Zayatz (1991), Pitman (Hoshino 2001), SNB.

Read by ``kanonym risk``, by the population-uniqueness privacy model
(:mod:`kanonym.models.population_uniqueness`) and by the re-check
(:mod:`kanonym.verify.risk`): it imports only :mod:`kanonym.errors` and its own
solver (:mod:`kanonym.attacks.newton`, :mod:`kanonym.attacks.gamma`), so the
layers that may not import each other can all import it.

A record unique in the released table (a *sample unique*) need not be unique in
the population it was drawn from; only population uniques are certain matches
for an attacker holding a population register. Both estimators are described,
compared and combined into a decision rule by Dankar, El Emam, Neisa & Roffey
(2012, "Estimating the re-identification risk of clinical data sets", BMC Med.
Inform. Decis. Mak. 12:66). Write n for the sample's rows, N for the
population's, π = n/N, f_i for the number of sample classes of size i and
u = Σ_i f_i. Both assume that the table is a simple random sample, without
replacement, of a population of known size N: the sampling fraction π must be
known.

**Zayatz** ("Estimation of the number of unique population elements using a
sample", US Census Bureau SRD report, 1991) further assumes that population
classes have the sample's size distribution: a class has size i with
probability f_i / u. A class of size i leaves exactly one record in the sample
with hypergeometric probability h_i = i C(N − i, n − 1) / C(N, n), so a sample
unique comes from a population unique with probability

    P(F = 1 | f = 1) = f_1 h_1 / Σ_i f_i h_i,

computed with the exact ratios h_i / h_1 = i ∏_(t=1..i−1) (N − n + 1 − t) / (N − t);
the population holds f_1 P(F = 1 | f = 1) / π uniques, as ARX reports it.

**Pitman** (Hoshino 2001, "Applying Pitman's sampling formula to microdata
disclosure risk assessment", J. Official Statistics 17(4)) assumes instead that
the sample's partition into classes follows Pitman's sampling formula with
parameters θ > −α, 0 <= α < 1. Their maximum likelihood estimates maximize

    ℓ(θ, α) = Σ_(i=1..u−1) ln(θ + iα) − Σ_(i=1..n−1) ln(θ + i)
              + Σ_(m>=1) c_m ln(m − α),

c_m being the number of classes larger than m; the population then holds about
N^α Γ(θ + 1) / Γ(θ + α) uniques (Hoshino's large-N form, as ARX computes it).
kanonym finds θ(α) by bisection on ∂ℓ/∂θ = 0 (in ln(θ + α)) and α by a grid of
twenty values refined by golden-section search on the profile ℓ(θ(α), α). The
likelihood has no maximum when every record is a sample unique (θ grows
without bound): no Pitman estimate then.

With no sample unique, both estimates are 0. Dankar et al.'s rule takes
Pitman's estimate for π <= 10 % and the smaller of Zayatz's and the SNB
model's above (:func:`population_uniqueness` with ``"dankar"``, as ARX's
privacy model applies it; SNB: :func:`snb_uniques`). The ``recommended``
estimate of ``kanonym risk`` is Pitman's for π <= 10 % (Zayatz's when
Pitman's is unavailable) and Zayatz's above, an upper bound of the rule's
choice there.

Example (n = 4 records in classes of sizes 1, 1, 2 from a population of 10:
h_1 = 84/210 = 0.4, h_2 = 2 · 56/210, P = 0.8 / (0.8 + 0.5333) = 0.6, so
2 · 0.6 / 0.4 = 3 population uniques, 30 % of the population):
    >>> e = estimate_zayatz({1: 2, 2: 1}, population_size=10)
    >>> round(e.parameters["unique_given_sample_unique"], 12), round(e.population_uniques, 12)
    (0.6, 3.0)
    >>> round(e.population_uniqueness, 12)
    0.3
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from kanonym.attacks.gamma import digamma, trigamma
from kanonym.attacks.newton import ACCURACY, solve
from kanonym.errors import InputError, echo

PITMAN_UP_TO = 0.1
"""Dankar et al.'s rule prefers Pitman's estimate up to this sampling fraction."""

# ln(θ + α) is searched in this range: θ up to about 1.8e17, which no sample of
# realistic size reaches unless its likelihood is unbounded.
_LOG_LOW, _LOG_HIGH = -40.0, 40.0
_ALPHA_GRID = 20
_GOLDEN = (math.sqrt(5.0) - 1.0) / 2.0


@dataclass(frozen=True, kw_only=True)
class PopulationEstimate:
    """An estimate of how many records are unique in the whole population.

    Attributes:
        estimator: ``"zayatz"`` or ``"pitman"``.
        sample_size: rows of the table (n).
        population_size: rows of the population (N >= n).
        population_uniques: estimated records unique in the population.
        parameters: the fitted quantities: ``unique_given_sample_unique``
            (Zayatz's P(F = 1 | f = 1), None without sample uniques), or
            ``theta`` and ``alpha`` (Pitman's, None without sample uniques).
    """

    estimator: str
    sample_size: int
    population_size: int
    population_uniques: float
    parameters: Mapping[str, float | None] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not 1 <= self.sample_size <= self.population_size:
            raise ValueError(
                f"sample size {self.sample_size} must be between 1 and the population size "
                f"{self.population_size}"
            )
        if not 0.0 <= self.population_uniques <= self.population_size:
            raise ValueError(f"population uniques {self.population_uniques} out of range")

    @property
    def sampling_fraction(self) -> float:
        """π = n / N."""
        return self.sample_size / self.population_size

    @property
    def population_uniqueness(self) -> float:
        """Estimated share of the population's records unique in it."""
        return self.population_uniques / self.population_size

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form: the estimate and the fitted parameters."""
        return {
            "population_uniques": self.population_uniques,
            "population_uniqueness": self.population_uniqueness,
            **self.parameters,
        }


@dataclass(frozen=True, kw_only=True)
class PopulationEstimates:
    """Both estimates for one table and population size.

    Attributes:
        zayatz: Zayatz's estimate (always available).
        pitman: Pitman's estimate, None when its likelihood has no maximum.
        pitman_reason: why ``pitman`` is None.
    """

    zayatz: PopulationEstimate
    pitman: PopulationEstimate | None
    pitman_reason: str | None = None

    def __post_init__(self) -> None:
        if (self.pitman is None) != (self.pitman_reason is not None):
            raise ValueError("a reason is given exactly when the Pitman estimate is missing")

    @property
    def recommended(self) -> PopulationEstimate:
        """Dankar et al.'s choice among the estimates kanonym has (module docstring)."""
        if self.pitman is not None and self.zayatz.sampling_fraction <= PITMAN_UP_TO:
            return self.pitman
        return self.zayatz

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (key ``estimates`` of ``kanonym risk --json``)."""
        out: dict[str, object] = {
            "population_size": self.zayatz.population_size,
            "sampling_fraction": self.zayatz.sampling_fraction,
            "recommended": self.recommended.estimator,
            "zayatz": self.zayatz.as_dict(),
            "pitman": None if self.pitman is None else self.pitman.as_dict(),
        }
        if self.pitman_reason is not None:
            out["pitman_reason"] = self.pitman_reason
        return out

    def text(self) -> str:
        """One line for people."""
        parts = []
        for estimate in (self.zayatz, self.pitman):
            if estimate is not None:
                parts.append(
                    f"{estimate.estimator} {estimate.population_uniques:.1f} "
                    f"({estimate.population_uniqueness:.2%})"
                )
        if self.pitman_reason is not None:
            parts.append(f"pitman none ({self.pitman_reason})")
        return (
            f"population uniques among {self.zayatz.population_size} (sampling fraction "
            f"{self.zayatz.sampling_fraction:.4g}): {', '.join(parts)}; "
            f"recommended: {self.recommended.estimator}"
        )


def _sample(histogram: Mapping[int, int], population_size: int) -> tuple[int, float]:
    """The sample's rows and its unique records; InputError for a bad population size."""
    n = sum(size * count for size, count in histogram.items())
    if n == 0:
        raise InputError("population uniqueness needs a table with rows")
    if isinstance(population_size, bool) or not isinstance(population_size, int):
        raise InputError(f"population size must be a whole number, got {echo(population_size)}")
    if population_size < n:
        raise InputError(
            f"population size {population_size} is smaller than the table's {n} records"
        )
    return n, float(histogram.get(1, 0))


def estimate_zayatz(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate:
    """Zayatz's estimate from the sample's class sizes (size -> classes of that size).

    Raises:
        InputError: the population size is not a whole number at least the
            sample's rows, or the histogram is empty.
    """
    n, singletons = _sample(histogram, population_size)
    if singletons == 0:
        return PopulationEstimate(
            estimator="zayatz",
            sample_size=n,
            population_size=population_size,
            population_uniques=0.0,
            parameters={"unique_given_sample_unique": None},
        )
    sizes = np.array(sorted(histogram), dtype=np.int64)
    counts = np.array([histogram[int(size)] for size in sizes], dtype=np.float64)
    big_n = float(population_size)
    t = np.arange(1, int(sizes.max()), dtype=np.float64)
    # (N - n + 1 - t) / (N - t): negative factors mean a class too large to leave
    # a single record in the sample, so the ratio is zero from there on.
    factors = np.clip((big_n - n + 1 - t) / (big_n - t), 0.0, None)
    ratio = np.concatenate(([1.0], np.cumprod(factors)))  # C(N-i, n-1) / C(N-1, n-1)
    weights = sizes * ratio[sizes - 1]  # h_i / h_1
    conditional = singletons / float((counts * weights).sum())
    return PopulationEstimate(
        estimator="zayatz",
        sample_size=n,
        population_size=population_size,
        population_uniques=singletons * conditional * big_n / n,
        parameters={"unique_given_sample_unique": conditional},
    )


def pitman_log_likelihood(histogram: Mapping[int, int], theta: float, alpha: float) -> float:
    """ℓ(θ, α) of Pitman's sampling formula for the sample's partition (module docstring).

    Example (one class of two: ℓ = −ln(θ + 1) + ln(1 − α)):
        >>> round(pitman_log_likelihood({2: 1}, 1.0, 0.5), 12) == round(-math.log(4), 12)
        True
    """
    return _Partition(histogram).log_likelihood(theta, alpha)


class _Partition:
    """The sums Pitman's likelihood needs, as arrays over i, built once per sample."""

    def __init__(self, histogram: Mapping[int, int]) -> None:
        sizes = np.array(sorted(histogram), dtype=np.int64)
        counts = np.array([histogram[int(s)] for s in sizes], dtype=np.float64)
        self.n = int((sizes * counts).sum())
        self.u = int(counts.sum())
        self.to_u = np.arange(1, self.u, dtype=np.float64)
        self.to_n = np.arange(1, self.n, dtype=np.float64)
        per_size = np.zeros(int(sizes.max()) + 1)
        per_size[sizes] = counts
        # c_m for m = 1 .. max - 1: classes larger than m.
        larger = np.cumsum(per_size[::-1])[::-1]
        self.m = np.arange(1, int(sizes.max()), dtype=np.float64)
        self.larger = larger[2:]

    def log_likelihood(self, theta: float, alpha: float) -> float:
        return float(
            np.log(theta + alpha * self.to_u).sum()
            - np.log(theta + self.to_n).sum()
            + (self.larger * np.log(self.m - alpha)).sum()
        )

    def theta_slope(self, theta: float, alpha: float) -> float:
        """∂ℓ/∂θ."""
        return float((1.0 / (theta + alpha * self.to_u)).sum() - (1.0 / (theta + self.to_n)).sum())

    def best_theta(self, alpha: float) -> float | None:
        """θ maximizing ℓ for this α, None when ℓ still grows at the top of the range."""
        if self.theta_slope(math.exp(_LOG_HIGH) - alpha, alpha) > 0:
            return None
        low, high = _LOG_LOW, _LOG_HIGH
        # ∂ℓ/∂θ > 0 near θ = −α (its i = 1 term grows without bound) and < 0 at the top.
        for _ in range(64):
            middle = (low + high) / 2.0
            if self.theta_slope(math.exp(middle) - alpha, alpha) > 0:
                low = middle
            else:
                high = middle
        return math.exp((low + high) / 2.0) - alpha


def _golden_maximum(f: Callable[[float], float], low: float, high: float) -> float:
    """The maximizer of a unimodal ``f`` on [low, high], to about 1e-9."""
    a, b = low, high
    c, d = b - _GOLDEN * (b - a), a + _GOLDEN * (b - a)
    fc, fd = f(c), f(d)
    while b - a > 1e-9:
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - _GOLDEN * (b - a)
            fc = f(c)
        else:
            a, c, fc = c, d, fd
            d = a + _GOLDEN * (b - a)
            fd = f(d)
    return (a + b) / 2.0


def fit_pitman(histogram: Mapping[int, int]) -> tuple[float, float] | str:
    """Maximum likelihood (θ, α) of Pitman's sampling formula, or why there is none.

    Example (62 classes of 1 to 9 records; a sample of uniques has no fit):
        >>> theta, alpha = fit_pitman({1: 40, 2: 12, 3: 6, 5: 3, 9: 1})
        >>> round(theta, 2), round(alpha, 3)
        (51.03, 0.128)
        >>> fit_pitman({1: 3})
        'every record is a sample unique: the likelihood grows without bound in theta'
    """
    partition = _Partition(histogram)
    if partition.u == partition.n:
        return "every record is a sample unique: the likelihood grows without bound in theta"
    highest_alpha = 1.0 - 1e-9

    def profile(alpha: float) -> float:
        theta = partition.best_theta(alpha)
        return -math.inf if theta is None else partition.log_likelihood(theta, alpha)

    grid = [k / _ALPHA_GRID for k in range(_ALPHA_GRID)]
    values = [profile(alpha) for alpha in grid]
    best = int(np.argmax(values))
    if values[best] == -math.inf:
        return "the likelihood grows without bound in theta for every alpha"
    # Refine between the grid neighbours of the best grid point.
    low = grid[best - 1] if best > 0 else 0.0
    high = grid[best + 1] if best + 1 < len(grid) else highest_alpha
    alpha = _golden_maximum(profile, low, high)
    if profile(alpha) < values[best]:
        alpha = grid[best]
    theta = partition.best_theta(alpha)
    if theta is None:
        return "the likelihood grows without bound in theta"
    return theta, alpha


def estimate_pitman(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate | str:
    """Pitman's estimate (module docstring), or the reason there is none.

    Example (the sample of :func:`fit_pitman` from a population of 10,000):
        >>> e = estimate_pitman({1: 40, 2: 12, 3: 6, 5: 3, 9: 1}, 10_000)
        >>> round(e.population_uniques, 1)  # 10000**0.128 * Γ(52.03) / Γ(51.16)
        100.3

    Raises:
        InputError: as :func:`estimate_zayatz`.
    """
    n, singletons = _sample(histogram, population_size)
    if singletons == 0:
        return PopulationEstimate(
            estimator="pitman",
            sample_size=n,
            population_size=population_size,
            population_uniques=0.0,
            parameters={"theta": None, "alpha": None},
        )
    fitted = fit_pitman(histogram)
    if isinstance(fitted, str):
        return fitted
    theta, alpha = fitted
    uniques = math.exp(
        math.lgamma(theta + 1.0) - math.lgamma(theta + alpha) + alpha * math.log(population_size)
    )
    if not 0.0 <= uniques <= population_size:
        return (
            f"the fitted model (theta {theta:.6g}, alpha {alpha:.6g}) predicts {uniques:.6g} "
            f"population uniques, outside 0..{population_size}"
        )
    return PopulationEstimate(
        estimator="pitman",
        sample_size=n,
        population_size=population_size,
        population_uniques=uniques,
        parameters={"theta": theta, "alpha": alpha},
    )


def estimate_population(histogram: Mapping[int, int], population_size: int) -> PopulationEstimates:
    """Zayatz's and Pitman's estimates for a sample's class sizes and a population size.

    Raises:
        InputError: the population size is not a whole number at least the
            sample's rows.
    """
    pitman = estimate_pitman(histogram, population_size)
    return PopulationEstimates(
        zayatz=estimate_zayatz(histogram, population_size),
        pitman=None if isinstance(pitman, str) else pitman,
        pitman_reason=pitman if isinstance(pitman, str) else None,
    )


def _power(base: np.float64, exponent: np.float64) -> np.float64:
    """Java's ``Math.pow`` for the cases SNB meets (NaN for a negative base and a
    fractional exponent, infinity for 0 to a negative power), as NumPy gives them."""
    return np.float64(np.power(base, exponent))


def snb_uniques(histogram: Mapping[int, int], population_size: int) -> float:
    """The SNB model's population uniques, as ARX computes them (NaN when unsolved).

    Chen & Keller-McNulty (1998, "Estimation of identification disclosure risk
    in microdata", J. Official Statistics 14(1)) model the population's class
    sizes as shifted negative binomial: with f_i sample classes of size i,
    u classes, n rows and π = n/N, the number of population classes K is
    estimated as ``u + f_1 (v1 / v2) (v3 / v4)^2`` (sums over the sizes of
    ``i π² (1 − π²)^(i−1) f_i``, ``(1 − π)^i f_i (1 + π)^i − 1``,
    ``(1 − π)^i f_i`` and ``i π (1 − π)^(i−1) f_i``, as ARX sums them), the
    parameters (a, b) solve the expected counts of sample uniques and pairs,
    ``K π (b / (1 − d))^a (a d / (1 − d) + 1) = f_1`` and
    ``K a b^a π² (1 − b) / 2 · (1 − d)^(a + 2) (2 − (1 − a) d) = f_2`` with
    d = (1 − π)(1 − b), by ARX's Newton solver (:mod:`kanonym.attacks.newton`,
    from (1, 1), with ARX's Jacobian), and the population holds ``K b^a``
    uniques. Dankar et al. (2012) use it for sampling fractions above 10 %.

    Example (175 rows in 114 classes from a population of 271: about 55 uniques):
        >>> round(snb_uniques({1: 57, 2: 23, 3: 17, 4: 9, 5: 5, 6: 2, 9: 1}, 271), 6)
        55.354295
    """
    n = float(sum(size * count for size, count in histogram.items()))
    f = np.float64(n / population_size)
    c1 = np.float64(histogram.get(1, 0))
    c2 = np.float64(histogram.get(2, 0))
    classes = np.float64(sum(histogram.values()))
    v1 = v2 = v3 = v4 = np.float64(0.0)
    one = np.float64(1.0)
    with np.errstate(all="ignore"):
        for size in sorted(histogram):
            s, c = np.float64(size), np.float64(histogram[size])
            share = _power(one - f, s) * c
            v1 += s * (f * f) * _power(one - f * f, s - 1) * c
            v2 += share * _power(one + f, s) - one
            v3 += share
            v4 += s * f * _power(one - f, s - 1) * c
        k = classes + c1 * (v1 / v2) * (v3 / v4) * (v3 / v4)

    def master(
        point: tuple[float, float],
    ) -> tuple[tuple[float, float], tuple[float, float, float, float]]:
        a, b = np.float64(point[0]), np.float64(point[1])
        d = (one - f) * (one - b)
        first = k * f * _power(b / (one - d), a) * ((a * d) / (one - d) + one) - c1
        second = (k * a * _power(b, a) * (f * f) * (one - b) / 2.0 * _power(one - d, a + 2.0)) * (
            2.0 - (one - a) * d
        ) - c2
        # ARX's Jacobian (ModelSNB), term by term: e = (b - 1)(f - 1) = d.
        e = (b - one) * (f - one)
        e1, e2 = e - one, one - e
        lead = a * e / e1 - one
        ratio = _power(-b / e1, a)
        b_a = _power(b, a)
        scaled = a * b_a * (f * f) * k
        denominator = 2.0 * _power(e2, a + 2.0)
        shift = (a - one) * e + 2.0
        fk, f2k = f * k, (f * f) * k
        x1 = -fk * np.log(-b / e1) * lead * ratio - (fk * ratio * e) / e1
        x2 = a * fk * (one / e1 - (b * (f - one)) / (e1 * e1)) * lead * _power(
            -b / e1, a - one
        ) - fk * ratio * ((a * (f - one)) / e1 - (a * (b - one) * (f - one) ** 2) / (e1 * e1))
        y1 = (
            (scaled * np.log(e2) * shift * (b - one)) / denominator
            - (scaled * (b - one) * (b - one) * (f - one)) / denominator
            - (b_a * f2k * shift * (b - one)) / denominator
            - (a * b_a * f2k * np.log(b) * shift * (b - one)) / denominator
        )
        y2 = (
            -(scaled * shift) / denominator
            - (a * a * _power(b, a - one) * f2k * shift * (b - one)) / denominator
            - (a * b_a * f2k * (a - one) * e) / denominator
            - (a * b_a * f2k * shift * (a + 2.0) * e) / (2.0 * _power(e2, a + 3.0))
        )
        return (float(first), float(second)), (float(x1), float(x2), float(y1), float(y2))

    a, b = solve(master, (1.0, 1.0))
    with np.errstate(all="ignore"):
        return float(k * _power(np.float64(b), np.float64(a)))


def estimate_snb(histogram: Mapping[int, int], population_size: int) -> PopulationEstimate | str:
    """The SNB model's estimate (:func:`snb_uniques`), or why there is none.

    Raises:
        InputError: as :func:`estimate_zayatz`.
    """
    n, singletons = _sample(histogram, population_size)
    uniques = 0.0 if singletons == 0 else snb_uniques(histogram, population_size)
    if math.isnan(uniques) or not 0.0 <= uniques <= population_size:
        return f"the SNB model has no solution in range (got {uniques:.6g} population uniques)"
    return PopulationEstimate(
        estimator="snb", sample_size=n, population_size=population_size, population_uniques=uniques
    )


ESTIMATORS = ("pitman", "zayatz", "snb", "dankar")
"""The estimators a population-uniqueness threshold may name."""


def population_uniqueness(
    histogram: Mapping[int, int], population_size: int, estimator: str
) -> float | None:
    """The estimated share of the population unique in it, as ARX's models judge it.

    ``estimator`` is one of :data:`ESTIMATORS`. A sample without uniques gives
    0. An estimate that is missing (no fit) or 0 is *invalid*: ``pitman``,
    ``zayatz`` and ``snb`` then give 0, ``dankar`` gives None. ``dankar`` is
    Dankar, El Emam, Neisa & Roffey's rule (2012, "Estimating the
    re-identification risk of clinical data sets", BMC Med. Inform. Decis.
    Mak. 12:66): Pitman's estimate for sampling fractions π <= 10 %
    (:data:`PITMAN_UP_TO`; none when it is invalid, as in ARX's
    ``PopulationUniqueness``, which gives Zayatz no fallback role there),
    above it the smaller of Zayatz's and SNB's (Zayatz's when SNB's is
    invalid).

    Raises:
        InputError: as :func:`estimate_zayatz`, or an unknown ``estimator``.

    Example:
        >>> population_uniqueness({2: 3}, 100, "dankar")
        0.0
        >>> round(population_uniqueness({1: 2, 2: 1}, 10, "zayatz"), 12)  # 3 of 10
        0.3
    """
    n, singletons = _sample(histogram, population_size)
    if estimator not in ESTIMATORS:
        raise InputError(f"estimator {echo(estimator)} is not one of {', '.join(ESTIMATORS)}")
    if singletons == 0:
        return 0.0

    def valid(uniques: float) -> float | None:
        return None if math.isnan(uniques) or uniques == 0 else uniques

    def pitman() -> float | None:
        return valid(pitman_uniques(histogram, population_size))

    def zayatz() -> float | None:
        return valid(estimate_zayatz(histogram, population_size).population_uniques)

    def snb() -> float | None:
        return valid(snb_uniques(histogram, population_size))

    if estimator == "dankar":
        if n / population_size <= PITMAN_UP_TO:
            chosen = pitman()
        else:
            by_zayatz, by_snb = zayatz(), snb()
            chosen = (
                by_zayatz
                if by_snb is None or (by_zayatz is not None and by_zayatz < by_snb)
                else by_snb
            )
        return None if chosen is None else chosen / population_size
    uniques = {"pitman": pitman, "zayatz": zayatz, "snb": snb}[estimator]()
    return 0.0 if uniques is None else uniques / population_size


def pitman_uniques(histogram: Mapping[int, int], population_size: int) -> float:
    """Pitman's population uniques fitted as ARX fits them (NaN when unsolved).

    The same model as :func:`estimate_pitman` (Hoshino 2001), whose maximum
    likelihood (θ, α) solves ∂ℓ/∂θ = ∂ℓ/∂α = 0; ARX solves these equations by
    Newton's method (:func:`kanonym.attacks.newton.solve`, θ >= 0) from a
    moment start, θ₀ = (n u c − f_1 (n − 1)(2u + c)) / (2 f_1 u + f_1 c − n c)
    and α₀ = (θ₀ (f_1 − n) + (n − 1) f_1) / (n u), c = f_1 (f_1 − 1) / f_2 (f_2
    read as 1 when 0), with the equations in closed form (digamma, trigamma:
    :mod:`kanonym.attacks.gamma`), and again with the sums themselves when
    that fails or its root does not satisfy them to 1e-6. The population then
    holds ``N^α Γ(θ + 1) / Γ(θ + α)`` uniques, taken the larger of its log-gamma
    and gamma forms that lies in [0, N]. Where the likelihood's maximum lies
    inside 0 < α < 1 and Newton converges, this is the maximum
    :func:`estimate_pitman` finds by bisection (which ``kanonym risk``
    reports), to the solver's accuracy; ARX does not hold α >= 0, so where
    that maximum is at α = 0 Newton may stop at a stationary point with α < 0.
    The privacy model uses this fit: it is ARX's (its decisions, also where
    Newton fails, are ARX's) and far cheaper (no sum over the rows), which a
    model estimating once per step of a search needs.

    Example (the sample of :func:`fit_pitman`, N = 10,000: as estimate_pitman):
        >>> round(pitman_uniques({1: 40, 2: 12, 3: 6, 5: 3, 9: 1}, 10_000), 1)
        100.3
    """
    sizes = sorted(histogram)
    counts = [float(histogram[s]) for s in sizes]
    c1 = float(histogram.get(1, 0))
    c2 = float(histogram.get(2, 0)) or 1.0
    u = float(sum(counts))
    n = float(sum(s * c for s, c in zip(sizes, counts, strict=True)))
    others = [(float(s), c) for s, c in zip(sizes, counts, strict=True) if s != 1]
    v0 = u - 1.0
    with np.errstate(all="ignore"):
        c = np.float64(c1 * (c1 - 1.0)) / np.float64(c2)
        theta = (n * u * c - c1 * (n - 1.0) * (2.0 * u + c)) / (2.0 * c1 * u + c1 * c - n * c)
        alpha = (theta * (c1 - n) + (n - 1.0) * c1) / (n * u)
    start = (float(theta), float(alpha))

    def closed(
        point: tuple[float, float],
    ) -> tuple[tuple[float, float], tuple[float, float, float, float]]:
        t, a = np.float64(point[0]), np.float64(point[1])
        with np.errstate(all="ignore"):
            ratio = float(t / a)
            psi_top = digamma(v0 + ratio + 1.0)
            tri_top = trigamma(float((a + t + a * v0) / a))
            tri_base = trigamma(ratio + 1.0)
            psi_base = digamma(ratio + 1.0)
            a2 = a * a
            d1 = (tri_base - tri_top) / a2
            d5 = (((a * psi_top) + (t * tri_top)) - (a * psi_base) - (t * tri_base)) / (a2 * a)
            d3 = (
                ((((a2 * v0) - (t * t * tri_top)) + (t * t * tri_base)) - (2.0 * a * t * psi_top))
                + (2.0 * a * t * psi_base)
            ) / (a2 * a2)
            o1 = (psi_top - psi_base) / a
            o3 = ((-t * psi_top) + (a * v0) + (t * psi_base)) / (a * a)
            o2 = digamma(float(n + t)) - digamma(float(t + 1.0))
            d2 = trigamma(float(t + 1.0)) - trigamma(float(n + t))
            psi_one, tri_one = digamma(float(1.0 - a)), trigamma(float(1.0 - a))
            d4 = sum(k * (tri_one - trigamma(float(s - a))) for s, k in others)
            o4 = sum(k * (digamma(float(s - a)) - psi_one) for s, k in others)
            return (float(o1 - o2), float(o3 - o4)), (
                float(d2 - d1),
                float(-d5),
                float(-d5),
                float(-d3 - d4),
            )

    to_u = np.arange(1.0, u)
    to_n = np.arange(1.0, n)
    largest = int(max(sizes))
    steps = np.arange(1.0, largest)
    by_size = np.array([s for s, _ in others], dtype=np.int64)
    weight = np.array([k for _, k in others])

    def summed(
        point: tuple[float, float],
    ) -> tuple[tuple[float, float], tuple[float, float, float, float]]:
        t, a = point
        with np.errstate(all="ignore"):
            v = t + to_u * a
            inverse, square = 1.0 / v, 1.0 / (v * v)
            o1, o3 = float(inverse.sum()), float((to_u * inverse).sum())
            d1, d5, d3 = (
                float(square.sum()),
                float((to_u * square).sum()),
                float((to_u * to_u * square).sum()),
            )
            # Σ_{j<s} 1/(j − a) and 1/(j − a)² for every size s, by running sums.
            first = np.concatenate(([0.0], np.cumsum(1.0 / (steps - a))))
            second = np.concatenate(([0.0], np.cumsum(1.0 / ((steps - a) ** 2))))
            o4 = float((weight * first[by_size - 1]).sum())
            d4 = float((weight * second[by_size - 1]).sum())
            w = t + to_n
            o2, d2 = float((1.0 / w).sum()), float((1.0 / (w * w)).sum())
        return (o1 - o2, o3 - o4), (d2 - d1, -d5, -d5, -d3 - d4)

    def nonnegative(point: tuple[float, float]) -> bool:
        return point[0] >= 0

    t, a = solve(closed, start, constraint=nonnegative)
    if math.isnan(t) or math.isnan(a):
        t, a = solve(summed, start, constraint=nonnegative)
    else:
        (fx, fy), _ = summed((t, a))
        if math.isnan(fx) or math.isnan(fy) or abs(fx) > ACCURACY or abs(fy) > ACCURACY:
            t, a = solve(summed, start, constraint=nonnegative)
    if math.isnan(t) or math.isnan(a) or a == 0:
        return math.nan
    big_n = float(population_size)
    found = []
    with np.errstate(all="ignore"):
        scale = float(np.power(np.float64(big_n), np.float64(a)))
        if t + a > 0:  # Apache's logGamma is NaN from 0 down
            logs = math.lgamma(t + 1.0) - math.lgamma(t + a)
            found.append(math.exp(logs) * scale if logs < 709.0 else math.inf)
        # Java's Gamma.gamma overflows to an infinity (then out of range) where Python raises.
        with contextlib.suppress(OverflowError, ValueError, ZeroDivisionError):
            found.append(math.gamma(t + 1.0) / math.gamma(t + a) * scale)
    valid = [value for value in found if 0.0 <= value <= big_n]
    return max(valid) if valid else math.nan
