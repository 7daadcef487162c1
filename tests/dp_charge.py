"""Differentially private releases for the ledger's budget tests, made with the real model.

The ledger charges a release to its source's privacy budget when the job's
models hold a differentially private one (:class:`kanonym.DifferentialPrivacy`,
SafePub). The source is eight rows: delta must stay below 1/8, and the k the
model derives is larger than the table, so every release suppresses all its
drawn rows: what the ledger sees is a real differentially private release.
Each release takes the next of :data:`SEEDS`, so that it draws at least one row
(a release that draws none is refused before the ledger is involved) and no
two releases of a source share a seed (the ledger refuses that).
"""

from __future__ import annotations

import itertools
import sys
from pathlib import Path
from typing import Any

import polars as pl

import kanonym
from kanonym.config import AnonymizationConfig
from kanonym.errors import BudgetExceededError
from kanonym.release import recorded

ZIPS = ("02138", "02139", "02141", "02142", "02138", "02139", "02141", "02142")
"""The source's ZIP codes: every release of it (mask, k=2) is the same and links nowhere."""

DELTA = 1e-9
"""The delta of a release that names none: a differentially private model always has one."""

SEEDS = (105, 500, 581, 734, 831, 852, 936, 963, 1007, 1140, 1264, 1322, 1367, 1409, 1957)
SEEDS += (2005, 2100, 2226, 2279, 2585, 2593, 2622, 2730, 2918, 2992, 3019, 3082, 3207, 3300)
"""Job seeds whose sample stream (kanonym.release.differential_privacy.draw_sample) starts with
one uniform below 0.001 among its first eight: a release with one of them (and epsilon >=
0.01, so beta >= 0.00995) draws a row of the eight, or of a grown source."""

_next_seed = itertools.cycle(SEEDS)


def write_source(folder: Path, name: str = "t.csv", zips: tuple[str, ...] = ZIPS) -> Path:
    """A small table: a name (identifying) and a ZIP code (the quasi-identifier)."""
    path = folder / name
    pl.DataFrame({"name": [f"p{i}" for i in range(len(zips))], "zip": list(zips)}).write_csv(path)
    return path


def config(
    epsilon: float | None, delta: float = DELTA, seed: int | None = None
) -> AnonymizationConfig:
    """The job on :func:`write_source`'s table; differentially private with (epsilon, delta)
    unless epsilon is None (then k-anonymity with k = 2)."""
    if epsilon is None:
        return AnonymizationConfig(
            quasi_identifiers={"zip": "mask"}, identifying=("name",), k=2, seed=seed
        )
    return AnonymizationConfig(
        quasi_identifiers={"zip": "mask"},
        identifying=("name",),
        k=1,
        seed=next(_next_seed) if seed is None else seed,
        models=(kanonym.DifferentialPrivacy(epsilon, delta),),
    )


REFUSED = 10
"""Exit code of :func:`release_in_child` when the budget refused the release."""


def release_in_child(
    ledger: str, source: str, output: str, epsilon: float, delta: float, start: Any, seed: int
) -> None:
    """A process's release charging (epsilon, delta) with ``seed``: exit 0 if recorded,
    :data:`REFUSED` if the budget refused it (anything else fails with its traceback).
    ``start`` is a barrier the processes pass together, so that they release at once."""
    opened = recorded.Ledger(ledger)
    start.wait()
    try:
        opened.release(source, config(epsilon, delta, seed=seed), output=output)
    except BudgetExceededError:
        sys.exit(REFUSED)
    sys.exit(0)
