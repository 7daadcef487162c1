"""t-closeness with hierarchical distance (Li, Li & Venkatasubramanian 2007)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy
from kanonym.models._sensitive import SensitiveAttributeModel, real_number
from kanonym.models.base import ClassStatistics
from kanonym.models.distribution import ValueTree, at_most, emd_hierarchical, value_tree


@dataclass(frozen=True, kw_only=True)
class HierarchicalDistanceTCloseness(SensitiveAttributeModel):
    """Every class is within hierarchical-distance EMD ``t`` of the table's distribution.

    Definition (N. Li, T. Li, S. Venkatasubramanian, "t-Closeness: Privacy
    Beyond k-Anonymity and l-Diversity", ICDE 2007): the Earth
    Mover's Distance with two values level(v_i, v_j) / H apart, where
    level(v_i, v_j) is the level of their lowest common ancestor in
    ``hierarchy`` (a value generalization hierarchy of the sensitive attribute,
    whose leaves include every value) and H its height; computed bottom-up as in
    the paper (see :func:`~kanonym.models.distribution.emd_hierarchical`).

    Stops homogeneity, skewness and the similarity attack on categorical values
    that the hierarchy groups: a class of stomach diseases is far from a table of
    all diseases. Does not stop an adversary who knows more than the table's
    distribution.

    Example (P spreads over two groups, the class stays in one: distance 1/2):
        >>> import numpy as np
        >>> from kanonym.models import ClassStatistics
        >>> h = Hierarchy("disease", (("flu", "cold", "ulcer", "gastritis"),
        ...                           ("lung", "lung", "stomach", "stomach"), ("*",) * 4))
        >>> stats = ClassStatistics(np.array([2]), sensitive={"disease": np.array([[0, 0, 1, 1]])},
        ...                         overall={"disease": np.array([1, 1, 1, 1])},
        ...                         values={"disease": h.leaves})
        >>> model = HierarchicalDistanceTCloseness(attribute="disease", t=0.4, hierarchy=h)
        >>> model.satisfied_classes(stats).tolist()
        [False]
    """

    t: float
    hierarchy: Hierarchy

    def __post_init__(self) -> None:
        super().__post_init__()
        real_number(self.t, f"{self.name}: t", low=0, high=1, low_allowed=True)
        if not isinstance(self.hierarchy, Hierarchy) or self.hierarchy.height < 1:
            raise InputError(
                f"{self.name} on '{self.attribute}': "
                "needs a Hierarchy with a level above its values"
            )

    @property
    def name(self) -> str:
        """``"hierarchical-distance-t-closeness"``."""
        return "hierarchical-distance-t-closeness"

    @property
    def monotone_with_suppression(self) -> bool:
        """False (ARX's ``TCloseness`` declares every distance so): see the comment."""
        # Under a root of height 1 the distance is the equal one, and there a
        # class at distance 0 merged with a failing class can fail (see
        # EqualDistanceTCloseness): failing rows grow.
        return False

    @property
    def monotone_without_suppression(self) -> bool:
        """True: the EMD is convex in Q (Li et al. 2007); ARX agrees."""
        return True

    def value_tree(self, values: Sequence[str | None]) -> ValueTree:
        """The hierarchy above ``values``, the value of each code.

        Raises:
            InputError: a value is not a leaf of the hierarchy.
        """
        try:
            return value_tree(self.hierarchy, values)
        except InputError as error:
            raise InputError(f"{self.name} on '{self.attribute}': {error}") from None

    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        tree = self.value_tree(self._values(classes))
        distance = emd_hierarchical(self._counts(classes), self._overall(classes), tree)
        return at_most(distance, self.t)

    def describe(self) -> dict[str, object]:
        """``{"model": "hierarchical-distance-t-closeness", "attribute", "t", "hierarchy"}``.

        ``hierarchy`` is the hierarchy's name.
        """
        return {
            "model": self.name,
            "attribute": self.attribute,
            "t": self.t,
            "hierarchy": self.hierarchy.name,
        }
