"""Cell suppression's choice: which single cells to blank (show as the hierarchy's root).

Samarati's AG_CS and _CS classes ("k-Anonymity", FOSAD 2008 slides,
"Classification of k-Anonymity techniques"; Ciriani et al. 2007): after
full-domain generalization to a node (or none, for _CS), the rows of classes
that fail the privacy models are not deleted; some of their cells are replaced
by the root of the attribute's hierarchy (``*``) until every class of the
released table satisfies the models. Classes are formed from the *released*
values, ``*`` being an ordinary value (the conservative reading: a blanked cell
matches only another blanked cell, never the values it hides, so a class is
exactly a set of rows that look the same). Finding the fewest cells is NP-hard
(Meyerson & Williams 2004, "On the complexity of optimal k-anonymity"), so this
is a heuristic. The choice is part of judging a node (a node is acceptable
when a choice within the limit exists, :mod:`kanonym.evaluation.cells`);
writing the chosen cells is :func:`kanonym.transform.cells.blank_cells`.
Everything works on the node's classes (rows identical at the
node are treated alike) and is vectorized per step:

1. **Patterns, fewest cells first.** For s = 1, 2, ... attributes, each set S
   of s attributes (a *pattern*; cheapest first, at most ``MAX_PATTERNS`` per
   size) is tried: blanked in every unresolved class at once, the classes
   then sharing released values (with any released class already showing
   ``*`` on S) form groups, and the classes in groups that satisfy the models
   would be resolved. The pattern resolving most rows is applied (then the
   cheapest, then the first), and the others are tried again, until none
   resolves anything; then the next size. The last pattern blanks every
   attribute below its root: the all-``*`` group.
2. **Absorption.** A class left over (its all-``*`` group too small, say) joins
   the released group that costs fewest new cells: both take ``*`` wherever
   they differ, and the merged group must still satisfy the models and the
   row limit. If no group can take it, the conversion fails (the node is then
   not acceptable).

Ties between equally many cells go to the cells whose information loss is
smallest (a cell's cost is its LM loss, Iyengar 2002, of going from its value
to the root, weighted per attribute), then to column order. A row with a
blanked cell counts against the suppression limit (MaxSup counts rows
touched); every row of a failing class must be touched, so the rows that
tuple suppression would remove bound the rows touched from below.

Example (Samarati's 2-anonymous AG_CS table: Race, DOB at month, Sex, ZIP
at 4 digits; five rows fail and get 8 cells blanked):
    >>> import numpy as np
    >>> codes = np.array([[0, 0, 0, 0], [0, 1, 0, 0], [0, 0, 0, 1], [0, 2, 1, 1],
    ...                   [1, 1, 0, 1], [2, 1, 0, 1], [2, 1, 0, 0]])
    >>> sizes = np.array([1, 1, 1, 2, 2, 1, 1])
    >>> cost = np.tile([1.0, 0.8, 1.0, 2 / 3], (7, 1))
    >>> def k2(members, group, n):
    ...     return np.bincount(group, weights=sizes[members], minlength=n) >= 2
    >>> out = suppress_cells(codes, sizes, star=np.array([3, 3, 2, 2]),
    ...                      suppressible=np.ones(4, bool), cost=cost, judge=k2,
    ...                      min_size=2, max_rows=5)
    >>> [row for row in out.mask.astype(int).tolist()]  # doctest: +NORMALIZE_WHITESPACE
    [[0, 1, 0, 1], [0, 1, 0, 1], [0, 1, 0, 1], [0, 0, 0, 0], [0, 0, 0, 0],
     [0, 0, 0, 1], [0, 0, 0, 1]]
    >>> out.cells.tolist(), out.rows
    ([0, 3, 0, 5], 5)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations, islice

import numpy as np
import numpy.typing as npt

from kanonym.encode.frequency import pack_codes

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

# judge(members, group, n_groups): whether each group, the union of the member
# classes labelled with it, satisfies the privacy models.
Judge = Callable[[IntArray, IntArray, int], BoolArray]

# Patterns tried per number of blanked attributes: every pattern up to seven
# attributes; beyond, the cheapest ones (leftovers are absorbed in any case).
MAX_PATTERNS = 64


@dataclass(frozen=True, eq=False)
class CellSuppression:
    """Which cells of a node's classes are blanked, and what that releases.

    Attributes:
        mask: ``(classes, attributes)``: the attributes written as the root in
            each class's rows.
        group: released class of each node class.
        group_sizes: rows per released class.
        cells: blanked cells per attribute (rows times attributes whose shown
            value changed; a value that already was the root does not count).
        rows: rows with at least one blanked cell (what the limit counts).
    """

    mask: BoolArray
    group: IntArray
    group_sizes: IntArray
    cells: IntArray
    rows: int

    @property
    def total_cells(self) -> int:
        """Blanked cells over all attributes."""
        return int(self.cells.sum())


def group_rows(display: IntArray) -> tuple[IntArray, int]:
    """Number equal rows of ``display`` alike: (group of each row, number of groups)."""
    if display.shape[0] == 0:
        return np.zeros(0, dtype=np.int64), 0
    if display.shape[1] == 0:
        return np.zeros(display.shape[0], dtype=np.int64), 1
    radices = [int(column.max()) + 1 for column in display.T]
    keys, space = pack_codes([np.ascontiguousarray(c) for c in display.T], radices)
    if space <= 4 * display.shape[0] + 1024:
        # A small key space: number the keys through a dense table, no sort.
        present = np.zeros(space, dtype=np.int64)
        present[keys] = 1
        number = np.cumsum(present) - 1
        return number[keys], int(present.sum())
    distinct, inverse = np.unique(keys, return_inverse=True)
    return inverse.reshape(-1).astype(np.int64), len(distinct)


def group_sums(rows: IntArray, group: IntArray, n_groups: int) -> IntArray:
    """Per group, the sum of its members' rows of a ``(members, values)`` matrix."""
    out = np.zeros((n_groups, rows.shape[1]), dtype=np.int64)
    np.add.at(out, group, rows)
    return out


