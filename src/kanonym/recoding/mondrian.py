"""Mondrian multidimensional partitioning (LeFevre, DeWitt & Ramakrishnan 2006).

K. LeFevre, D. DeWitt and R. Ramakrishnan, "Mondrian multidimensional
k-anonymity", ICDE 2006. Every quasi-identifier is an axis, every row a point;
the space is cut recursively into regions that each hold a class satisfying
the privacy models, and every row is released with its region's summary (a
numeric range or a hierarchy node, :mod:`kanonym.recoding.dimensions`). Two
rows with equal values may land in different classes: this is *local
recoding* (Samarati's CG_ = CG_CS, cell generalization), so nothing needs to
be suppressed.

A cut splits a partition into parts; it is **allowable** when every part
satisfies every model (k-anonymity: at least k rows). The greedy algorithm
starts from one partition holding all rows and cuts every partition that has
an allowable cut along the axis of widest normalized range (the paper's
``choose_dimension``; ties to the first quasi-identifier) among those with an
allowable cut, until none has one. The result is *minimal* in the paper's
sense: no allowable cut is left for any partition. The cuts:

==============  =============================================================
axis, variant   cut
==============  =============================================================
numeric,        a threshold t: values <= t on one side, > t on the other;
strict          of the allowable thresholds, the most balanced (the sizes
                differ least; ties to the lower t). This is the paper's
                median cut whenever that is allowable, and finds an
                allowable cut whenever one exists.
numeric,        the paper's relaxed cut at the median m (the value of the
relaxed         ceil(n/2)-th row in order): values < m left, > m right, rows
                equal to m split so that the left part holds floor(n/2)
                rows, those with the lowest sensitive values (in the order
                of :func:`kanonym.encode.encode_sensitive`; several
                attributes in the order declared) going left; allowable when
                the partition holds two values or more and both halves
                satisfy the models.
categorical,    into the children of the partition's lowest common ancestor
strict          (its values' nodes one level below it); allowable when every
                child satisfies the models.
categorical,    the children that satisfy the models become partitions, the
relaxed         others are pooled into one partition that keeps the ancestor
                as its summary (it overlaps its siblings, as relaxed regions
                may); allowable when one child or more passes and the pool,
                if any, satisfies the models.
==============  =============================================================

A numeric summary is the partition's **box**, not its least and greatest
value (which could be one person's, the oldest age): each cut places an
edge in the gap it leaves between its parts, at the roundest number there
that prints neither neighbour, and the outermost edges are the grid cells
holding the column's extremes (:mod:`kanonym.recoding.edges`). Parts are
boxes of their partition's box; a strict cut makes them meet at one edge, a
relaxed cut whose parts both hold the median makes them overlap around it.
Which cuts are made does not depend on the edges: choices compare the
partitions' values, as the paper does.

Relaxed partitions may share a summary, and the release then shows them as one
class. k-anonymity, l-diversity (distinct, entropy, recursive), t-closeness
(EMD is convex in the class distribution) and beta-likeness (a bound on each
value's share) hold for a union of classes that hold them; delta-disclosure
does not (a value present in one class and absent from the other is diluted
in the union), so the relaxed variant rejects it.

The algorithm works on *units*, the distinct combinations of
quasi-identifier and sensitive codes with their row counts (the frequency set
of :mod:`kanonym.encode`, refined by the sensitive values the models read),
and handles all partitions of one depth together with vectorized NumPy: per
round and axis one sort of the units by partition and value. A relaxed cut
splits a unit's count between the two halves.

Example (Samarati 2008's slides: marital status x ZIP, 3-anonymous):
    >>> import polars as pl
    >>> from kanonym.encode import encode
    >>> from kanonym.hierarchy import Hierarchy, MaskBuilder
    >>> from kanonym.models import KAnonymity
    >>> status = ["divorced", "divorced", "married", "married", "married",
    ...           "single", "single", "single", "widow"]
    >>> zips = ["94142", "94141", "94139", "94139", "94139", "94138", "94139", "94139", "94141"]
    >>> marital = Hierarchy("marital", (
    ...     ("married", "single", "divorced", "widow"),
    ...     ("married", "single", "divorced or widow", "divorced or widow"),
    ...     ("married", "not married", "not married", "not married"),
    ...     ("*",) * 4))
    >>> mask = MaskBuilder().build(zips, column="zip", source="slides")
    >>> frame = pl.DataFrame({"marital": status, "zip": zips})
    >>> encoded = encode(frame, {"marital": marital, "zip": mask})
    >>> p = Mondrian().partition(encoded, [KAnonymity(k=3)], numeric=(False, False))
    >>> sorted(set(zip(p.labels(0), p.labels(1))))
    [('divorced or widow', '9414*'), ('married', '94139'), ('single', '9413*')]
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np
import numpy.typing as npt

from kanonym.encode import EncodedTable, FrequencySet, SensitiveAttribute
from kanonym.errors import InputError, NoSolutionError
from kanonym.models import (
    BasicBetaLikeness,
    ClassStatistics,
    DistinctLDiversity,
    EnhancedBetaLikeness,
    EntropyLDiversity,
    EqualDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    KAnonymity,
    OrderedDistanceTCloseness,
    PrivacyModel,
    RecursiveCLDiversity,
    required_k,
)
from kanonym.recoding import edges
from kanonym.recoding.dimensions import (
    CategoricalDimension,
    Dimension,
    NumericDimension,
    numeric_dimension,
)
from kanonym.recoding.dimensions import dimensions as build_dimensions
from kanonym.recoding.partitioning import Partitioning

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]

UNION_CLOSED: tuple[type, ...] = (
    KAnonymity,
    DistinctLDiversity,
    EntropyLDiversity,
    RecursiveCLDiversity,
    EqualDistanceTCloseness,
    OrderedDistanceTCloseness,
    HierarchicalDistanceTCloseness,
    BasicBetaLikeness,
    EnhancedBetaLikeness,
)
"""Models that hold for the union of two classes that hold them (see module docstring)."""

# Sensitive-value counts of candidate parts are dense (parts x values) matrices;
# partitions are handled in chunks of at most this many unit x value cells.
_CELLS_PER_CHUNK = 1 << 24


class _Judge:
    """Every model applied to candidate parts, from their sizes and value counts."""

    def __init__(
        self,
        models: Sequence[PrivacyModel],
        sensitive: Sequence[SensitiveAttribute],
        weights: IntArray,
    ):
        """``sensitive[a].row_codes`` holds each record's code, ``weights`` its rows."""
        self.models = tuple(models)
        needed = {name for model in self.models for name in model.sensitive_attributes}
        available = {a.name for a in sensitive}
        missing = sorted(needed - available)
        if missing:
            raise InputError(
                f"the models need sensitive attribute(s) {missing}; declare them in `sensitive`"
            )
        self.attributes = tuple(a for a in sensitive if a.name in needed)
        self.value_counts = tuple(len(a.labels) for a in self.attributes)
        self._overall = {
            a.name: np.bincount(a.row_codes, weights=weights, minlength=len(a.labels)).astype(
                np.int64
            )
            for a in self.attributes
        }
        self._values = {a.name: a.labels for a in self.attributes}
        # Parts below the largest k fail anyway: they are not shown to the models.
        self.floor = required_k(self.models)

    def _statistics(self, sizes: IntArray, histograms: Sequence[IntArray]) -> ClassStatistics:
        """What the models read of parts of ``sizes`` rows; ``histograms[a]`` is (parts, values)."""
        return ClassStatistics(
            sizes,
            sensitive={a.name: h for a, h in zip(self.attributes, histograms, strict=True)},
            overall=self._overall,
            values=self._values,
        )

    def failing(self, sizes: IntArray, histograms: Sequence[IntArray]) -> list[str]:
        """Names of the models some of the given parts fail."""
        statistics = self._statistics(sizes, histograms)
        return [m.name for m in self.models if not m.satisfied_classes(statistics).all()]

    def __call__(self, sizes: IntArray, histograms: Sequence[IntArray]) -> BoolArray:
        """Per part, whether every model holds; ``histograms[a]`` is (parts, values)."""
        ok = sizes >= self.floor
        shown = np.flatnonzero(ok)
        if len(shown):
            statistics = self._statistics(sizes[shown], [h[shown] for h in histograms])
            passed = np.ones(len(shown), dtype=np.bool_)
            for model in self.models:
                passed &= model.satisfied_classes(statistics)
            ok[shown] = passed
        return ok


