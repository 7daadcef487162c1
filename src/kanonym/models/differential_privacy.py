"""(epsilon, delta)-differential privacy for microdata, by SafePub's sampling and k-suppression.

A randomized algorithm A is (epsilon, delta)-differentially private if for every
two tables T1, T2 that differ in one record and every set S of outputs,
Pr[A(T1) in S] <= e^epsilon * Pr[A(T2) in S] + delta (Dwork, Kenthapadi,
McSherry, Mironov & Naor 2006, "Our data, ourselves: privacy via distributed
noise generation", EUROCRYPT). Li, Qardaji & Su (2012, "On sampling,
anonymization, and differential privacy or, k-anonymization meets differential
privacy", ASIACCS) prove that the following release of a table is
(epsilon, delta)-differentially private: draw every record independently with
probability beta <= 1 - e^-epsilon, generalize the drawn records with a
generalization chosen *without looking at the data*, and suppress every class
of fewer than k records, where delta >= d(k, beta, epsilon) =
max over n >= ceil(k / gamma - 1) of sum_{j > gamma n}^{n} f(j; n, beta),
gamma = (e^epsilon - 1 + beta) / e^epsilon and f the binomial probability mass.

SafePub (Bild, Kuhn & Prasser 2018, "SafePub: A Truthful Data Anonymization
Algorithm With Strong Privacy Guarantees", PoPETs 2018(1)) takes beta =
1 - e^-epsilon and the smallest such k, and either fixes the generalization
in advance (a *generalization scheme*: every quasi-identifier at the same
fraction of its hierarchy's height, ARX's ``GeneralizationDegree``) or
chooses it with the exponential mechanism on a part of epsilon (the *search
budget*). ``DifferentialPrivacy`` is ARX's ``EDDifferentialPrivacy``: beta and
k are derived exactly as ARX derives them
(:func:`kanonym.differential_privacy.derive_parameters`).

As a predicate on classes it is "at least k rows", judged on the drawn
sample; the release pipeline draws the sample, releases only its rows and
suppresses every class below k, however many rows that is.

Example:
    >>> import numpy as np
    >>> from kanonym.models import ClassStatistics
    >>> model = DifferentialPrivacy(2.0, 1e-5, generalization="low-medium")
    >>> model.k, model.beta
    (114, 0.8646647167633871)
    >>> model.satisfied_classes(ClassStatistics(np.array([113, 114]))).tolist()
    [False, True]
    >>> model.levels((4, 1, 2))  # floor(0.4 * height + 0.5) per quasi-identifier
    (2, 0, 1)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

import numpy as np
import numpy.typing as npt

from kanonym.differential_privacy import SafePubParameters, derive_parameters
from kanonym.errors import InputError, echo
from kanonym.models.base import ClassStatistics

GeneralizationDegree = Literal[
    "none", "low", "low-medium", "medium", "medium-high", "high", "complete"
]
"""The fixed generalization schemes, as ARX's ``GeneralizationDegree`` names them."""

Randomness = Literal["kanonym", "arx"]
"""Who draws the sample: kanonym's seeded PCG64 generator, or ARX's deterministic
``java.util.Random(0xDEADBEEF)`` (to reproduce ARX; the same rows every time)."""

MIN_EPSILON = 0.01
"""The least epsilon of the sampling and suppression served: below it fewer than 1% of the
rows are drawn, and deriving k (and re-checking it) takes time growing as 1 / epsilon."""

DEGREES: dict[str, float] = {
    "none": 0.0,
    "low": 0.2,
    "low-medium": 0.4,
    "medium": 0.5,
    "medium-high": 0.6,
    "high": 0.8,
    "complete": 1.0,
}
"""Each scheme's share of a hierarchy's height (ARX's ``DataGeneralizationScheme``)."""


