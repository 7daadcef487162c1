"""k-anonymity (Sweeney 2002, Definition 3).

A table RT with quasi-identifier QI satisfies k-anonymity if and only if each
sequence of values in RT[QI] appears with at least k occurrences in RT[QI]
(L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5),
2002). Class by class: every equivalence class has at least k rows.

It is monotone under generalization with and without tuple suppression:
generalizing merges classes, so a class of at least k rows stays one, and the
rows in classes smaller than k can only become fewer (Samarati 2001).

Example:
    >>> import numpy as np
    >>> from kanonym.models import ClassStatistics
    >>> KAnonymity(k=2).satisfied_classes(ClassStatistics(np.array([3, 1, 2]))).tolist()
    [True, False, True]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models.base import ClassStatistics, PrivacyModel


@dataclass(frozen=True, kw_only=True)
class KAnonymity:
    """Every equivalence class holds at least ``k`` rows."""

    k: int

    def __post_init__(self) -> None:
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InputError(f"k must be a whole number >= 1, got {self.k!r}")

    @property
    def name(self) -> str:
        """``"k-anonymity"``."""
        return "k-anonymity"

    @property
    def monotone_with_suppression(self) -> bool:
        """True: rows below k only decrease as classes merge."""
        return True

    @property
    def monotone_without_suppression(self) -> bool:
        """True: merged classes keep at least k rows."""
        return True

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """None: only class sizes matter."""
        return ()

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """Classes with at least k rows."""
        return np.asarray(classes.sizes >= self.k)

    def describe(self) -> dict[str, object]:
        """``{"model": "k-anonymity", "k": k}``."""
        return {"model": self.name, "k": self.k}


def required_k(models: Iterable[PrivacyModel]) -> int:
    """The largest k any :class:`KAnonymity` among ``models`` asks for (1 without one).

    Example:
        >>> required_k([KAnonymity(k=2), KAnonymity(k=5)])
        5
    """
    return max((m.k for m in models if isinstance(m, KAnonymity)), default=1)