def _histograms(
    group: IntArray,
    n_groups: int,
    sensitive: IntArray,
    weights: IntArray,
    value_counts: Sequence[int],
) -> list[IntArray]:
    """Per sensitive attribute, rows of each group holding each value: (groups, values)."""
    return [
        np.bincount(group * m + sensitive[a], weights=weights, minlength=n_groups * m)
        .reshape(n_groups, m)
        .astype(np.int64)
        for a, m in enumerate(value_counts)
    ]


def _starts(sorted_ids: IntArray) -> IntArray:
    """Positions where a run of equal values begins in a sorted array."""
    first = np.ones(len(sorted_ids), dtype=np.bool_)
    first[1:] = sorted_ids[1:] != sorted_ids[:-1]
    return np.flatnonzero(first)


@dataclass(frozen=True, eq=False)
class _Groups:
    """Units of a chunk grouped by (partition, value on one axis), groups in that order.

    ``order`` sorts the units by group (stably), ``starts`` are the sorted
    positions where groups begin, ``group[u]`` is unit u's group; ``part``,
    ``value`` and ``count`` are per group; ``first``/``last`` per partition:
    its first and last group.
    """

    order: IntArray
    starts: IntArray
    group: IntArray
    part: IntArray
    value: IntArray
    count: IntArray
    first: IntArray
    last: IntArray

    @classmethod
    def of(cls, part: IntArray, value: IntArray, counts: IntArray, radix: int) -> _Groups:
        key = part * radix + value
        # Stable, so that units of one group keep their order (relaxed cuts take a prefix).
        order = np.argsort(key, kind="stable")
        sorted_key = key[order]
        starts = _starts(sorted_key)
        of_sorted = np.zeros(len(key), dtype=np.int64)
        of_sorted[starts[1:]] = 1
        group = np.empty(len(key), dtype=np.int64)
        group[order] = np.cumsum(of_sorted)
        group_key = sorted_key[starts]
        group_part = group_key // radix
        first = _starts(group_part)
        return cls(
            order=order,
            starts=starts,
            group=group,
            part=group_part,
            value=group_key - group_part * radix,
            count=np.add.reduceat(counts[order], starts),
            first=first,
            last=np.append(first[1:], len(starts)) - 1,
        )


