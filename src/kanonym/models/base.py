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

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt


@dataclass(frozen=True, eq=False)
class ClassStatistics:
    """What a model may inspect about the classes of one generalization.

    Attributes:
        sizes: number of rows in each equivalence class.
    """

    sizes: npt.NDArray[np.int64]


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
