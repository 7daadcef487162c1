"""Privacy models, one class each, behind the :class:`PrivacyModel` protocol."""

from kanonym.models.base import ClassStatistics, PrivacyModel
from kanonym.models.k_anonymity import KAnonymity

__all__ = ["ClassStatistics", "KAnonymity", "PrivacyModel"]
