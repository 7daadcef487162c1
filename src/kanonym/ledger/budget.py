"""Privacy budgets: what a differentially private release charges its source, and what is left.

A release made under (epsilon, delta)-differential privacy (Dwork & Roth,
"The Algorithmic Foundations of Differential Privacy", Foundations and Trends
in Theoretical Computer Science 9(3-4), 2014, Definition 2.4) *charges* its
source that (epsilon, delta): a :class:`PrivacyCharge`. Releases of one source
compose sequentially (Dwork & Roth 2014, Theorem 3.16): mechanisms that are
(epsilon_i, delta_i)-differentially private, run on the same database, are
together (sum of epsilon_i, sum of delta_i)-differentially private. So the
ledger adds up the charges of the releases of a source (its *spend*) and
records a new release only if the spend plus its charge stays within the
source's budget, in epsilon and in delta alike (:meth:`BudgetStatus.admits`;
a relative tolerance of :data:`TOLERANCE` lets charges of 0.1, 0.1 and 0.1
fill a budget of 0.3 exactly). Several differentially private models in one
release charge the sum of theirs: the same theorem, an upper bound however
they are combined.

Which releases spend a budget is decided by the ledger's policies
(:func:`~kanonym.ledger.policy.budget_releases`): a budget is set for a
source as the ledger names it (a file's absolute path, a database table's
URL without password: :func:`~kanonym.ledger.policy.source_name`), and its
spend is the sum of the charges of every recorded release of the same source
(:func:`~kanonym.ledger.policy.same_source`) as one of that file's or table's
releases: its own, and those of the same content under another name (a copy).
A release is checked against the budget of its own source, which must be set,
and against that of every other source a release of which had its content
(:func:`~kanonym.ledger.policy.budgets_spent`). This module holds the
arithmetic; the storage (:mod:`kanonym.ledger.storage`) checks it in the
transaction that records the release.

Example (a budget of epsilon 1 with 0.25 spent admits 0.75 more, not 0.8):
    >>> status = BudgetStatus(source="/data/t.csv", epsilon_budget=1.0, delta_budget=1e-5,
    ...                       epsilon_spent=0.25, delta_spent=0.0, releases=(1,))
    >>> status.epsilon_remaining, status.delta_remaining
    (0.75, 1e-05)
    >>> status.admits(PrivacyCharge(0.75, 1e-5)), status.admits(PrivacyCharge(0.8, 0.0))
    (True, False)
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from kanonym.errors import BudgetExceededError, InputError

if TYPE_CHECKING:
    from kanonym.result import Result

TOLERANCE = 1e-12
"""Relative slack of :meth:`BudgetStatus.admits`: floating-point sums of charges that fill a
budget exactly (0.1 + 0.1 + 0.1 is 0.30000000000000004 in binary) are not refused."""

DIFFERENTIAL_PRIVACY = "differential-privacy"
"""The ``model`` a differentially private model's ``describe()`` reports."""


def check_amounts(epsilon: float, delta: float, what: str) -> None:
    """Refuse an (epsilon, delta) that is not a privacy loss: finite, epsilon > 0,
    0 <= delta < 1 (``what`` names it in the message).

    Example:
        >>> check_amounts(0.5, 1e-6, "the budget")
        >>> check_amounts(0.0, 0.0, "the budget")
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: the budget: epsilon must be a finite number > 0, got 0.0
    """
    for name, value in (("epsilon", epsilon), ("delta", delta)):
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise InputError(f"{what}: {name} must be a number, got {value!r}")
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise InputError(f"{what}: epsilon must be a finite number > 0, got {epsilon!r}")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise InputError(f"{what}: delta must be a number in [0, 1), got {delta!r}")


