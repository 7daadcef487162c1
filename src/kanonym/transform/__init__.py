"""Transform step: apply a found generalization (with tuple or cell suppression) or local
recoding to the table. The decisions (which node, which cells) are made before
(:mod:`kanonym.search`, :mod:`kanonym.evaluation`); this package only writes them."""

from kanonym.transform.cells import blank_cells, blank_release
from kanonym.transform.generalize import generalize
from kanonym.transform.recode import recode

__all__ = [
    "blank_cells",
    "blank_release",
    "generalize",
    "recode",
]
