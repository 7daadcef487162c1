"""Serialize tables like their input and write releases all-or-nothing.

A release is never written partially: :func:`write_atomic` puts every payload in
a temporary file next to its destination and renames them into place only once
all of them were written and synced.

Example:
    >>> import polars as pl
    >>> serialize(pl.DataFrame({"zip": ["02138", None]}), fmt="csv", dialect=None)
    b'zip\\n02138\\n\\n'
"""

from __future__ import annotations

import contextlib
import io
import os
import secrets
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, assert_never

import polars as pl

from kanonym.errors import InputError
from kanonym.io.table import CsvDialect

_DEFAULT_DIALECT = CsvDialect(
    delimiter=",", line_terminator="\n", quote_all=False, encoding="utf-8", final_newline=True
)
_PARQUET_SUFFIXES = frozenset({".parquet", ".pq"})


def format_for(path: str | Path) -> Literal["csv", "parquet"]:
    """The output format a destination's extension asks for.

    Example:
        >>> format_for("release.PARQUET"), format_for("release.pq"), format_for("out.tsv")
        ('parquet', 'parquet', 'csv')
    """
    return "parquet" if Path(path).suffix.lower() in _PARQUET_SUFFIXES else "csv"


def serialize(
    frame: pl.DataFrame, *, fmt: Literal["csv", "parquet"], dialect: CsvDialect | None
) -> bytes:
    """The bytes of ``frame`` as a CSV laid out like ``dialect``, or as Parquet.

    CSV nulls become empty fields (``""`` when the dialect quotes every field;
    an empty string, which kanonym's readers never produce, is always ``""``);
    without a dialect the output is ``,``-separated UTF-8 with LF line ends and
    minimal quoting. The dialect is ignored for Parquet, which keeps dtypes.

    Raises:
        InputError: a value (or column name) has no representation in the
            dialect's encoding, e.g. ``"€"`` in a latin-1 file.

    Example:
        >>> frame = pl.DataFrame({"name": ["Zoë", None], "city": ["Paris, TX", "Oslo"]})
        >>> serialize(frame, fmt="csv", dialect=None).decode()
        'name,city\\nZoë,"Paris, TX"\\n,Oslo\\n'
    """
    if fmt == "parquet":
        buffer = io.BytesIO()
        frame.write_parquet(buffer)
        return buffer.getvalue()
    if fmt == "csv":
        return _serialize_csv(frame, dialect or _DEFAULT_DIALECT)
    assert_never(fmt)


def _serialize_csv(frame: pl.DataFrame, dialect: CsvDialect) -> bytes:
    text = frame.write_csv(
        separator=dialect.delimiter,
        quote_char=dialect.quotechar,
        line_terminator=dialect.line_terminator,
        # Polars writes a null as `""` under "always", as a quoted-everything input had it.
        quote_style="always" if dialect.quote_all else "necessary",
        null_value="",
    )
    if not dialect.final_newline:
        text = text.removesuffix(dialect.line_terminator)
    try:
        return text.encode(dialect.encoding)
    except UnicodeEncodeError as err:
        raise InputError(_unencodable(frame, err.object[err.start], dialect.encoding)) from None


def _unencodable(frame: pl.DataFrame, char: str, encoding: str) -> str:
    """The message naming the first column name or value that contains ``char``."""
    culprit = f"character {char!r}"
    for name in frame.columns:
        if char in name:
            culprit = f"column name {name!r}"
            break
        hits = frame.get_column(name).cast(pl.String).drop_nulls()
        hits = hits.filter(hits.str.contains(char, literal=True))
        if hits.len():
            culprit = f"column {name!r}: value {hits[0]!r}"
            break
    return f"{culprit} cannot be encoded in {encoding}, the encoding of the input"


def write_atomic(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every payload to its path, all of them or none of them.

    Each payload goes to a temporary file in its destination's directory (so the
    final rename stays on one filesystem), which is flushed and fsynced; only
    when all of them exist are they renamed over their destinations. A failure
    before that removes the temporaries and leaves every destination untouched.
    (A rename failing once others were done, which takes a concurrent change to
    the directories, cannot undo those.) An existing destination keeps its
    permission bits; a new one gets the usual umask-based ones.

    Raises:
        InputError: a destination is a directory, is listed twice, or cannot be
            written (missing directory, permission, full disk).

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> write_atomic([(folder / "a.csv", b"x\\n1\\n"), (folder / "b.csv", b"y\\n2\\n")])
        >>> sorted(p.name for p in folder.iterdir())
        ['a.csv', 'b.csv']
    """
    destinations = [Path(path) for path, _ in files]
    _check_destinations(destinations)
    temporaries: list[Path] = []
    try:
        for destination, (_, payload) in zip(destinations, files, strict=True):
            temporaries.append(_write_temporary(destination, payload))
        for temporary, destination in zip(temporaries, destinations, strict=True):
            _replace(temporary, destination)
    finally:
        # After success every temporary has been renamed away; after a failure the
        # ones still present must not be left lying next to the release.
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
    for directory in dict.fromkeys(destination.parent for destination in destinations):
        _sync_directory(directory)


def write_table(frame: pl.DataFrame, path: str | Path, *, dialect: CsvDialect | None) -> None:
    """Write ``frame`` atomically in the format ``path``'s extension asks for.

    Example:
        >>> import tempfile
        >>> target = Path(tempfile.mkdtemp()) / "release.csv"
        >>> write_table(pl.DataFrame({"age": ["30-39"]}), target, dialect=None)
        >>> target.read_bytes()
        b'age\\n30-39\\n'
    """
    payload = serialize(frame, fmt=format_for(path), dialect=dialect)
    write_atomic([(Path(path), payload)])


def _check_destinations(destinations: list[Path]) -> None:
    seen: set[Path] = set()
    for destination in destinations:
        if destination.is_dir():
            raise InputError(f"{destination}: cannot write: is a directory")
        resolved = destination.resolve()
        if resolved in seen:
            raise InputError(f"{destination}: cannot write: listed twice in one release")
        seen.add(resolved)


def _write_temporary(destination: Path, payload: bytes) -> Path:
    temporary = destination.with_name(f".{destination.name}.{secrets.token_hex(8)}.tmp")
    try:
        # O_EXCL: never clobber someone else's file; 0o666 lets the umask decide,
        # as for any newly created file (mkstemp would force 0o600).
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as err:
        raise InputError(_unwritable(destination, err)) from None
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fsync(handle.fileno())
        if destination.exists():
            temporary.chmod(stat.S_IMODE(destination.stat().st_mode))
    except OSError as err:
        temporary.unlink(missing_ok=True)
        raise InputError(_unwritable(destination, err)) from None
    return temporary


def _replace(temporary: Path, destination: Path) -> None:
    try:
        temporary.replace(destination)
    except OSError as err:
        raise InputError(_unwritable(destination, err)) from None


def _sync_directory(directory: Path) -> None:
    """Make the renames durable: they are recorded in the directory, not the files."""
    # The release is complete and in place. Where a directory cannot be opened or
    # synced (Windows, some network filesystems) only that durability is lost.
    with contextlib.suppress(OSError):
        descriptor = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(descriptor)
        finally:
            os.close(descriptor)


def _unwritable(destination: Path, err: OSError) -> str:
    if isinstance(err, FileNotFoundError):
        reason = f"directory {destination.parent} does not exist"
    elif isinstance(err, PermissionError):
        reason = "permission denied"
    else:
        reason = err.strerror or type(err).__name__
    return f"{destination}: cannot write: {reason}"
