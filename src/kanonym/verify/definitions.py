"""The privacy models' definitions, restated for one equivalence class.

These are the re-check's own definitions, written from the papers and sharing
no code with :mod:`kanonym.models`: a defect in a model's measure cannot pass
both. Each function reads one class's ``counts`` of a sensitive attribute
(value -> rows, values as text, ``None`` the missing value, only the values
the class holds) and, where the model compares a class with a table, the
table's :class:`Reference` counts. Q is the class's distribution, P the
table's; n and N their rows; logarithms are natural.

Exactness: the measures that are rational (distinct values, the share of the
most frequent value, recursive diversity's ratio, the three Earth Mover's
Distances, the relative gains of beta-likeness) are computed exactly, as
:class:`~fractions.Fraction` of integer counts. Entropy, the caps −ln p of
enhanced beta-likeness and the logarithms of delta-disclosure are irrational
and are computed in floating point (``math.fsum``). A model parameter is read
as the decimal it prints as (``0.1`` is 1/10, not the nearest binary fraction),
since it was given as decimal text.

Tolerance: the models let a measure exceed its bound by 1e-12 · max(1, |bound|)
(``<=`` and ``>=`` bounds only) to absorb floating-point rounding, so that a
class exactly at a bound (l equally frequent values against entropy
l-diversity) is not failed by it. :func:`at_most` and :func:`at_least` grant the
same allowance, so the re-check agrees with the models on every class whose
measure is not within 1e-12 of its bound, and a defect in a measure larger than
that cannot pass both. The strict bounds (recursive diversity's ``<``, delta-
disclosure's ``<``) have no allowance, as in the models.

Example (the paper's salaries: a class holding 3k, 4k and 5k of a table spread
evenly over 3k … 11k is 0.375 away with ordered distance, 2/3 with equal):
    >>> salaries = [f"{s}k" for s in range(3, 12)]
    >>> table = Reference.of(dict.fromkeys(salaries, 1))
    >>> low = {"3k": 1, "4k": 1, "5k": 1}
    >>> emd_ordered(low, Ranking.of(table, salaries)), emd_equal(low, table)
    (Fraction(3, 8), Fraction(2, 3))
"""

from __future__ import annotations

import math
from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from itertools import accumulate

from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy

Value = str | None
Counts = Mapping[Value, int]

SLACK = Fraction(1, 10**12)
"""The allowance above a ``<=`` bound (below a ``>=`` one), relative to the bound if above 1."""


def exact(parameter: float) -> Fraction:
    """A model parameter as the decimal it prints as.

    Example:
        >>> exact(0.1), exact(3)
        (Fraction(1, 10), Fraction(3, 1))
    """
    return Fraction(str(parameter))


def at_most(value: Fraction, bound: Fraction) -> bool:
    """``value <= bound``, allowing :data:`SLACK` · max(1, |bound|).

    Example:
        >>> at_most(Fraction(1, 4) + Fraction(1, 10**13), Fraction(1, 4))
        True
        >>> at_most(Fraction(1, 4) + Fraction(1, 10**11), Fraction(1, 4))
        False
    """
    return value <= bound + SLACK * max(Fraction(1), abs(bound))


def at_most_float(value: float, bound: float) -> bool:
    """:func:`at_most` for measures computed in floating point."""
    return value <= bound + float(SLACK) * max(1.0, abs(bound))


def at_least(value: float, bound: float) -> bool:
    """``value >= bound``, allowing :data:`SLACK` · max(1, |bound|).

    Example:
        >>> at_least(math.log(3) - 1e-15, math.log(3))
        True
    """
    return at_most_float(-value, -bound)


@dataclass(frozen=True)
class Reference:
    """P, the table's distribution of an attribute, as counts.

    Attributes:
        counts: rows holding each value of the table.
        total: N, the rows of the table.
    """

    counts: Mapping[Value, int]
    total: int

    @classmethod
    def of(cls, counts: Mapping[Value, int]) -> Reference:
        """The reference of these counts."""
        return cls(dict(counts), sum(counts.values()))


