"""Transform step: apply a found generalization (with tuple or cell suppression) or local
recoding to the table."""

from kanonym.transform.cells import CellSuppression, blank_cells, suppress_cells
from kanonym.transform.combinations import suppress_rare_combinations
from kanonym.transform.generalize import generalize, kept_rows
from kanonym.transform.recode import recode

__all__ = [
    "CellSuppression",
    "blank_cells",
    "generalize",
    "kept_rows",
    "recode",
    "suppress_cells",
    "suppress_rare_combinations",
]
