"""Writing a job's options as the TOML file ``kanonym anonymize --config`` reads.

The inverse of reading a job file (:func:`kanonym.config.job_from_options`
takes what :mod:`tomllib` parses): scalars and lists first, in the order
given, then each nested mapping as a ``[table]``, so that no later key falls
into a table by accident (TOML, Preston-Werner et al., v1.0.0). Strings are
basic strings, with quotes, backslashes and control characters escaped;
numbers are written as Python writes an ``int`` or a ``float`` (a NumPy number
too, never as its ``repr``, ``np.float64(2.0)``); a comment's control
characters are escaped as well, since TOML forbids them there.

Example:
    >>> print(toml_document({"input": "t.csv", "k": 5, "identifying": ["name"],
    ...                      "qi": {"zip": "mask"}}), end="")
    input = "t.csv"
    k = 5
    identifying = ["name"]
    <BLANKLINE>
    [qi]
    zip = "mask"
    >>> import tomllib
    >>> tomllib.loads(toml_document({"a b": 'say "hi"\\n', "n": [1.5, 2]}))
    {'a b': 'say "hi"\\n', 'n': [1.5, 2]}
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

from kanonym.errors import InputError, echo

# TOML forbids every control character but tab in strings and comments; in a basic
# string they are escaped as \uXXXX (the specification requires it), and so in a
# comment, where no escape is read but the text stays legible and the file valid.
_CONTROL = {code: f"\\u{code:04X}" for code in [*range(0x09), *range(0x0A, 0x20), 0x7F]}
_ESCAPES = {ord('"'): '\\"', ord("\\"): "\\\\", **_CONTROL}


def toml_string(text: str) -> str:
    """``text`` as a TOML basic string.

    Example:
        >>> print(toml_string('a "b"\\n'))
        "a \\"b\\"\\u000A"
    """
    return f'"{text.translate(_ESCAPES)}"'


def _key(name: object) -> str:
    """A bare key when TOML allows one (ASCII letters, digits, ``-`` and ``_``), else quoted."""
    text = str(name)
    bare = bool(text) and text.isascii() and text.replace("-", "").replace("_", "").isalnum()
    return text if bare else toml_string(text)


def _value(value: object) -> str:
    """One value; a bool before the numbers, since ``True`` is an ``int`` as well."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        # repr of a Python float reads back as the same float (and inf, nan are TOML's).
        return repr(float(value))
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise InputError(f"cannot write {echo(repr(value))} into a job file")


def toml_document(options: Mapping[str, object], *, comment: str = "") -> str:
    """``options`` as a TOML document; ``comment`` becomes its first lines (``#`` added).

    Values: strings, booleans, whole numbers, numbers (NumPy's too), lists of
    them, and (one level deep) mappings of them, written as tables after every
    other key.

    Example (a NumPy number, a control character in the comment):
        >>> import numpy as np
        >>> print(toml_document({"k": np.int64(5), "time-limit": np.float64(2.0)},
        ...                     comment="from a\\x01b"), end="")
        # from a\\u0001b
        k = 5
        time-limit = 2.0

    Raises:
        InputError: a value of another type.
    """
    lines = [f"# {line.translate(_CONTROL)}".rstrip() for line in comment.splitlines()]
    tables: list[str] = []
    for key, value in options.items():
        if isinstance(value, Mapping):
            tables.extend(["", f"[{_key(key)}]"])
            tables.extend(f"{_key(name)} = {_value(item)}" for name, item in value.items())
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    return "\n".join([*lines, *tables]) + "\n"
