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
