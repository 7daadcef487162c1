"""Serialize tables like their input and write releases all-or-nothing.

A release is never written partially. Its files (the release, its JSON and
HTML reports) are written as one *group* (:func:`prepare_write`):

1. a journal ``.kanonym-TOKEN.prepared`` listing every destination and its
   temporary file is written and synced in the first destination's folder
   (the primary, locked with ``flock`` while its process works on it), and a
   copy in every other folder the group writes to, so that a write to any of
   them finds the group;
2. every payload goes to its temporary file ``.kanonym-TOKEN.N.tmp`` beside
   its destination, flushed and fsynced; nothing at a destination has changed;
3. the commit point: the primary is renamed to ``.kanonym-TOKEN.committed``
   (:meth:`PreparedWrite.commit`), or, for a group whose journal names a
   record that commits it (``decided_by``: the ledger's ``pending_files``
   row, :mod:`kanonym.ledger.storage`), that record's transaction;
4. the temporaries are renamed over their destinations, the folders synced,
   and the journal removed.

A process killed at any point leaves either a group that never reached its
commit point (every destination untouched: :func:`recover` removes its
temporaries) or a committed one (:func:`recover` finishes the renames). Every
kanonym write first recovers the unlocked journals in its destination
folders, so the files at the destinations are afterwards all the old ones or
all the new ones, and no temporary stays. Nothing that existed before is
removed: a destination is only ever replaced by its new file.

Example:
    >>> import polars as pl
    >>> serialize(pl.DataFrame({"zip": ["02138", None]}), fmt="csv", dialect=None)
    b'zip\\n02138\\n\\n'
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import json
import os
import secrets
import signal
import sqlite3
import stat
import threading
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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


_PREPARED, _COMMITTED, _PART = ".prepared", ".committed", ".part"

COMMITTED: list[Path] = []
"""Destinations this process has committed (for the command line's last word on Ctrl-C)."""


@contextlib.contextmanager
def interrupts_held() -> Iterator[None]:
    """Hold Ctrl-C back until the block ends, then raise it (main thread only).

    A handler rather than a signal mask: the mask is per thread, and the
    kernel hands a process's SIGINT to any thread not masking it (Polars' and
    numba's workers), whereas Python runs handlers in the main thread.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    received: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda number, frame: received.append(number))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if received:
        raise KeyboardInterrupt


_JOURNAL_PREFIX = ".kanonym-"


@dataclass(eq=False)
class PreparedWrite:
    """A group of files written beside their destinations, before its commit point.

    Attributes:
        journal: the group's primary journal (``.kanonym-TOKEN.prepared`` in the
            first destination's folder); its rename to ``.committed`` is the
            commit point, and its lock says the group's process is alive.
        secondaries: the group's journal in each other folder it writes to, so
            that a write to any of them finds the group.
        destinations: the files' final paths, in order.
        temporaries: their temporary files, in the same order.
    """

    journal: Path
    secondaries: list[Path]
    destinations: list[Path]
    temporaries: list[Path]
    _lock: int = field(repr=False)
    _closed: bool = field(default=False, repr=False)

    def commit(self) -> None:
        """Pass the commit point, then put every file in place and clean up.

        Raises:
            InputError: a rename failed after the commit point (the journal
                stays, and the next write to the folder or use of the ledger
                finishes the group).
        """
        committed = self.journal.with_suffix(_COMMITTED)
        # Ctrl-C waits until the group is in place: an interrupt then leaves no
        # half-renamed group behind, and the command can say what it wrote.
        with interrupts_held():
            self._commit(committed)

    def _commit(self, committed: Path) -> None:
        try:
            # The commit point: from here on recovery finishes the group.
            self.journal.replace(committed)
            COMMITTED.extend(self.destinations)
            sync_directory(committed.parent)
            self.journal = committed
            for temporary, destination in zip(self.temporaries, self.destinations, strict=True):
                _replace(temporary, destination)
            for directory in dict.fromkeys(d.parent for d in self.destinations):
                sync_directory(directory)
            _remove_journals(self.secondaries, committed)
        except OSError as err:
            raise InputError(
                f"{self.destinations[0]}: cannot put the release in place ({err.strerror}); "
                f"the next kanonym write in {committed.parent} completes it"
            ) from None
        finally:
            self._release()

    def abort(self) -> None:
        """Undo the group before its commit point: remove the temporaries and the journals."""
        if self._closed:
            return
        for temporary in self.temporaries:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            _remove_journals(self.secondaries, self.journal)
        self._release()

    def _release(self) -> None:
        if not self._closed:
            self._closed = True
            os.close(self._lock)  # closing the descriptor drops the lock


def prepare_write(
    files: Sequence[tuple[Path, bytes]], *, decided_by: Mapping[str, object] | None = None
) -> PreparedWrite:
    """Write the group's journals and temporaries; nothing at a destination changes yet.

    ``decided_by`` names, for a group whose commit point is elsewhere, the
    record that commits it: ``{"database": SQLite file, "table": T, "column":
    C}``, committed when ``T`` has a row whose ``C`` is the primary journal's
    path (the ledger's ``pending_files``); or ``{"database": postgresql:// URL
    without a password, "schema": S, "table": T, "column": C}`` for a ledger in
    a PostgreSQL schema (a group is left alone while its server cannot be
    asked). A failure removes whatever was written.

    Raises:
        InputError: a destination is a directory, is listed twice, or cannot be
            written (missing directory, permission, full disk).
    """
    destinations = [Path(path) for path, _ in files]
    _check_destinations(destinations)
    for _ in range(8):
        token = secrets.token_hex(8)
        folders = list(dict.fromkeys(d.parent for d in destinations))
        journals = [f / f"{_JOURNAL_PREFIX}{token}{_PREPARED}" for f in folders]
        # Named by the group, not the destination, so that any file name the folder
        # takes (up to 255 bytes) still has room for its temporary.
        temporaries = [
            d.with_name(f"{_JOURNAL_PREFIX}{token}.{i}.tmp") for i, d in enumerate(destinations)
        ]
        document = {
            # Absolute, not resolved: a symbolic link at a destination is replaced
            # like any file, whether the group completes now or in a recovery.
            "destinations": [str(d.absolute()) for d in destinations],
            "temporaries": [str(t.absolute()) for t in temporaries],
            "journals": [str(j.absolute()) for j in journals],
            "decided_by": dict(decided_by) if decided_by is not None else None,
        }
        lock = _write_journal(journals[0], document, destinations[0])
        if lock is not None:
            break
    else:  # pragma: no cover - eight collisions of 64 random bits
        raise InputError(f"{destinations[0]}: cannot write: no free temporary name")
    prepared = PreparedWrite(
        journal=journals[0],
        secondaries=journals[1:],
        destinations=destinations,
        temporaries=temporaries,
        _lock=lock,
    )
    try:
        for secondary in journals[1:]:
            # Locked only while written: recovery judges a group by its primary.
            named = next(d for d in destinations if d.parent == secondary.parent)
            held = _write_journal(secondary, document, named)
            if held is None:
                raise InputError(f"{named}: cannot write: temporary name taken")
            os.close(held)
        for temporary, destination, (_, payload) in zip(
            temporaries, destinations, files, strict=True
        ):
            _write_temporary(temporary, destination, payload)
    except BaseException:
        prepared.abort()
        raise
    return prepared


def write_atomic(files: Sequence[tuple[Path, bytes]]) -> None:
    """Write every payload to its path, all of them or none of them.

    The group protocol of this module: interrupted groups in the destination
    folders are recovered first, then the group is prepared and committed. An
    existing destination keeps its permission bits; a new one gets the usual
    umask-based ones.

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
    for folder in dict.fromkeys(Path(path).parent for path, _ in files):
        recover(folder)
    prepare_write(files).commit()


def recover(folder: Path) -> list[Path]:
    """Finish or undo the interrupted groups that have a journal in ``folder``.

    A group is judged by its primary journal: committed, it is finished (its
    remaining temporaries renamed into place, in every folder); prepared, it
    is undone (its temporaries removed) unless its ``decided_by`` record says
    it committed; locked, its process is alive and it is left alone. A journal
    that cannot be handled (a folder gone read-only, a file system that
    cannot lock) is left with a warning. Returns the journals handled.
    """
    handled: list[Path] = []
    try:
        names = sorted(
            p
            for p in folder.iterdir()
            if p.name.startswith(_JOURNAL_PREFIX) and p.suffix in (_PART, _PREPARED, _COMMITTED)
        )
    except OSError:
        return handled
    for journal in names:
        try:
            if _recover_one(journal):
                sync_directory(folder)
                handled.append(journal)
        except OSError as error:
            warnings.warn(
                f"{journal}: interrupted write left as it is ({error.strerror or error})",
                stacklevel=2,
            )
    return handled


def finish(journal: Path) -> bool:
    """Finish the group of a journal whose commit point has passed (the ledger's recovery).

    Returns False if the group's process is alive (or the group cannot be
    finished now); True once the group is complete (also when nothing was
    left to do).
    """
    for candidate in (journal.with_suffix(_COMMITTED), journal.with_suffix(_PREPARED)):
        with _locked(candidate) as locked:
            if locked is None:
                continue
            if not locked:
                return False
            try:
                _complete(_read_journal(candidate), roll_forward=True)
            except OSError:
                return False
    return True


def _recover_one(journal: Path) -> bool:
    """Settle one journal found in a folder; False if left alone."""
    if journal.suffix == _PART:
        with _locked(journal) as locked:
            if not locked:
                return False
            # Killed while writing this journal: nothing of its group exists beside it.
            journal.unlink(missing_ok=True)
            return True
    document = _read_journal(journal)
    journals = [Path(j) for j in _strings(document.get("journals"))] or [journal.absolute()]
    primary = journals[0]
    for name in (primary.with_suffix(_COMMITTED), primary.with_suffix(_PREPARED)):
        with _locked(name) as locked:
            if locked is None:
                continue
            if not locked:
                return False
            forward = name.suffix == _COMMITTED or _committed_elsewhere(
                document.get("decided_by"), primary.with_suffix(_PREPARED)
            )
            if forward is None:
                return False
            _complete(document, roll_forward=forward)
            return True
    # The primary is gone: its group was completed or undone, and this journal is
    # a leftover of that (the primary is always removed last).
    journal.unlink(missing_ok=True)
    return True


def _committed_elsewhere(decided_by: object, primary: Path) -> bool | None:
    """Whether the record named by ``decided_by`` committed the group (None: cannot tell).

    No ``decided_by``: the journal's own rename was the commit point, and a
    prepared journal did not pass it. A database that does not exist cannot
    have committed it.
    """
    if not isinstance(decided_by, Mapping):
        return False
    table, column = str(decided_by.get("table", "")), str(decided_by.get("column", ""))
    if str(decided_by.get("database", "")).startswith(("postgresql://", "postgres://")):
        return _committed_in_server(decided_by, table, column, primary)
    database = Path(str(decided_by.get("database", "")))
    if not database.is_file():
        return False
    if not (table.isidentifier() and column.isidentifier()):
        return None
    try:
        connection = sqlite3.connect(f"{database.absolute().as_uri()}?mode=ro", uri=True)
        try:
            found = connection.execute(
                f"SELECT 1 FROM {table} WHERE {column} = ?", (str(primary.absolute()),)
            ).fetchone()
        finally:
            connection.close()
    except sqlite3.Error:
        return None
    return found is not None


def _committed_in_server(
    decided_by: Mapping[str, object], table: str, column: str, primary: Path
) -> bool | None:
    """Whether a ledger in a PostgreSQL schema (``decided_by``'s ``database``, a URL without a
    password, and ``schema``) committed the group; None when the server cannot be asked now
    (unreachable, no password at hand, psycopg not installed): the group is then left for the
    ledger's own recovery."""
    try:
        import psycopg
        from psycopg import sql
    except ImportError:
        return None
    schema = str(decided_by.get("schema", ""))
    query = sql.SQL("SELECT 1 FROM {} WHERE {} = %s").format(
        sql.Identifier(schema, table), sql.Identifier(column)
    )
    try:
        with psycopg.connect(str(decided_by["database"]), connect_timeout=10) as connection:
            found = connection.execute(query, [str(primary.absolute())]).fetchone()
    except psycopg.Error:
        return None
    return found is not None


def _complete(document: Mapping[str, object], *, roll_forward: bool) -> None:
    destinations = [Path(str(d)) for d in _strings(document.get("destinations"))]
    temporaries = [Path(str(t)) for t in _strings(document.get("temporaries"))]
    journals = [Path(j) for j in _strings(document.get("journals"))]
    for temporary, destination in zip(temporaries, destinations, strict=False):
        if not temporary.exists():
            continue  # renamed into place before the interruption (or never written)
        if roll_forward:
            temporary.replace(destination)
        else:
            temporary.unlink()
    for directory in dict.fromkeys(d.parent for d in destinations):
        sync_directory(directory)
    if journals:
        primary = journals[0]
        for name in (primary.with_suffix(_COMMITTED), primary.with_suffix(_PREPARED)):
            if name.exists():
                _remove_journals(journals[1:], name)


def _remove_journals(secondaries: Sequence[Path], primary: Path) -> None:
    """Remove a group's journals, the primary last (a secondary never outlives it)."""
    for secondary in secondaries:
        secondary.unlink(missing_ok=True)
        sync_directory(secondary.parent)
    primary.unlink(missing_ok=True)
    sync_directory(primary.parent)


def _strings(value: object) -> list[str]:
    return [str(item) for item in value] if isinstance(value, list) else []


def _read_journal(journal: Path) -> dict[str, object]:
    try:
        document = json.loads(journal.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        document = None
    # A journal is renamed into place only once complete, so this is damage.
    return document if isinstance(document, dict) else {}


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[bool | None]:
    """Hold ``path``'s lock if no live process does: True, False (held), None (no file).

    The path is checked to still name the locked file afterwards: a journal
    renamed meanwhile is handled under its new name. Opened for writing, as
    NFS's emulation of ``flock`` needs for an exclusive lock; a file system
    that cannot lock at all counts as held (the journal is left alone).
    """
    try:
        descriptor = os.open(path, os.O_RDWR)
    except OSError:
        yield None
        return
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            same = os.path.samestat(os.fstat(descriptor), path.stat())
        except OSError:
            same = False
        yield same
    finally:
        os.close(descriptor)


def _write_journal(journal: Path, document: Mapping[str, object], first: Path) -> int | None:
    """Create the journal, complete and synced; its locked descriptor (None: name taken)."""
    part = journal.with_suffix(_PART)
    try:
        descriptor = os.open(part, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return None
    except OSError as err:
        raise InputError(_unwritable(first, err)) from None
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        if not os.path.samestat(os.fstat(descriptor), part.stat()):
            raise FileNotFoundError(part)
        os.write(descriptor, json.dumps(document).encode("utf-8"))
        os.fsync(descriptor)
        if journal.exists():
            raise FileExistsError(journal)
        # Renamed only once complete, so a journal is never read half written.
        part.replace(journal)
        sync_directory(journal.parent)
    except (FileNotFoundError, FileExistsError):
        # Another process's recovery took the part between its creation and its
        # lock, or the name is in use: the caller tries another name.
        os.close(descriptor)
        return None
    except OSError as err:
        os.close(descriptor)
        with contextlib.suppress(OSError):
            part.unlink(missing_ok=True)
        raise InputError(_unwritable(first, err)) from None
    return descriptor


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


def _write_temporary(temporary: Path, destination: Path, payload: bytes) -> None:
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


def _replace(temporary: Path, destination: Path) -> None:
    try:
        temporary.replace(destination)
    except OSError as err:
        raise InputError(_unwritable(destination, err)) from None


def sync_directory(directory: Path) -> None:
    """Make renames and new entries durable: they are recorded in the directory, not the files."""
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
