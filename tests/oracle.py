"""A brute-force oracle: which nodes of a generalization lattice satisfy, from the definitions.

Tests that accept a refusal ("no generalization satisfies the privacy models
within the suppression limit") first ask this oracle whether any node of the
lattice satisfies; they accept the refusal only when none does. The oracle
shares nothing with kanonym's encoding, search, evaluation, models or
transforms: it reads the level lists of the :class:`~kanonym.hierarchy.Hierarchy`
objects (the problem's input) and does everything else with plain Polars and
Python, straight from the papers' definitions:

* a node generalizes every quasi-identifier to its level (Samarati 2001);
* its equivalence classes are the rows sharing all generalized values;
* a class passes when it holds at least k rows (Samarati & Sweeney 1998) and
  every model's condition on its sensitive values, P being the input table's
  distribution (:class:`Model`);
* under **tuple suppression** (Samarati 2001, MaxSup) a node satisfies when the
  rows of failing classes, all removed, are at most the limit;
* under **cell suppression** (Ciriani, De Capitani di Vimercati, Foresti &
  Samarati 2007) it satisfies when some cells can be blanked (written as the
  hierarchy's root) so that every released class passes and at most the limit
  rows hold a blanked cell (:func:`cells_within`);
* **without suppression** it satisfies when every class passes.

Example (Samarati's nine rows, k = 2: GT[0,0] must lose 6 rows, GT[0,1] and
GT[1,0] two each, as in her FOSAD 2008 slides; with MaxSup = 2 all but GT[0,0]
satisfy, and blanking cells instead, GT[0,0] needs all six rows touched):

    >>> from tests.conftest import race_hierarchy, samarati_table, zip_hierarchy
    >>> hs = {"race": race_hierarchy(), "zip": zip_hierarchy()}
    >>> table = samarati_table()
    >>> [rows_to_remove(table, hs, node, k=2) for node in [(0, 0), (0, 1), (1, 0)]]
    [6, 2, 2]
    >>> satisfying_nodes(table, hs, k=2, limit=2)
    [(0, 1), (0, 2), (1, 0), (1, 1), (1, 2)]
    >>> cells_within(table, hs, (0, 0), k=2, limit=5), cells_within(table, hs, (0, 0), 2, 6)
    (False, True)
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import polars as pl

from kanonym.hierarchy import Hierarchy

Node = tuple[int, ...]
Histogram = Counter[str | None]
Suppression = Literal["tuple", "cell", "none"]

# Shares of a table of n rows differ by at least 1/n^2 when they differ at all;
# a bound met exactly (l equal values against entropy l-diversity) must not
# fail because of floating-point rounding.
TOLERANCE = 1e-9


@dataclass(frozen=True)
class Model:
    """A privacy model on one sensitive attribute, as a test names it.

    ``spec`` is the command line's model syntax: ``l-diversity:distinct:2:s``,
    ``l-diversity:entropy:1.5:s``, ``l-diversity:recursive:C:L:s``,
    ``t-closeness:{equal,ordered,hierarchical}:T:s``,
    ``beta-likeness:{basic,enhanced}:B:s`` or ``delta-disclosure:D:s``.
    ``hierarchy`` is the sensitive attribute's hierarchy (hierarchical distance).

    Example:
        >>> Model("l-diversity:distinct:2:s").passes(Counter("aab"), Counter("aabb"))
        True
        >>> Model("t-closeness:equal:0.2:s").passes(Counter("aaa"), Counter("aabb"))
        False
    """

    spec: str
    hierarchy: Hierarchy | None = None

    @property
    def attribute(self) -> str:
        """The sensitive column the model reads (the spec's last field)."""
        return self.spec.rsplit(":", 1)[1]

    def passes(self, q: Histogram, p: Histogram) -> bool:
        """Whether a class with sensitive counts ``q`` passes, the table's counts being ``p``."""
        fields = self.spec.split(":")[:-1]
        size, total = sum(q.values()), sum(p.values())
        share = {v: q[v] / size for v in p}
        table_share = {v: p[v] / total for v in p}
        match fields:
            case ["l-diversity", "distinct", l]:
                # Machanavajjhala et al. 2007: at least l values occur.
                return sum(1 for c in q.values() if c > 0) >= int(l)
            case ["l-diversity", "entropy", l]:
                # Machanavajjhala et al. 2007: -sum q log q >= log l.
                entropy = -sum(x * math.log(x) for x in share.values() if x > 0)
                return entropy >= math.log(float(l)) - TOLERANCE
            case ["l-diversity", "recursive", c, l]:
                # Machanavajjhala et al. 2007: r1 < c (r_l + ... + r_m); 1-diversity always holds.
                r = sorted((n for n in q.values() if n > 0), reverse=True)
                if int(l) == 1:
                    return True
                return len(r) >= int(l) and r[0] < float(c) * sum(r[int(l) - 1 :])
            case ["t-closeness", "equal", t]:
                # Li, Li & Venkatasubramanian 2007: equal ground distance, half the L1 distance.
                distance = sum(abs(share[v] - table_share[v]) for v in p) / 2
                return distance <= float(t) + TOLERANCE
            case ["t-closeness", "ordered", t]:
                # Same paper: the i-th and j-th of the m values are |i - j| / (m - 1) apart.
                order = sorted(p, key=lambda v: float(str(v)))
                if len(order) < 2:
                    return True
                running, moved = 0.0, 0.0
                for v in order[:-1]:
                    running += table_share[v] - share[v]
                    moved += abs(running)
                return moved / (len(order) - 1) <= float(t) + TOLERANCE
            case ["t-closeness", "hierarchical", t]:
                return self._tree_distance(share, table_share) <= float(t) + TOLERANCE
            case ["beta-likeness", kind, beta]:
                # Cao & Karras 2012: every value more frequent in the class gains at most
                # beta (enhanced: at most min(beta, -ln p)).
                for v in p:
                    if share[v] > table_share[v]:
                        gain = (share[v] - table_share[v]) / table_share[v]
                        cap = float(beta)
                        if kind == "enhanced":
                            cap = min(cap, -math.log(table_share[v]))
                        if gain > cap + TOLERANCE:
                            return False
                return True
            case ["delta-disclosure", delta]:
                # Brickell & Shmatikov 2008, over the values the class holds (ln 0 left out).
                return all(
                    abs(math.log(share[v] / table_share[v])) < float(delta) for v in p if q[v] > 0
                )
        raise ValueError(f"the oracle does not know the model {self.spec!r}")

    def _tree_distance(self, q: Mapping[str | None, float], p: Mapping[str | None, float]) -> float:
        """EMD with hierarchical ground distance, on the hierarchy as a tree.

        Two leaves whose lowest common ancestor is at level j are j/H apart (Li,
        Li & Venkatasubramanian 2007): 2j edges of length 1/(2H). On a tree the
        EMD sums, over edges, the length times the net mass crossing the edge.
        """
        assert self.hierarchy is not None, "hierarchical distance needs the hierarchy"
        h = self.hierarchy
        distance = 0.0
        for level in range(h.height):
            below: dict[str | None, float] = {}
            for leaf, node in zip(h.leaves, h.levels[level], strict=True):
                below[node] = below.get(node, 0.0) + p.get(leaf, 0.0) - q.get(leaf, 0.0)
            distance += sum(abs(mass) for mass in below.values()) / (2 * h.height)
        return distance


def class_passes(q: Histogram, k: int, models: Sequence[Model], p: Histogram) -> bool:
    """Whether a class with sensitive counts ``q`` holds k rows and passes every model."""
    return sum(q.values()) >= k and all(m.passes(q, p) for m in models)


def generalize(
    table: pl.DataFrame, hierarchies: Mapping[str, Hierarchy], node: Node
) -> pl.DataFrame:
    """``table`` with each quasi-identifier replaced by its value at the node's level.

    Example:
        >>> from tests.conftest import samarati_table, race_hierarchy, zip_hierarchy
        >>> hs = {"race": race_hierarchy(), "zip": zip_hierarchy()}
        >>> generalize(samarati_table(), hs, (1, 2)).unique().rows()
        [('person', '941**')]
    """
    return table.with_columns(
        pl.col(name).replace_strict(dict(zip(h.leaves, h.levels[level], strict=True)))
        for (name, h), level in zip(hierarchies.items(), node, strict=True)
    )


def classes(
    table: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    sensitive: str | None = None,
) -> list[Histogram]:
    """The node's equivalence classes, each as the counts of its ``sensitive`` values.

    Without ``sensitive`` each class is counted under the key ``None``.
    """
    grouped = generalize(table, hierarchies, node).group_by(list(hierarchies))
    if sensitive is None:
        return [Counter({None: n}) for n in grouped.len()["len"].to_list()]
    return [Counter(values) for values in grouped.agg(pl.col(sensitive))[sensitive].to_list()]


def _sensitive(models: Sequence[Model]) -> str | None:
    attributes = {m.attribute for m in models}
    assert len(attributes) <= 1, "the oracle handles one sensitive attribute"
    return next(iter(attributes), None)


def rows_to_remove(
    table: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    k: int,
    models: Sequence[Model] = (),
) -> int:
    """Rows in the node's failing classes: what tuple suppression must remove."""
    sensitive = _sensitive(models)
    p = Counter(table[sensitive].to_list()) if sensitive else Counter()
    return sum(
        sum(q.values())
        for q in classes(table, hierarchies, node, sensitive)
        if not class_passes(q, k, models, p)
    )


def cells_within(
    table: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    node: Node,
    k: int,
    limit: int,
    models: Sequence[Model] = (),
) -> bool:
    """Whether blanking cells in at most ``limit`` rows makes every released class pass.

    Exact, for models kept by unions of classes (all but delta-disclosure: a
    mixture of distributions within a bound of P stays within it, a union of
    classes holding l values holds l values). The argument: a blanked cell shows
    the root, which no level but the top holds, so a row with a blanked cell never
    joins a row without one; and if some blanking works, blanking every
    non-top cell of the same rows works too (the blanked rows then form one class,
    the union of the classes they formed). So the node passes exactly when some
    set T of rows, with |T| <= limit, leaves in every class a remainder that is
    empty or passes, and is itself empty or a passing class. The sets are searched
    by their sensitive histograms, class by class (a rows' identity beyond its
    sensitive value does not matter).
    """
    assert all(not m.spec.startswith("delta-disclosure") for m in models), "not union-closed"
    for name, h in hierarchies.items():
        root = h.levels[-1][0]
        assert all(root not in level for level in h.levels[:-1]), f"{name}: root below the top"
    sensitive = _sensitive(models)
    p = Counter(table[sensitive].to_list()) if sensitive else Counter()
    found = classes(table, hierarchies, node, sensitive)
    if all(level == h.height for level, h in zip(node, hierarchies.values(), strict=True)):
        # Every cell already shows the root: one class, which blanking cannot change.
        return all(class_passes(q, k, models, p) for q in found)
    keys = sorted({v for q in found for v in q}, key=str)
    touched: set[tuple[int, ...]] = {(0,) * len(keys)}
    for q in found:
        counts = [q[v] for v in keys]
        options = []
        for taken in itertools.product(*(range(c + 1) for c in counts)):
            rest = Counter({v: c - t for v, c, t in zip(keys, counts, taken, strict=True)})
            if sum(rest.values()) == 0 or class_passes(rest, k, models, p):
                options.append(taken)
        grown = set()
        for before in touched:
            for taken in options:
                total = tuple(a + b for a, b in zip(before, taken, strict=True))
                if sum(total) <= limit:
                    grown.add(total)
        touched = grown
    return any(
        sum(t) == 0 or class_passes(Counter(dict(zip(keys, t, strict=True))), k, models, p)
        for t in touched
    )


def lattice(
    hierarchies: Mapping[str, Hierarchy],
    levels: Sequence[Sequence[int]] | None = None,
) -> Iterator[Node]:
    """Every node: each quasi-identifier at each of its ``levels`` (default: 0..height)."""
    if levels is None:
        levels = [range(h.height + 1) for h in hierarchies.values()]
    return itertools.product(*levels)


def technique_levels(technique: str, hierarchies: Mapping[str, Hierarchy]) -> list[tuple[int, ...]]:
    """The levels each quasi-identifier may take under a technique class of Ciriani,
    De Capitani di Vimercati, Foresti & Samarati 2007: any (attribute generalization,
    ``AG_*``), none (``_TS``, ``_CS``), or none or the root (``_AS``: a whole
    attribute blanked).

    Example:
        >>> from tests.conftest import race_hierarchy, zip_hierarchy
        >>> hs = {"race": race_hierarchy(), "zip": zip_hierarchy()}
        >>> technique_levels("AG_TS", hs), technique_levels("_AS", hs)
        ([(0, 1), (0, 1, 2)], [(0, 1), (0, 2)])
    """
    if technique.startswith("AG"):
        return [tuple(range(h.height + 1)) for h in hierarchies.values()]
    if technique == "_AS":
        return [(0, h.height) for h in hierarchies.values()]
    return [(0,) for _ in hierarchies.values()]


def technique_suppression(technique: str) -> Suppression:
    """What a technique class does to the rows of failing classes: remove them
    (``*_TS``), blank some of their cells (``*_CS``) or nothing (``*_AS``, ``AG_``)."""
    return {"TS": "tuple", "CS": "cell"}.get(technique.split("_")[1], "none")


def satisfying_nodes(
    table: pl.DataFrame,
    hierarchies: Mapping[str, Hierarchy],
    k: int,
    limit: int,
    *,
    models: Sequence[Model] = (),
    suppression: Suppression = "tuple",
    levels: Sequence[Sequence[int]] | None = None,
) -> list[Node]:
    """The nodes (within ``levels``) that satisfy k and ``models`` within ``limit``.

    An empty list is the brute-force proof that no generalization satisfies.
    """
    found = []
    for node in lattice(hierarchies, levels):
        if suppression == "cell":
            ok = cells_within(table, hierarchies, node, k, limit, models)
        else:
            allowed = limit if suppression == "tuple" else 0
            ok = rows_to_remove(table, hierarchies, node, k, models) <= allowed
        if ok:
            found.append(node)
    return found