@dataclass(frozen=True, eq=False)
class _AxisCuts:
    """The cut one axis offers each partition of a chunk.

    ``widths``, ``allowed``, ``parts`` (how many parts the cut makes) and
    ``summary`` (P x 2) are per partition; ``side`` is each unit's part;
    ``left`` (relaxed numeric cuts) the rows of each unit that go to part 0,
    the others going to part 1. ``gaps`` (numeric cuts, P x 4): the ranks
    around part 0's new upper edge and around part 1's new lower edge, the
    greatest value below the edge and the least above it; -1 where the part
    keeps its partition's edge.
    """

    widths: FloatArray
    allowed: BoolArray
    parts: IntArray
    summary: IntArray
    side: IntArray
    left: IntArray | None
    gaps: IntArray | None = None


@dataclass(frozen=True, eq=False)
class _Chunk:
    """Units of consecutive partitions: ``part`` numbers them from 0, units sorted by it."""

    codes: IntArray
    sensitive: IntArray
    counts: IntArray
    part: IntArray
    sizes: IntArray
    starts: IntArray


def _numeric_cuts(
    axis: NumericDimension, codes: IntArray, chunk: _Chunk, judge: _Judge, relaxed: bool
) -> _AxisCuts:
    groups = _Groups.of(chunk.part, codes, chunk.counts, axis.cardinality)
    n_parts = len(chunk.sizes)
    low, high = groups.value[groups.first], groups.value[groups.last]
    summary = np.column_stack([low, high])
    widths = axis.widths(low, high)
    cumulative = np.cumsum(groups.count)
    before = (cumulative - groups.count)[groups.first]
    # Rows of its partition at or below each group's value.
    at_or_below = cumulative - before[groups.part]
    histograms = _histograms(
        groups.group, len(groups.count), chunk.sensitive, chunk.counts, judge.value_counts
    )
    if relaxed:
        allowed, left, gaps = _relaxed_split(
            codes, chunk, judge, groups, at_or_below, histograms, summary
        )
        return _AxisCuts(
            widths=widths,
            allowed=allowed,
            parts=np.where(allowed, 2, 1),
            summary=summary,
            side=(left == 0).astype(np.int64),
            left=left,
            gaps=gaps,
        )
    n = chunk.sizes[groups.part]
    candidate = np.ones(len(groups.count), dtype=np.bool_)
    candidate[groups.last] = False
    candidate &= (at_or_below >= judge.floor) & (n - at_or_below >= judge.floor)
    index = np.flatnonzero(candidate)
    running = [np.cumsum(h, axis=0) for h in histograms]
    offsets = [(r - h)[groups.first] for r, h in zip(running, histograms, strict=True)]
    lower = [r[index] - o[groups.part[index]] for r, o in zip(running, offsets, strict=True)]
    upper = [
        (r[groups.last] - o)[groups.part[index]] - lo
        for r, o, lo in zip(running, offsets, lower, strict=True)
    ]
    ok = judge(at_or_below[index], lower) & judge(n[index] - at_or_below[index], upper)
    good = index[ok]
    # The most balanced allowable threshold of each partition, ties to the lowest.
    imbalance = np.abs(2 * at_or_below[good] - n[good])
    ranked = good[np.lexsort((good, imbalance, groups.part[good]))]
    best = ranked[_starts(groups.part[ranked])]
    allowed = np.zeros(n_parts, dtype=np.bool_)
    allowed[groups.part[best]] = True
    threshold = np.full(n_parts, axis.cardinality, dtype=np.int64)
    threshold[groups.part[best]] = groups.value[best]
    # Both parts meet at one edge, in the gap after the threshold (best is not a
    # partition's last group, so best + 1 is the next value of the same partition).
    gaps = np.full((n_parts, 4), -1, dtype=np.int64)
    below, above = groups.value[best], groups.value[best + 1]
    gaps[groups.part[best]] = np.column_stack([below, above, below, above])
    return _AxisCuts(
        widths=widths,
        allowed=allowed,
        parts=np.where(allowed, 2, 1),
        summary=summary,
        side=(codes > threshold[chunk.part]).astype(np.int64),
        left=None,
        gaps=gaps,
    )


