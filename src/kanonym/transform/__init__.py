"""Transform step: apply a found generalization (and tuple or cell suppression) to the table."""

from kanonym.transform.cells import CellSuppression, blank_cells, suppress_cells
from kanonym.transform.combinations import suppress_rare_combinations
from kanonym.transform.generalize import generalize, kept_rows

__all__ = [
    "CellSuppression",
    "blank_cells",
    "generalize",
    "kept_rows",
    "suppress_cells",
    "suppress_rare_combinations",
]