def _shown(codes: IntArray, mask: BoolArray, star: IntArray) -> IntArray:
    """The released codes: the root's code where a cell is blanked."""
    return np.where(mask, star[None, :], codes)


def _finish(
    codes: IntArray, sizes: IntArray, mask: BoolArray, star: IntArray, judge: Judge
) -> CellSuppression | None:
    group, n_groups = group_rows(_shown(codes, mask, star))
    passing = judge(np.arange(len(sizes), dtype=np.int64), group, n_groups)
    if not passing.all():
        return None
    blank = mask & (codes != star[None, :])
    return CellSuppression(
        mask=mask,
        group=group,
        group_sizes=np.bincount(group, weights=sizes, minlength=n_groups).astype(np.int64),
        cells=(blank * sizes[:, None]).sum(axis=0).astype(np.int64),
        rows=int(sizes[blank.any(axis=1)].sum()),
    )


def _patterns(attributes: IntArray, mean_cost: FloatArray, size: int) -> list[list[int]]:
    """Sets of ``size`` attributes, cheapest attributes first, at most MAX_PATTERNS."""
    order = sorted(attributes.tolist(), key=lambda a: (mean_cost[a], a))
    return [sorted(p) for p in islice(combinations(order, size), MAX_PATTERNS)]


def suppress_cells(
    codes: IntArray,
    sizes: IntArray,
    *,
    star: IntArray,
    suppressible: BoolArray,
    cost: FloatArray,
    judge: Judge,
    min_size: int,
    max_rows: int,
    mask: BoolArray | None = None,
) -> CellSuppression | None:
    """Blank cells of a node's classes until every released class satisfies ``judge``.

    Args:
        codes: ``(classes, attributes)`` codes of the node's classes.
        sizes: rows per class.
        star: per attribute, the code the root is released as.
        suppressible: attributes that may be blanked (those below their root).
        cost: ``(classes, attributes)`` cost of blanking one cell of a class.
        judge: whether groups of classes satisfy the models (see ``Judge``).
        min_size: a group of fewer rows never satisfies the models (k).
        max_rows: at most this many rows may hold a blanked cell.
        mask: cells blanked already (kept blanked), e.g. by mu-Argus.

    Returns:
        The blanked cells, or None when no conversion within ``max_rows`` was
        found (see the module docstring for the method).
    """
    n_classes, _ = codes.shape
    mask = np.zeros(codes.shape, dtype=np.bool_) if mask is None else mask.copy()
    shown = _shown(codes, mask, star)
    group, n_groups = group_rows(shown)
    passing = judge(np.arange(n_classes, dtype=np.int64), group, n_groups)
    remaining = ~passing[group]
    if not remaining.any():
        return _finish(codes, sizes, mask, star, judge)
    touched = (mask & (codes != star[None, :])).any(axis=1)
    # Every class of a failing group must show a blanked cell in the end.
    if int(sizes[remaining | touched].sum()) > max_rows:
        return None
    attributes = np.flatnonzero(suppressible)
    for size in range(1, len(attributes) + 1):
        if not remaining.any():
            break
        # A group can gather at most the unresolved rows and the rows already showing a root.
        starred = (~remaining) & (shown == star[None, :])[:, attributes].any(axis=1)
        if int(sizes[remaining | starred].sum()) < min_size:
            break
        weights = sizes[remaining].astype(np.float64)
        mean_cost = (cost[remaining] * weights[:, None]).sum(axis=0) / weights.sum()
        live = _patterns(attributes, mean_cost, size)
        while live and remaining.any():
            # Every pattern still resolving something is tried on the current state;
            # the one resolving most rows wins (then the cheapest, then the first).
            tried = [
                (p, _resolve(p, codes, sizes, mask, shown, remaining, star, judge)) for p in live
            ]
            live = [p for p, (resolved, _, _) in tried if len(resolved)]
            if not live:
                break
            gains = [_gain(resolution, sizes, mask, cost) for _, resolution in tried]
            best = max(range(len(tried)), key=lambda i: (gains[i], -i))
            resolved, candidate, candidate_shown = tried[best][1]
            mask[resolved] = candidate
            shown[resolved] = candidate_shown
            remaining[resolved] = False
    for leftover in sorted(np.flatnonzero(remaining).tolist(), key=lambda c: (-sizes[c], c)):
        if not remaining[leftover]:
            continue  # absorbed together with an earlier leftover
        if not _absorb(leftover, codes, sizes, mask, shown, remaining, star, cost, judge, max_rows):
            return None
    return _finish(codes, sizes, mask, star, judge)