def _relaxed_split(
    codes: IntArray,
    chunk: _Chunk,
    judge: _Judge,
    groups: _Groups,
    at_or_below: IntArray,
    histograms: list[IntArray],
    summary: IntArray,
) -> tuple[BoolArray, IntArray, IntArray]:
    """Relaxed median cuts: whether each partition's is allowable, each unit's left rows,
    and the gaps of the parts' new edges (see :class:`_AxisCuts`)."""
    sizes = chunk.sizes
    # The median's group: the first whose count at or below reaches ceil(n/2).
    reached = at_or_below >= ((sizes + 1) // 2)[groups.part]
    median = groups.first + np.add.reduceat((~reached).astype(np.int64), groups.first)
    below = at_or_below[median] - groups.count[median]
    halves = sizes // 2
    # Rows equal to the median that go left (floor(n/2) in all), taken in unit order.
    needed = halves - below
    ordered = chunk.counts[groups.order]
    ahead = np.cumsum(ordered) - ordered
    ahead -= ahead[groups.starts][groups.group[groups.order]]
    part = chunk.part[groups.order]
    value = codes[groups.order]
    median_value = groups.value[median][part]
    left_ordered = np.where(
        value < median_value,
        ordered,
        np.where(value == median_value, np.clip(needed[part] - ahead, 0, ordered), 0),
    )
    left = np.empty(len(codes), dtype=np.int64)
    left[groups.order] = left_ordered
    lower = _histograms(chunk.part, len(sizes), chunk.sensitive, left, judge.value_counts)
    totals = [np.add.reduceat(h, groups.first, axis=0) for h in histograms]
    upper = [t - lo for t, lo in zip(totals, lower, strict=True)]
    allowed = (summary[:, 0] < summary[:, 1]) & judge(halves, lower) & judge(sizes - halves, upper)
    # No row equal to the median goes left: the parts meet in the gap below it;
    # all of them go left: in the gap above it. Otherwise both parts hold the
    # median and overlap: the left part ends in the gap above it, the right
    # starts in the gap below it, each keeping its partition's edge where the
    # median is the partition's last (first) value.
    has_before, has_after = median > groups.first, median < groups.last
    before = groups.value[np.where(has_before, median - 1, median)]
    after = groups.value[np.where(has_after, median + 1, median)]
    at = groups.value[median]
    none = np.full(len(sizes), -1, dtype=np.int64)
    below_gap = np.column_stack(
        [np.where(has_before, before, none), np.where(has_before, at, none)]
    )
    above_gap = np.column_stack([np.where(has_after, at, none), np.where(has_after, after, none)])
    all_left = (needed >= groups.count[median])[:, None]
    none_left = (needed <= 0)[:, None]
    gaps = np.column_stack(
        [
            np.where(none_left, below_gap, above_gap),
            np.where(all_left, above_gap, below_gap),
        ]
    )
    return allowed, left, gaps


def _categorical_cuts(
    axis: CategoricalDimension, codes: IntArray, chunk: _Chunk, judge: _Judge, relaxed: bool
) -> _AxisCuts:
    n_parts = len(chunk.sizes)
    # The lowest common ancestor: the lowest level where the partition holds one node.
    level = np.full(n_parts, axis.height, dtype=np.int64)
    open_ = np.ones(n_parts, dtype=np.bool_)
    for lv in range(axis.height):
        nodes = axis.maps[lv][codes]
        single = np.minimum.reduceat(nodes, chunk.starts) == np.maximum.reduceat(
            nodes, chunk.starts
        )
        level[open_ & single] = lv
        open_ &= ~single
        if not open_.any():
            break
    node = axis.maps[level, codes[chunk.starts]]
    summary = np.column_stack([level, node])
    child = axis.maps[np.maximum(level - 1, 0)[chunk.part], codes]
    groups = _Groups.of(chunk.part, child, chunk.counts, axis.cardinality)
    histograms = _histograms(
        groups.group, len(groups.count), chunk.sensitive, chunk.counts, judge.value_counts
    )
    passed = judge(groups.count, histograms)
    within = np.arange(len(groups.count)) - groups.first[groups.part]
    if not relaxed:
        allowed = (level > 0) & np.logical_and.reduceat(passed, groups.first)
        group_side = within
        parts = groups.last - groups.first + 1
    else:
        failed = ~passed
        passing = np.add.reduceat(passed.astype(np.int64), groups.first)
        pooled = np.add.reduceat(np.where(failed, groups.count, 0), groups.first)
        pool_ok = pooled == 0
        pools = np.flatnonzero(~pool_ok)
        if len(pools):
            pool_histograms = [
                np.add.reduceat(np.where(failed[:, None], h, 0), groups.first, axis=0)[pools]
                for h in histograms
            ]
            pool_ok[pools] = judge(pooled[pools], pool_histograms)
        allowed = (level > 0) & (passing >= 1) & pool_ok
        # Passing children numbered in order; the pool comes last.
        passing_before = np.cumsum(passed.astype(np.int64)) - passed
        rank = passing_before - passing_before[groups.first][groups.part]
        group_side = np.where(passed, rank, passing[groups.part])
        parts = passing + (pooled > 0)
    return _AxisCuts(
        widths=axis.widths(level, node),
        allowed=allowed,
        parts=np.where(allowed, parts, 1),
        summary=summary,
        side=group_side[groups.group],
        left=None,
    )


@dataclass(frozen=True, eq=False)
class _Decisions:
    """One round's choices for the partitions of a chunk (see :func:`_decide`)."""

    cut: BoolArray
    parts: IntArray
    summary: IntArray
    side: IntArray
    stay: IntArray
    axis: IntArray
    edges: _NewEdges


@dataclass(frozen=True, eq=False)
class _NewEdges:
    """Per partition cut along a numeric axis: the new upper edge of part 0
    (where ``upper_set``) and the new lower edge of part 1 (where ``lower_set``),
    as codes and floats (:mod:`kanonym.recoding.edges`)."""

    upper: IntArray
    upper_value: FloatArray
    upper_set: BoolArray
    lower: IntArray
    lower_value: FloatArray
    lower_set: BoolArray

    @classmethod
    def none(cls, n: int) -> _NewEdges:
        codes, values, flags = (
            np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.float64),
            np.zeros(n, dtype=np.bool_),
        )
        return cls(codes, values, flags, codes.copy(), values.copy(), flags.copy())

    @classmethod
    def concatenate(cls, parts: Sequence[_NewEdges]) -> _NewEdges:
        return cls(
            *(np.concatenate([getattr(p, f) for p in parts]) for f in cls.__dataclass_fields__)
        )


