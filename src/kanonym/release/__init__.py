"""Release step: the whole pipeline from table to verified, written release."""

from kanonym.release.apply import AppliedResult, StaleTransformationError, apply_transformation
from kanonym.release.pipeline import Result, Solution, anonymize, check, run_job

__all__ = [
    "AppliedResult",
    "Result",
    "Solution",
    "StaleTransformationError",
    "anonymize",
    "apply_transformation",
    "check",
    "run_job",
]
