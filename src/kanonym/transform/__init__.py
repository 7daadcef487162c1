"""Transform step: apply a found generalization or local recoding to the whole table."""

from kanonym.transform.generalize import generalize, kept_rows
from kanonym.transform.recode import recode

__all__ = ["generalize", "kept_rows", "recode"]