@dataclass(frozen=True)
class DifferentialPrivacy:
    """(``epsilon``, ``delta``)-differential privacy by SafePub (Bild, Kuhn & Prasser 2018).

    Attributes:
        epsilon: the privacy budget of the release (all of it, search included).
        delta: the probability with which the guarantee may fail; below 1/n
            for a table of n rows (checked when the table is read).
        generalization: the scheme, the same share of every hierarchy's
            height (:data:`DEGREES`), or None to choose the generalization
            with SafePub's exponential-mechanism search, which spends
            ``search_budget`` of ``epsilon``.
        search_budget: the part of ``epsilon`` the search spends (ARX's
            ``setDPSearchBudget``, 0.1 by default there too); read only when
            ``generalization`` is None.
        search_steps: the draws of the search's walk (ARX's step limit,
            :func:`kanonym.search.safepub.safepub_search`); read only when
            ``generalization`` is None.
        randomness: ``"kanonym"`` draws the sample with the job's seed (one
            drawn from the operating system when it has none, and recorded);
            ``"arx"`` draws ARX's deterministic sample, for reproducing ARX.

    Derived on construction, as ARX derives them: :attr:`k`, :attr:`beta`
    and :attr:`epsilon_anonymization`.
    """

    epsilon: float
    delta: float
    generalization: GeneralizationDegree | None = "medium"
    search_budget: float = 0.1
    search_steps: int = 100
    randomness: Randomness = "kanonym"
    parameters: SafePubParameters = field(init=False, repr=False, compare=False)
    # What the release drew (the report's record); set on the pipeline's copy only.
    sample: Mapping[str, object] | None = field(default=None, init=False, repr=False, compare=False)
    search: Mapping[str, object] | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Messages name the parameters plainly (no backquotes): the command line has no
        # option of their names, they are fields of the model's spec.
        what = "differential-privacy"
        for name in ("epsilon", "delta", "search_budget"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise InputError(f"{what}: {name} must be a number, got {echo(value)}")
        if not (math.isfinite(self.epsilon) and self.epsilon > 0):
            raise InputError(
                f"{what}: epsilon must be a finite number > 0, got {echo(self.epsilon)}"
            )
        if not 0 < self.delta < 1:
            raise InputError(f"{what}: delta must be a number > 0 and < 1, got {echo(self.delta)}")
        if self.generalization is not None and self.generalization not in DEGREES:
            raise InputError(
                f"{what}: generalization must be one of {', '.join(DEGREES)} or None (search), "
                f"got {echo(self.generalization)}"
            )
        if self.randomness not in get_args(Randomness):
            raise InputError(
                f"{what}: randomness must be 'kanonym' or 'arx', got {echo(self.randomness)}"
            )
        steps = self.search_steps
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 1:
            raise InputError(f"{what}: search_steps must be a whole number >= 1, got {echo(steps)}")
        search = 0.0
        if self.generalization is None:
            search = self.search_budget
            if not (math.isfinite(search) and 0 < search < self.epsilon):
                raise InputError(
                    f"{what}: search_budget must be > 0 and below epsilon = {self.epsilon:g}, "
                    f"got {echo(search)}"
                )
        if self.epsilon - search < MIN_EPSILON:
            raise InputError(
                f"{what}: epsilon{' less search_budget' if search else ''} must be at least "
                f"{MIN_EPSILON:g}, got {self.epsilon - search:g}: below, fewer than 1% of the "
                "rows are drawn and k takes long to derive"
            )
        try:
            derived = derive_parameters(
                float(self.epsilon), float(self.delta), search_epsilon=search
            )
        except InputError as error:
            raise InputError(f"{what}: {str(error).replace('`', '')}") from None
        object.__setattr__(self, "parameters", derived)

    @property
    def name(self) -> str:
        """``"differential-privacy"`` (what the ledger charges: :mod:`kanonym.ledger.budget`)."""
        return "differential-privacy"

    @property
    def k(self) -> int:
        """The smallest class released: one more than the first k with d(k) < delta (ARX's)."""
        return self.parameters.k

    @property
    def beta(self) -> float:
        """The probability with which each row is drawn (ARX's lower bound of 1 - e^-epsilon)."""
        return self.parameters.beta

    @property
    def epsilon_anonymization(self) -> float:
        """The epsilon of sampling and suppression: ``epsilon`` less any search budget."""
        return self.parameters.epsilon_anonymization

    @property
    def data_dependent(self) -> bool:
        """Whether the generalization is searched for (``generalization`` None)."""
        return self.generalization is None

    @property
    def monotone_with_suppression(self) -> bool:
        """False, as ARX declares: the guarantee holds only for a generalization chosen
        without the data (a scheme) or by the exponential mechanism, so no search that
        prunes by monotonicity may choose it."""
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """False, for the same reason (and classes below k are always suppressed)."""
        return False

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: class sizes of the sample only."""
        return ()

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Classes of the sample with at least :attr:`k` rows."""
        return np.asarray(classes.sizes >= self.k)

    def levels(
        self, heights: Sequence[int], lower: Sequence[int] = (), upper: Sequence[int] = ()
    ) -> tuple[int, ...]:
        """The scheme's level of each hierarchy: ``floor(share * height + 0.5)`` (Java's
        ``Math.round``, as ARX), within ``lower`` and ``upper`` when given.

        Raises:
            InputError: the generalization is searched for (no scheme).
        """
        if self.generalization is None:
            raise InputError("`generalization` is None: the search chooses the levels")
        share = DEGREES[self.generalization]
        chosen = [math.floor(share * h + 0.5) for h in heights]
        low = list(lower) or [0] * len(chosen)
        high = list(upper) or list(heights)
        return tuple(min(max(c, lo), hi) for c, lo, hi in zip(chosen, low, high, strict=True))

    def with_sample(
        self, record: Mapping[str, object], search: Mapping[str, object] | None = None
    ) -> DifferentialPrivacy:
        """A copy that reports what the release drew (:attr:`sample`) and, when searched,
        the search's walk (:attr:`search`)."""
        copy = dataclasses.replace(self)
        object.__setattr__(copy, "sample", dict(record))
        object.__setattr__(copy, "search", None if search is None else dict(search))
        return copy

    def describe(self) -> dict[str, object]:
        """The parameters, the derived k and beta and, once drawn, the sample's record."""
        described: dict[str, object] = {
            "model": self.name,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "generalization": "search" if self.generalization is None else self.generalization,
            "epsilon_anonymization": self.epsilon_anonymization,
            "epsilon_search": self.search_budget if self.data_dependent else 0.0,
            **({"search_steps": self.search_steps} if self.data_dependent else {}),
            "beta": self.beta,
            "k": self.k,
            "randomness": self.randomness,
        }
        if self.sample is not None:
            described["sample"] = dict(self.sample)
        if self.search is not None:
            described["search"] = dict(self.search)
        return described
