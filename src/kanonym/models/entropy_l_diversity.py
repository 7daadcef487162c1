"""Entropy l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import at_least, entropy


@dataclass(frozen=True, kw_only=True)
class EntropyLDiversity(SensitiveAttributeModel):
    """Every class's entropy of ``attribute`` is at least ln ``l``.

    Entropy l-diversity, A. Machanavajjhala, D. Kifer, J. Gehrke,
    M. Venkitasubramaniam, "l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD
    1(1), 2007: a q*-block is entropy l-diverse when
    −Σ_s p(q*, s) log p(q*, s) >= log l, p(q*, s) being the share of value s in
    the block. The logarithm's base cancels; kanonym uses natural logarithms. A
    class of l equally frequent values is exactly at the bound and passes.

    Stops homogeneity and any class dominated by a few values (entropy falls as
    one value takes over), which makes background knowledge harder to use. Does
    not stop skewness against the population (a class may be diverse yet far
    more often ill than the table) nor similarity between values.

    Example:
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[3, 1], [2, 2]])  # classes x values
        >>> stats = ClassStatistics(np.array([4, 4]), sensitive={"disease": counts})
        >>> EntropyLDiversity(attribute="disease", l=2).satisfied_classes(stats).tolist()
        [False, True]
    """

    l: float  # noqa: E741 - the papers' name for it

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.l, f"{self.name}: l", low=1, low_allowed=True)

    @property
    def name(self) -> str:
        """``"entropy-l-diversity"``."""
        return "entropy-l-diversity"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (as in ARX's ``EntropyLDiversity``): see the comment."""
        # A passing class merged with a failing one can fail (a {a, b} class
        # merged with six a's has entropy below ln 2), so the rows in failing
        # classes can grow under generalization.
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: entropy is concave, a merged class's is at least its parts' least.

        Machanavajjhala et al. 2007 prove entropy l-diversity monotone; ARX
        declares it monotone with generalization.
        """
        return True

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        return at_least(entropy(self._counts(classes)), math.log(self.l))

    def describe(self) -> dict[str, object]:
        """``{"model": "entropy-l-diversity", "attribute": ..., "l": l}``."""
        return {"model": self.name, "attribute": self.attribute, "l": self.l}
