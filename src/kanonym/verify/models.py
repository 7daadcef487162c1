"""Re-checking privacy models on a finished table, by the re-check's own definitions.

The models are taken as declarations: a model's kind (its ``name``) and its
public parameters (``k``, ``attribute``, ``l``, ``c``, ``t``, ``order``,
``hierarchy``, ``beta``, ``delta``), read by name. Each kind is judged by the
definitions of :mod:`kanonym.verify.definitions`, which share no code with
:mod:`kanonym.models`, on classes regrouped from the released table
(:mod:`kanonym.verify.classes`): a wrong class or histogram in the search, or a
defect in a model's measure, cannot pass both. A kind this module does not know
fails the check.

The reference distribution P of t-closeness, beta-likeness and
delta-disclosure is the one of the whole input table (``source``), suppressed
rows included, as in the search and in ARX (whose models read the input's
distribution).

k-map is read by its form: with a population table (no ``estimator``) each
released class's population rows must reach ``k``; estimated, the least class
size is derived from the input's rows, ``population_size`` and
``significance`` by :func:`kanonym.verify.definitions.estimated_k`, the
re-check's own implementation of ARX's derivation.

Example:
    >>> import polars as pl
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Declared:
    ...     name: str
    ...     attribute: str
    ...     l: int
    >>> table = pl.DataFrame({"zip": ["0213*"] * 2, "disease": ["flu", "flu"]})
    >>> verify_models(table, columns=["zip"], source=table,
    ...               models=[Declared("distinct-l-diversity", "disease", 2)])
    Traceback (most recent call last):
    ...
    kanonym.errors.VerificationError: release fails distinct-l-diversity (attribute 'disease', \
l=2) in 1 of 1 classes
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, TypeVar

import polars as pl

from kanonym.errors import InputError, VerificationError, echo
from kanonym.hierarchy import Hierarchy
from kanonym.verify.classes import class_sizes, class_value_counts, value_counts
from kanonym.verify.definitions import (
    Counts,
    Ranking,
    Reference,
    Tree,
    at_least,
    at_most,
    basic_beta,
    beyond_cap,
    delta_disclosure,
    distinct_values,
    emd_equal,
    emd_hierarchical,
    emd_ordered,
    entropy,
    estimated_k,
    exact,
    k_anonymous,
    k_mapped,
    numeric_order,
    present,
    recursive_ratio,
)
from kanonym.verify.differential_privacy import li_delta
from kanonym.verify.population import class_population
from kanonym.verify.risk import RISK_KINDS, RiskRule, check_risk, risk_rule

T = TypeVar("T")

# Each kind with the parameters it declares, beyond ``attribute``.
KINDS: dict[str, tuple[str, ...]] = {
    "k-anonymity": ("k",),
    "distinct-l-diversity": ("l",),
    "entropy-l-diversity": ("l",),
    "recursive-c-l-diversity": ("c", "l"),
    "equal-distance-t-closeness": ("t",),
    "ordered-distance-t-closeness": ("t", "order"),
    "hierarchical-distance-t-closeness": ("t", "hierarchy"),
    "basic-beta-likeness": ("beta",),
    "enhanced-beta-likeness": ("beta",),
    "delta-disclosure-privacy": ("delta",),
}

# k-map: with a population table, judged like the population kinds below; with an
# estimator, by class sizes against the least size the re-check derives itself.
K_MAP = "k-map"
K_MAP_ESTIMATORS = ("poisson", "zero-truncated-poisson")

# (epsilon, delta)-differential privacy by SafePub: class sizes against its k, which the
# re-check's own tail bound must find sufficient (verify.differential_privacy).
DIFFERENTIAL_PRIVACY = "differential-privacy"

# Kinds judged by a class's rows and its population's rows (verify.population).
POPULATION_KINDS: dict[str, tuple[str, ...]] = {
    "delta-presence": ("delta_min", "delta_max"),
}


class ModelDeclaration(Protocol):
    """What the re-check reads of a model: its kind, then the parameters of that kind by name."""

    @property
    def name(self) -> str:
        """The kind, e.g. ``"entropy-l-diversity"`` (the keys of :data:`KINDS`)."""
        ...


Judge = Callable[[Counts], bool]
"""Whether one class's counts of the attribute satisfy a model."""


@dataclass(frozen=True)
class SizeRule:
    """k-anonymity, judged on class sizes (:func:`~kanonym.verify.definitions.k_anonymous`).

    Attributes:
        k: the least class size.
    """

    k: int

    @property
    def shown(self) -> str:
        """The parameter for messages: ``(k=5)``."""
        return f"(k={self.k})"