def _resolve(
    pattern: list[int],
    codes: IntArray,
    sizes: IntArray,
    mask: BoolArray,
    shown: IntArray,
    remaining: BoolArray,
    star: IntArray,
    judge: Judge,
) -> tuple[IntArray, BoolArray, IntArray]:
    """The unresolved classes that blanking ``pattern`` puts in satisfying groups.

    Returns those classes, their new masks and their new released codes.
    """
    rest = np.flatnonzero(remaining)
    candidate = mask[rest].copy()
    candidate[:, pattern] = True
    candidate_shown = _shown(codes[rest], candidate, star)
    # Resolved classes join only if they show the root on the whole pattern.
    settled = np.flatnonzero(~remaining & (shown[:, pattern] == star[pattern][None, :]).all(axis=1))
    joint, n_joint = group_rows(np.vstack([candidate_shown, shown[settled]]))
    ok = judge(np.concatenate([rest, settled]), joint, n_joint)[joint[: len(rest)]]
    return rest[ok], candidate[ok], candidate_shown[ok]


def _gain(
    resolution: tuple[IntArray, BoolArray, IntArray],
    sizes: IntArray,
    mask: BoolArray,
    cost: FloatArray,
) -> tuple[int, float]:
    """How good a resolution is: rows resolved, then (negated) cost of the new blanks."""
    resolved, candidate, _ = resolution
    new = candidate & ~mask[resolved]
    return int(sizes[resolved].sum()), -float(
        ((new * cost[resolved]).sum(axis=1) * sizes[resolved]).sum()
    )


