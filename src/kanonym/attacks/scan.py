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

Example (each column alone singles out one record, any two of them two, all
three every record):
    >>> import polars as pl
    >>> t = pl.DataFrame({"zip": ["02138", "02138", "02138", "02139"],
    ...                   "sex": ["F", "M", "F", "F"], "dob": ["64", "64", "65", "64"]})
    >>> s = scan_quasi_identifiers(t, ["zip", "sex", "dob"])
    >>> [(c.columns, c.unique_records) for c in s.combinations[:3]]
    [(('zip', 'sex', 'dob'), 4), (('zip', 'sex'), 2), (('zip', 'dob'), 2)]
    >>> s.complete, s.evaluated, s.total
    (True, 7, 7)
"""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from kanonym.attacks.defaults import DEFAULT_MAX_SIZE
from kanonym.attacks.measures import CLASS_SIZE, class_sizes
from kanonym.errors import InputError


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
        combinations: the combinations measured, ranked (module docstring).
        total: combinations of 1 to m candidates.
        complete: every combination was measured (the time limit did not stop it).
        elapsed_seconds: time the scan took.
    """

    rows: int
    candidates: tuple[str, ...]
    max_size: int
    time_limit: float | None
    combinations: tuple[Combination, ...]
    total: int
    complete: bool
    elapsed_seconds: float

    def __post_init__(self) -> None:
        if self.complete != (len(self.combinations) == self.total):
            raise ValueError("a scan is complete exactly when it measured every combination")

    @property
    def evaluated(self) -> int:
        """Combinations measured."""
        return len(self.combinations)

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym qi-scan --json`` prints (keys in the README)."""
        return {
            "rows": self.rows,
            "candidates": list(self.candidates),
            "max_size": self.max_size,
            "time_limit": self.time_limit,
            "evaluated": self.evaluated,
            "total": self.total,
            "complete": self.complete,
            "elapsed_seconds": round(self.elapsed_seconds, 6),
            "combinations": [c.as_dict() for c in self.combinations],
        }

    def text(self, top: int) -> str:
        """The ``top`` best combinations, one line each, under a summary line."""
        status = (
            "all"
            if self.complete
            else f"stopped by the time limit ({self.time_limit:g} s) after {self.evaluated} of"
        )
        lines = [
            f"{self.rows} records; {status} {self.total} combinations of 1 to {self.max_size} of "
            f"{len(self.candidates)} columns measured in {self.elapsed_seconds:.2f} s; "
            "most unique records first:"
        ]
        for combination in self.combinations[:top]:
            lines.append(
                f"  {combination.unique_records:>8} unique ({combination.uniqueness:7.2%}), "
                f"{combination.classes:>8} classes: {', '.join(combination.columns)}"
            )
        return "\n".join(lines)


def scan_quasi_identifiers(
    frame: pl.DataFrame,
    candidates: Sequence[str],
    *,
    max_size: int = DEFAULT_MAX_SIZE,
    time_limit: float | None = None,
) -> QiScan:
    """Measure every combination of 1 to ``max_size`` candidate columns, ranked.

    Stops before the next combination once ``time_limit`` seconds have passed.

    Raises:
        InputError: no candidates, a candidate named twice, a table without
            rows, ``max_size`` below 1 or ``time_limit`` not positive.
    """
    started = time.perf_counter()
    if not candidates:
        raise InputError("qi-scan needs at least one candidate column")
    if len(set(candidates)) != len(candidates):
        raise InputError(f"qi-scan: a column is named twice in {list(candidates)}")
    if isinstance(max_size, bool) or not isinstance(max_size, int) or max_size < 1:
        raise InputError(f"qi-scan: the largest combination size must be >= 1, got {max_size!r}")
    if time_limit is not None and not time_limit > 0:
        raise InputError(f"qi-scan: the time limit must be positive, got {time_limit}")
    if frame.height == 0:
        raise InputError("qi-scan: the table has no rows")
    largest = min(max_size, len(candidates))
    total = sum(math.comb(len(candidates), size) for size in range(1, largest + 1))
    measured: list[Combination] = []
    complete = True
    for size in range(1, largest + 1):
        for columns in itertools.combinations(candidates, size):
            if time_limit is not None and time.perf_counter() - started >= time_limit:
                complete = False
                break
            sizes = class_sizes(frame, columns)[CLASS_SIZE]
            unique = int((sizes == 1).sum())
            measured.append(
                Combination(
                    columns=columns,
                    classes=sizes.len(),
                    unique_records=unique,
                    uniqueness=unique / frame.height,
                )
            )
        if not complete:
            break
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
    )
