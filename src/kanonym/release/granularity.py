"""The release steps that depend on the technique class (:mod:`kanonym.technique`).

The pipeline (:mod:`kanonym.release.pipeline`) calls these where a technique
changes a step:

* **_AS** (attribute suppression alone): every quasi-identifier is either kept
  as it is or wholly replaced by its root; the search runs over those 2^n
  choices as a lattice of its own, each attribute's hierarchy cut down to its
  leaves and its root (:func:`search_attribute_suppression`).
* **AG_CS, _CS and mu-Argus** (cell suppression): the node's failing rows keep
  their place with some cells blanked (:func:`blank_release`), measured cell by
  cell (:func:`measure_cells`) and re-checked against the input row by row
  (:func:`release_cells`, with :func:`kanonym.verify.verify_cells`).

Example (the ZIP hierarchy cut to leaves and root, for _AS):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02141"), ("0213*", "0214*"), ("*", "*")))
    >>> cut = two_level(encode(pl.DataFrame({"zip": ["02138", "02141"]}), {"zip": h}))
    >>> cut.heights, cut.attributes[0].level_labels
    ((1,), (('02138', '02141'), ('*',)))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.config import AnonymizationConfig
from kanonym.encode import EncodedAttribute, EncodedTable
from kanonym.errors import VerificationError
from kanonym.evaluation import CellSuppressionEvaluator, NodeCells, NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.lattice import Node
from kanonym.metrics import MetricContext, UtilityMetric, make_metric
from kanonym.metrics.cells import cell_score, precision_by_attribute
from kanonym.result import CellReport
from kanonym.search import ALGORITHMS, SearchControl, SearchOutcome, run_search
from kanonym.transform import blank_cells
from kanonym.transform.cells import group_rows
from kanonym.verify import verify_cells, verify_models

IntArray = npt.NDArray[np.int64]


def two_level(encoded: EncodedTable) -> EncodedTable:
    """``encoded`` with every hierarchy cut to its leaves and its root (levels 0 and 1)."""
    attributes = []
    for attribute in encoded.attributes:
        hierarchy = attribute.hierarchy
        cut = Hierarchy(
            f"{hierarchy.name} (kept or suppressed)", (hierarchy.levels[0], hierarchy.levels[-1])
        )
        attributes.append(
            EncodedAttribute(
                name=attribute.name,
                hierarchy=cut,
                row_codes=attribute.row_codes,
                level_maps=(attribute.level_maps[0], attribute.level_maps[-1]),
                level_labels=(attribute.level_labels[0], attribute.level_labels[-1]),
            )
        )
    return EncodedTable(attributes=tuple(attributes), n_rows=encoded.n_rows)


def search_attribute_suppression(
    evaluator: NodeEvaluator,
    *,
    algorithm: str,
    metric: str | None,
    policy: str | None,
    weights: tuple[float, ...],
    k: int,
    control: SearchControl,
) -> SearchOutcome:
    """The _AS search: ``algorithm`` over the keep-or-suppress lattice {0, 1}^n.

    Level 1 of the cut hierarchies is the root, so every metric measured on a
    released table is the same as at the corresponding node of the full
    lattice, except ``height`` (a sum of levels): its weights are multiplied
    by each hierarchy's height to rank as in the full lattice. Policies count
    one step per suppressed attribute. The solutions are returned as nodes of
    the full lattice (each level 0 or the height), evaluated by ``evaluator``.
    """
    encoded = evaluator.encoded
    cut = two_level(encoded)
    inner = NodeEvaluator(
        cut,
        evaluator.models,
        max_suppressed_rows=evaluator.max_suppressed_rows,
        frequency_set=evaluator.frequency_set,
        sensitive=evaluator.sensitive,
    )
    scale = encoded.heights if metric == "height" else (1,) * len(encoded.heights)
    context = MetricContext(
        encoded=cut,
        frequency_set=inner.frequency_set,
        k=k,
        weights=tuple(w * h for w, h in zip(weights, scale, strict=True)),
    )
    outcome = run_search(
        ALGORITHMS[algorithm],
        inner,
        policy=policy,
        metric=None if metric is None else make_metric(metric, context),
        control=control,
    )
    heights = encoded.heights
    solutions = tuple(
        evaluator.evaluate(tuple(level * h for level, h in zip(s.node, heights, strict=True)))
        for s in outcome.solutions
    )
    return SearchOutcome(
        solutions=solutions,
        nodes_checked=outcome.nodes_checked,
        algorithm=outcome.algorithm,
        proven_optimal=outcome.proven_optimal,
    )


def measure_cells(
    node: Node, evaluator: CellSuppressionEvaluator, metrics: Mapping[str, UtilityMetric]
) -> tuple[dict[str, object], int]:
    """Every reported measure of a cell-suppressed release at ``node``, and its blanked cells."""
    cells = _conversion(evaluator, node)
    view = cells.view(evaluator.star(node))
    encoded = evaluator.encoded
    measures: dict[str, object] = {
        "precision_by_attribute": precision_by_attribute(
            node, encoded.heights, encoded.names, view
        ),
        "completeness": 1.0,
        "equivalence_classes": len(view.released_sizes),
    }
    for name, metric in metrics.items():
        measures[name] = reported_score(name, cell_score(metric, node, view))
    return measures, cells.suppression.total_cells


def reported_score(name: str, score: float) -> float | int:
    """The score of metric ``name`` as reports show it (full-domain and cell releases alike)."""
    if name == "precision":
        score = 1.0 - score  # reports show precision; the search minimizes 1 - precision
    # Counting metrics stay whole numbers in reports.
    return int(score) if name in ("dm", "dm-star") else score


def _conversion(evaluator: CellSuppressionEvaluator, node: Node) -> NodeCells:
    cells = evaluator.conversion(node)
    if cells is None:
        raise ValueError(f"node {node} has no cell suppression within the limit")
    return cells


def blank_release(
    frame: pl.DataFrame,
    evaluator: CellSuppressionEvaluator,
    node: Node,
    *,
    drop: tuple[str, ...],
    seed: int,
) -> tuple[pl.DataFrame, IntArray, NodeCells]:
    """The release at ``node`` with its blanked cells, the input row of each released
    row, and the cells as the search chose them."""
    cells = _conversion(evaluator, node)
    # Each frequency-set tuple's class, found by its codes at the node (the
    # conversion's classes may be numbered in another order than a new grouping).
    encoded, fs = evaluator.encoded, evaluator.frequency_set
    tuple_codes = np.column_stack(
        [
            attribute.level_maps[level][fs.codes[:, a]]
            for a, (attribute, level) in enumerate(zip(encoded.attributes, node, strict=True))
        ]
    )
    class_codes = cells.codes
    joint, n_keys = group_rows(np.vstack([class_codes, tuple_codes]))
    class_of_key = np.full(n_keys, -1, dtype=np.int64)
    class_of_key[joint[: len(class_codes)]] = np.arange(len(class_codes), dtype=np.int64)
    row_class = class_of_key[joint[len(class_codes) :]][fs.row_tuple]
    if (row_class < 0).any():
        raise ValueError(f"a row has no class of node {node} in the conversion")
    blanked = cells.suppression.mask[row_class] & (
        class_codes[row_class] != evaluator.star(node)[None, :]
    )
    released, rows = blank_cells(frame, encoded, node, blanked=blanked, drop=drop, seed=seed)
    return released, rows, cells


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

    Transforms (:func:`blank_release`), then re-checks independently: every
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
        quasi_identifiers=names,
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
    verify_models(released, quasi_identifiers=names, source=frame, models=evaluator.models)
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
