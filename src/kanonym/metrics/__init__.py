"""Utility metrics and the measures reported for every solution."""

from kanonym.metrics.base import ClassView, MetricContext, UtilityMetric
from kanonym.metrics.measures import completeness, precision_by_attribute, report_measures
from kanonym.metrics.ranking import SCORE_TOLERANCE, score_tolerance
from kanonym.metrics.utility import (
    ArxLoss,
    AverageClassSize,
    AverageEquivalenceClassSize,
    Discernibility,
    DiscernibilityStar,
    Height,
    Loss,
    NonMonotonicEntropy,
    NonUniformEntropy,
    Precision,
)

METRICS: dict[str, type[UtilityMetric]] = {
    "dm-star": DiscernibilityStar,
    "dm": Discernibility,
    "entropy": NonUniformEntropy,
    "loss": Loss,
    "precision": Precision,
    "aecs": AverageClassSize,
    "height": Height,
    "non-monotonic-entropy": NonMonotonicEntropy,
    "average-class-size": AverageEquivalenceClassSize,
    "arx-loss": ArxLoss,
}
DEFAULT_METRIC = "loss"


def make_metric(name: str, context: MetricContext) -> UtilityMetric:
    """The metric called ``name``, bound to ``context``."""
    return METRICS[name](context)  # type: ignore[call-arg]


__all__ = [
    "DEFAULT_METRIC",
    "METRICS",
    "SCORE_TOLERANCE",
    "ArxLoss",
    "AverageClassSize",
    "AverageEquivalenceClassSize",
    "ClassView",
    "Discernibility",
    "DiscernibilityStar",
    "Height",
    "Loss",
    "MetricContext",
    "NonMonotonicEntropy",
    "NonUniformEntropy",
    "Precision",
    "UtilityMetric",
    "completeness",
    "make_metric",
    "precision_by_attribute",
    "report_measures",
    "score_tolerance",
]
