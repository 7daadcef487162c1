"""Evaluation engine: checking and scoring one lattice node, apart from the search.

The search algorithms (:mod:`kanonym.search`) decide *which* nodes to check;
this package decides what a node is worth: its equivalence classes, rolled up
from the frequency set or a cached specialization (:mod:`~kanonym.evaluation.partition`,
with the compiled :mod:`~kanonym.evaluation.kernels`), whether they satisfy the
privacy models within the suppression limit and the node's score
(:class:`NodeEvaluator`), and, under cell suppression, which cells must be
blanked for the node to be acceptable (:class:`CellSuppressionEvaluator`).
ARX draws the same line between ``framework/check`` and ``algorithm``
(Prasser & Kohlmayer 2015, "Putting statistical disclosure control into
practice: the ARX data anonymization tool").
"""

from kanonym.evaluation.cells import CellSuppressionEvaluator, NodeCells
from kanonym.evaluation.evaluator import NodeClasses, NodeEvaluation, NodeEvaluator

__all__ = [
    "CellSuppressionEvaluator",
    "NodeCells",
    "NodeClasses",
    "NodeEvaluation",
    "NodeEvaluator",
]