def _absorb(
    leftover: int,
    codes: IntArray,
    sizes: IntArray,
    mask: BoolArray,
    shown: IntArray,
    remaining: BoolArray,
    star: IntArray,
    cost: FloatArray,
    judge: Judge,
    max_rows: int,
) -> bool:
    """Merge one leftover class into the released group that costs fewest new cells.

    Updates ``mask``, ``shown`` and ``remaining`` in place; False when no group
    can take the class within the models and the row limit.
    """
    group, n_groups = group_rows(shown)
    has_remaining = np.zeros(n_groups, dtype=np.bool_)
    has_remaining[group[remaining]] = True
    group_size = np.bincount(group, weights=sizes, minlength=n_groups).astype(np.int64)
    first = np.full(n_groups, len(sizes), dtype=np.int64)
    np.minimum.at(first, group, np.arange(len(sizes), dtype=np.int64))
    targets = np.flatnonzero(~has_remaining)
    if not len(targets):
        return False
    target_shown = shown[first[targets]]
    own = shown[leftover]
    # Both sides show the root wherever they differ or either already does.
    need = (target_shown != own[None, :]) | (target_shown == star[None, :])
    merged_shown = np.where(need, star[None, :], target_shown)
    new_target = need & (target_shown != star[None, :])
    new_own = need & (own != star)[None, :]
    cells = group_size[targets] * new_target.sum(axis=1) + sizes[leftover] * new_own.sum(axis=1)
    loss = group_size[targets] * (new_target * cost[first[targets]]).sum(axis=1) + sizes[
        leftover
    ] * (new_own * cost[leftover][None, :]).sum(axis=1)
    blanked = (mask & (codes != star[None, :])).any(axis=1)
    untouched_group = np.ones(n_groups, dtype=np.bool_)
    untouched_group[group[blanked]] = False
    # Every unresolved class will be touched anyway; a target group untouched so far adds its rows.
    rows_after = int(sizes[blanked | remaining].sum()) + np.where(
        untouched_group[targets] & new_target.any(axis=1), group_size[targets], 0
    )
    # The merged values may equal those of another group, which then joins too.
    combined, n_combined = group_rows(np.vstack([shown[first], merged_shown]))
    group_of_key = np.full(n_combined, -1, dtype=np.int64)
    group_of_key[combined[:n_groups]] = np.arange(n_groups, dtype=np.int64)
    partner = group_of_key[combined[n_groups:]]
    partner[partner == targets] = -1
    members, labels = _candidate_members(group, n_groups, targets, partner, leftover)
    passing = judge(members, labels, len(targets))
    feasible = passing & (rows_after <= max_rows)
    if not feasible.any():
        return False
    candidates = np.flatnonzero(feasible)
    best = candidates[np.lexsort((candidates, loss[candidates], cells[candidates]))[0]]
    joined = members[labels == best]
    mask[joined] |= need[best][None, :]
    shown[joined] = merged_shown[best][None, :]
    remaining[joined] = False
    return True


def _candidate_members(
    group: IntArray, n_groups: int, targets: IntArray, partner: IntArray, leftover: int
) -> tuple[IntArray, IntArray]:
    """Classes of each candidate merge, labelled by candidate: target group, leftover, partner."""
    label_of_group = np.full(n_groups, -1, dtype=np.int64)
    label_of_group[targets] = np.arange(len(targets), dtype=np.int64)
    in_target = np.flatnonzero(label_of_group[group] >= 0)
    by_group = np.argsort(group, kind="stable")
    counts = np.bincount(group, minlength=n_groups)
    starts = np.cumsum(counts) - counts
    with_partner = np.flatnonzero(partner >= 0)
    lengths = counts[partner[with_partner]]
    # Positions of each partner group's classes in ``by_group``, laid end to end.
    offsets = np.repeat(starts[partner[with_partner]] - (np.cumsum(lengths) - lengths), lengths)
    partner_members = by_group[offsets + np.arange(int(lengths.sum()), dtype=np.int64)]
    partner_labels = np.repeat(with_partner, lengths)
    keep = partner_members != leftover
    members = np.concatenate(
        [in_target, np.full(len(targets), leftover, dtype=np.int64), partner_members[keep]]
    )
    labels = np.concatenate(
        [
            label_of_group[group[in_target]],
            np.arange(len(targets), dtype=np.int64),
            partner_labels[keep],
        ]
    )
    return members.astype(np.int64), labels.astype(np.int64)