@dataclass(frozen=True)
class PrivacyCharge:
    """The privacy loss one release adds to its source: an (epsilon, delta) of differential
    privacy (Dwork & Roth 2014, Definition 2.4); finite, epsilon > 0, 0 <= delta < 1.

    Example:
        >>> PrivacyCharge(0.5, 1e-6)
        PrivacyCharge(epsilon=0.5, delta=1e-06)
    """

    epsilon: float
    delta: float

    def __post_init__(self) -> None:
        check_amounts(self.epsilon, self.delta, "a privacy charge")
        # Stored as REAL: an int given is kept as the float it is read back as.
        object.__setattr__(self, "epsilon", float(self.epsilon))
        object.__setattr__(self, "delta", float(self.delta))


@runtime_checkable
class ChargesPrivacyBudget(Protocol):
    """A privacy model whose release is (epsilon, delta)-differentially private: it charges
    its source's budget (:func:`charge_of`) when ``describe()["model"]`` is
    ``"differential-privacy"``."""

    @property
    def epsilon(self) -> float:
        """The release's epsilon."""
        ...

    @property
    def delta(self) -> float:
        """The release's delta."""
        ...

    def describe(self) -> dict[str, object]:
        """Parameters for the report, ``{"model": "differential-privacy", ...}``."""
        ...


def _differentially_private(model: object) -> bool:
    describe = getattr(model, "describe", None)
    return callable(describe) and describe().get("model") == DIFFERENTIAL_PRIVACY


def charge_of(models: Iterable[object]) -> PrivacyCharge | None:
    """The charge of a release made with ``models``: the sum over its differentially private
    models (:class:`ChargesPrivacyBudget`; Dwork & Roth 2014, Theorem 3.16), or None if
    it has none.

    Raises:
        InputError: a model that says it is differentially private lacks an epsilon or a
            delta, or its values are not a privacy loss (:func:`check_amounts`): it is
            refused rather than released without a charge.

    Example (two differentially private models in one release charge their sum):
        >>> @dataclass(frozen=True)
        ... class Laplace:
        ...     epsilon: float
        ...     delta: float = 0.0
        ...     def describe(self) -> dict[str, object]:
        ...         return {"model": "differential-privacy", "epsilon": self.epsilon}
        >>> charge_of([Laplace(0.5), Laplace(0.25, 1e-6)]), charge_of([])
        (PrivacyCharge(epsilon=0.75, delta=1e-06), None)
    """
    charges: list[PrivacyCharge] = []
    for model in models:
        if not _differentially_private(model):
            continue
        if not isinstance(model, ChargesPrivacyBudget):
            raise InputError(
                f"{type(model).__name__}: a differentially private model needs an epsilon and "
                "a delta, which its release charges to its source's privacy budget"
            )
        charges.append(PrivacyCharge(model.epsilon, model.delta))
    if not charges:
        return None
    return PrivacyCharge(math.fsum(c.epsilon for c in charges), math.fsum(c.delta for c in charges))


def privacy_charge(result: Result) -> PrivacyCharge | None:
    """What releasing ``result`` charges its source (:func:`charge_of` of the job's models),
    or None for a release that is not differentially private."""
    return charge_of(result.config.models)


def _within(total: float, budget: float) -> bool:
    return total <= budget * (1 + TOLERANCE)


def _left(budget: float, spent: float) -> float:
    # A rounding residue of a filled budget (1e-21 of a delta) is shown and read as nothing.
    left = budget - spent
    return left if left > budget * TOLERANCE else 0.0


