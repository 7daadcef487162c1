"""SHA-256 fingerprints of a release's files, and what each one lets its holder do.

A fingerprint lets whoever holds it confirm a guess about the bytes it was
computed from. For published material (the release, a report, a hierarchy
file) that confirms nothing secret. For the input it does: whoever knows every
byte of the input but one value can hash each candidate for that value and
find the one that matches (the 99-year-old's diagnosis, say). A hierarchy that
a builder (``mask``, ``interval``, ``date``, ``suppress``) made lists the
column's distinct input values, so its fingerprint likewise confirms whether a
guessed value occurs in the input; only a hierarchy read from a file was given
rather than computed from data. Those are therefore *private* fingerprints:
the JSON report (for the reviewer) and the ledger hold them, the HTML page,
which travels with the release, never does (:attr:`Fingerprint.on_page`).

Example:
    >>> sha256_hex(b"")[:16]
    'e3b0c44298fc1c14'
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kanonym.hierarchy import spec_file
from kanonym.io import serialize

if TYPE_CHECKING:
    from kanonym.result import Result

WrittenFile = tuple[Path | str, bytes | None]
"""A file written with a report, ``(path, bytes)``; a release published as a database
table is ``(its URL, None)``."""

LETS_INPUT = (
    "confirms that a file is this input, byte for byte; whoever knows all of the input but "
    "one value can also test guesses of that value against it, so it is kept off the HTML page"
)
LETS_RELEASE = "confirms that a file is this release, byte for byte; the release is published"
LETS_JSON = (
    "confirms that a file is this JSON report, byte for byte (the report holds the input's "
    "fingerprint: it stays with the reviewer)"
)
LETS_HIERARCHY_FILE = (
    "confirms which hierarchy file was used, as resolved; it was given, not computed from the input"
)
LETS_HIERARCHY_BUILT = (
    "confirms which hierarchy was used; it was built from distinct input values, so whoever "
    "knows all of them but one can test guesses of that one (whether a value occurs), and "
    "it is kept off the HTML page"
)

NOTE = (
    "Each fingerprint confirms a guess of the bytes it was computed from. Those of the input "
    "(here and the ledger's source_sha256) and of hierarchies built from the input's values "
    "are private: whoever knows all of the input but one value can test guesses of it against "
    "them, so they appear in this report and the ledger, never on the HTML page. Those of the "
    "release and of given hierarchy files only confirm published material."
)
"""The JSON report's ``fingerprints_note``."""


@dataclass(frozen=True, kw_only=True)
class Fingerprint:
    """A SHA-256 fingerprint, what exactly was hashed and what it lets its holder do.

    Attributes:
        what: ``input``, ``release``, ``JSON report`` or ``hierarchy COL``.
        path: the file (or ``<DataFrame>``, or the hierarchy's source).
        sha256: hex digest.
        basis: what the bytes hashed were.
        lets: what a holder of the fingerprint can do with it, in one sentence.
        on_page: whether the HTML page may show it: False for fingerprints
            computed from the input (module docstring).
    """

    what: str
    path: str
    sha256: str
    basis: str
    lets: str
    on_page: bool

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form used in the report's ``fingerprints``."""
        return {
            "what": self.what,
            "path": self.path,
            "sha256": self.sha256,
            "basis": self.basis,
            "lets_a_holder": self.lets,
            "on_html_page": self.on_page,
        }


def sha256_hex(payload: bytes) -> str:
    """Hex SHA-256 of ``payload``.

    Example:
        >>> sha256_hex(b"")[:16]
        'e3b0c44298fc1c14'
    """
    return hashlib.sha256(payload).hexdigest()


def fingerprints(result: Result, written: Sequence[WrittenFile]) -> list[Fingerprint]:
    """Every fingerprint of ``result``: input, the files ``written``, hierarchies.

    ``written`` holds ``(path, bytes)`` of the release, then of the JSON report
    when there is one; a release published as a database table has no bytes
    here (None) and no fingerprint.
    """
    prints = []
    table = result.input_table
    if table is not None:
        if table.sha256 is not None:
            digest, basis = table.sha256, "the file's bytes"
        else:
            digest = sha256_hex(serialize(table.frame, fmt="csv", dialect=None))
            basis = (
                "canonical CSV of the in-memory DataFrame (UTF-8, ',', LF, header, "
                "missing as an empty field)"
            )
        prints.append(
            Fingerprint(
                what="input",
                path=table.source,
                sha256=digest,
                basis=basis,
                lets=LETS_INPUT,
                on_page=False,
            )
        )
    for what, lets, (path, payload) in zip(
        ("release", "JSON report"), (LETS_RELEASE, LETS_JSON), written, strict=False
    ):
        if payload is None:
            continue
        prints.append(
            Fingerprint(
                what=what,
                path=str(path),
                sha256=sha256_hex(payload),
                basis="the bytes written",
                lets=lets,
                on_page=True,
            )
        )
    for name, hierarchy in result.hierarchies.items():
        # Only a hierarchy read from a file was given rather than computed from some
        # input's values (a builder's, or one a ledger kept from an earlier release).
        file = spec_file(hierarchy.name)
        built = file is None or not file.is_file()
        prints.append(
            Fingerprint(
                what=f"hierarchy {name}",
                path=hierarchy.name,
                sha256=sha256_hex(hierarchy.to_arx_csv().encode("utf-8")),
                basis="the hierarchy as resolved, in ARX CSV form (Hierarchy.to_arx_csv)",
                lets=LETS_HIERARCHY_BUILT if built else LETS_HIERARCHY_FILE,
                on_page=not built,
            )
        )
    return prints


def report_fingerprints(result: Result, release: WrittenFile) -> dict[str, object]:
    """The JSON report's ``fingerprints`` and ``fingerprints_note`` keys.

    ``release`` is the release as written; the report cannot hold its own
    fingerprint, so the HTML page gives it.
    """
    return {
        "fingerprints": [f.as_dict() for f in fingerprints(result, [release])],
        "fingerprints_note": NOTE,
    }
