"""Basic beta-likeness (Cao & Karras 2012)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import at_most, basic_beta


@dataclass(frozen=True, kw_only=True)
class BasicBetaLikeness(SensitiveAttributeModel):
    """No value of ``attribute`` is more than (1 + ``beta``) times as frequent in a class.

    Basic β-likeness, J. Cao, P. Karras, "Publishing Microdata with a Robust
    Privacy Guarantee", PVLDB 5(11), 2012: with P the table's distribution and Q
    a class's, the class satisfies basic β-likeness when
    max {D(p_i, q_i) : p_i < q_i} <= β, where D(p_i, q_i) = (q_i − p_i) / p_i is
    the relative gain in an adversary's belief in value i.

    Stops skewness, rare values above all: a disease of 1 % of the table may not
    reach 1 % × (1 + β) in any class, however small t-closeness would let that
    gain look. Does not bound beliefs that fall (values rarer in the class), nor
    similarity between values.

    Example:
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[3, 1], [1, 3]])  # table: P = (1/2, 1/2); gains 0.5
        >>> stats = ClassStatistics(np.array([4, 4]), sensitive={"disease": counts},
        ...                         overall={"disease": np.array([4, 4])})
        >>> BasicBetaLikeness(attribute="disease", beta=0.5).satisfied_classes(stats).tolist()
        [True, True]
    """

    beta: float

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.beta, f"{self.name}: beta", low=0)

    @property
    def name(self) -> str:
        """``"basic-beta-likeness"``."""
        return "basic-beta-likeness"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (as in ARX's ``BasicBLikeness``): see the comment."""
        # With P = (1/2, 1/2) and beta = 0.5, a class {a, b} (gain 0) merged with
        # a failing class {a, a, a, a} has q_a = 5/6, gain 2/3: failing rows grow.
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: each gain is linear in Q, so a mix of classes gains no more than they.

        ARX's ``BasicBLikeness`` is declared monotone with generalization.
        """
        return True

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        return at_most(basic_beta(self._counts(classes), self._overall(classes)), self.beta)

    def describe(self) -> dict[str, object]:
        """``{"model": "basic-beta-likeness", "attribute": ..., "beta": beta}``."""
        return {"model": self.name, "attribute": self.attribute, "beta": self.beta}
