"""The protocol every privacy model implements.

A privacy model here is a predicate on the equivalence classes of a
generalized table (the groups of rows sharing all quasi-identifier values).
Models that judge each class on its own, such as k-anonymity, make tuple
suppression simple: rows of failing classes are removed, and the rest of the
table still satisfies the model.

Each model declares whether it is *monotone* under generalization, with and
without suppression: whether a node that satisfies it guarantees that every
generalization of that node does. Searches that prune by monotonicity accept
only models that declare it for the suppression setting in use.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError


@dataclass(frozen=True, eq=False)
class ClassStatistics:
    """What a model may inspect about the classes of one generalization.

    Only ``sizes`` is always given; the other fields carry the sensitive
    attributes that the models in use name in ``sensitive_attributes``. A
    sensitive attribute's distinct values are numbered 0 to m - 1 (its *value
    codes*), the same numbering in all three mappings.

    Attributes:
        sizes: number of rows in each equivalence class.
        sensitive: per sensitive attribute, an integer array of shape
            (classes, m): how many rows of each class hold each value code.
        overall: per sensitive attribute, an integer array of length m: how many
            rows of the whole table hold each value code. t-closeness,
            beta-likeness and delta-disclosure privacy compare each class's
            distribution with this one.
        values: per sensitive attribute, the value of each code (``None`` is the
            missing value); read by the models whose ground distance depends on
            the values themselves (ordered and hierarchical t-closeness).
        population: when the table is a sample of a given population table,
            the population's rows in each class (at least its size); read by
            delta-presence and k-map. None otherwise.

    Example:
        >>> import numpy as np
        >>> stats = ClassStatistics(
        ...     np.array([2, 1]),
        ...     sensitive={"disease": np.array([[2, 0], [0, 1]])},
        ...     overall={"disease": np.array([2, 1])},
        ...     values={"disease": ("flu", "ulcer")},
        ... )
        >>> stats.sensitive["disease"].shape
        (2, 2)
    """

    sizes: npt.NDArray[np.int64]
    sensitive: Mapping[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    overall: Mapping[str, npt.NDArray[np.int64]] = field(default_factory=dict)
    values: Mapping[str, tuple[str | None, ...]] = field(default_factory=dict)
    population: npt.NDArray[np.int64] | None = None


@runtime_checkable
class PrivacyModel(Protocol):
    """A privacy model evaluated class by class."""

    @property
    def name(self) -> str:
        """Short identifier, e.g. ``"k-anonymity"``."""
        ...

    @property
    def monotone_with_suppression(self) -> bool:
        """Monotone under generalization when failing classes are suppressed."""
        ...

    @property
    def monotone_without_suppression(self) -> bool:
        """Monotone under generalization when nothing may be suppressed."""
        ...

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """Columns whose values the model reads, beyond class sizes."""
        ...

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """For each class, whether it satisfies the model."""
        ...

    def describe(self) -> dict[str, object]:
        """Parameters for the report, e.g. ``{"model": "k-anonymity", "k": 5}``."""
        ...


@runtime_checkable
class PopulationModel(Protocol):
    """A model that may judge a class by the population the table was drawn from."""

    @property
    def needs_population(self) -> bool:
        """Whether it reads :attr:`ClassStatistics.population` (a population table)."""
        ...


def needs_population(model: object) -> bool:
    """Whether ``model`` reads the population table (delta-presence, k-map given one).

    Example:
        >>> needs_population(object())
        False
    """
    return isinstance(model, PopulationModel) and model.needs_population


def admits_absent_classes(model: object) -> bool:
    """Whether a class of the population that holds no sample row satisfies ``model``.

    Such a class is not released, so most models never see it; but its people
    are in the sample with probability 0, which delta-presence with delta_min
    > 0 forbids (Nergiz et al. 2007 bound the probability for every member of
    the population). A model says so with an ``admits_absent_classes``
    property; without one, it admits them.

    Example:
        >>> admits_absent_classes(object())
        True
    """
    return bool(getattr(model, "admits_absent_classes", True))


def population_of(model: object, classes: ClassStatistics) -> npt.NDArray[np.int64]:
    """``classes.population``, or InputError naming ``model`` when it is absent."""
    if classes.population is None:
        name = getattr(model, "name", type(model).__name__)
        raise InputError(
            f"{name} judges each class by the population: pass the population table (`population`)"
        )
    return classes.population


@runtime_checkable
class SampleModel(Protocol):
    """A model judged on the whole release, not class by class (ARX's sample-based criteria).

    Risk thresholds such as the average re-identification risk or sample and
    population uniqueness (El Emam 2013, "Guide to the De-Identification of
    Personal Health Information") are properties of the release's class sizes
    as a whole. As in ARX, such a model is a :class:`PrivacyModel` whose
    ``satisfied_classes`` passes every class, plus a rule for *sample-based
    suppression*: after the class-based models' failing classes are
    suppressed, the evaluator hands it the sizes of the kept classes,
    ascending, and suppresses as many of the smallest as it says (ties broken
    as ARX does: by the metric's per-class loss when it has one, then by first
    appearance in the table).
    """

    def classes_to_suppress(self, sizes: npt.NDArray[np.int64], *, rows: int, budget: int) -> int:
        """How many of the smallest kept classes (``sizes``, ascending) to suppress too.

        ``rows`` is the input table's row count (a sampling fraction's base),
        ``budget`` the rows that may still be suppressed: a search may stop
        early once its candidate suppresses more (the node then fails).
        """
        ...

    def measure(self, sizes: npt.NDArray[np.int64], *, rows: int) -> float | None:
        """The model's measure of a release whose classes have ``sizes`` (None: undefined)."""
        ...


def is_sample_model(model: object) -> bool:
    """Whether ``model`` is judged on the whole release (a :class:`SampleModel`).

    Example:
        >>> is_sample_model(object())
        False
    """
    return isinstance(model, SampleModel)
