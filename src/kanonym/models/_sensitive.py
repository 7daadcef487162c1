"""What the models of one sensitive attribute share.

Each such model (l-diversity, t-closeness, beta-likeness, delta-disclosure)
names one attribute, reads its counts from
:class:`~kanonym.models.ClassStatistics` and judges every class by one measure
of :mod:`kanonym.models.distribution`.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from kanonym.errors import InputError
from kanonym.models.base import ClassStatistics

T = TypeVar("T")


def whole_number(value: object, what: str, minimum: int) -> None:
    """Raise InputError unless ``value`` is an int (not a bool) of at least ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise InputError(f"{what} must be a whole number >= {minimum}, got {value!r}")


def real_number(
    value: object, what: str, *, low: float, high: float = math.inf, low_allowed: bool = False
) -> None:
    """Raise InputError unless ``value`` is a finite number from ``low`` to ``high``.

    ``high`` is allowed; ``low`` only with ``low_allowed`` (beta, delta and c must
    be positive, while t may be 0 and entropy's l may be 1).
    """
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not (low <= value if low_allowed else low < value)
        or not value <= high
    ):
        lower = f">= {low:g}" if low_allowed else f"> {low:g}"
        upper = "" if high == math.inf else f" and <= {high:g}"
        raise InputError(f"{what} must be a number {lower}{upper}, got {value!r}")


@dataclass(frozen=True)
class SensitiveAttributeModel(ABC):
    """A privacy model on the values of one sensitive attribute in each class.

    Attributes:
        attribute: the sensitive column.
    """

    attribute: str

    def __post_init__(self) -> None:
        if not isinstance(self.attribute, str) or not self.attribute:
            raise InputError(
                f"{self.name}: attribute must be a column name, got {self.attribute!r}"
            )

    @property
    @abstractmethod
    def name(self) -> str:
        """Short identifier, e.g. ``"distinct-l-diversity"``."""

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        """``(attribute,)``."""
        return (self.attribute,)

    def satisfied_classes(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """For each class, whether it satisfies the model (none given, none judged)."""
        if classes.sizes.size == 0:
            return np.zeros(0, dtype=np.bool_)
        return self._judge(classes)

    @abstractmethod
    def _judge(self, classes: ClassStatistics) -> npt.NDArray[np.bool_]:
        """:meth:`satisfied_classes` for at least one class."""

    def _counts(self, classes: ClassStatistics) -> npt.NDArray[np.int64]:
        return _entry(classes.sensitive, self.attribute, f"{self.name}: class counts")

    def _overall(self, classes: ClassStatistics) -> npt.NDArray[np.int64]:
        return _entry(classes.overall, self.attribute, f"{self.name}: overall counts")

    def _values(self, classes: ClassStatistics) -> tuple[str | None, ...]:
        return _entry(classes.values, self.attribute, f"{self.name}: values")


def _entry(table: Mapping[str, T], attribute: str, what: str) -> T:
    """``table[attribute]``; an InputError naming what is missing otherwise."""
    try:
        return table[attribute]
    except KeyError:
        raise InputError(f"{what} of attribute '{attribute}' were not provided") from None
