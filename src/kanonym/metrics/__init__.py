"""Information-loss and utility measures of a generalized table."""

from kanonym.metrics.measures import (
    average_class_size,
    completeness,
    discernibility,
    precision,
    precision_by_attribute,
    solution_metrics,
)

__all__ = [
    "average_class_size",
    "completeness",
    "discernibility",
    "precision",
    "precision_by_attribute",
    "solution_metrics",
]
