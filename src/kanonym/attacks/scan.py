"""Quasi-identifier discovery: which column combinations single out records (``kanonym qi-scan``).

Sweeney found that 87 % of the US population was likely unique on {5-digit ZIP,
gender, date of birth} (Sweeney 2000, "Uniqueness of simple demographics in the
U.S. population"; quoted in Sweeney 2002, section 1): any such combination is a
quasi-identifier, a set of attributes that can be linked to identify people
(Dalenius 1986, as defined in Sweeney 2002, Definition 2). The scan measures,
for every combination of 1 to m candidate columns, the *unique records*, rows
alone in their class on those columns (missing values form a class of their
own), and ranks the combinations by it: most unique records first, then fewer
columns, then the order of evaluation.

Combinations are evaluated by size (all single columns, then all pairs, ...),
each size in the candidates' order, so a scan stopped by its time limit has
measured every combination smaller than the one it stopped at. Adding a column
can only split classes, so unique records never decrease along a chain of
supersets.

A column that alone makes (nearly) every record unique, at least
:data:`~kanonym.attacks.measures.DIRECT_IDENTIFIER_UNIQUENESS` of them (a name,
an SSN, a record number), is a *direct identifier*, not a quasi-identifier to
discover: every combination holding it is as unique, and would fill the
ranking with its supersets. Such columns are reported apart
(:attr:`QiScan.direct_identifiers`), and the combinations holding one are
skipped (neither measured nor ranked); the ranking holds the combinations of
the other columns.

Example (each column alone singles out one record, any two of them two, all
three every record; no column is a direct identifier):
    >>> import polars as pl
    >>> t = pl.DataFrame({"zip": ["02138", "02138", "02138", "02139"],
    ...                   "sex": ["F", "M", "F", "F"], "dob": ["64", "64", "65", "64"]})
    >>> s = scan_quasi_identifiers(t, ["zip", "sex", "dob"])
    >>> [(c.columns, c.unique_records) for c in s.combinations[:3]]
    [(('zip', 'sex', 'dob'), 4), (('zip', 'sex'), 2), (('zip', 'dob'), 2)]
    >>> s.complete, s.evaluated, s.total
    (True, 7, 7)

With a name column, unique on every row, the name is reported apart and the
three combinations holding it with one other column are skipped:
    >>> named = t.with_columns(name=pl.Series(["Ann", "Bob", "Cy", "Di"]))
    >>> s = scan_quasi_identifiers(named, ["name", "zip", "sex"], max_size=2)
    >>> [c.columns for c in s.direct_identifiers], s.skipped
    ([('name',)], 2)
    >>> [c.columns for c in s.combinations]
    [('zip', 'sex'), ('zip',), ('sex',)]
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from kanonym.attacks.defaults import DEFAULT_MAX_SIZE
from kanonym.attacks.measures import CLASS_SIZE, DIRECT_IDENTIFIER_UNIQUENESS, class_sizes
from kanonym.errors import InputError, echo


@dataclass(frozen=True, kw_only=True)
class Combination:
    """How well one column combination singles out records.

    Attributes:
        columns: the columns, in the candidates' order.
        classes: distinct value combinations.
        unique_records: rows alone in their class.
        uniqueness: ``unique_records`` over the table's rows.
    """

    columns: tuple[str, ...]
    classes: int
    unique_records: int
    uniqueness: float

    def __post_init__(self) -> None:
        if not 0 <= self.unique_records <= self.classes:
            raise ValueError("unique records are classes of one: at most the classes")

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "columns": list(self.columns),
            "classes": self.classes,
            "unique_records": self.unique_records,
            "uniqueness": self.uniqueness,
        }


@dataclass(frozen=True, kw_only=True)
class QiScan:
    """Result of a quasi-identifier scan (``kanonym.qi_scan``).

    Attributes:
        rows: rows of the table.
        candidates: the columns combined.
        max_size: the largest combination size asked for (m).
        time_limit: seconds allowed (None: no limit).
        combinations: the combinations measured, ranked (module docstring),
            without the direct identifiers and the combinations holding one.
        total: combinations of 1 to m candidates.
        complete: every combination was measured or skipped (the time limit
            did not stop the scan).
        elapsed_seconds: time the scan took.
        direct_identifiers: the single columns unique on at least
            ``direct_identifier_uniqueness`` of the rows, in the candidates'
            order (module docstring).
        skipped: combinations of 2 or more columns holding a direct
            identifier, not measured.
        direct_identifier_uniqueness: the share of rows from which a column
            is a direct identifier (None: no column is).
    """

    rows: int
    candidates: tuple[str, ...]
    max_size: int
    time_limit: float | None
    combinations: tuple[Combination, ...]
    total: int
    complete: bool
    elapsed_seconds: float
    direct_identifiers: tuple[Combination, ...] = ()
    skipped: int = 0
    direct_identifier_uniqueness: float | None = DIRECT_IDENTIFIER_UNIQUENESS

    def __post_init__(self) -> None:
        if self.complete != (self.evaluated + self.skipped == self.total):
            raise ValueError(
                "a scan is complete exactly when it measured or skipped every combination"
            )
        if any(len(c.columns) != 1 for c in self.direct_identifiers):
            raise ValueError("a direct identifier is a single column")

    @property
    def evaluated(self) -> int:
        """Combinations measured: those ranked and the direct identifiers."""
        return len(self.combinations) + len(self.direct_identifiers)

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym qi-scan --json`` prints (keys: docs, Risk and attacks)."""
        return {
            "rows": self.rows,
            "candidates": list(self.candidates),
            "max_size": self.max_size,
            "time_limit": self.time_limit,
            "evaluated": self.evaluated,
            "total": self.total,
            "complete": self.complete,
            "elapsed_seconds": round(self.elapsed_seconds, 6),
            "direct_identifier_uniqueness": self.direct_identifier_uniqueness,
            "direct_identifiers": [c.as_dict() for c in self.direct_identifiers],
            "skipped": self.skipped,
            "combinations": [c.as_dict() for c in self.combinations],
        }

    def text(self, top: int) -> str:
        """The ``top`` best combinations, one line each, under a summary line."""
        status = (
            "all"
            if self.complete
            else f"stopped by the time limit ({self.time_limit:g} s) after {self.evaluated} of"
        )
        head = (
            f"{self.rows} records; {status} {self.total} combinations of 1 to {self.max_size} "
            f"of {len(self.candidates)} columns scanned in {self.elapsed_seconds:.2f} s; "
        )
        ranked = "most unique records first:"
        if not self.direct_identifiers:
            lines = [head + ranked]
        else:
            assert self.direct_identifier_uniqueness is not None
            lines = [
                head + f"direct identifiers (each alone unique on "
                f"{self.direct_identifier_uniqueness:.0%} of the records or more; "
                "remove them from any release):"
            ]
            lines.extend(_line(c) for c in self.direct_identifiers)
            lines.append(
                f"without the {self.skipped} combinations holding a direct identifier, {ranked}"
            )
        lines.extend(_line(c) for c in self.combinations[:top])
        return "\n".join(lines)


