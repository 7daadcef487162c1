"""SafePub's sampling probability beta and class size k for (epsilon, delta)-differential privacy.

Li, Qardaji & Su (2012, "On sampling, anonymization, and differential privacy
or, k-anonymization meets differential privacy", ASIACCS) show that drawing
every record independently with probability beta, then generalizing with a
scheme chosen without looking at the data and suppressing every class smaller
than k, satisfies (epsilon, delta)-differential privacy when beta <= 1 - e^-epsilon
and delta >= d(k, beta, epsilon), where

    d(k, beta, epsilon) = max over n >= n_m of  sum_{j > gamma * n}^{n} f(j; n, beta),
    gamma = (e^epsilon - 1 + beta) / e^epsilon,   n_m = ceil(k / gamma - 1),

f the binomial probability mass function. SafePub (Bild, Kuhn & Prasser 2018,
"SafePub: A Truthful Data Anonymization Algorithm With Strong Privacy
Guarantees", PoPETs 2018(1)) takes the largest beta, 1 - e^-epsilon, and the
smallest k that meets delta; when the generalization is searched for with the
exponential mechanism, its budget is taken from epsilon first.

:func:`derive_parameters` gives the beta and k ARX derives
(``org.deidentifier.arx.dp.ParameterCalculation`` with the interval arithmetic
of ``IntervalArithmeticDouble``, called by ``EDDifferentialPrivacy``), the same
for the same inputs:

* beta is the lower bound ARX's interval arithmetic gives for 1 - e^-epsilon
  (every operation widened by one unit in the last place), a few ulps below
  the exact value;
* the integers come from gamma's bounds as ARX rounds them: a sum starts at
  ``floor(lower(n * gamma)) + 1`` and ``n_m = ceil(lower(k / gamma - 1))``;
* k is one more than the smallest k with d(k) < delta: ARX's loop
  ``for (k = 1; !(d_k < delta); ++k) d_k = d(k);`` increments k once more after
  computing the d(k) that passes. d is non-increasing in k, so ARX's k is as
  private as the paper's, one row per class stricter;
* with a search budget (ARX's data-dependent mode), the anonymization gets the
  lower bound of epsilon - search_epsilon.

ARX finds k by evaluating d(1), d(2), ... each over n = n_m, n_m + 1, ... until
the maximum so far exceeds a Chernoff bound on every later term: hours for
epsilon = 6. Here the same k comes from the largest n whose term reaches delta
(:func:`_last_reaching`), found with a few dozen terms below a tighter, equally
proven bound: milliseconds for epsilon up to 6 and delta down to 1e-7.

Example:
    >>> derive_parameters(2.0, 1e-5)
    SafePubParameters(epsilon_anonymization=2.0, delta=1e-05, beta=0.8646647167633871, k=114)
    >>> derive_parameters(2.0, 1e-5, search_epsilon=1.0).k
    62
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from kanonym.differential_privacy._checks import check_number, check_positive, check_whole
from kanonym.errors import InputError, echo

MAX_EPSILON = 9.0
"""The largest privacy budget accepted for the anonymization step.

