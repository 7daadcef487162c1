"""Release step: the whole pipeline from table to verified, written release."""

from typing import TYPE_CHECKING

from kanonym._lazy import lazy_names
from kanonym.release.pipeline import anonymize, check, run_job
from kanonym.result import Result, Solution

if TYPE_CHECKING:
    from kanonym.release.apply import apply_transformation
    from kanonym.release.recorded import Ledger

# Re-application and the ledger load on first use (kanonym._lazy).
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "apply_transformation": "kanonym.release.apply",
        "Ledger": "kanonym.release.recorded",
    },
)

__all__ = [
    "Ledger",
    "Result",
    "Solution",
    "anonymize",
    "apply_transformation",
    "check",
    "run_job",
]