def rows(counts: Counts) -> int:
    """n, the rows of a class."""
    return sum(counts.values())


def k_anonymous(size: int, k: int) -> bool:
    """Whether a class of ``size`` rows is k-anonymous.

    L. Sweeney, "k-anonymity: a model for protecting privacy", IJUFKS 10(5),
    2002, Definition 3: a table is k-anonymous when each sequence of
    quasi-identifier values appears at least k times, that is, when every
    equivalence class holds at least k rows.

    Example:
        >>> k_anonymous(2, 3), k_anonymous(3, 3)
        (False, True)
    """
    return size >= k


def present(rows: int, population: int, low: Fraction, high: Fraction) -> bool:
    """Whether a class is (low, high)-present.

    M. E. Nergiz, M. Atzori, C. Clifton, "Hiding the presence of individuals
    from shared databases", SIGMOD 2007, Definition 3: a sample T of a
    population P is (δ_min, δ_max)-present when, for every generalized tuple t,
    δ_min <= |T(t)| / |P(t)| <= δ_max. Here for one class: its ``rows`` in the
    sample and the ``population`` rows of the same generalized values.

    Example:
        >>> present(1, 5, Fraction(0), Fraction(1, 5)), present(2, 5, Fraction(0), Fraction(1, 5))
        (True, False)
    """
    share = Fraction(rows, population)
    return at_most(low, share) and at_most(share, high)


def k_mapped(population: int, k: int) -> bool:
    """Whether a class is k-mapped: ``population`` members share its values.

    L. Sweeney, "Computational disclosure control", PhD thesis, MIT, 2001,
    chapter 4 (k-map); K. El Emam, F. K. Dankar, "Protecting privacy using
    k-anonymity", JAMIA 15(5), 2008: a release is k-map when each of its
    generalized tuples matches at least k members of the population.

    Example:
        >>> k_mapped(4, 5), k_mapped(5, 5)
        (False, True)
    """
    return population >= k


def estimated_k(k: int, rows: int, population: int, significance: float, estimator: str) -> int:
    """The least class size that makes a sample k-map, estimated as ARX does.

    K. El Emam, F. K. Dankar, "Protecting privacy using k-anonymity", JAMIA
    15(5), 2008 (rules D3 and D4): the population members behind a sample class
    are modelled as Poisson with mean lambda = (n / N) k, n the sample's
    ``rows`` and N the ``population``, or as zero-truncated Poisson
    (J. Pannekoek, 1999). ARX (``KMap`` with an estimator) walks the counts
    c = 0, 1, ... (Poisson; the answer is one past the stop, plus one) or
    c = 1, 2, ... (zero-truncated; one past the stop) until the cumulative
    probability reaches 1 - ``significance`` or c reaches k, then caps the
    answer at k and at n. Here the probabilities come from the ratio of
    successive terms, p(c) = p(c - 1) lambda / c, in logarithms.

    Example (ARX's adult table, 30,162 rows, against the US population):
        >>> estimated_k(1000, 30162, 317238626, 0.01, "poisson")
        3
        >>> estimated_k(3, 30162, 317238626, 0.01, "zero-truncated-poisson")
        2
    """
    mean = max(rows * k / population, 5e-324)
    threshold = 1.0 - significance
    log_mean = math.log(mean)
    log_term = -mean  # ln p(0)
    if estimator == "poisson":
        cumulative, count = 0.0, 0
        while cumulative < threshold:
            cumulative += math.exp(log_term)
            count += 1
            log_term += log_mean - math.log(count)
            if count >= k:
                break
        least = count + 1
    else:
        nonzero = -math.expm1(-mean)  # 1 - p(0)
        log_term += log_mean  # ln p(1)
        cumulative, count = 0.0, 1
        while cumulative < threshold:
            cumulative += math.exp(log_term) / nonzero
            count += 1
            log_term += log_mean - math.log(count)
            if count >= k:
                break
        least = count
    return min(least, k, rows)


