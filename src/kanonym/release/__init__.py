"""Release step: the whole pipeline from table to verified, written release."""

from kanonym.release.pipeline import Result, Solution, anonymize, check, run_job

__all__ = ["Result", "Solution", "anonymize", "check", "run_job"]
