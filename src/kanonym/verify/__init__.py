"""Verify step: an independent re-check of the final table.

This package shares no code with ``search``, ``lattice``, ``encode`` or
``models``: it reads the released table as a plain Polars frame and counts, so
a bug in the search cannot hide itself from the check that guards every write.
The privacy models are re-checked by definitions of its own, written from the
papers (:mod:`kanonym.verify.definitions`), so a defect in a model's measure
cannot pass both; the models are read as declarations (their kind and public
parameters, :class:`~kanonym.verify.models.ModelDeclaration`). Nor with
``recoding``: local recodings are checked from their printed labels.
Every release is compared with its input row by row (:mod:`kanonym.verify.rows`,
:mod:`kanonym.verify.local`), not only regrouped.
"""

from kanonym.verify.cells import CellCounts, verify_cells
from kanonym.verify.check import ClassSizeSummary, measure, verify_release
from kanonym.verify.local import verify_local_recoding
from kanonym.verify.models import ModelDeclaration, verify_models
from kanonym.verify.rows import verify_rows
from kanonym.verify.sensitive import (
    CheckSummary,
    SensitiveSummary,
    measure_sensitive,
    measure_table,
)

__all__ = [
    "CellCounts",
    "CheckSummary",
    "ClassSizeSummary",
    "ModelDeclaration",
    "SensitiveSummary",
    "measure",
    "measure_sensitive",
    "measure_table",
    "verify_cells",
    "verify_local_recoding",
    "verify_models",
    "verify_release",
    "verify_rows",
]
