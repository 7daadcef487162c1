"""Writing a job's options as the TOML file ``kanonym anonymize --config`` reads.

The inverse of reading a job file (:func:`kanonym.config.job_from_options`
takes what :mod:`tomllib` parses): scalars and lists first, in the order
given, then each nested mapping as a ``[table]``, so that no later key falls
into a table by accident (TOML, Preston-Werner et al., v1.0.0). Strings are
basic strings, with quotes, backslashes and control characters escaped.

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

from collections.abc import Mapping, Sequence

from kanonym.errors import InputError, echo

# TOML basic strings: a quote and a backslash are escaped, and so is every control
# character but tab (the specification requires it), as \uXXXX.
_ESCAPES = {
    ord('"'): '\\"',
    ord("\\"): "\\\\",
    **{code: f"\\u{code:04X}" for code in [*range(0x09), *range(0x0A, 0x20), 0x7F]},
}


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
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return toml_string(value)
    if isinstance(value, Sequence):
        return "[" + ", ".join(_value(item) for item in value) + "]"
    raise InputError(f"cannot write {echo(repr(value))} into a job file")


def toml_document(options: Mapping[str, object], *, comment: str = "") -> str:
    """``options`` as a TOML document; ``comment`` becomes its first lines (``#`` added).

    Values: strings, booleans, whole numbers, numbers, lists of them, and (one
    level deep) mappings of them, written as tables after every other key.

    Raises:
        InputError: a value of another type.
    """
    lines = [f"# {line}".rstrip() for line in comment.splitlines()]
    tables: list[str] = []
    for key, value in options.items():
        if isinstance(value, Mapping):
            tables.extend(["", f"[{_key(key)}]"])
            tables.extend(f"{_key(name)} = {_value(item)}" for name, item in value.items())
        else:
            lines.append(f"{_key(key)} = {_value(value)}")
    return "\n".join([*lines, *tables]) + "\n"
