"""Re-checking the risk thresholds on a release's class sizes, counted apart.

Average re-identification risk, sample uniqueness and population uniqueness
(El Emam 2013) judge the release as a whole. The re-check regroups the
released table (:func:`kanonym.verify.classes.class_sizes`), takes its class
sizes and measures them by its own definitions
(:func:`~kanonym.verify.definitions.average_risk`,
:func:`~kanonym.verify.definitions.records_at_risk`,
:func:`~kanonym.verify.definitions.sample_uniqueness`, exact fractions against
the parameters read as decimals, with the re-check's usual allowance). For
population uniqueness it builds the class-size histogram itself and applies
the estimator named by the declaration through
:func:`kanonym.attacks.population.population_uniqueness`, the estimators
``kanonym risk`` and the model share (they are statistical fits, not a
definition to restate); what is independent here is the histogram, the
population size and the threshold test.

Example (classes of 1, 1, 2 and 4 records: average risk 1/2, above 0.4):
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Declared:
    ...     name: str = "average-risk"
    ...     average_risk: float = 0.4
    >>> rule = risk_rule(Declared())
    >>> rule.failure([1, 1, 2, 4], input_rows=8)
    'average risk 1/2 (0.5) above 0.4'
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from kanonym.attacks.population import ESTIMATORS, population_uniqueness
from kanonym.errors import InputError, VerificationError, echo
from kanonym.verify.definitions import (
    at_most,
    average_risk,
    exact,
    records_at_risk,
    sample_uniqueness,
)

RISK_KINDS: dict[str, tuple[str, ...]] = {
    "average-risk": ("average_risk", "highest_risk", "records_at_risk"),
    "sample-uniqueness": ("threshold",),
    "population-uniqueness": ("threshold", "estimator", "population_size", "sampling_fraction"),
}
"""Kinds judged on the whole release's class sizes, with the parameters they declare."""


@dataclass(frozen=True)
class RiskRule:
    """A threshold on the release as a whole.

    Attributes:
        kind: a key of :data:`RISK_KINDS`.
        shown: its parameters for messages.
        failure: given the release's class sizes and the input's rows, why it
            fails (None when it passes).
    """

    kind: str
    shown: str
    failure: Callable[..., str | None]


def _number(model: object, name: str, optional: bool = False) -> float | None:
    value = getattr(model, name, None)
    if value is None and optional:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise VerificationError(
            f"model {echo(getattr(model, 'name', model))}: parameter {name} is {echo(value)}, "
            "not a number"
        )
    return float(value)


def _shown(fraction: Fraction) -> str:
    return f"{fraction} ({float(fraction):.6g})"


def risk_rule(model: object) -> RiskRule:
    """Read a declaration of a kind in :data:`RISK_KINDS`.

    Raises:
        VerificationError: a parameter is missing or of the wrong type.
    """
    kind = str(getattr(model, "name", ""))
    shown = (
        "("
        + ", ".join(
            f"{n}={getattr(model, n, None)!r}"
            for n in RISK_KINDS[kind]
            if getattr(model, n, None) is not None
        )
        + ")"
    )
    if kind == "average-risk":
        bound = exact(_number(model, "average_risk") or 0.0)
        highest = _number(model, "highest_risk", optional=True)
        share = _number(model, "records_at_risk", optional=True)

        def average(sizes: Sequence[int], input_rows: int) -> str | None:
            risk = average_risk(sizes)
            if not at_most(risk, bound):
                return f"average risk {_shown(risk)} above {float(bound):g}"
            if highest is not None and share is not None:
                at_risk = records_at_risk(sizes, exact(highest))
                if not at_most(at_risk, exact(share)):
                    return (
                        f"records at risk above {highest:g}: {_shown(at_risk)}, more than {share:g}"
                    )
            return None

        return RiskRule(kind, shown, average)
    threshold = exact(_number(model, "threshold") or 0.0)
    if kind == "sample-uniqueness":

        def unique(sizes: Sequence[int], input_rows: int) -> str | None:
            measured = sample_uniqueness(sizes)
            if at_most(measured, threshold):
                return None
            return f"sample uniqueness {_shown(measured)} above {float(threshold):g}"

        return RiskRule(kind, shown, unique)
    estimator = getattr(model, "estimator", None)
    if estimator not in ESTIMATORS:
        raise VerificationError(f"{kind}: estimator {echo(estimator)} is not one of {ESTIMATORS}")
    size = getattr(model, "population_size", None)
    fraction = _number(model, "sampling_fraction", optional=True)
    if (size is None) == (fraction is None) or not (
        size is None or (isinstance(size, int) and not isinstance(size, bool))
    ):
        raise VerificationError(
            f"{kind}: declares neither a whole population_size nor a sampling_fraction"
        )

    def population(sizes: Sequence[int], input_rows: int) -> str | None:
        # N as ARX's population model derives it from a sampling fraction (half up).
        people = size if size is not None else math.floor(input_rows / (fraction or 1.0) + 0.5)
        histogram = dict(Counter(sizes))
        try:
            share = population_uniqueness(histogram, people, str(estimator))
        except InputError as error:
            return f"cannot be estimated: {error}"
        uniques = histogram.get(1, 0)
        if share is None:
            return f"{estimator} gives no estimate while {uniques} records are sample uniques"
        if share == 0 and uniques == 0:
            return None
        if share > 0 and at_most(Fraction(share), threshold):
            return None
        return (
            f"estimated population uniqueness {share:.6g} ({estimator}, N={people}) "
            f"not in (0, {float(threshold):g}]"
        )

    return RiskRule(kind, shown, population)


def judges_release(models: Sequence[object]) -> bool:
    """Whether a model judges the whole release's class sizes (its re-check needs them).

    Example:
        >>> judges_release([])
        False
    """
    return any(getattr(m, "name", None) in RISK_KINDS for m in models)


def check_risk(rule: RiskRule, sizes: Sequence[int], input_rows: int) -> None:
    """Raise VerificationError naming the measure when ``rule`` fails on ``sizes``."""
    why = rule.failure(sizes, input_rows=input_rows)
    if why is not None:
        raise VerificationError(f"release fails {rule.kind} {rule.shown}: {why}")
