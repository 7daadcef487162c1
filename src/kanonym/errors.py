"""Errors kanonym raises on purpose.

Every error that is the caller's fault (a missing column, a value absent from a
hierarchy, a malformed file, contradictory options) is an :class:`InputError`:
the CLI prints its one-line message and exits with status 2, writing nothing.
An :class:`VerificationError` means the independent re-check of a finished
release failed; nothing is written then either.
"""

from __future__ import annotations


class KanonymError(Exception):
    """Base class of every error kanonym raises deliberately."""


class InputError(KanonymError, ValueError):
    """Bad input: the message names the file, column and value concerned.

    Example:
        >>> raise InputError("adult.csv: column 'age': value '7x' is not a number")
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: adult.csv: column 'age': value '7x' is not a number
    """


class HierarchyError(InputError):
    """A hierarchy is malformed or does not cover a value of its column."""


class VerificationError(KanonymError):
    """The final table failed the independent re-check; nothing was written."""


class StaleTransformationError(VerificationError):
    """A recorded transformation no longer satisfies the models on a new batch.

    More rows would have to be suppressed than the report's limit allows; the
    batch needs a new search (``kanonym anonymize``). Nothing was written.
    """