def _line(combination: Combination) -> str:
    return (
        f"  {combination.unique_records:>8} unique ({combination.uniqueness:7.2%}), "
        f"{combination.classes:>8} classes: {', '.join(combination.columns)}"
    )


def scan_quasi_identifiers(
    frame: pl.DataFrame,
    candidates: Sequence[str],
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    time_limit: float | None = None,
    direct_identifier_uniqueness: float | None = DIRECT_IDENTIFIER_UNIQUENESS,
) -> QiScan:
    """Measure every combination of 1 to ``max_size`` candidate columns, ranked.

    A single column unique on at least ``direct_identifier_uniqueness`` of the
    rows is a direct identifier: reported apart, and the combinations holding
    it skipped (None: every combination is measured and ranked). Stops before
    the next combination once ``time_limit`` seconds have passed.

    Raises:
        InputError: no candidates, a candidate named twice, a table without
            rows, ``max_size`` below 1, ``time_limit`` not positive or
            ``direct_identifier_uniqueness`` outside (0, 1].
    """
    started = time.perf_counter()
    if not candidates:
        raise InputError("qi-scan needs at least one candidate column")
    if len(set(candidates)) != len(candidates):
        raise InputError(f"qi-scan: a column is named twice in {list(candidates)}")
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
        raise InputError(
            f"qi-scan: the largest combination size must be >= 1, got {echo(max_size)}"
        )
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"qi-scan: the time limit must be positive, got {time_limit}")
    if frame.height == 0:
        raise InputError("qi-scan: the table has no rows")
    threshold = direct_identifier_uniqueness
    if threshold is not None and not 0 < threshold <= 1:
        raise InputError(
            f"qi-scan: the direct identifier uniqueness must be in (0, 1], got {threshold}"
        )
    largest = min(max_size, len(candidates))
    total = sum(math.comb(len(candidates), size) for size in range(1, largest + 1))
    measured: list[Combination] = []
    direct: list[Combination] = []
    found: set[tuple[str, ...]] = set()
    complete = True
    for size in range(1, largest + 1):
        # Larger combinations are drawn from the columns that are not direct identifiers.
        pool = candidates if size == 1 else [c for c in candidates if (c,) not in found]
        for columns in itertools.combinations(pool, size):
            if time_limit is not None and time.perf_counter() - started >= time_limit:
                complete = False
                break
            combination = _measure(frame, columns)
            if size == 1 and threshold is not None and combination.uniqueness >= threshold:
                direct.append(combination)
            else:
                measured.append(combination)
        found = {c.columns for c in direct}
        if not complete:
            break
    # Combinations holding a direct identifier are never measured, whether or
    # not the time limit stopped the scan.
    kept = len(candidates) - len(direct)
    skipped = total - sum(math.comb(kept, size) for size in range(1, largest + 1)) - len(direct)
    order = sorted(
        range(len(measured)),
        key=lambda i: (-measured[i].unique_records, len(measured[i].columns), i),
    )
    return QiScan(
        rows=frame.height,
        candidates=tuple(candidates),
        max_size=max_size,
        time_limit=time_limit,
        combinations=tuple(measured[i] for i in order),
        total=total,
        complete=complete,
        elapsed_seconds=time.perf_counter() - started,
        direct_identifiers=tuple(direct),
        skipped=skipped,
        direct_identifier_uniqueness=threshold,
    )


def _measure(frame: pl.DataFrame, columns: tuple[str, ...]) -> Combination:
    """The classes and unique records of ``frame`` on ``columns``."""
    sizes = class_sizes(frame, columns)[CLASS_SIZE]
    unique = int((sizes == 1).sum())
    return Combination(
        columns=columns,
        classes=sizes.len(),
        unique_records=unique,
        uniqueness=unique / frame.height,
    )
