"""The release step of the cell-suppression techniques (:mod:`kanonym.technique`).

Under AG_CS, _CS and mu-Argus the node's failing rows keep their place with
some cells blanked. The cells were chosen when the node was judged
(:class:`kanonym.evaluation.CellSuppressionEvaluator`); here they are written
(:func:`kanonym.transform.blank_release`) and the release re-checked against
the input row by row (:func:`release_cells`, with
:func:`kanonym.verify.verify_cells`). The other technique-dependent steps live
with their kind: the _AS search in :mod:`kanonym.search.attribute_suppression`,
the cell measures in :func:`kanonym.evaluation.cells.measure_cells`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.errors import VerificationError
from kanonym.evaluation import CellSuppressionEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Node
from kanonym.result import CellReport
from kanonym.transform import blank_release
from kanonym.verify import verify_cells, verify_models


def release_cells(
    frame: pl.DataFrame,
    evaluator: CellSuppressionEvaluator,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    *,
    config: AnonymizationConfig,
    seed: int,
    lap: Callable[[str], None],
) -> tuple[pl.DataFrame, CellReport]:
    """The verified cell-suppressed release at ``node`` and its blanked cells.

    Transforms (:func:`kanonym.transform.blank_release`), then re-checks independently: every
    cell against its input row (:func:`kanonym.verify.verify_cells`), the
    counts against the search's, every model (:func:`kanonym.verify.verify_models`).
    ``lap(step)`` charges the time of ``transform`` and ``verify``. Raises
    VerificationError when a check fails.
    """
    names = evaluator.encoded.names
    released, rows, cells = blank_release(
        frame, evaluator, node, drop=config.identifying, seed=seed
    )
    lap("transform")
    counts = verify_cells(
        released,
        source=frame,
        source_rows=rows,
        columns=names,
        hierarchies=hierarchies,
        levels=dict(zip(names, node, strict=True)),
        k=config.k,
        max_rows=evaluator.max_suppressed_rows,
        removed_columns=config.identifying,
    )
    blanked = cells.suppression
    if (counts.total, counts.rows) != (blanked.total_cells, blanked.rows):
        raise VerificationError(
            f"release shows {counts.total} blanked cells in {counts.rows} rows; "
            f"the search blanked {blanked.total_cells} in {blanked.rows}"
        )
    verify_models(released, columns=names, source=frame, models=evaluator.models)
    lap("verify")
    phases = (
        {
            "combinations": cells.first_phase_cells,
            "completion": counts.total - cells.first_phase_cells,
        }
        if evaluator.method == "mu-argus"
        else None
    )
    return released, CellReport(counts, phases)