@dataclass(frozen=True)
class SensitiveRule:
    """A model of one sensitive attribute, its parameters read.

    Attributes:
        kind: the model's kind, a key of :data:`KINDS`.
        attribute: the sensitive attribute.
        shown: its parameters for messages, e.g. ``(attribute 'disease', l=2)``.
        prepare: given P, the input's counts of ``attribute``, the model's
            :data:`Judge`; raises InputError if P cannot be judged (ordered
            distance on a value that is not a number, hierarchical distance on
            a value that is not a leaf).
    """

    kind: str
    attribute: str
    shown: str
    prepare: Callable[[Reference], Judge]


@dataclass(frozen=True)
class PopulationRule:
    """A model judged by each class's rows and its population's rows.

    Attributes:
        kind: the model's kind, a key of :data:`POPULATION_KINDS`.
        shown: its parameters for messages.
        passes: whether a class of ``rows`` rows whose values ``population``
            rows of the population share satisfies it.
    """

    kind: str
    shown: str
    passes: Callable[[int, int], bool]


@dataclass(frozen=True)
class DerivedSizeRule:
    """A least class size derived from the input's rows (k-map with an estimator).

    Attributes:
        kind: the model's kind.
        shown: its parameters for messages, without the closing parenthesis
            (the message adds the least class size).
        least: the least class size for an input of so many rows.
    """

    kind: str
    shown: str
    least: Callable[[int], int]


def read(
    model: ModelDeclaration,
) -> SizeRule | SensitiveRule | PopulationRule | DerivedSizeRule | RiskRule:
    """Read a declaration: its kind, then every parameter of that kind.

    Raises:
        VerificationError: the kind is not in :data:`KINDS` or
            :data:`POPULATION_KINDS`, or a parameter is missing or of the wrong
            type.
    """
    kind = getattr(model, "name", None)
    if isinstance(kind, str) and kind in RISK_KINDS:
        return risk_rule(model)
    if kind == K_MAP:
        return _k_map_rule(model)
    if kind == DIFFERENTIAL_PRIVACY:
        return _differential_privacy_rule(model)
    if isinstance(kind, str) and kind in POPULATION_KINDS:
        return _population_rule(model, kind)
    if not isinstance(kind, str) or kind not in KINDS:
        known = ", ".join([*KINDS, *POPULATION_KINDS, K_MAP, DIFFERENTIAL_PRIVACY, *RISK_KINDS])
        raise VerificationError(
            f"the re-check does not know the privacy model {echo(kind)} "
            f"({type(model).__name__}); known: {known}"
        )
    if kind == "k-anonymity":
        return SizeRule(parameter(model, "k", int))
    attribute = parameter(model, "attribute", str)
    shown = ", ".join(f"{n}={_show(getattr(model, n, None))}" for n in KINDS[kind])
    return SensitiveRule(
        kind, attribute, f"(attribute {echo(attribute)}, {shown})", _prepare(model, kind)
    )


def _population_rule(model: ModelDeclaration, kind: str) -> PopulationRule:
    shown = "(" + ", ".join(f"{n}={getattr(model, n, None)}" for n in POPULATION_KINDS[kind]) + ")"
    low, high = exact(number(model, "delta_min")), exact(number(model, "delta_max"))
    return PopulationRule(
        kind, shown, lambda rows, population: present(rows, population, low, high)
    )


def _differential_privacy_rule(model: ModelDeclaration) -> DerivedSizeRule:
    """SafePub's rule: classes of at least the declared k, a k that Li, Qardaji & Su's (2012)
    bound, recomputed here, finds sufficient for the declared beta, epsilon and delta."""
    kind = DIFFERENTIAL_PRIVACY
    k = parameter(model, "k", int)
    epsilon, delta = number(model, "epsilon"), number(model, "delta")
    beta, anonymization = number(model, "beta"), number(model, "epsilon_anonymization")
    searched = getattr(model, "generalization", None) is None
    search = number(model, "search_budget") if searched else 0.0
    shown = f"(epsilon={epsilon!r}, delta={delta!r}, beta={beta!r}, k={k}"
    if not (0 < delta < 1 and 0 < beta < 1 and anonymization > 0 and search >= 0 and k >= 1):
        raise VerificationError(f"{kind} {shown}): a parameter is out of range")
    if anonymization + search > epsilon * (1 + 1e-12):
        raise VerificationError(
            f"{kind} {shown}): the anonymization's epsilon {anonymization!r} and the "
            f"search's {search!r} exceed epsilon"
        )
    # Li et al.'s theorem holds for beta <= 1 - e^-epsilon (of the anonymization).
    if beta > -math.expm1(-anonymization):
        raise VerificationError(f"{kind} {shown}): beta exceeds 1 - e^-{anonymization!r}")
    reached = li_delta(k - 1, beta, anonymization)
    if not reached < delta:
        raise VerificationError(
            f"{kind} {shown}): classes of {k} rows give delta {reached:.6g}, not below "
            f"{delta!r} (Li, Qardaji & Su 2012)"
        )
    return DerivedSizeRule(kind, shown, lambda _: k)


