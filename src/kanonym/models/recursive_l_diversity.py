"""Recursive (c,l)-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, real_number, whole_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import recursive_c


@dataclass(frozen=True, kw_only=True)
class RecursiveCLDiversity(SensitiveAttributeModel):
    """In every class the most frequent value is rarer than ``c`` times the l-th onwards.

    Recursive (c,l)-diversity, A. Machanavajjhala, D. Kifer, J. Gehrke,
    M. Venkitasubramaniam, "l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD
    1(1), 2007: with r_1 >= r_2 >= … >= r_m the counts of a class's values, the
    class is recursive (c,l)-diverse when r_1 < c (r_l + r_(l+1) + … + r_m). A
    class with fewer than l values fails; l = 1 always holds ("1-diversity is
    always satisfied", same paper).

    Stops homogeneity and a dominant value; the paper shows it stays (c,2)-diverse
    after an adversary rules out l − 2 values, which limits background-knowledge
    attacks. Does not stop skewness against the population nor similarity.

    Example:
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[4, 2, 2], [5, 1, 1]])  # 4 < 2 * (2 + 2); 5 >= 2 * (1 + 1)
        >>> stats = ClassStatistics(np.array([8, 7]), sensitive={"disease": counts})
        >>> RecursiveCLDiversity(attribute="disease", c=2, l=2).satisfied_classes(stats).tolist()
        [True, False]
    """

    c: float
    l: int  # noqa: E741 - the papers' name for it

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.c, f"{self.name}: c", low=0)
        whole_number(self.l, f"{self.name}: l", 1)

    @property
    def name(self) -> str:
        """``"recursive-c-l-diversity"``."""
        return "recursive-c-l-diversity"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (as in ARX's ``RecursiveCLDiversity``): see the comment."""
        # A passing class merged with a failing one can fail: (1, 1) passes c=2,
        # l=2, but merged with a class of five copies of the first value gives
        # r = (6, 1) and 6 >= 2 * 1; the failing rows then grow.
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: Machanavajjhala et al. 2007 prove it; ARX agrees."""
        return True

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        return np.asarray(recursive_c(self._counts(classes), self.l) < self.c)

    def describe(self) -> dict[str, object]:
        """``{"model": "recursive-c-l-diversity", "attribute": ..., "c": c, "l": l}``."""
        return {"model": self.name, "attribute": self.attribute, "c": self.c, "l": self.l}
