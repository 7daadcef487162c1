"""t-closeness with ordered distance (Li, Li & Venkatasubramanian 2007)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import at_most, emd_ordered, listed_order, numeric_order


@dataclass(frozen=True, kw_only=True)
class OrderedDistanceTCloseness(SensitiveAttributeModel):
    """Every class is within ordered-distance EMD ``t`` of the table's distribution.

    Definition (N. Li, T. Li, S. Venkatasubramanian, "t-Closeness: Privacy
    Beyond k-Anonymity and l-Diversity", ICDE 2007): the Earth
    Mover's Distance with the i-th and j-th smallest of the attribute's m values
    |i − j| / (m − 1) apart, which is (1 / (m − 1)) Σ_i |r_1 + … + r_i| with
    r_i = p_i − q_i in value order. Without ``order`` the values must all be
    numbers and are ranked numerically; ``order`` ranks other ordered values
    (``("low", "medium", "high")``). m counts the values present in the table.

    Stops homogeneity, skewness and the similarity attack on ordered values: a
    class of neighbouring salaries is far from a table spread over all of them.
    Does not stop an adversary who knows more than the table's distribution.

    Example (the paper's salaries 3k…11k; a class of 3k, 4k, 5k is 0.375 away):
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> values = tuple(f"{s}000" for s in range(3, 12))
        >>> stats = ClassStatistics(np.array([3]),
        ...                         sensitive={"salary": np.array([[1] * 3 + [0] * 6])},
        ...                         overall={"salary": np.ones(9, dtype=np.int64)},
        ...                         values={"salary": values})
        >>> OrderedDistanceTCloseness(attribute="salary", t=0.375).satisfied_classes(stats).tolist()
        [True]
    """

    t: float
    order: tuple[str | None, ...] | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.t, f"{self.name}: t", low=0, high=1, low_allowed=True)
        if self.order is not None and (
            not isinstance(self.order, tuple) or len(set(self.order)) != len(self.order)
        ):
            raise InputError(f"{self.name}: order must be a tuple of distinct values")

    @property
    def name(self) -> str:
        """``"ordered-distance-t-closeness"``."""
        return "ordered-distance-t-closeness"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (ARX's ``TCloseness`` declares every distance so): see the comment."""
        # With values 1 < 2 and P = (1/2, 1/2), a class {1, 2} (distance 0)
        # merged with a failing class {1, 1, 1, 1} has distance 1/3 > t = 0.2.
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: the EMD is convex in Q (Li et al. 2007); ARX agrees."""
        return True

    def value_order(self, values: Sequence[str | None]) -> npt.NDArray[np.int64]:
        """The value codes from smallest to largest value.

        Raises:
            InputError: without ``order``, a value is missing or not a number;
                with it, a value is not listed.
        """
        try:
            if self.order is None:
                return numeric_order(values)
            return listed_order(values, self.order)
        except InputError as error:
            raise InputError(f"{self.name} on '{self.attribute}': {error}") from None

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        order = self.value_order(self._values(classes))
        distance = emd_ordered(self._counts(classes), self._overall(classes), order)
        return at_most(distance, self.t)

    def describe(self) -> dict[str, object]:
        """``{"model": "ordered-distance-t-closeness", "attribute": ..., "t": t, "order": ...}``.

        ``order`` is ``"numeric"`` or the list of values.
        """
        order: object = "numeric" if self.order is None else list(self.order)
        return {"model": self.name, "attribute": self.attribute, "t": self.t, "order": order}
