"""Distinct l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, whole_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import distinct_values


@dataclass(frozen=True, kw_only=True)
class DistinctLDiversity(SensitiveAttributeModel):
    """Every equivalence class holds at least ``l`` different values of ``attribute``.

    Definition: the simplest instance of l-diversity, "each q*-block contains at
    least l well-represented values", counting a value as well represented when
    it occurs at all (A. Machanavajjhala, D. Kifer, J. Gehrke,
    M. Venkitasubramaniam, "l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD
    1(1), 2007; ICDE 2006). The missing value counts as a value.

    Stops the homogeneity attack: a class whose rows all share one value
    (Samarati 2008: Carol's class, all ``short breath``) fails for l >= 2. Does not
    stop background knowledge that rules out the other values (Samarati 2008: Hellen's
    class is distinct 2-diverse, yet knowing she runs excludes ``short breath``),
    nor skewness (one rare value beside many copies of another) nor similarity
    (different but related values, all stomach diseases).

    Example:
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[2, 0], [1, 1]])  # classes x values
        >>> stats = ClassStatistics(np.array([2, 2]), sensitive={"disease": counts})
        >>> DistinctLDiversity(attribute="disease", l=2).satisfied_classes(stats).tolist()
        [False, True]
    """

    l: int  # noqa: E741 - the papers' name for it

    def __post_init__(self) -> None:
        super().__post_init__()
        whole_number(self.l, f"{self.name}: l", 1)

    @property
    def name(self) -> str:
        """``"distinct-l-diversity"``."""
        return "distinct-l-diversity"

    @property
    def monotone_with_suppression(self) -> bool:
        """True (ARX's ``DistinctLDiversity`` declares it so)."""
        # Merging classes unites their value sets, so a merged class holding a
        # passing class passes: rows in failing classes can only become fewer.
        return True

    @property
    def monotone_without_suppression(self) -> bool:
        """True: a union of classes with l values each has at least l values."""
        return True

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        return np.asarray(distinct_values(self._counts(classes)) >= self.l)

    def describe(self) -> dict[str, object]:
        """``{"model": "distinct-l-diversity", "attribute": ..., "l": l}``."""
        return {"model": self.name, "attribute": self.attribute, "l": self.l}
