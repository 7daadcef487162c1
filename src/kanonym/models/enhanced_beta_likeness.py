"""Enhanced beta-likeness (Cao & Karras 2012)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import at_most, enhanced_beta


@dataclass(frozen=True, kw_only=True)
class EnhancedBetaLikeness(SensitiveAttributeModel):
    """Basic β-likeness with frequent values held to a gain of −ln p instead of β.

    Enhanced β-likeness, J. Cao, P. Karras, "Publishing Microdata with a Robust
    Privacy Guarantee", PVLDB 5(11), 2012: a class satisfies enhanced
    β-likeness when every value with q_i > p_i has
    D(p_i, q_i) = (q_i − p_i) / p_i <= min(β, −ln p_i). For a frequent value the
    cap −ln p_i < β applies, so its share can never reach certainty.

    Stops skewness for rare and frequent values alike. Does not bound beliefs
    that fall, nor similarity between values.

    Example (P = (7/8, 1/8): the first class's gain for b is 1 <= min(2, ln 8);
    the second's for a is 1/7, above the cap −ln(7/8) ≈ 0.134):
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[3, 1], [4, 0]])
        >>> stats = ClassStatistics(np.array([4, 4]), sensitive={"disease": counts},
        ...                         overall={"disease": np.array([7, 1])})
        >>> EnhancedBetaLikeness(attribute="disease", beta=2).satisfied_classes(stats).tolist()
        [True, False]
    """

    beta: float

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.beta, f"{self.name}: beta", low=0)

    @property
    def name(self) -> str:
        """``"enhanced-beta-likeness"``."""
        return "enhanced-beta-likeness"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (as in ARX's ``EnhancedBLikeness``): see the comment."""
        # A passing class merged with a failing one can fail, as for basic
        # beta-likeness (P = (1/2, 1/2), beta = 0.5: {a, b} with {a, a, a, a}).
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: each condition is linear in Q and holds for a mix of classes that meet it.

        ARX's ``EnhancedBLikeness`` is declared monotone with generalization.
        """
        return True

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        return at_most(enhanced_beta(self._counts(classes), self._overall(classes)), self.beta)

    def describe(self) -> dict[str, object]:
        """``{"model": "enhanced-beta-likeness", "attribute": ..., "beta": beta}``."""
        return {"model": self.name, "attribute": self.attribute, "beta": self.beta}
