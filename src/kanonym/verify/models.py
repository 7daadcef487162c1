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

Example:
    >>> import polars as pl
    >>> from dataclasses import dataclass
    >>> @dataclass
    ... class Declared:
    ...     name: str
    ...     attribute: str
    ...     l: int
    >>> table = pl.DataFrame({"zip": ["0213*"] * 2, "disease": ["flu", "flu"]})
    >>> verify_models(table, quasi_identifiers=["zip"], source=table,
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
    exact,
    k_anonymous,
    numeric_order,
    recursive_ratio,
)

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


class ModelDeclaration(Protocol):
    """What the re-check reads of a model: its kind, then the parameters of that kind by name."""

    @property
    def name(self) -> str:
        """The kind, e.g. ``"entropy-l-diversity"`` (the keys of :data:`KINDS`)."""
        ...


Judge = Callable[[Counts], bool]


@dataclass(frozen=True)
class Rule:
    """One declared model, as the re-check reads it.

    Attributes:
        model: the declaration.
        kind: its kind.
        attribute: the sensitive attribute (``None`` for k-anonymity).
    """

    model: ModelDeclaration
    kind: str
    attribute: str | None

    @classmethod
    def of(cls, model: ModelDeclaration) -> Rule:
        """Read a declaration's kind; VerificationError for a kind not in :data:`KINDS`."""
        kind = getattr(model, "name", None)
        if not isinstance(kind, str) or kind not in KINDS:
            raise VerificationError(
                f"the re-check does not know the privacy model {echo(kind)} "
                f"({type(model).__name__}); known: {', '.join(KINDS)}"
            )
        attribute = None if kind == "k-anonymity" else parameter(model, "attribute", str)
        return cls(model, kind, attribute)

    def describe(self) -> str:
        """The declared parameters, e.g. ``(attribute 'disease', l=2)``."""
        shown = [] if self.attribute is None else [f"attribute {echo(self.attribute)}"]
        for name in KINDS[self.kind]:
            value = getattr(self.model, name)
            shown.append(f"{name}={value.name if isinstance(value, Hierarchy) else value}")
        return f"({', '.join(shown)})"

    def judge(self, reference: Reference) -> Judge:
        """Whether a class's counts satisfy the model, P being ``reference``.

        Raises:
            InputError: the reference cannot be judged (ordered distance on a
                value that is not a number, hierarchical distance on a value
                that is not a leaf).
        """
        model, kind = self.model, self.kind
        if kind == "distinct-l-diversity":
            size = parameter(model, "l", int)
            return lambda q: distinct_values(q) >= size
        if kind == "entropy-l-diversity":
            bound = math.log(number(model, "l"))
            return lambda q: at_least(entropy(q), bound)
        if kind == "recursive-c-l-diversity":
            c, size = exact(number(model, "c")), parameter(model, "l", int)
            return lambda q: (ratio := recursive_ratio(q, size)) is not None and ratio < c
        if kind == "equal-distance-t-closeness":
            t = exact(number(model, "t"))
            return lambda q: at_most(emd_equal(q, reference), t)
        if kind == "ordered-distance-t-closeness":
            t = exact(number(model, "t"))
            order = getattr(model, "order", None)
            if order is not None and not isinstance(order, tuple):
                raise VerificationError(f"{kind}: order {echo(order)} is not a tuple")
            values = list(reference.counts)
            ranking = Ranking.of(reference, numeric_order(values) if order is None else order)
            return lambda q: at_most(emd_ordered(q, ranking), t)
        if kind == "hierarchical-distance-t-closeness":
            t = exact(number(model, "t"))
            tree = Tree.of(reference, parameter(model, "hierarchy", Hierarchy))
            return lambda q: at_most(emd_hierarchical(q, tree), t)
        if kind == "basic-beta-likeness":
            beta = exact(number(model, "beta"))
            return lambda q: at_most(basic_beta(q, reference), beta)
        if kind == "enhanced-beta-likeness":
            beta = exact(number(model, "beta"))
            return lambda q: (
                at_most(basic_beta(q, reference), beta) and not beyond_cap(q, reference)
            )
        delta = number(model, "delta")  # delta-disclosure-privacy, the last kind
        return lambda q: delta_disclosure(q, reference) < delta


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


def verify_models(
    released: pl.DataFrame,
    *,
    quasi_identifiers: Sequence[str],
    source: pl.DataFrame,
    models: Sequence[ModelDeclaration],
) -> None:
    """Raise VerificationError unless every class of ``released`` satisfies every model.

    ``source`` is the input table, whose distribution of each sensitive
    attribute is the reference for the models that compare a class with the
    whole table. A model of a kind the re-check does not know, or whose
    parameters it cannot read, fails the check even on an empty release.
    """
    rules = [Rule.of(model) for model in models]
    if released.height == 0:
        return
    references: dict[str, Reference] = {}
    for rule in rules:
        if rule.attribute is None:
            k = parameter(rule.model, "k", int)
            sizes = class_sizes(released, quasi_identifiers).to_list()
            failing = sum(1 for size in sizes if not k_anonymous(size, k))
            classes = len(sizes)
        else:
            attribute = rule.attribute
            for frame, what in ((source, "input"), (released, "release")):
                if attribute not in frame.columns:
                    raise VerificationError(f"{rule.kind}: the {what} has no column '{attribute}'")
            if attribute not in references:
                references[attribute] = Reference.of(value_counts(source.get_column(attribute)))
            reference = references[attribute]
            try:
                passes = rule.judge(reference)
            except InputError as error:
                raise VerificationError(f"{rule.kind} on '{attribute}': {error}") from None
            failing = classes = 0
            for counts in class_value_counts(released, quasi_identifiers, attribute):
                stray = [v for v in counts if v not in reference.counts]
                if stray:
                    # The value itself is not shown: it may identify someone.
                    raise VerificationError(
                        f"release column '{attribute}' holds a value the input does not"
                    )
                classes += 1
                failing += not passes(counts)
        if failing:
            raise VerificationError(
                f"release fails {rule.kind} {rule.describe()} in {failing} of {classes} classes"
            )
