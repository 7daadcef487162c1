"""The _AS search: attribute suppression alone, over the keep-or-suppress lattice.

Under attribute suppression (_AS in Samarati's classification, Ciriani et al.
2007, "k-Anonymity", Secure Data Management in Decentralized Systems) every
quasi-identifier is either released as it is or wholly replaced by its root.
The search runs over those 2^n choices as a lattice of its own, each
attribute's hierarchy cut down to its leaves and its root (:func:`two_level`),
with any algorithm of :data:`kanonym.search.ALGORITHMS`
(:func:`search_attribute_suppression`).

Example (the ZIP hierarchy cut to leaves and root):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy
    >>> h = Hierarchy("zip", (("02138", "02141"), ("0213*", "0214*"), ("*", "*")))
    >>> cut = two_level(encode(pl.DataFrame({"zip": ["02138", "02141"]}), {"zip": h}))
    >>> cut.heights, cut.attributes[0].level_labels
    ((1,), (('02138', '02141'), ('*',)))
"""

from __future__ import annotations

from kanonym.encode import EncodedAttribute, EncodedTable
from kanonym.evaluation import NodeEvaluator
from kanonym.hierarchy import Hierarchy
from kanonym.metrics import MetricContext, make_metric
from kanonym.search import ALGORITHMS
from kanonym.search.base import SearchControl, SearchOutcome, run_search


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
                level_maps=(attribute.level_maps[0], attribute.level_maps[-1]),
                level_labels=(attribute.level_labels[0], attribute.level_labels[-1]),
            )
        )
    return EncodedTable(attributes=tuple(attributes), frequency_set=encoded.frequency_set)


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