def distinct_values(counts: Counts) -> int:
    """The number of different values a class holds.

    Distinct l-diversity (A. Machanavajjhala, D. Kifer, J. Gehrke,
    M. Venkitasubramaniam, "l-Diversity: Privacy Beyond k-Anonymity", ACM TKDD
    1(1), 2007): a class is distinct l-diverse when it holds at least l
    different values. The missing value is a value.

    Example:
        >>> distinct_values({"flu": 2, None: 1})
        2
    """
    return sum(1 for n in counts.values() if n > 0)


def entropy(counts: Counts) -> float:
    """The class's entropy −Σ_s q_s ln q_s.

    Entropy l-diversity (Machanavajjhala et al. 2007): a class is entropy
    l-diverse when its entropy is at least ln l (:func:`at_least`).

    Example (four equally frequent values: ln 4):
        >>> entropy({"a": 1, "b": 1, "c": 1, "d": 1}) == math.log(4)
        True
    """
    n = rows(counts)
    return -math.fsum(c / n * math.log(c / n) for c in counts.values() if c > 0)


def recursive_ratio(counts: Counts, l: int) -> Fraction | None:  # noqa: E741 - the paper's l
    """r_1 / (r_l + r_(l+1) + … + r_m), the c above which a class is recursive (c,l)-diverse.

    Recursive (c,l)-diversity (Machanavajjhala et al. 2007): with
    r_1 >= r_2 >= … >= r_m the counts of the values a class holds, the class is
    recursive (c,l)-diverse when r_1 < c (r_l + … + r_m), that is when this
    ratio is below c. ``None`` when the class holds fewer than l values (no c
    suffices); 0 when l = 1, which the paper declares always satisfied.

    Example:
        >>> recursive_ratio({"a": 4, "b": 2, "c": 2}, 2), recursive_ratio({"a": 3}, 2)
        (Fraction(1, 1), None)
    """
    if l == 1:
        return Fraction(0)
    ranked = sorted((c for c in counts.values() if c > 0), reverse=True)
    if len(ranked) < l:
        return None
    return Fraction(ranked[0], sum(ranked[l - 1 :]))


def largest_share(counts: Counts) -> Fraction:
    """max_s q_s, the α of (α,k)-anonymity (Wong, Li, Fu & Wang 2006).

    Example:
        >>> largest_share({"a": 3, "b": 1})
        Fraction(3, 4)
    """
    return Fraction(max(counts.values()), rows(counts))


def emd_equal(counts: Counts, reference: Reference) -> Fraction:
    """Earth Mover's Distance from P to Q with equal ground distance: ½ Σ_v |q_v − p_v|.

    N. Li, T. Li, S. Venkatasubramanian, "t-Closeness: Privacy Beyond
    k-Anonymity and l-Diversity", ICDE 2007: when any two different values are 1
    apart, the EMD is half the L1 distance, the sum over every value of the
    table. A class is t-close when it is at most t (:func:`at_most`). Each value
    the class lacks adds its p_v, so only the values it holds are visited.

    Example (P = (3/4, 1/4), a class of the first value only):
        >>> emd_equal({"a": 2}, Reference.of({"a": 3, "b": 1}))
        Fraction(1, 4)
    """
    n, total = rows(counts), reference.total
    held = sum(abs(c * total - reference.counts[v] * n) for v, c in counts.items())
    lacking = n * (total - sum(reference.counts[v] for v in counts))
    return Fraction(held + lacking, 2 * n * total)


