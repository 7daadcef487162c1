"""Privacy models, one class each, behind the :class:`PrivacyModel` protocol.

k-anonymity judges class sizes; the other models judge the distribution of one
sensitive attribute in each class (:mod:`kanonym.models.distribution` holds the
measures they threshold). The risk thresholds (average re-identification risk,
sample and population uniqueness) judge the whole release and suppress its
smallest classes as ARX does (:class:`kanonym.models.base.SampleModel`). The
API takes the model objects; the command line
and job files name them by one text grammar, read by :func:`parse_model` and
written back by :func:`model_spec`.
"""

from kanonym.models.average_risk import AverageReidentificationRisk
from kanonym.models.base import (
    ClassStatistics,
    PopulationModel,
    PrivacyModel,
    admits_absent_classes,
    needs_population,
)
from kanonym.models.basic_beta_likeness import BasicBetaLikeness
from kanonym.models.delta_disclosure import DeltaDisclosurePrivacy
from kanonym.models.delta_presence import DeltaPresence
from kanonym.models.differential_privacy import DifferentialPrivacy
from kanonym.models.distinct_l_diversity import DistinctLDiversity
from kanonym.models.enhanced_beta_likeness import EnhancedBetaLikeness
from kanonym.models.entropy_l_diversity import EntropyLDiversity
from kanonym.models.equal_t_closeness import EqualDistanceTCloseness
from kanonym.models.hierarchical_t_closeness import HierarchicalDistanceTCloseness
from kanonym.models.k_anonymity import KAnonymity, required_k
from kanonym.models.k_map import KMap
from kanonym.models.ordered_t_closeness import OrderedDistanceTCloseness
from kanonym.models.population_uniqueness import PopulationUniqueness
from kanonym.models.recursive_l_diversity import RecursiveCLDiversity
from kanonym.models.sample_uniqueness import SampleUniqueness
from kanonym.models.spec import model_spec, parse_model

__all__ = [
    "AverageReidentificationRisk",
    "BasicBetaLikeness",
    "ClassStatistics",
    "DeltaDisclosurePrivacy",
    "DeltaPresence",
    "DifferentialPrivacy",
    "DistinctLDiversity",
    "EnhancedBetaLikeness",
    "EntropyLDiversity",
    "EqualDistanceTCloseness",
    "HierarchicalDistanceTCloseness",
    "KAnonymity",
    "KMap",
    "OrderedDistanceTCloseness",
    "PopulationModel",
    "PopulationUniqueness",
    "PrivacyModel",
    "RecursiveCLDiversity",
    "SampleUniqueness",
    "admits_absent_classes",
    "model_spec",
    "needs_population",
    "parse_model",
    "required_k",
]