@dataclass(frozen=True)
class BudgetStatus:
    """A source's privacy budget, what its recorded releases spent of it, and which ones.

    Attributes:
        source: the source as the ledger names it.
        epsilon_budget, delta_budget: the budget set.
        epsilon_spent, delta_spent: the sums of the charges of ``releases``
            (sequential composition).
        releases: the ids of the recorded releases that charged it.
    """

    source: str
    epsilon_budget: float
    delta_budget: float
    epsilon_spent: float
    delta_spent: float
    releases: tuple[int, ...]

    @property
    def epsilon_remaining(self) -> float:
        """The epsilon left: 0 once spent up to the :data:`TOLERANCE` (never negative)."""
        return _left(self.epsilon_budget, self.epsilon_spent)

    @property
    def delta_remaining(self) -> float:
        """The delta left: 0 once spent up to the :data:`TOLERANCE` (never negative)."""
        return _left(self.delta_budget, self.delta_spent)

    def admits(self, charge: PrivacyCharge) -> bool:
        """Whether a release charging ``charge`` stays within the budget, in epsilon and in
        delta (up to the relative :data:`TOLERANCE`)."""
        return _within(self.epsilon_spent + charge.epsilon, self.epsilon_budget) and _within(
            self.delta_spent + charge.delta, self.delta_budget
        )

    def covers_spent(self, epsilon: float, delta: float) -> bool:
        """Whether a budget of (``epsilon``, ``delta``) still holds what was spent."""
        return _within(self.epsilon_spent, epsilon) and _within(self.delta_spent, delta)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form, what is left included."""
        return {
            "source": self.source,
            "epsilon_budget": self.epsilon_budget,
            "delta_budget": self.delta_budget,
            "epsilon_spent": self.epsilon_spent,
            "delta_spent": self.delta_spent,
            "epsilon_remaining": self.epsilon_remaining,
            "delta_remaining": self.delta_remaining,
            "releases": list(self.releases),
        }


def spend(
    source: str,
    budget: tuple[float, float],
    charged: Iterable[tuple[int, PrivacyCharge]],
) -> BudgetStatus:
    """The status of ``source``'s ``budget`` (epsilon, delta) given the releases that charged
    it (id, charge): their charges summed (Dwork & Roth 2014, Theorem 3.16).

    Example:
        >>> spend("t.csv", (1.0, 0.0), [(1, PrivacyCharge(0.1, 0)), (3, PrivacyCharge(0.2, 0))])
        BudgetStatus(source='t.csv', epsilon_budget=1.0, delta_budget=0.0, \
epsilon_spent=0.30000000000000004, delta_spent=0.0, releases=(1, 3))
    """
    pairs = list(charged)
    return BudgetStatus(
        source=source,
        epsilon_budget=budget[0],
        delta_budget=budget[1],
        epsilon_spent=math.fsum(c.epsilon for _, c in pairs),
        delta_spent=math.fsum(c.delta for _, c in pairs),
        releases=tuple(i for i, _ in pairs),
    )


def require_within(status: BudgetStatus, charge: PrivacyCharge) -> None:
    """Refuse, in one line stating what is left, a release whose ``charge`` the budget of
    ``status`` does not admit.

    Raises:
        BudgetExceededError: spent plus ``charge`` exceeds the budget in epsilon or delta.

    Example:
        >>> status = spend("t.csv", (1.0, 1e-5), [(1, PrivacyCharge(0.75, 0))])
        >>> require_within(status, PrivacyCharge(0.5, 0))
        Traceback (most recent call last):
        ...
        kanonym.errors.BudgetExceededError: t.csv: this release charges epsilon 0.5, delta 0 \
but the privacy budget has epsilon 0.25, delta 1e-05 left (of epsilon 1, delta 1e-05; \
spent by release 1); nothing written or recorded
    """
    if status.admits(charge):
        return
    ids = ", ".join(str(i) for i in status.releases)
    spent = f"; spent by release{'s' if len(status.releases) > 1 else ''} {ids}" if ids else ""
    raise BudgetExceededError(
        f"{status.source}: this release charges epsilon {charge.epsilon:g}, delta "
        f"{charge.delta:g} but the privacy budget has epsilon {status.epsilon_remaining:g}, "
        f"delta {status.delta_remaining:g} left (of epsilon {status.epsilon_budget:g}, delta "
        f"{status.delta_budget:g}{spent}); nothing written or recorded"
    )
