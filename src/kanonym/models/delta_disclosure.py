"""Delta-disclosure privacy (Brickell & Shmatikov 2008)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import delta_disclosure


@dataclass(frozen=True, kw_only=True)
class DeltaDisclosurePrivacy(SensitiveAttributeModel):
    """No value's share in a class differs from its share in the table by a factor e^δ.

    Definition (J. Brickell, V. Shmatikov, "The Cost of Privacy: Destruction of
    Data-Mining Utility in Anonymized Data Publishing", KDD 2008): a class is
    δ-disclosure private when |ln(q_s / p_s)| < δ for every sensitive value s, p
    and q being the value's shares in the table and in the class. Only values
    present in the class are checked, as in ARX's ``DDisclosurePrivacy`` and
    pycanon (ln 0 would fail every class lacking some value); the logarithm is
    natural (ARX uses base 2, so its δ is this one divided by ln 2).

    Stops skewness in both directions for the values a class holds: beliefs may
    neither rise nor fall by more than a factor e^δ. Does not bound what the
    absence of a value from a class tells, nor similarity between values.

    Example (P = (1/2, 1/2); the first class has q_b = 1/4 and |ln(1/2)| ≈ 0.693):
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> counts = np.array([[3, 1], [1, 3], [2, 2]])
        >>> stats = ClassStatistics(np.array([4, 4, 4]), sensitive={"disease": counts},
        ...                         overall={"disease": np.array([6, 6])})
        >>> DeltaDisclosurePrivacy(attribute="disease", delta=0.5).satisfied_classes(stats).tolist()
        [False, False, True]
    """

    delta: float

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.delta, f"{self.name}: delta", low=0)

    @property
    def name(self) -> str:
        """``"delta-disclosure-privacy"``."""
        return "delta-disclosure-privacy"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (ARX's ``DDisclosurePrivacy`` declares it non-monotone either way)."""
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """False: merging a class into one that lacks a value can dilute that value.

        With p_x = 0.1, a class of 100 rows holding 11 x's (|ln 1.1| = 0.095) and
        a class of 100 rows without x (|ln(1 / 0.9)| = 0.105) both pass δ = 0.2,
        but together q_x = 0.055 and |ln 0.55| = 0.598 fails. ARX agrees.
        """
        return False

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        disclosure = delta_disclosure(self._counts(classes), self._overall(classes))
        return np.asarray(disclosure < self.delta)

    def describe(self) -> dict[str, object]:
        """``{"model": "delta-disclosure-privacy", "attribute": ..., "delta": delta}``."""
        return {"model": self.name, "attribute": self.attribute, "delta": self.delta}
