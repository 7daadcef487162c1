"""What a command that makes a release prints: its one-line summary, its files, its warnings.

Example:
    >>> written("out.csv"), written("out.csv", None, "out.json", "out.html")
    ('out.csv', 'out.csv, out.json and out.html')
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kanonym.engine.postgres import redact
from kanonym.search import ALGORITHMS, DEFAULT_ALGORITHM

if TYPE_CHECKING:
    from kanonym.result import Result


def summary(result: Result) -> str:
    """One line: rows released and suppressed, the generalization or recoding, the choice."""
    config, metrics = result.config, result.metrics
    if result.transformation is None:
        recoding = result.recoding or {}
        return (
            f"released {result.released_rows} of {result.input_rows} rows (none suppressed); "
            f"{config.algorithm}: {recoding.get('partitions')} partitions, "
            f"{metrics['equivalence_classes']} classes; ncp {metrics['ncp']:.6g}, "
            f"C_AVG {metrics['aecs']:.6g}"
        )
    levels = ", ".join(f"{name}={level}" for name, level in result.transformation.items())
    if config.metric is not None:
        if any(m.name == "differential-privacy" for m in result.models):
            proof = "chosen under differential privacy (SafePub), not optimized"
        elif not ALGORITHMS[config.algorithm].exact:
            proof = "a heuristic: not proven optimal"
        elif result.proven_optimal:
            proof = "proven optimal"
        else:
            proof = "best found before the time limit, not proven optimal"
        # The default search goes without saying; another is named.
        search = "" if config.algorithm == DEFAULT_ALGORITHM else f"{config.algorithm}, "
        choice = f"{config.metric} {metrics[config.metric]:.6g} ({search}{proof})"
    else:
        choice = (
            f"{len(result.minimal_generalizations)} solution(s) from {config.algorithm}, "
            f"chosen by {config.policy}"
        )
    cells = result.suppressed_cells
    if config.granularity.cells and cells is not None:
        suppression = (
            f"{cells.counts.total} cells blanked in {cells.counts.rows} rows, "
            f"limit {result.max_suppressed_rows} rows"
        )
    else:
        suppression = f"{result.suppressed_rows} suppressed, limit {result.max_suppressed_rows}"
    return (
        f"released {result.released_rows} of {result.input_rows} rows ({suppression}); "
        f"generalization [{levels}]; {choice}; "
        f"{metrics['equivalence_classes']} classes, {result.nodes_checked} nodes checked"
    )


def written(*paths: Path | str | None) -> str:
    """The files a command wrote, in order: ``a``, ``a and b``, ``a, b and c``."""
    names = [redact(str(path)) for path in paths if path is not None]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def print_warnings(result: Result) -> None:
    """Each of the release's warnings on stderr (also with --quiet: they are not chatter)."""
    for warning in result.warnings:
        print(f"kanonym: warning: {warning}", file=sys.stderr)
