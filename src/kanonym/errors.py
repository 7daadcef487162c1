"""Errors kanonym raises on purpose, and the exit status the command line gives each.

Every error that is the caller's fault (a missing column, a value absent from a
hierarchy, a malformed file, contradictory options) is an :class:`InputError`.
A valid request that no release can satisfy is a :class:`NoSolutionError`: no
transformation meets the privacy models within the suppression limit, or
(:class:`SearchTimeoutError`) the time limit passed before one was found. A
:class:`VerificationError` means the independent re-check of a finished
release failed. Nothing is written in any of these cases.

Exit status of the ``kanonym`` command (:mod:`kanonym.cli.main`):

===== ================================================================
0     success
1     no safe release possible or verification failed
      (:class:`NoSolutionError`, :class:`SearchTimeoutError`,
      :class:`VerificationError`, :class:`StaleTransformationError`,
      :class:`LedgerPendingError`, :class:`BudgetExceededError`); also
      ``check`` on a table that is not k-anonymous and ``link`` when an
      identity matches 1 to k - 1 released rows
2     bad input (:class:`InputError` and its subclasses): a one-line
      message names the file, column, value or option
130   interrupted (Ctrl-C)
141   the reader of the output went away (``kanonym ... | head``)
===== ================================================================

Messages name Python parameters between backquotes (`` `max_suppression` ``,
`` `algorithm='greedy'` ``); the command line prints its option names instead
(``--max-suppression``, ``--algorithm greedy``), translated in one place
(:mod:`kanonym.cli.flags`).
"""

from __future__ import annotations

ECHO_LIMIT = 60
"""Characters of a value an error message shows at most (:func:`echo`)."""

CLIP_LIMIT = 160
"""Characters of another program's message or a path an error message shows at most."""


def echo(value: object, *, limit: int = ECHO_LIMIT) -> str:
    """A value as an error message shows it: quoted, escaped, at most ``limit`` characters.

    A string is shown in single quotes, anything else as its ``repr``; a
    non-printable character is escaped, so a value holding a line break cannot
    split the one-line message. Beyond ``limit`` characters the value is cut
    and its length given: a message names a value, it never reproduces a
    megabyte of it. Every message that shows a value given by the caller or
    read from data uses this; values of key and identifying columns are never
    shown at all (the message gives the column and a row count instead).

    Example:
        >>> print(echo("02138"), echo(0.5), echo(None), echo("two" + chr(10) + "lines"))
        '02138' 0.5 None 'two\\nlines'
        >>> print(echo("x" * 100_000, limit=5))
        'xxxxx...' (100,000 characters)
    """
    quote = "'" if isinstance(value, str) else ""
    return clip(value if isinstance(value, str) else repr(value), limit=limit, quote=quote)


def clip(text: str, *, limit: int = CLIP_LIMIT, quote: str = "") -> str:
    """``text`` on one line, at most ``limit`` characters, between ``quote`` marks.

    For what a message quotes from elsewhere (a library's error, a path):
    non-printable characters are escaped and a longer text is cut, its length
    given. :func:`echo` shows values with it.

    Example:
        >>> print(clip("no such file" + chr(10) + "(twice)"), clip("y" * 500, limit=3))
        no such file\\n(twice) yyy... (500 characters)
    """
    pieces: list[str] = []
    width = 0
    for char in text:
        piece = char if char.isprintable() else repr(char)[1:-1]
        if width + len(piece) > limit:
            return f"{quote}{''.join(pieces)}...{quote} ({len(text):,} characters)"
        pieces.append(piece)
        width += len(piece)
    return f"{quote}{''.join(pieces)}{quote}"


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


class UnassignedColumnsError(InputError):
    """Columns of the table were given no role, so kanonym will not release them.

    Every column must be named as a quasi-identifier, identifying (removed),
    sensitive or insensitive (both released unchanged), unless unlisted
    columns are kept explicitly (``keep_unlisted``). ``columns`` lists the
    unassigned ones in table order and ``source`` names the table, so the
    command line can say how to fix it with its own flags; ``likely_identifiers``
    are those among them unique on (nearly) every row, to be removed rather
    than released.

    Example:
        >>> error = UnassignedColumnsError("patients.csv", ("name", "ssn"))
        >>> error.columns
        ('name', 'ssn')
    """

    def __init__(
        self, source: str, columns: tuple[str, ...], likely_identifiers: tuple[str, ...] = ()
    ) -> None:
        self.source = source
        self.columns = columns
        self.likely_identifiers = likely_identifiers
        flagged = (
            f" ({', '.join(repr(c) for c in likely_identifiers)} unique on (nearly) every row: "
            "likely direct identifiers, to be identifying)"
            if likely_identifiers
            else ""
        )
        super().__init__(
            f"{source}: column(s) {', '.join(repr(c) for c in columns)} have no role{flagged}, "
            "and kanonym releases no column nobody named: give each one in "
            "`quasi_identifiers`, `identifying` (removed), `sensitive` or `insensitive` (released "
            "unchanged), or pass `keep_unlisted=True` to release every unlisted column unchanged"
        )


class HierarchyError(InputError):
    """A hierarchy is malformed or does not cover a value of its column."""


