"""Release step: the whole pipeline from table to verified, written release."""

from kanonym.release.apply import apply_transformation
from kanonym.release.pipeline import Result, Solution, anonymize, check, run_job

__all__ = [
    "Result",
    "Solution",
    "anonymize",
    "apply_transformation",
    "check",
    "run_job",
]
