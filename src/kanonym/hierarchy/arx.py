"""Import of value generalization hierarchies stored in ARX's CSV format.

ARX (Prasser & Kohlmayer, arx.deidentifier.org) writes a hierarchy as one row
per leaf value followed by its generalizations, left to right up to the root,
separated by ``;`` and without a header. An empty cell is the missing value.

Example (``age.csv``, height 4):
    34;30-34;30-39;20-39;*
    35;35-39;30-39;20-39;*
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Literal

from kanonym.errors import HierarchyError, InputError, RepeatedLeafError, clip, echo
from kanonym.hierarchy._values import check_delimiter, show
from kanonym.hierarchy.hierarchy import Hierarchy, RepeatedLeaf

Duplicates = Literal["error", "last"]
"""How to read a value an ARX file lists twice with different generalizations:
refuse the file, or keep the last line as ARX does."""

DUPLICATES: tuple[Duplicates, ...] = ("error", "last")


def load_arx(
    path: str | Path, *, delimiter: str = ";", duplicates: Duplicates = "error"
) -> Hierarchy:
    """Read an ARX hierarchy file into a validated :class:`Hierarchy`.

    Accepts CRLF or LF line ends, a missing final newline, trailing or blank
    lines, a UTF-8 byte order mark, ``"``-quoted cells, and files in UTF-8,
    cp1252 or latin-1 (tried in that order). Exact duplicate rows are kept once;
    rows of different lengths raise :class:`~kanonym.errors.HierarchyError`
    naming the file, line and leaf; an unreadable file raises
    :class:`~kanonym.errors.InputError`.

    A leaf listed twice with different generalizations is an error (two
    parents, :class:`~kanonym.errors.RepeatedLeafError`, naming both lines)
    unless ``duplicates="last"``: then the later row wins, which is what ARX
    does when it reads such a file (it stores rows in file order, each
    overwriting the previous one for the same value). That is a choice made
    for compatibility with files written for ARX, never a default; the
    hierarchy's ``repeated_leaves`` lists every such value, the line kept and
    the lines dropped, and the release reports list them.

    Example:
        >>> import pathlib, tempfile
        >>> file = pathlib.Path(tempfile.mkdtemp()) / "sex.csv"
        >>> _ = file.write_bytes(b"Male;*\\r\\nFemale;*")
        >>> load_arx(file).levels
        (('Male', 'Female'), ('*', '*'))
    """
    check_delimiter(delimiter)
    file = Path(path)
    try:
        raw = file.read_bytes()
    except OSError as error:
        raise InputError(
            f"{clip(str(file))}: cannot read hierarchy file: "
            f"{error.strerror or type(error).__name__}"
        ) from error
    if duplicates not in DUPLICATES:
        raise ValueError(f"`duplicates` must be 'error' or 'last', got {echo(duplicates)}")
    numbered = _parse_rows(_decode(raw), file, delimiter)
    # Each leaf's lines, in the order the leaves first appear.
    lines_of: dict[str | None, list[tuple[int, Row]]] = {}
    for line, row in numbered:
        lines_of.setdefault(row[0], []).append((line, row))
    repeated = tuple(
        RepeatedLeaf(
            leaf=leaf,
            kept_line=entries[-1][0],
            kept=entries[-1][1][1:],
            dropped=tuple((line, row[1:]) for line, row in entries[:-1] if row != entries[-1][1]),
        )
        for leaf, entries in lines_of.items()
        if any(row != entries[-1][1] for _, row in entries)
    )
    if repeated and duplicates == "error":
        raise _repeated_error(file, repeated[0])
    # Each leaf's last row: the only one unless the last row wins (exact copies aside).
    rows = [entries[-1][1] for entries in lines_of.values()]
    return Hierarchy(
        name=str(file), levels=tuple(zip(*rows, strict=True)), repeated_leaves=repeated
    )


def _repeated_error(file: Path, repeated: RepeatedLeaf) -> RepeatedLeafError:
    """The refusal of a value listed twice, naming the two lines and where they part."""
    first_line, first = repeated.dropped[0]
    level = next(j for j, (a, b) in enumerate(zip(first, repeated.kept, strict=True)) if a != b)
    # They differ first at level + 1: two parents, or two ancestors above the same parent.
    kind = "parents" if level == 0 else "generalizations"
    return RepeatedLeafError(
        f"hierarchy {file}: level 0 value {show(repeated.leaf)} has two {kind} at level "
        f"{level + 1}: {show(first[level])} and {show(repeated.kept[level])} (lines "
        f"{first_line} and {repeated.kept_line})"
    )


def _decode(raw: bytes) -> str:
    # ARX writes UTF-8, but hand-edited files from Windows tools are often cp1252;
    # latin-1 maps every byte, so it is the last resort that always succeeds.
    for encoding in ("utf-8-sig", "cp1252"):
        try:
            return raw.decode(encoding)
        except UnicodeDecodeError:
            continue
    return raw.decode("latin-1")


Row = tuple[str | None, ...]
"""One line of an ARX file: a leaf and its generalizations, the missing value as None."""


def _parse_rows(text: str, file: Path, delimiter: str) -> list[tuple[int, Row]]:
    """Each non-blank line's number (from 1) and cells."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    rows: list[Row] = []
    lines: list[int] = []
    first_line = 0
    next_line = 1
    try:
        for record in reader:
            # A quoted cell may span lines, so a row starts where the last one ended.
            line, next_line = next_line, reader.line_num + 1
            if not record:
                continue
            if rows and len(record) != len(rows[0]):
                raise HierarchyError(
                    f"{file}: line {line}: value {show(record[0] or None)} has {len(record)} "
                    f"columns but line {first_line} has {len(rows[0])}"
                )
            if not rows:
                first_line = line
            rows.append(tuple(cell or None for cell in record))
            lines.append(line)
    except csv.Error as error:
        raise HierarchyError(f"{file}: line {reader.line_num}: {error}") from error
    if not rows:
        raise HierarchyError(f"{file}: hierarchy file has no rows")
    _refuse_other_layouts(rows, file, delimiter, first_line)
    return list(zip(lines, rows, strict=True))


_LAYOUT = "ARX hierarchy files have one line per value, its generalizations separated by"


def _refuse_other_layouts(rows: list[Row], file: Path, delimiter: str, first_line: int) -> None:
    """Say what is wrong with a file laid out as a plain CSV rather than as ARX writes it.

    Both mistakes passed the parse and failed later as a root holding several
    values, which does not say how to fix the file.
    """
    example = delimiter.join(("02138", "0213*", "*"))
    if len(rows[0]) == 1:
        # One value alone is a valid hierarchy (its root), whatever it holds.
        for other in (",", "\t", "|"):
            if len(rows) > 1 and other != delimiter and all(other in (r[0] or "") for r in rows):
                raise HierarchyError(
                    f"{file}: every line is one cell holding {other!r}; {_LAYOUT} "
                    f"{delimiter!r} (e.g. {example}) and no header row: replace {other!r} "
                    f"by {delimiter!r}"
                )
        return
    roots = {row[-1] for row in rows[1:]}
    if len(rows) > 2 and len(roots) == 1 and rows[0][-1] not in roots:
        header = delimiter.join(cell or "" for cell in rows[0])
        raise HierarchyError(
            f"{file}: line {first_line}, {echo(header)}, looks like a header row: it does not "
            f"end in the root {show(roots.pop())} as every other line does; {_LAYOUT} "
            f"{delimiter!r} and no header row: delete that line"
        )