Up to 9 the integers of every sum are provably in order in double precision
for any delta (see :attr:`_Model.ordered_up_to`); a little above, ARX's own
loop runs n past 2**31 and overflows its Java ints. A guarantee of e^9 (about
8,100) as the bound on an adversary's odds ratio protects nobody anyway.
"""

_LOG_SQRT_2PI = 0.5 * math.log(2.0 * math.pi)

# Below this many Loader's series is not accurate; the error of log(n!) is
# absolute, about 1e-14, and enters a log-probability as such (harmless).
_SERIES_FROM = 16
_STIRLING_SMALL = (
    0.0,
    *(
        math.lgamma(n + 1.0) - (n + 0.5) * math.log(n) + n - _LOG_SQRT_2PI
        for n in range(1, _SERIES_FROM)
    ),
)

# A tail sum stops when the geometric bound on its remaining terms is below this
# share of the sum: far below a double's precision.
_TAIL_PRECISION = 2.0**-60

# Safety factor on the Chernoff stopping point, far above the rounding error of
# its exponent (about 1e-12 relative at epsilon = 9).
_STOP_MARGIN = 1e-9


@dataclass(frozen=True)
class SafePubParameters:
    """What SafePub's anonymization step needs: sample with ``beta``, suppress classes below ``k``.

    Attributes:
        epsilon_anonymization: the budget of the sampling-and-suppression step
            (epsilon minus any search budget).
        delta: the delta of (epsilon, delta)-differential privacy.
        beta: the probability with which each record is drawn.
        k: the smallest class size released: d(k - 1, beta, epsilon) < delta
            already, as ARX computes it (see the module).

    Example:
        >>> SafePubParameters(epsilon_anonymization=1.0, delta=1e-6, beta=0.6, k=75).describe()["k"]
        75
    """

    epsilon_anonymization: float
    delta: float
    beta: float
    k: int

    def __post_init__(self) -> None:
        check_positive(self.epsilon_anonymization, "epsilon_anonymization")
        _check_delta_range(self.delta)
        if not 0.0 < self.beta < 1.0:
            raise InputError(
                f"`beta` must be a number strictly between 0 and 1, got {echo(self.beta)}"
            )
        check_whole(self.k, "k", 1)

    def describe(self) -> dict[str, object]:
        """The parameters as a report records them."""
        return {
            "epsilon_anonymization": self.epsilon_anonymization,
            "delta": self.delta,
            "beta": self.beta,
            "k": self.k,
        }


def _check_delta_range(value: object) -> float:
    delta = check_number(value, "delta")
    if not 0.0 < delta < 1.0:
        raise InputError(f"`delta` must be strictly between 0 and 1, got {echo(value)}")
    return delta


def check_delta(delta: float, rows: int) -> None:
    """Refuse a delta of at least 1/n for a table of n rows.

    An (epsilon, delta)-differentially private mechanism may publish one
    record of n in the clear with probability delta, so delta must stay below
    1/n (Dwork & Roth 2014, "The Algorithmic Foundations of Differential
    Privacy", section 2.3). ARX does not check this; a release should.

    Example:
        >>> check_delta(1e-5, 30_162)
        >>> check_delta(0.1, 20)
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: `delta` = 0.1 must be below 1/n = 0.05 for a table of 20 rows
    """
    value = _check_delta_range(delta)
    rows = check_whole(rows, "rows", 1)
    if value * rows >= 1.0:
        raise InputError(
            f"`delta` = {value:g} must be below 1/n = {1.0 / rows:g} for a table of {rows:,} rows"
        )


def derive_parameters(
    epsilon: float, delta: float, *, search_epsilon: float = 0.0
) -> SafePubParameters:
    """SafePub's beta and k for (epsilon, delta)-DP, exactly as ARX derives them.

    ``search_epsilon`` is the budget of a data-dependent search (ARX's
    ``setDPSearchBudget``, 0.1 by default there; 0 here, a generalization
    chosen without the data); the sampling and suppression get the rest,
    rounded down as ARX does.

    Example:
        >>> p = derive_parameters(1.0, 1e-6)
        >>> p.beta, p.k
        (0.6321205588285574, 75)
    """
    total = check_positive(epsilon, "epsilon")
    tolerance = _check_delta_range(delta)
    search = check_number(search_epsilon, "search_epsilon")
    if search < 0.0 or search >= total:
        raise InputError(
            f"`search_epsilon` must be >= 0 and below `epsilon` = {total:g}, "
            f"got {echo(search_epsilon)}"
        )
    # ARX's lower bound of the difference; without a search it keeps epsilon as given.
    anonymization = math.nextafter(total - search, -math.inf) if search > 0.0 else total
    if anonymization > MAX_EPSILON:
        raise InputError(
            f"`epsilon` = {total:g} leaves {anonymization:g} for the anonymization, above "
            f"{MAX_EPSILON:g}, where the guarantee means nothing (e^epsilon bounds the odds)"
        )
    model = _model(anonymization)
    last = _last_reaching(model, math.log(tolerance))
    smallest = _smallest_k_beyond(model, last)
    return SafePubParameters(
        epsilon_anonymization=anonymization, delta=tolerance, beta=model.beta, k=smallest + 1
    )


def safepub_delta(k: int, epsilon_anonymization: float) -> float:
    """d(k, beta, epsilon) of Li, Qardaji & Su (2012) as ARX evaluates it: the delta a k buys.

    beta is ARX's (:func:`derive_parameters`), and the sums start where ARX's
    rounding of gamma makes them start. The maximum over n stops where the
    Chernoff bound on every later term falls below the maximum so far, as in
    ARX (with a tighter bound; both are proven, so the maximum is the same).

    Example:
        >>> safepub_delta(113, 2.0) < 1e-5 <= safepub_delta(112, 2.0)
        True
    """
    k = check_whole(k, "k", 1)
    epsilon = check_positive(epsilon_anonymization, "epsilon_anonymization")
    if epsilon > MAX_EPSILON:
        raise InputError(
            f"`epsilon_anonymization` must be at most {MAX_EPSILON:g}, got {epsilon:g}"
        )
    model = _model(epsilon)
    n = model.n_m(k)
    best = model.log_tail(n)
    # Every later term is at most exp(-n * rate), decreasing in n: once that is
    # below the maximum so far, no later n can raise it.
    while True:
        if n > model.ordered_up_to:
            raise InputError(f"`k` = {k} is too large to evaluate for epsilon = {epsilon:g}")
        n = model.run_end(n) + 1
        if -n * model.rate <= best:
            return math.exp(best)
        if n <= model.ordered_up_to:
            best = max(best, model.log_tail(n))


@dataclass(frozen=True)
class _Model:
    """The binomial sums of one epsilon (the anonymization's), with ARX's roundings."""

    epsilon: float
    beta: float  # ARX's: the lower bound of 1 - e^-epsilon
    gamma_low: float  # ARX's bounds on gamma, which decide the integers
    gamma_high: float
    p: float  # the exact sampling probability 1 - e^-epsilon, to a double's precision
    q: float  # e^-epsilon
    log_p: float
    odds: float  # p / q = e^epsilon - 1
    rate: float  # every a_n <= exp(-n * rate)
    # n - start(n) is non-decreasing for n up to here: the computed n * gamma_low,
    # pushed down one ulp, is within 2**-51 * n of the exact product, so from n to
    # n + 1 it grows by less than gamma_low + 2**-50 * (n + 1) < 1, and its floor by
    # at most 1.
    ordered_up_to: int

    def start(self, n: int) -> int:
        """The first j of a_n's sum: ARX's ``floor(lower(n * gamma)) + 1``."""
        return math.floor(math.nextafter(n * self.gamma_low, -math.inf)) + 1

    def n_m(self, k: int) -> int:
        """ARX's ``ceil(lower(k / gamma - 1))``."""
        quotient = math.nextafter(k / self.gamma_high, -math.inf)
        return math.ceil(math.nextafter(quotient - 1.0, -math.inf))

    def log_pmf(self, j: int, n: int) -> float:
        """log f(j; n, p), accurate to about 1e-15 also for n in the millions (Loader 2000)."""
        if j == n:
            return n * self.log_p
        if j == 0:
            return -n * self.epsilon  # log(q^n), q = e^-epsilon exactly
        return (
            _stirling_error(n)
            - _stirling_error(j)
            - _stirling_error(n - j)
            - _deviance(j, n * self.p)
            - _deviance(n - j, n * self.q)
            + 0.5 * math.log(n / (j * float(n - j)))
            - _LOG_SQRT_2PI
        )

    def log_tail(self, n: int) -> float:
        """log a_n = log sum_{j=start(n)}^{n} f(j; n, p); ARX's a_0 is 1 (its sum starts at 0)."""
        if n <= 0:
            return 0.0
        j = self.start(n)
        first = self.log_pmf(j, n)
        total = term = 1.0
        # f(j + 1) / f(j) = (n - j) / (j + 1) * p / q falls as j grows, so once it is
        # below 1 the rest of the sum is at most term * r / (1 - r).
        while j < n:
            ratio = (n - j) / (j + 1.0) * self.odds
            if ratio < 1.0 and term * ratio <= total * (1.0 - ratio) * _TAIL_PRECISION:
                break
            term *= ratio
            total += term
            j += 1
        return first + math.log(total)

    def run_start(self, n: int) -> int:
        """The first n' in 1..n with n' - start(n') = n - start(n) (see :meth:`run_end`)."""
        slack = n - self.start(n)

        def inside(x: int) -> bool:
            return x >= 1 and x - self.start(x) == slack

        high, step = n, 1
        while inside(n - step):
            high = n - step
            step *= 2
        low = n - step
        while high - low > 1:
            middle = (low + high) // 2
            if inside(middle):
                high = middle
            else:
                low = middle
        return high

    def run_end(self, n: int) -> int:
        """The last n' >= n with n' - start(n') = n - start(n), up to :attr:`ordered_up_to`.

        n - start(n) never decreases there (start grows by 0 or 1 per step),
        so the n' sharing it form a run from n on: found by doubling, then
        bisection.
        """
        slack = n - self.start(n)

        def inside(x: int) -> bool:
            return x <= self.ordered_up_to and x - self.start(x) == slack

        low, step = n, 1
        while inside(n + step):
            low = n + step
            step *= 2
        high = n + step
        while high - low > 1:
            middle = (low + high) // 2
            if inside(middle):
                low = middle
            else:
                high = middle
        return low


@lru_cache(maxsize=64)
def _model(epsilon: float) -> _Model:
    """ARX's interval bounds for epsilon, and the exact quantities of the sums."""
    down, up = _down, _up
    # ARX evaluates beta = 1 - exp(-1 * epsilon) on intervals, each operation's
    # bounds pushed one ulp outwards; exp is increasing.
    negated = (down(-epsilon), up(-epsilon))
    power_neg = (down(math.exp(negated[0])), up(math.exp(negated[1])))
    beta_low = down(1.0 - power_neg[1])
    beta_high = up(1.0 - power_neg[0])
    # gamma = (exp(epsilon) - 1 + beta) / exp(epsilon), likewise.
    power = (down(math.exp(epsilon)), up(math.exp(epsilon)))
    numerator = (down(down(power[0] - 1.0) + beta_low), up(up(power[1] - 1.0) + beta_high))
    gamma_low = down(numerator[0] / power[1])
    gamma_high = up(numerator[1] / power[0])
    p = -math.expm1(-epsilon)
    q = math.exp(-epsilon)
    ordered_up_to = math.floor((1.0 - gamma_low) * 2.0**50) - 2
    return _Model(
        epsilon=epsilon,
        beta=beta_low,
        gamma_low=gamma_low,
        gamma_high=gamma_high,
        p=p,
        q=q,
        log_p=math.log(p),
        odds=math.expm1(epsilon),
        rate=_chernoff_rate(gamma_low, p, q),
        ordered_up_to=ordered_up_to,
    )


def _chernoff_rate(gamma_low: float, p: float, q: float) -> float:
    """A rate D > 0 with a_n <= exp(-n D) for every n >= 1.

    a_n = P[X >= start(n)] for X ~ Binomial(n, p), and start(n) > n * t with
    t = gamma_low * (1 - 2**-51) (start(n) exceeds the double below n * gamma_low,
    which is at least n * gamma_low * (1 - 2**-52) after the product's rounding).
    For t > p the Chernoff-Hoeffding bound (Hoeffding 1963, Theorem 1) gives
    P[X >= n t] <= exp(-n KL(t || p)), KL the Bernoulli relative entropy
    t log(t / p) + (1 - t) log((1 - t) / (1 - p)). It is tighter than the
    multiplicative Chernoff bound ARX stops with, exp(-n (t log(t / p) - (t - p))),
    so the enumeration ends far sooner with the same maximum.
    """
    t = gamma_low * (1.0 - 2.0**-51)
    if not t > p:
        raise InputError("`epsilon` is too large for SafePub's parameters in double precision")
    rate = t * math.log1p((t - p) / p) + (1.0 - t) * math.log((1.0 - t) / q)
    return rate * (1.0 - _STOP_MARGIN)


def _last_reaching(model: _Model, log_delta: float) -> int:
    """The largest n with a_n >= delta (0 at least: ARX's a_0 is 1).

    d(k) < delta exactly when n_m(k) exceeds it. Why a few evaluations
    suffice: with s(n) = n - start(n), a_n = P[Y <= s(n)] for Y = n - X ~
    Binomial(n, q). As n grows by one, start(n) grows by 0 or 1, so s(n) never
    decreases and n splits into runs of equal s; within a run a_n decreases
    (one more trial can only make Y larger: P[Y_{n+1} <= s] = P[Y_n <= s] -
    q P[Y_n = s]). No n from n_stop on reaches delta, as exp(-n rate) < delta
    there (:func:`_chernoff_rate`). So the runs are visited downwards from
    n_stop: the first whose first term reaches delta holds the answer, the
    last n of it that reaches delta, found by bisection.
    """
    stop = math.floor(-log_delta / model.rate) + 1
    if stop > model.ordered_up_to:  # cannot happen for epsilon <= MAX_EPSILON
        raise InputError(f"`epsilon` = {model.epsilon:g} is too large for an exact k")
    n = stop - 1
    while n >= 1:
        begin = model.run_start(n)
        if model.log_tail(begin) >= log_delta:
            low, high = begin, n + 1  # a_low reaches delta; high is past the run's part
            while high - low > 1:
                middle = (low + high) // 2
                if model.log_tail(middle) >= log_delta:
                    low = middle
                else:
                    high = middle
            return low
        n = begin - 1
    return 0


def _smallest_k_beyond(model: _Model, last: int) -> int:
    """The smallest k >= 1 with n_m(k) > ``last`` (n_m does not decrease in k)."""
    k = max(1, math.floor(model.gamma_high * (last + 1)))
    while k > 1 and model.n_m(k - 1) > last:
        k -= 1
    while model.n_m(k) <= last:
        k += 1
    return k


def _down(value: float) -> float:
    return math.nextafter(value, -math.inf)


def _up(value: float) -> float:
    return math.nextafter(value, math.inf)


def _stirling_error(n: int) -> float:
    """log(n!) - log(sqrt(2 pi n) (n / e)^n), by Stirling's series from 16 on (Loader 2000)."""
    if n < _SERIES_FROM:
        return _STIRLING_SMALL[n]
    x = float(n)
    xx = x * x
    # The series 1/(12n) - 1/(360n^3) + 1/(1260n^5) - 1/(1680n^7) + 1/(1188n^9),
    # cut where the next term is below a double's precision.
    if n > 500:
        return (1 / 12 - (1 / 360) / xx) / x
    if n > 80:
        return (1 / 12 - (1 / 360 - (1 / 1260) / xx) / xx) / x
    if n > 35:
        return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680) / xx) / xx) / xx) / x
    return (1 / 12 - (1 / 360 - (1 / 1260 - (1 / 1680 - (1 / 1188) / xx) / xx) / xx) / xx) / x


def _deviance(x: float, mean: float) -> float:
    """x log(x / mean) + mean - x, without cancellation when x is near the mean (Loader 2000)."""
    if abs(x - mean) < 0.1 * (x + mean):
        # With v = (x - mean) / (x + mean) the expression is
        # (x - mean) v + 2 x (v^3/3 + v^5/5 + ...), summed until it stops changing.
        v = (x - mean) / (x + mean)
        total = (x - mean) * v
        power = 2.0 * x * v
        squared = v * v
        j = 1
        while True:
            power *= squared
            following = total + power / (2 * j + 1)
            if following == total:
                return total
            total = following
            j += 1
    return x * math.log(x / mean) + mean - x