@dataclass(frozen=True)
class Ranking:
    """The table's values in order, for the ordered distance.

    Attributes:
        rank: each value's position 0 … m − 1.
        cumulative: R_i, the table's rows holding one of the i + 1 smallest values.
        prefix: S_x = R_0 + … + R_(x−1), for x = 0 … m.
    """

    rank: Mapping[Value, int]
    cumulative: tuple[int, ...]
    prefix: tuple[int, ...]

    @classmethod
    def of(cls, reference: Reference, order: Sequence[Value]) -> Ranking:
        """The reference's values ranked by their place in ``order``.

        Raises:
            InputError: a value of the reference is not in ``order``.
        """
        place = {value: i for i, value in enumerate(order)}
        absent = [v for v in reference.counts if v not in place]
        if absent:
            shown = "the missing value" if absent[0] is None else repr(absent[0])
            raise InputError(f"{shown} is not in the given order {list(order)}")
        values = sorted(reference.counts, key=place.__getitem__)
        cumulative = tuple(accumulate(reference.counts[v] for v in values))
        return cls(
            rank={v: i for i, v in enumerate(values)},
            cumulative=cumulative,
            prefix=(0, *accumulate(cumulative)),
        )


def numeric_order(values: Sequence[Value]) -> list[str]:
    """``values`` sorted by the numbers they spell (ties by their text).

    Raises:
        InputError: a value is missing or not a finite number; ``values`` are
            examined in text order, the missing value last, and the first such
            value is named.

    Example:
        >>> numeric_order(["10", "9", "10.5"])
        ['9', '10', '10.5']
    """
    keys: dict[str, float] = {}
    for value in sorted(values, key=lambda v: (v is None, v or "")):
        if value is None:
            raise InputError("the missing value has no place in a numeric order")
        try:
            number = float(value)
        except ValueError:
            raise InputError(f"value {value!r} is not a number") from None
        if not math.isfinite(number):
            raise InputError(f"value {value!r} is not a finite number")
        keys[value] = number
    return sorted(keys, key=lambda v: (keys[v], v))


def emd_ordered(counts: Counts, ranking: Ranking) -> Fraction:
    """Earth Mover's Distance from P to Q with ordered ground distance.

    Li, Li & Venkatasubramanian 2007: the i-th and j-th smallest of the table's
    m values are |i − j| / (m − 1) apart, and the EMD is
    (1 / (m − 1)) Σ_i |(p_1 − q_1) + … + (p_i − q_i)|. Scaled by n·N the i-th
    term is |n R_i − N C_i|, C_i the class's rows with one of the i + 1 smallest
    values. C_i is constant between the ranks of the values the class holds and
    R_i rises with i, so each such run of terms changes sign once and is summed
    from the prefix sums S. With one value (m = 1) the distance is 0.

    Example (P uniform over 1, 2, 3; a class holding only 3: (2/3 + 1/3) / 2):
        >>> table = Reference.of({"1": 1, "2": 1, "3": 1})
        >>> emd_ordered({"3": 2}, Ranking.of(table, ["1", "2", "3"]))
        Fraction(1, 2)
    """
    m = len(ranking.cumulative)
    if m <= 1:
        return Fraction(0)
    n, total = rows(counts), ranking.cumulative[-1]
    moved = 0
    start = held = 0
    for rank, count in [*sorted((ranking.rank[v], c) for v, c in counts.items()), (m, 0)]:
        moved += _run(ranking, start, rank, held * total, n)
        start, held = rank, held + count
    return Fraction(moved, n * total * (m - 1))