def _k_map_rule(model: ModelDeclaration) -> PopulationRule | DerivedSizeRule:
    """k-map's rule: population rows >= k, or class sizes >= the derived k."""
    k = parameter(model, "k", int)
    estimator = getattr(model, "estimator", None)
    if estimator is None:
        return PopulationRule(K_MAP, f"(k={k})", lambda _, population: k_mapped(population, k))
    if estimator not in K_MAP_ESTIMATORS:
        raise VerificationError(
            f"{K_MAP}: parameter estimator is {echo(estimator)}, not one of "
            f"{', '.join(K_MAP_ESTIMATORS)} or None"
        )
    significance = number(model, "significance")
    people = parameter(model, "population_size", int)
    if not 0 < significance < 1 or people < 1:
        raise VerificationError(
            f"{K_MAP}: significance {significance!r} or population_size {people} out of range"
        )

    def least(rows: int) -> int:
        if rows > people:
            raise VerificationError(
                f"{K_MAP}: the input's {rows} rows exceed population_size {people}"
            )
        return estimated_k(k, rows, people, significance, str(estimator))

    shown = f"(k={k}, estimator={estimator}, significance={significance}, population_size={people}"
    return DerivedSizeRule(K_MAP, shown, least)


def _show(value: object) -> object:
    return value.name if isinstance(value, Hierarchy) else value


def _prepare(model: ModelDeclaration, kind: str) -> Callable[[Reference], Judge]:
    """The definition that judges ``kind``, its parameters read from ``model`` now."""
    if kind == "distinct-l-diversity":
        size = parameter(model, "l", int)
        return lambda _: lambda q: distinct_values(q) >= size
    if kind == "entropy-l-diversity":
        bound = math.log(number(model, "l"))
        return lambda _: lambda q: at_least(entropy(q), bound)
    if kind == "recursive-c-l-diversity":
        c, size = exact(number(model, "c")), parameter(model, "l", int)
        return lambda _: lambda q: (ratio := recursive_ratio(q, size)) is not None and ratio < c
    if kind == "equal-distance-t-closeness":
        t = exact(number(model, "t"))
        return lambda p: lambda q: at_most(emd_equal(q, p), t)
    if kind == "ordered-distance-t-closeness":
        t = exact(number(model, "t"))
        order = getattr(model, "order", None)
        if order is not None and not isinstance(order, tuple):
            raise VerificationError(f"{kind}: parameter order is {echo(order)}, not a tuple")

        def ordered(p: Reference) -> Judge:
            ranking = Ranking.of(p, numeric_order(list(p.counts)) if order is None else order)
            return lambda q: at_most(emd_ordered(q, ranking), t)

        return ordered
    if kind == "hierarchical-distance-t-closeness":
        t, hierarchy = exact(number(model, "t")), parameter(model, "hierarchy", Hierarchy)

        def hierarchical(p: Reference) -> Judge:
            tree = Tree.of(p, hierarchy)
            return lambda q: at_most(emd_hierarchical(q, tree), t)

        return hierarchical
    if kind == "basic-beta-likeness":
        beta = exact(number(model, "beta"))
        return lambda p: lambda q: at_most(basic_beta(q, p), beta)
    if kind == "enhanced-beta-likeness":
        beta = exact(number(model, "beta"))
        return lambda p: lambda q: at_most(basic_beta(q, p), beta) and not beyond_cap(q, p)
    delta = number(model, "delta")  # delta-disclosure-privacy, the last kind
    return lambda p: lambda q: delta_disclosure(q, p) < delta


def parameter(model: object, name: str, kind: type[T]) -> T:
    """``model``'s parameter ``name``, a ``kind`` (a bool is no number); else VerificationError."""
    value = getattr(model, name, None)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise VerificationError(
            f"model {echo(getattr(model, 'name', model))}: parameter {name} is {echo(value)}, "
            f"not of type {kind.__name__}"
        )
    return value


