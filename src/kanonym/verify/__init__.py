"""Verify step: an independent re-check of the final table.

This package shares no code with ``search``, ``lattice`` or ``encode``: it
reads the released table as a plain Polars frame and counts, so a bug in the
search cannot hide itself from the check that guards every write.
"""

from kanonym.verify.check import ClassSizeSummary, measure, verify_release

__all__ = ["ClassSizeSummary", "measure", "verify_release"]
