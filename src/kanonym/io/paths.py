"""Where a release may be written, checked before any work starts.

A release reads a table and hierarchy files and writes a release file and its
reports. :func:`check_destinations` refuses, before anything is read, a
destination that is one of the inputs (a release written over its own source
table or a hierarchy file would destroy it), two destinations that are the same
file, and a destination that cannot be written: a directory, a folder that does
not exist or is not writable. Paths are compared after resolving symbolic links
and ``..``, and by device and inode where both exist (hard links).

Example:
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> source = folder / "patients.csv"
    >>> _ = source.write_text("zip\\n02138\\n")
    >>> check_destinations({"output": folder / "release.csv"}, {"input": source})
    >>> check_destinations({"output": source}, {"input": source})
    Traceback (most recent call last):
    ...
    kanonym.errors.InputError: output ... is the input ...: writing it would destroy it; \
choose another path
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from kanonym.errors import InputError


def same_file(first: str | Path, second: str | Path) -> bool:
    """Whether two paths name one file: equal once resolved, or the same inode.

    Example:
        >>> same_file("a/../b.csv", "b.csv")
        True
    """
    one, other = Path(first), Path(second)
    if one.resolve() == other.resolve():
        return True
    try:
        return one.samefile(other)
    except OSError:  # one of them does not exist (yet): resolved paths decide
        return False


def check_destinations(
    outputs: Mapping[str, str | Path | None], inputs: Mapping[str, str | Path | None]
) -> None:
    """Refuse destinations that would overwrite an input or each other, or cannot be written.

    ``outputs`` and ``inputs`` map a name for the message (a parameter, flag
    or job key, such as ``output`` or ``hierarchy of 'zip'``) to a path; None
    entries are skipped. Nothing is created or changed.

    Raises:
        InputError: a destination is an input, is given twice, is a directory,
            or its folder is missing, not a folder, or not writable.
    """
    sources = {name: Path(path) for name, path in inputs.items() if path is not None}
    seen: dict[str, Path] = {}
    for name, given in outputs.items():
        if given is None:
            continue
        if str(given).endswith(("/", os.sep)):
            # Path() drops a trailing slash: 'out/new/' would become a file named 'new'.
            raise InputError(
                f"{name} {given} ends with a '/', so it names a folder: give a file path "
                "(e.g. a name inside that folder)"
            )
        path = Path(given)
        for source_name, source in sources.items():
            if same_file(path, source):
                raise InputError(
                    f"{name} {path} is the {source_name} {source}: writing it would destroy it; "
                    "choose another path"
                )
        for other_name, other in seen.items():
            if same_file(path, other):
                raise InputError(
                    f"{name} {path} is also given as {other_name}: each file needs its own path"
                )
        seen[name] = path
        _check_writable(name, path)


def _check_writable(name: str, path: Path) -> None:
    if path.is_dir():
        raise InputError(f"{name} {path} is a directory; give a file path")
    folder = path.parent
    if not folder.exists():
        raise InputError(f"{name} {path}: folder {folder} does not exist; create it first")
    if not folder.is_dir():
        raise InputError(f"{name} {path}: {folder} is not a folder")
    # The release is written beside the destination and renamed over it: the folder
    # must take new files, whatever the permissions of an existing destination.
    if not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{name} {path}: folder {folder} is not writable")