def number(model: object, name: str) -> float:
    """A real-valued parameter (an int or a float)."""
    value = getattr(model, name, None)
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return parameter(model, name, float)


def _input_rows(source: pl.DataFrame, weight: str | None) -> int:
    """The input's rows: its height, or the sum of its ``weight`` column."""
    if weight is None:
        return source.height
    return int(source.get_column(weight).cast(pl.Int64).sum())


def derives_sizes(models: Sequence[ModelDeclaration]) -> bool:
    """Whether a model's least class size is derived from the input's rows (k-map with
    an estimator): its re-check needs the release's class sizes and the input's rows."""
    return any(
        getattr(m, "name", None) == K_MAP and getattr(m, "estimator", None) is not None
        for m in models
    )


def verify_models(
    released: pl.DataFrame,
    *,
    columns: Sequence[str],
    source: pl.DataFrame,
    models: Sequence[ModelDeclaration],
    weight: str | None = None,
    population: pl.DataFrame | None = None,
) -> None:
    """Raise VerificationError unless every class of ``released`` satisfies every model.

    ``population``: when the input is a sample of a population table, that
    population's classes at the release's levels
    (:func:`kanonym.verify.population.population_classes`), which the models
    of :data:`POPULATION_KINDS` read; without it they fail the check.

    With ``weight``, ``released`` and ``source`` are tables counted by value:
    each row stands for as many rows as its ``weight`` column says (what an
    engine that keeps the rows elsewhere gives, from a ``GROUP BY`` over the
    release and over the input's sensitive columns).

    The classes group ``released`` on ``columns``, the quasi-identifier
    columns. ``source`` is the input table, whose distribution of each sensitive
    attribute is the reference for the models that compare a class with the
    whole table. A model of a kind the re-check does not know, or whose
    parameters it cannot read, fails the check even on an empty release.
    """
    rules = [read(model) for model in models]
    if released.height == 0 or (
        weight is not None and int(released.get_column(weight).cast(pl.Int64).sum()) == 0
    ):
        return
    references: dict[str, Reference] = {}
    for rule in rules:
        if isinstance(rule, RiskRule):
            # Judged on the whole release (verify.risk).
            sizes = class_sizes(released, columns, weight).to_list()
            check_risk(rule, sizes, _input_rows(source, weight))
            continue
        if isinstance(rule, DerivedSizeRule):
            kind, size = rule.kind, _input_rows(source, weight)
            if size < 1:
                raise VerificationError(f"{kind}: the re-check was given no input rows")
            least = rule.least(size)
            sizes = class_sizes(released, columns, weight).to_list()
            failing = sum(1 for s in sizes if not k_anonymous(s, least))
            if failing:
                raise VerificationError(
                    f"release fails {kind} {rule.shown}, least class size {least}) "
                    f"in {failing} of {len(sizes)} classes"
                )
            continue
        if isinstance(rule, PopulationRule):
            if population is None:
                raise VerificationError(f"{rule.kind}: the re-check was given no population")
            kind = rule.kind
            judged = class_population(released, columns, population, weight)
            failing = sum(1 for rows, people in judged if not rule.passes(rows, people))
            classes = len(judged)
        elif isinstance(rule, SizeRule):
            kind, sizes = "k-anonymity", class_sizes(released, columns, weight).to_list()
            failing = sum(1 for size in sizes if not k_anonymous(size, rule.k))
            classes = len(sizes)
        else:
            kind, attribute = rule.kind, rule.attribute
            for frame, what in ((source, "input"), (released, "release")):
                if attribute not in frame.columns:
                    raise VerificationError(f"{kind}: the {what} has no column '{attribute}'")
            if attribute not in references:
                weights = None if weight is None else source.get_column(weight)
                references[attribute] = Reference.of(
                    value_counts(source.get_column(attribute), weights)
                )
            reference = references[attribute]
            try:
                passes = rule.prepare(reference)
            except InputError as error:
                raise VerificationError(f"{kind} on '{attribute}': {error}") from None
            failing = classes = 0
            for counts in class_value_counts(released, columns, attribute, weight):
                if any(v not in reference.counts for v in counts):
                    # The value itself is not shown: it may identify someone.
                    raise VerificationError(
                        f"release column '{attribute}' holds a value the input does not"
                    )
                classes += 1
                failing += not passes(counts)
        if failing:
            raise VerificationError(
                f"release fails {kind} {rule.shown} in {failing} of {classes} classes"
            )