def _new_edges(
    axes: Sequence[Dimension], offers: Sequence[_AxisCuts], cut: BoolArray, chosen: IntArray
) -> _NewEdges:
    """The edges each numeric cut places (only for the partitions cut along that axis)."""
    new = _NewEdges.none(len(cut))
    for a, (axis, offer) in enumerate(zip(axes, offers, strict=True)):
        if offer.gaps is None or not isinstance(axis, NumericDimension):
            continue
        mine = np.flatnonzero(cut & (chosen == a))
        gaps = offer.gaps[mine]
        upper = gaps[:, 0] >= 0
        where = mine[upper]
        codes, values = axis.scale.between(
            axis.values[gaps[upper, 0]], axis.values[gaps[upper, 1]], gaps[upper, 1]
        )
        new.upper[where], new.upper_value[where], new.upper_set[where] = codes, values, True
        # A strict cut's parts meet at one edge: reuse it.
        shared = upper & (gaps[:, 0] == gaps[:, 2]) & (gaps[:, 1] == gaps[:, 3])
        where = mine[shared]
        new.lower[where], new.lower_value[where] = new.upper[where], new.upper_value[where]
        new.lower_set[where] = True
        own = (gaps[:, 2] >= 0) & ~shared
        where = mine[own]
        codes, values = axis.scale.between(
            axis.values[gaps[own, 2]], axis.values[gaps[own, 3]], gaps[own, 3]
        )
        new.lower[where], new.lower_value[where], new.lower_set[where] = codes, values, True
    return new


def _decide(axes: Sequence[Dimension], chunk: _Chunk, judge: _Judge, relaxed: bool) -> _Decisions:
    """Cut each partition of ``chunk`` along its widest axis that has an allowable cut.

    Per partition: whether it is cut, into how many parts, along which axis,
    the edges a numeric cut places, and its summary on every axis (P, axes,
    2). Per unit: the part its rows go to (``side``) and how many of them
    (``stay``); the others, split off by a relaxed numeric cut, go to part
    ``side + 1``.
    """
    offers = [
        _numeric_cuts(axis, chunk.codes[a], chunk, judge, relaxed)
        if isinstance(axis, NumericDimension)
        else _categorical_cuts(axis, chunk.codes[a], chunk, judge, relaxed)
        for a, axis in enumerate(axes)
    ]
    allowed = np.column_stack([o.allowed for o in offers])
    # argmax takes the first of equal widths: ties go to the earlier quasi-identifier.
    chosen = np.argmax(np.where(allowed, np.column_stack([o.widths for o in offers]), -1.0), 1)
    everywhere = np.arange(len(chunk.sizes))
    unit_axis = chosen[chunk.part]
    units = np.arange(len(chunk.counts))
    side = np.stack([o.side for o in offers])[unit_axis, units]
    stay = chunk.counts.copy()
    for a, offer in enumerate(offers):
        if offer.left is not None:
            mine = unit_axis == a
            stay[mine] = np.where(offer.left[mine] == 0, chunk.counts[mine], offer.left[mine])
    cut = np.asarray(allowed.any(axis=1), dtype=np.bool_)
    return _Decisions(
        cut=cut,
        parts=np.stack([o.parts for o in offers])[chosen, everywhere],
        summary=np.stack([o.summary for o in offers], axis=1),
        side=side,
        stay=stay,
        axis=chosen,
        edges=_new_edges(axes, offers, cut, chosen),
    )


