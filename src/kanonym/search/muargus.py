"""mu-Argus: generalize the attributes with rare values, then suppress cells.

Definition (Hundepool & Willenborg 1996, "mu- and tau-Argus: software for
statistical disclosure control"; as described and simulated by Sweeney,
"Achieving k-anonymity privacy protection using generalization and
suppression", IJUFKS 10(5), 2002, section 4.2): values and combinations of
values of one, two and three quasi-identifiers held by fewer than k rows are
*rare*. mu-Argus first generalizes attributes (the data holder chooses; in
Sweeney's automated simulation, the attribute with the most rare values),
then suppresses cells: in each row, the cell that takes part in the most rare
combinations, until no combination of up to three attributes is rare. Sweeney
shows that this can leave combinations of more attributes held by fewer than
k rows: the table need not be k-anonymous.

kanonym's version, in three phases:

1. *generalization* (this module): from the lattice's bottom, while the node
   is not acceptable, generalize by one level the attribute with the most
   values held by fewer than k rows; when no single value is rare, the
   attribute taking part in the most rare pairs and triples; ties go to the
   attribute with the most distinct values, then to column order. Only
   attributes below their highest allowed level are candidates.
2. *combinations* (:func:`kanonym.evaluation.combinations.suppress_rare_combinations`):
   mu-Argus's own cell suppression on the rare 1-3 attribute combinations.
3. *completion* (:func:`kanonym.evaluation.cell_choice.suppress_cells`), kanonym's
   completion of the method: cell suppression over the whole quasi-identifier
   until every released class holds k rows and satisfies every model, so that
   no release is ever left unprotected.

A node is acceptable when phases 2 and 3 succeed with at most MaxSup rows
holding a blanked cell (:class:`kanonym.evaluation.cells.CellSuppressionEvaluator`
with ``method="mu-argus"``, which the pipeline pairs with this search); the
report counts the cells each phase blanked. Like Datafly it checks at most one
node per level of height and keeps no per-node state, so it runs on lattices
too large to search exactly; it is a heuristic, not optimal.

Example:
    >>> import polars as pl
    >>> from kanonym.hierarchy import Hierarchy
    >>> from kanonym.encode import encode
    >>> from kanonym.metrics import MetricContext, make_metric
    >>> from kanonym.models import KAnonymity
    >>> from kanonym.evaluation import CellSuppressionEvaluator
    >>> from kanonym.search import run_search
    >>> zip_h = Hierarchy("zip", (("z1", "z2", "z3"), ("z12", "z12", "z3"), ("*", "*", "*")))
    >>> sex_h = Hierarchy("sex", (("M", "F"), ("*", "*")))
    >>> table = pl.DataFrame({"zip": ["z1", "z1", "z2", "z2", "z3", "z3", "z3"],
    ...                       "sex": ["M", "F", "M", "F", "M", "M", "F"]})
    >>> enc = encode(table, {"zip": zip_h, "sex": sex_h})
    >>> ev = CellSuppressionEvaluator(enc, [KAnonymity(k=2)], max_suppressed_rows=3,
    ...                               method="mu-argus")
    >>> metric = make_metric("loss", MetricContext(encoded=enc, frequency_set=ev.frequency_set))
    >>> best = run_search(MuArgusSearch(), ev, metric=metric).best
    >>> cells = ev.conversion(best.node)
    >>> best.node, best.suppressed_rows, cells.first_phase_cells, cells.suppression.total_cells
    ((1, 0), 3, 1, 3)

    Phase 2 blanks the ZIP of the one (z3, F) row; alone as (*, F) it is
    absorbed by the two (z12, F) rows, whose ZIP is blanked too.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from kanonym.evaluation.cell_choice import group_rows
from kanonym.evaluation.evaluator import NodeEvaluation, NodeEvaluator
from kanonym.lattice import Lattice, Node
from kanonym.models import required_k
from kanonym.search.base import SearchControl
from kanonym.search.datafly import climb, raisable


def rare_counts(evaluator: NodeEvaluator, node: Node, k: int) -> tuple[list[int], list[int]]:
    """Per attribute at ``node``: its values held by fewer than k rows, and the rare
    value combinations of two and three attributes it takes part in."""
    view = evaluator.view(node)
    codes, sizes = view.codes, view.sizes
    m = codes.shape[1]
    singles = [0] * m
    for a in range(m):
        counts = np.bincount(codes[:, a], weights=sizes)
        singles[a] = int(np.count_nonzero((counts > 0) & (counts < k)))
    combined = [0] * m
    if any(singles):
        return singles, combined
    for width in (2, 3):
        for subset in combinations(range(m), width):
            group, n_groups = group_rows(codes[:, list(subset)])
            rare = int(np.count_nonzero(np.bincount(group, weights=sizes, minlength=n_groups) < k))
            for a in subset:
                combined[a] += rare
    return singles, combined


def most_rare(evaluator: NodeEvaluator, node: Node, heights: Node, k: int) -> int | None:
    """The attribute mu-Argus generalizes next from ``node``, or None at the top.

    Phase 1 of the module docstring: most rare values, then most rare pairs
    and triples, then most distinct values, then column order.
    """
    candidates = raisable(node, heights)
    if not candidates:
        return None
    singles, combined = rare_counts(evaluator, node, k)
    attributes = evaluator.encoded.attributes
    # max keeps the first of equal keys: column order breaks the last ties.
    return max(
        candidates,
        key=lambda a: (singles[a], combined[a], attributes[a].cardinality(node[a])),
    )


class MuArgusSearch:
    """The node mu-Argus's generalization phase stops at (module docstring)."""

    name = "mu-argus"
    # The metric scores the one node for the report.
    uses_metric = True
    # One upward walk that stops at the first acceptable node.
    needs_monotone_models = False
    exact = False

    def solutions(
        self, lattice: Lattice, evaluator: NodeEvaluator, control: SearchControl
    ) -> list[NodeEvaluation]:
        """The first acceptable node of the walk, as a one-element list (empty if none)."""
        k = required_k(evaluator.models)
        return climb(
            lattice, evaluator, control, lambda node: most_rare(evaluator, node, lattice.heights, k)
        )