def _run(ranking: Ranking, low: int, high: int, target: int, n: int) -> int:
    """Σ_{low <= i < high} |n R_i − target|: below ⌈target / n⌉ the terms are target − n R_i."""
    split = bisect_left(ranking.cumulative, -(-target // n), low, high)
    s = ranking.prefix
    below = target * (split - low) - n * (s[split] - s[low])
    above = n * (s[high] - s[split]) - target * (high - split)
    return below + above


@dataclass(frozen=True)
class Tree:
    """The table's values generalized level by level, for the hierarchical distance.

    Attributes:
        nodes: for each level j = 0 … H − 1, each value's node at level j (its
            label there; a label names one node, as a hierarchy's levels are
            functions of the level below).
        references: for each level j, the table's rows under each node.
    """

    nodes: tuple[Mapping[Value, Value], ...]
    references: tuple[Reference, ...]

    @classmethod
    def of(cls, reference: Reference, hierarchy: Hierarchy) -> Tree:
        """The hierarchy above the reference's values.

        Raises:
            InputError: a value is not a leaf of the hierarchy, or the
                hierarchy has no level above its leaves.
        """
        if hierarchy.height < 1:
            raise InputError(f"hierarchy {hierarchy.name}: needs a level above its values")
        row = {leaf: i for i, leaf in enumerate(hierarchy.leaves)}
        for value in reference.counts:
            if value not in row:
                shown = "the missing value" if value is None else repr(value)
                raise InputError(f"hierarchy {hierarchy.name}: {shown} is not one of its values")
        nodes = tuple(
            {v: hierarchy.levels[level][row[v]] for v in reference.counts}
            for level in range(hierarchy.height)
        )
        return cls(nodes, tuple(Reference.of(generalized(reference.counts, n)) for n in nodes))


def generalized(counts: Counts, node: Mapping[Value, Value]) -> dict[Value, int]:
    """``counts`` summed by each value's node.

    Example:
        >>> generalized({"flu": 1, "cold": 2, "ulcer": 1},
        ...             {"flu": "lung", "cold": "lung", "ulcer": "stomach"})
        {'lung': 3, 'stomach': 1}
    """
    out: dict[Value, int] = {}
    for value, count in counts.items():
        out[node[value]] = out.get(node[value], 0) + count
    return out


def emd_hierarchical(counts: Counts, tree: Tree) -> Fraction:
    """Earth Mover's Distance from P to Q with hierarchical ground distance.

    Li, Li & Venkatasubramanian 2007: two values are level(v_i, v_j) / H apart,
    the level of their lowest common ancestor in the attribute's hierarchy over
    its height H. That distance is the path length in the hierarchy's tree when
    every edge weighs 1 / (2H), and on a tree the EMD is the sum over the edges
    of weight × the mass crossing it, |P(under node) − Q(under node)| for the
    edge above each node below the root. Level by level this is
    (1 / H) Σ_{j=0}^{H−1} ½ Σ_(nodes N at level j) |P(N) − Q(N)|: the mean over
    the levels below the root of the equal-distance EMD between P and Q
    generalized to that level (:func:`emd_equal`). It equals the paper's
    bottom-up computation.

    Example (P spreads over two groups, the class stays in one: distance 1/2):
        >>> h = Hierarchy("disease", (("flu", "cold", "ulcer", "gastritis"),
        ...                           ("lung", "lung", "stomach", "stomach"), ("*",) * 4))
        >>> table = Reference.of(dict.fromkeys(h.leaves, 1))
        >>> emd_hierarchical({"ulcer": 1, "gastritis": 1}, Tree.of(table, h))
        Fraction(1, 2)
    """
    levels = zip(tree.nodes, tree.references, strict=True)
    distances = [emd_equal(generalized(counts, node), p) for node, p in levels]
    return sum(distances, Fraction(0)) / len(distances)


def relative_gains(counts: Counts, reference: Reference) -> dict[Value, Fraction]:
    """D(p_v, q_v) = (q_v − p_v) / p_v for every value more frequent in the class (q_v > p_v).

    The relative gain in an adversary's belief of J. Cao, P. Karras,
    "Publishing Microdata with a Robust Privacy Guarantee", PVLDB 5(11), 2012.

    Example (P = (1/2, 1/2), Q = (3/4, 1/4)):
        >>> relative_gains({"a": 3, "b": 1}, Reference.of({"a": 4, "b": 4}))
        {'a': Fraction(1, 2)}
    """
    n, total = rows(counts), reference.total
    return {
        v: Fraction(c * total - reference.counts[v] * n, reference.counts[v] * n)
        for v, c in counts.items()
        if c * total > reference.counts[v] * n
    }


def basic_beta(counts: Counts, reference: Reference) -> Fraction:
    """max {D(p_v, q_v) : p_v < q_v}, 0 when no value gains.

    Basic β-likeness (Cao & Karras 2012): a class satisfies it when this is at
    most β (:func:`at_most`).

    Example:
        >>> basic_beta({"a": 1, "b": 3}, Reference.of({"a": 4, "b": 4}))
        Fraction(1, 2)
    """
    return max(relative_gains(counts, reference).values(), default=Fraction(0))


def beyond_cap(counts: Counts, reference: Reference) -> dict[Value, float]:
    """Each value whose gain exceeds its cap −ln p_v, and by how much.

    Enhanced β-likeness (Cao & Karras 2012): a class satisfies it when every
    value with p_v < q_v has D(p_v, q_v) <= min(β, −ln p_v), that is when its
    :func:`basic_beta` is at most β and no value is beyond its cap (the caps do
    not depend on β).

    Example (P = (7/8, 1/8): a class of the first value gains 1/7 > −ln(7/8)):
        >>> beyond = beyond_cap({"a": 4}, Reference.of({"a": 7, "b": 1}))
        >>> {v: round(x, 4) for v, x in beyond.items()}
        {'a': 0.0093}
    """
    out = {}
    for value, gain in relative_gains(counts, reference).items():
        cap = -math.log(reference.counts[value] / reference.total)
        if not at_most_float(float(gain), cap):
            out[value] = float(gain) - cap
    return out


def delta_disclosure(counts: Counts, reference: Reference) -> float:
    """max |ln(q_v / p_v)| over the values the class holds.

    δ-disclosure privacy (J. Brickell, V. Shmatikov, "The Cost of Privacy:
    Destruction of Data-Mining Utility in Anonymized Data Publishing", KDD
    2008): a class is δ-disclosure private when |ln(q_v / p_v)| < δ for every
    value v. Read literally the condition covers the values the class lacks,
    whose ln 0 would fail every such class; ARX's ``DDisclosurePrivacy`` and
    pycanon check the values present only, and so does kanonym. The ratio is
    the correctly rounded quotient of the integers c_v N and n o_v.

    Example (P = (1/2, 1/2), Q = (3/4, 1/4): |ln(1/2)|):
        >>> delta_disclosure({"a": 3, "b": 1}, Reference.of({"a": 6, "b": 6})) == math.log(2)
        True
    """
    n, total = rows(counts), reference.total
    return max(
        (abs(math.log(c * total / (n * reference.counts[v]))) for v, c in counts.items() if c),
        default=0.0,
    )


def average_risk(sizes: Sequence[int]) -> Fraction:
    """The average re-identification risk of a release: its classes over its records.

    K. El Emam, "Guide to the De-Identification of Personal Health Information"
    (CRC Press 2013): a record in a class of size |E| is re-identified by
    linking with probability 1/|E|; averaged over the n records,
    Σ_E |E| · (1/|E|) / n = (number of classes) / n.

    Example (classes of 1, 1, 2 and 4 records):
        >>> average_risk([1, 1, 2, 4])
        Fraction(1, 2)
    """
    return Fraction(len(sizes), sum(sizes))


def records_at_risk(sizes: Sequence[int], highest: Fraction) -> Fraction:
    """The share of a release's records whose risk 1/|E| exceeds ``highest``.

    El Emam (2013): the records of classes with |E| · highest < 1.

    Example (risk above 1/3: the classes of 1 and 2 records, 4 of 8 records):
        >>> records_at_risk([1, 1, 2, 4], Fraction(1, 3))
        Fraction(1, 2)
    """
    return Fraction(sum(s for s in sizes if s * highest < 1), sum(sizes))


def sample_uniqueness(sizes: Sequence[int]) -> Fraction:
    """The share of a release's records alone in their class (sample uniques; El Emam 2013).

    Example:
        >>> sample_uniqueness([1, 1, 2, 4])
        Fraction(1, 4)
    """
    return Fraction(sum(1 for s in sizes if s == 1), sum(sizes))