class RepeatedLeafError(HierarchyError):
    """An ARX hierarchy file lists a value on two lines with different generalizations.

    ARX itself keeps the last line; kanonym refuses the file unless asked to do
    the same (``duplicates="last"``). ``problem`` is the message without the
    fix (:data:`REPEATED_LEAF_FIX`), so the command line can name its own
    option; a message made from another one's text (prefixed with where it
    came from) keeps that split.

    Example:
        >>> error = RepeatedLeafError("h.csv: value '94' is listed twice")
        >>> str(error) == f"h.csv: value '94' is listed twice; {REPEATED_LEAF_FIX}"
        True
        >>> RepeatedLeafError(f"report.json: {error}").problem
        "report.json: h.csv: value '94' is listed twice"
    """

    def __init__(self, problem: str) -> None:
        self.problem = problem.removesuffix(f"; {REPEATED_LEAF_FIX}")
        super().__init__(f"{self.problem}; {REPEATED_LEAF_FIX}")


REPEATED_LEAF_FIX = (
    "keep one line per value, or pass `duplicates='last'` to keep each value's last line, "
    "as ARX does"
)
"""How the library says to fix a :class:`RepeatedLeafError`."""


class NoSolutionError(KanonymError):
    """No transformation satisfies the privacy models within the suppression limit.

    The input is valid, but the search proved that no node of the lattice (or,
    for a local recoding, no partitioning) meets every model while suppressing
    at most the limit's rows: a smaller ``k``, weaker models, a larger
    suppression limit or taller hierarchies may admit one. Nothing was
    written; the command line exits 1.

    Example:
        >>> raise NoSolutionError("no generalization satisfies the privacy models")
        Traceback (most recent call last):
        ...
        kanonym.errors.NoSolutionError: no generalization satisfies the privacy models
    """


class SearchTimeoutError(NoSolutionError):
    """The time limit passed before the search found any transformation satisfying the models.

    Unlike its base class this proves nothing: a solution may exist, found with
    more time (``time_limit``) or a heuristic search. Nothing was written; the
    command line exits 1.
    """


class VerificationError(KanonymError):
    """The final table failed the independent re-check; nothing was written."""


class StaleTransformationError(VerificationError):
    """A recorded transformation no longer satisfies the models on a new batch.

    More rows would have to be suppressed than the report's limit allows; the
    batch needs a new search (``kanonym anonymize``). Nothing was written.
    """


class NestedColumnError(InputError):
    """A column holds lists, arrays or structs, which kanonym cannot generalize or write as CSV.

    ``source`` names the table, ``column`` the column and ``kind`` what it
    holds (``"lists"``, ``"arrays"`` or ``"structs"``), so the command line can
    say how to fix it with its own flags.

    Example:
        >>> str(NestedColumnError("t.parquet", "codes", "lists")).split(";")[0]
        "t.parquet: column 'codes' holds lists"
    """

    def __init__(self, source: str, column: str, kind: str) -> None:
        self.source = source
        self.column = column
        self.kind = kind
        super().__init__(
            f"{source}: column '{column}' holds {kind}; kanonym releases flat values (text, "
            "numbers, dates): flatten it into plain columns, or name it identifying to drop it"
        )


class ColumnNotFoundError(InputError):
    """A column named by the caller is not in the table.

    ``source`` names the table, ``column`` the missing name and ``columns``
    those the table has; ``delimiter`` is the CSV delimiter the file seems to
    use when the header was read as one column with another one (None
    otherwise), so the command line can name its own flag.

    Example:
        >>> error = ColumnNotFoundError("t.csv: column 'zip' not found", source="t.csv",
        ...                             column="zip", columns=("a,zip",), delimiter=",")
        >>> error.delimiter
        ','
    """

    def __init__(
        self,
        message: str,
        *,
        source: str,
        column: str,
        columns: tuple[str, ...],
        delimiter: str | None = None,
    ) -> None:
        self.source = source
        self.column = column
        self.columns = columns
        self.delimiter = delimiter
        super().__init__(message)


class DestinationExistsError(InputError):
    """A release's output that its engine writes (a table, a Parquet directory) exists,
    and the caller did not ask to replace it.

    ``output`` is the output as messages show it (password redacted), ``what``
    what exists there (``table S.R``, ``directory``); the message names the
    Python parameter (``replace=True``), the command line its own option.

    Example:
        >>> str(DestinationExistsError("postgresql://db?table=s.r", "table s.r"))
        'postgresql://db?table=s.r: table s.r exists; choose another or replace it (replace=True)'
    """

    def __init__(self, output: str, what: str) -> None:
        self.output = output
        self.what = what
        super().__init__(f"{output}: {what} exists; choose another or replace it (replace=True)")


class DateFormatError(InputError):
    """A date builder met a value its format does not read.

    ``column`` names the column and ``suggested`` the builder specs (such as
    ``date:%m/%d/%Y``) that read every value of it, best first (empty when
    none does), so the command line can write the option that fixes it.

    Example:
        >>> DateFormatError("bad date", column="dob", suggested=("date:%m/%d/%Y",)).suggested
        ('date:%m/%d/%Y',)
    """

    def __init__(self, message: str, *, column: str, suggested: tuple[str, ...]) -> None:
        self.column = column
        self.suggested = suggested
        super().__init__(message)


class LedgerPendingError(KanonymError):
    """A release was recorded in its ledger but its files could not all be put in place.

    The release is committed; the ledger's next use (:meth:`kanonym.Ledger.recover`)
    renames the remaining files into place. The command exits 1.
    """


class BudgetExceededError(KanonymError):
    """A release would spend more of its source's privacy budget than is left.

    The release's (epsilon, delta) charge, added to what the recorded releases
    of its source spent, exceeds the budget set in the ledger
    (:mod:`kanonym.ledger.budget`); the message states what is left. The
    input is valid: nothing was written or recorded, and the command line
    exits 1.

    Example:
        >>> raise BudgetExceededError("t.csv: the release's charge exceeds the budget left")
        Traceback (most recent call last):
        ...
        kanonym.errors.BudgetExceededError: t.csv: the release's charge exceeds the budget left
    """
