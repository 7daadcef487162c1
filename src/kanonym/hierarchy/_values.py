"""Small helpers shared by the hierarchy modules: showing and ordering values.

Example:
    >>> show("02138"), show(None)
    ("'02138'", '<missing>')
    >>> sorted(["b", None, "a"], key=text_order)
    ['a', 'b', None]
"""

from __future__ import annotations

from kanonym.errors import InputError, echo

ROOT = "*"
"""The single value at the top of every hierarchy kanonym builds."""


def show(value: str | None) -> str:
    """Quote a value for a one-line error message; the missing value is ``<missing>``.

    Non-printable characters are escaped so that a value holding a newline cannot
    split the message over several lines, and a long value is cut
    (:func:`kanonym.errors.echo`).

    Example:
        >>> print(show("two" + chr(10) + "lines"))
        'two\\nlines'
        >>> print(show("9" * 1000))  # doctest: +ELLIPSIS
        '999...999...' (1,000 characters)
    """
    return "<missing>" if value is None else echo(value)


def text_order(value: str | None) -> tuple[bool, str]:
    """Sort key: lexicographic, with the missing value last.

    Example:
        >>> text_order(None) > text_order("zzz")
        True
    """
    return (value is None, value or "")


def check_delimiter(delimiter: str) -> None:
    """Reject a CSV delimiter that cannot separate cells unambiguously.

    Example:
        >>> check_delimiter(";")
    """
    if len(delimiter) != 1 or delimiter in '"\r\n':
        raise InputError(
            f"hierarchy delimiter {delimiter!r} must be one character other than a quote or newline"
        )