def _chunks(starts: IntArray, cells_per_unit: int) -> list[tuple[int, int]]:
    """Ranges of consecutive partitions holding at most about ``_CELLS_PER_CHUNK`` cells."""
    n_parts = len(starts)
    if not cells_per_unit:
        return [(0, n_parts)]
    per_chunk = max(_CELLS_PER_CHUNK // cells_per_unit, 1)
    bounds = [0]
    while bounds[-1] < n_parts:
        following = int(np.searchsorted(starts, starts[bounds[-1]] + per_chunk, side="left"))
        bounds.append(min(max(following, bounds[-1] + 1), n_parts))
    return list(pairwise(bounds))


def _partition(
    axes: tuple[Dimension, ...], judge: _Judge, relaxed: bool, weights: IntArray
) -> Partitioning:
    """Run the greedy partitioning to the end (see the module docstring) on records
    (``axes[j].row_codes``, ``judge.attributes[a].row_codes``) of ``weights`` rows each."""
    n_rows = int(weights.sum())
    # Sensitive codes first: units are numbered in the order of their sensitive
    # values, and every partition keeps its units in that order (relaxed cuts
    # send the lowest values among the rows equal to the median left). The
    # frequency set lists tuples as they first appear, so they are sorted here:
    # units and everything after depend on the records' multiset, not their order.
    matrix = np.column_stack(
        [a.row_codes for a in judge.attributes] + [axis.row_codes for axis in axes]
    )
    radices = tuple(int(matrix[:, j].max(initial=-1)) + 1 for j in range(matrix.shape[1]))
    units, record_tuple = FrequencySet.from_groups(matrix, weights, radices)
    rank = np.lexsort(units.codes.T[::-1])
    unit_codes = units.codes[rank]
    record_unit = np.argsort(rank)[record_tuple]
    s = len(judge.attributes)
    codes = np.ascontiguousarray(unit_codes[:, s:].T)
    sensitive = np.ascontiguousarray(unit_codes[:, :s].T)
    counts = units.counts[rank]
    origin = np.arange(len(counts), dtype=np.int64)
    part = np.zeros(len(counts), dtype=np.int64)
    whole = _histograms(part, 1, sensitive, counts, judge.value_counts)
    failing = judge.failing(np.array([n_rows]), whole)
    if failing:
        raise NoSolutionError(
            f"the whole table as one class fails {', '.join(failing)}: no local recoding "
            "satisfies the models without suppression"
        )
    pieces: list[tuple[IntArray, IntArray, IntArray]] = []
    summaries: list[IntArray] = []
    final_sizes: list[IntArray] = []
    finished = 0
    # Each partition's box on the numeric axes: (partitions, numeric axes, lower/upper).
    numeric = [a for a, axis in enumerate(axes) if isinstance(axis, NumericDimension)]
    scales = [axis.scale for axis in axes if isinstance(axis, NumericDimension)]
    box = np.array([[s.low_code, s.high_code] for s in scales], dtype=np.int64).reshape(1, -1, 2)
    box_value = np.array([[s.low_value, s.high_value] for s in scales]).reshape(1, -1, 2)
    boxes: list[IntArray] = []
    box_values: list[FloatArray] = []
    while len(counts):
        starts = _starts(part)
        sizes = np.add.reduceat(counts, starts)
        if len(sizes) != len(box):
            raise AssertionError("every new partition holds rows, so boxes line up with them")
        decided = []
        for first, stop in _chunks(starts, sum(judge.value_counts)):
            begin = int(starts[first])
            end = int(starts[stop]) if stop < len(starts) else len(counts)
            chunk = _Chunk(
                codes=codes[:, begin:end],
                sensitive=sensitive[:, begin:end],
                counts=counts[begin:end],
                part=part[begin:end] - first,
                sizes=sizes[first:stop],
                starts=starts[first:stop] - begin,
            )
            decided.append(_decide(axes, chunk, judge, relaxed))
        cut = np.concatenate([c.cut for c in decided])
        # Partitions without an allowable cut are final classes.
        done = np.flatnonzero(~cut)
        final_id = np.full(len(sizes), -1, dtype=np.int64)
        final_id[done] = finished + np.arange(len(done))
        finished += len(done)
        summaries.append(np.concatenate([c.summary for c in decided])[done])
        final_sizes.append(sizes[done])
        boxes.append(box[done])
        box_values.append(box_value[done])
        ends = ~cut[part]
        pieces.append((origin[ends], counts[ends], final_id[part[ends]]))
        # The others become their parts; a relaxed cut sends some rows of a unit each way.
        parts = np.where(cut, np.concatenate([c.parts for c in decided]), 0)
        offset = np.cumsum(parts) - parts
        box, box_value = _child_boxes(
            box,
            box_value,
            parts,
            offset,
            np.concatenate([c.axis for c in decided]),
            _NewEdges.concatenate([c.edges for c in decided]),
            numeric,
        )
        go = ~ends
        side = np.concatenate([c.side for c in decided])[go]
        stay = np.concatenate([c.stay for c in decided])[go]
        new_part = offset[part[go]] + side
        rest = counts[go] - stay
        split = np.flatnonzero(rest > 0)
        codes = np.concatenate([codes[:, go], codes[:, go][:, split]], axis=1)
        sensitive = np.concatenate([sensitive[:, go], sensitive[:, go][:, split]], axis=1)
        origin = np.concatenate([origin[go], origin[go][split]])
        counts = np.concatenate([stay, rest[split]])
        new_part = np.concatenate([new_part, new_part[split] + 1])
        # Unique keys: the pieces of one unit always end up in different partitions.
        order = np.argsort(new_part * len(unit_codes) + origin)
        codes, sensitive = codes[:, order], sensitive[:, order]
        origin, counts, part = origin[order], counts[order], new_part[order]
    piece_origin, piece_count, piece_id = (
        np.concatenate(column) for column in zip(*pieces, strict=True)
    )
    # A unit's pieces in the order they were made (by round, then by partition).
    by_origin = np.argsort(piece_origin, kind="stable")
    summary = np.concatenate(summaries)
    published = _publish(axes, summary, np.concatenate(boxes), np.concatenate(box_values), numeric)
    return Partitioning(
        method="mondrian",
        relaxed=relaxed,
        axes=published,
        sizes=np.concatenate(final_sizes),
        summary=summary,
        record_unit=record_unit,
        piece_unit=piece_origin[by_origin],
        piece_count=piece_count[by_origin],
        piece_partition=piece_id[by_origin],
    )


def _child_boxes(
    box: IntArray,
    box_value: FloatArray,
    parts: IntArray,
    offset: IntArray,
    chosen: IntArray,
    new: _NewEdges,
    numeric: Sequence[int],
) -> tuple[IntArray, FloatArray]:
    """The boxes of the next round's partitions: the parent's, with the edges its cut placed.

    Partition p's parts are numbered ``offset[p]`` onwards; a numeric cut
    makes two, part 0 below (its upper edge moves) and part 1 above.
    """
    parent = np.repeat(np.arange(len(parts)), parts)
    child, child_value = box[parent], box_value[parent]
    cut = parts > 0
    for slot, a in enumerate(numeric):
        along = cut & (chosen == a)
        upper = np.flatnonzero(along & new.upper_set)
        child[offset[upper], slot, 1] = new.upper[upper]
        child_value[offset[upper], slot, 1] = new.upper_value[upper]
        lower = np.flatnonzero(along & new.lower_set)
        child[offset[lower] + 1, slot, 0] = new.lower[lower]
        child_value[offset[lower] + 1, slot, 0] = new.lower_value[lower]
    return child, child_value


def _publish(
    axes: tuple[Dimension, ...],
    summary: IntArray,
    box: IntArray,
    box_value: FloatArray,
    numeric: Sequence[int],
) -> tuple[Dimension, ...]:
    """Numeric summaries become what the release prints; the axes get their edge tables.

    A partition all of whose members hold one value prints it (rank r becomes
    ``-1 - r``); any other prints its box, as indices into the axis's table
    of the distinct edges used (``summary`` is changed in place).
    """
    published = list(axes)
    for slot, a in enumerate(numeric):
        axis = axes[a]
        assert isinstance(axis, NumericDimension)
        low = summary[:, a, 0].copy()
        single = low == summary[:, a, 1]
        ranged = ~single
        codes = edges.canonical(box[ranged, slot, :]).reshape(-1)
        table, first, inverse = np.unique(codes, return_index=True, return_inverse=True)
        values = box_value[ranged, slot, :].reshape(-1)[first]
        summary[ranged, a, :] = inverse.reshape(-1, 2)
        summary[single, a, :] = (-1 - low[single])[:, None]
        published[a] = axis.published(table.astype(np.int64), values)
    return tuple(published)


@dataclass(frozen=True, kw_only=True)
class Mondrian:
    """Mondrian partitioning, strict or relaxed (LeFevre et al. 2006; module docstring).

    The entry point for local recoding (Samarati's CG_): ``partition`` takes
    the encoded quasi-identifiers and the models and returns a
    :class:`~kanonym.recoding.partitioning.Partitioning` whose every class
    satisfies every model.

    Example:
        >>> Mondrian(relaxed=True).name, Mondrian().variant
        ('mondrian-relaxed', 'strict')
    """

    relaxed: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.relaxed, bool):
            raise TypeError(f"relaxed must be True or False, got {self.relaxed!r}")

    @property
    def name(self) -> str:
        """``mondrian`` or ``mondrian-relaxed``: the ``--algorithm`` name."""
        return "mondrian-relaxed" if self.relaxed else "mondrian"

    @property
    def variant(self) -> str:
        """``strict`` or ``relaxed``."""
        return "relaxed" if self.relaxed else "strict"

    def partition(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        *,
        sensitive: Sequence[SensitiveAttribute] = (),
        numeric: Sequence[bool] | None = None,
        source: str = "<DataFrame>",
    ) -> Partitioning:
        """Partition the rows of ``encoded`` so that every class satisfies ``models``.

        Args:
            encoded: the quasi-identifiers, encoded against their hierarchies,
                with each row's tuple (an engine holding the rows built it).
            models: every model to enforce (k-anonymity among them).
            sensitive: the encoded sensitive attributes the models read.
            numeric: per quasi-identifier, whether it is a numeric axis; None
                takes every column whose values are all numbers as numeric
                (:func:`kanonym.recoding.dimensions.numeric_flags` decides it
                from the hierarchies as the user gave them).
            source: names the table in error messages.

        Raises:
            InputError: a model is not kept by unions of classes (relaxed
                variant), a model's sensitive attribute is not given, an axis
                forced numeric holds a value that is not a number, or the
                whole table fails a model (nothing can satisfy it without
                suppression).
        """
        rows = encoded.frequency_set.rows()
        return self._partition(
            encoded, models, rows, np.ones(len(rows), dtype=np.int64), sensitive, numeric, source
        )

    def partition_grouped(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        *,
        tuples: IntArray,
        counts: IntArray,
        sensitive: Sequence[SensitiveAttribute] = (),
        numeric: Sequence[bool] | None = None,
        source: str = "<DataFrame>",
    ) -> Partitioning:
        """Partition a table given as grouped tuples with counts, without its rows.

        The records are the distinct tuples of an engine's grouping on the
        quasi-identifiers and the sensitive columns the models read (one
        ``GROUP BY`` where the rows live): ``tuples[i]`` is record i's tuple in
        ``encoded``'s frequency set (:func:`kanonym.encode.encode_grouped`),
        ``counts[i]`` its rows, and ``sensitive[a].row_codes[i]`` its value of
        sensitive attribute a (:func:`kanonym.encode.encode_sensitive` on the
        grouped values). The partitioner works on units, distinct codes with
        their row counts (module docstring), so it gives the partitions,
        summaries and pieces that :meth:`partition` gives on the rows: a
        median of rows is a weighted median of tuples. Arguments and errors
        as :meth:`partition`'s.

        Example:
            >>> import polars as pl
            >>> from kanonym.encode import Grouped, encode_grouped
            >>> from kanonym.hierarchy import Hierarchy
            >>> from kanonym.models import KAnonymity
            >>> grouped = Grouped(pl.DataFrame({"age": ["30", "35", "41"]}), np.array([1, 1, 2]))
            >>> h = Hierarchy("age", (("30", "35", "41"), ("*",) * 3))
            >>> encoded, tuples = encode_grouped(grouped, {"age": h})
            >>> p = Mondrian().partition_grouped(encoded, [KAnonymity(k=2)], tuples=tuples,
            ...                                  counts=grouped.counts)
            >>> p.labels(0), p.sizes.tolist()
            (['30-39', '41'], [2, 2])
        """
        return self._partition(encoded, models, tuples, counts, sensitive, numeric, source)

    def _partition(
        self,
        encoded: EncodedTable,
        models: Sequence[PrivacyModel],
        tuples: IntArray,
        weights: IntArray,
        sensitive: Sequence[SensitiveAttribute],
        numeric: Sequence[bool] | None,
        source: str,
    ) -> Partitioning:
        """Partition records (``tuples[i]``: record i's frequency-set tuple) of ``weights``
        rows each."""
        if self.relaxed:
            broken = [m.name for m in models if not isinstance(m, UNION_CLOSED)]
            if broken:
                raise InputError(
                    f"{', '.join(broken)} may fail on a union of classes that satisfy it, "
                    "and relaxed Mondrian's classes can be such unions; use `algorithm='mondrian'`"
                )
        weights = np.ascontiguousarray(weights, dtype=np.int64)
        judge = _Judge(models, sensitive, weights)
        if numeric is None:
            numeric = tuple(
                numeric_dimension(a, source=source, required=False) is not None
                for a in encoded.attributes
            )
        axes = build_dimensions(encoded, numeric, source=source, tuples=tuples)
        return _partition(axes, judge, self.relaxed, weights)
