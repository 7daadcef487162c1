"""Transform step: apply a found generalization to the whole table."""

from kanonym.transform.generalize import generalize, kept_rows

__all__ = ["generalize", "kept_rows"]
