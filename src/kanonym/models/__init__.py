"""Privacy models, one class each, behind the :class:`PrivacyModel` protocol.

k-anonymity judges class sizes; the other models judge the distribution of one
sensitive attribute in each class (:mod:`kanonym.models.distribution` holds the
measures they threshold). The API takes the model objects; the command line
and job files name them by one text grammar, read by :func:`parse_model` and
written back by :func:`model_spec`.
"""

from kanonym.models.base import ClassStatistics, PrivacyModel
from kanonym.models.basic_beta_likeness import BasicBetaLikeness
from kanonym.models.delta_disclosure import DeltaDisclosurePrivacy
from kanonym.models.distinct_l_diversity import DistinctLDiversity
from kanonym.models.enhanced_beta_likeness import EnhancedBetaLikeness
from kanonym.models.entropy_l_diversity import EntropyLDiversity
from kanonym.models.equal_t_closeness import EqualDistanceTCloseness
from kanonym.models.hierarchical_t_closeness import HierarchicalDistanceTCloseness
from kanonym.models.k_anonymity import KAnonymity, required_k
from kanonym.models.ordered_t_closeness import OrderedDistanceTCloseness
from kanonym.models.recursive_l_diversity import RecursiveCLDiversity
from kanonym.models.spec import model_spec, parse_model

__all__ = [
    "BasicBetaLikeness",
    "ClassStatistics",
    "DeltaDisclosurePrivacy",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "HierarchicalDistanceTCloseness",
    "KAnonymity",
    "OrderedDistanceTCloseness",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "model_spec",
    "parse_model",
    "required_k",
]
