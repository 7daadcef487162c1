"""Measuring sensitive attributes of a finished table (``kanonym check --sensitive``).

The table is grouped on the quasi-identifiers with Polars (missing values group
together, as everywhere in kanonym); in each class the sensitive attribute's
values are counted as text, the missing value being a value of its own
(:mod:`kanonym.verify.classes`). Every measure is computed by the re-check's own
definitions (:mod:`kanonym.verify.definitions`, exactly where it is rational)
and printed as the nearest float. Q is a
class's distribution of the attribute, P the distribution over the whole table
being checked (for a release, its released rows), m the number of values in the
table, logarithms natural. Each measure is the least (or, for l, the largest)
parameter the table satisfies, so it reads as "the table is ... for this value":

====================  =========================================================
key                   definition
====================  =========================================================
``l_distinct``        least number of distinct values in a class: distinct
                      l-diversity holds for every l up to it (Machanavajjhala et
                      al. 2007)
``l_entropy``         exp of the least class entropy −Σ q ln q: entropy
                      l-diversity holds for every l up to it
``recursive_c_l``     [c, l] with l = ``l_distinct`` (the largest l any c can
                      reach) and c = max over classes of r_1 / (r_l + … + r_m),
                      r_1 >= r_2 >= … the class's value counts: recursive
                      (c,l)-diversity holds for every c > c (the definition's
                      strict <); c = 0 when l = 1, which the paper declares
                      always satisfied
``alpha_k``           [alpha, k]: alpha = max over classes of the largest value
                      share max q, k = the smallest class: (α,k)-anonymity (Wong,
                      Li, Fu & Wang 2006) holds for α >= alpha and k up to k, for
                      every value of the attribute
``t_equal``           max over classes of the Earth Mover's Distance from P to Q,
                      equal ground distance: ½ Σ |q_i − p_i| (Li, Li &
                      Venkatasubramanian 2007); t-closeness holds for t >= it
``t_ordered``         the same with ordered distance, values ranked as numbers:
                      (1 / (m − 1)) Σ_i |Σ_(j<=i) (p_j − q_j)|; only for an
                      attribute whose every value is a finite number (no missing
                      value), else null
``beta_basic``        max over classes and values with q > p of (q − p) / p:
                      basic β-likeness holds for β >= it (Cao & Karras 2012)
``beta_enhanced``     least β with (q − p) / p <= min(β, −ln p) for every class
                      and value with q > p: ``beta_basic`` when no value exceeds
                      its cap −ln p, else null (no β suffices)
``delta_disclosure``  max over classes of |ln(q / p)| over the values present in
                      the class: δ-disclosure privacy holds for every δ above it
                      (Brickell & Shmatikov 2008; absent values are skipped, as
                      ARX and pycanon do)
====================  =========================================================

A value that is infinite or undefined is ``None`` (JSON null), and the summary
carries a reason for it (JSON: the key ``KEY_reason`` right after ``KEY``).

Example (a class like Carol's in Samarati 2008, all ``short breath``: the table is
not distinct 2-diverse, and a disease has no numeric order):
    >>> import polars as pl
    >>> t = pl.DataFrame({"race": ["asian"] * 3 + ["black"] * 2,
    ...                   "disease": ["flu", "ulcer", "flu", "short breath", "short breath"]})
    >>> s = measure_sensitive(t, ["race"], "disease")
    >>> s.l_distinct, s.alpha_k, s.t_ordered
    (1, (1.0, 2), None)
    >>> s.reasons["t_ordered"]
    "'disease' is not ordered: value 'flu' is not a number"
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

import polars as pl

from kanonym._html import section, summary_box, table
from kanonym.errors import InputError
from kanonym.verify.check import ClassSizeSummary, measure
from kanonym.verify.classes import class_value_counts, value_counts
from kanonym.verify.definitions import (
    Counts,
    Ranking,
    Reference,
    Value,
    basic_beta,
    beyond_cap,
    delta_disclosure,
    distinct_values,
    emd_equal,
    emd_ordered,
    entropy,
    largest_share,
    numeric_order,
    recursive_ratio,
    relative_gains,
    rows,
)

KEYS = (
    "l_distinct",
    "l_entropy",
    "recursive_c_l",
    "alpha_k",
    "t_equal",
    "t_ordered",
    "beta_basic",
    "beta_enhanced",
    "delta_disclosure",
)


@dataclass(frozen=True, kw_only=True)
class SensitiveSummary:
    """The measures of one sensitive attribute (definitions: the module docstring).

    Attributes:
        attribute: the sensitive column.
        reasons: for every measure that is ``None``, why.
    """

    attribute: str
    l_distinct: int | None
    l_entropy: float | None
    recursive_c_l: tuple[float, int] | None
    alpha_k: tuple[float, int] | None
    t_equal: float | None
    t_ordered: float | None
    beta_basic: float | None
    beta_enhanced: float | None
    delta_disclosure: float | None
    reasons: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: pairs as lists; a null measure followed by ``KEY_reason``."""
        out: dict[str, object] = {}
        for key in KEYS:
            value = getattr(self, key)
            out[key] = list(value) if isinstance(value, tuple) else value
            if value is None:
                out[f"{key}_reason"] = self.reasons[key]
        return out

    def text(self) -> str:
        """One line for people, e.g. ``disease: l distinct 1, l entropy 1.000, …``."""
        parts = []
        for key in KEYS:
            value = getattr(self, key)
            label = key.replace("_", " ")
            if value is None:
                parts.append(f"{label} none ({self.reasons[key]})")
            elif isinstance(value, tuple):
                parts.append(f"{label} ({value[0]:.4g}, {value[1]})")
            else:
                parts.append(f"{label} {value:.4g}")
        return f"{self.attribute}: {', '.join(parts)}"


@dataclass(frozen=True)
class CheckSummary(ClassSizeSummary):
    """Class sizes (:class:`ClassSizeSummary`) plus each sensitive attribute's measures.

    Attributes:
        sensitive: sensitive attribute -> its :class:`SensitiveSummary`, in the
            order asked.
    """

    sensitive: Mapping[str, SensitiveSummary] = field(default_factory=dict)

    def __str__(self) -> str:
        """The class sizes' two lines, then one line per sensitive attribute.

        Example:
            >>> frame = pl.DataFrame({"zip": ["1", "1"], "disease": ["flu", "cold"]})
            >>> print(measure_table(frame, ["zip"], 2, ["disease"]))  # doctest: +ELLIPSIS
            2-anonymous: yes
            2 rows in 1 classes, smallest 2 rows; 0 rows in classes smaller than 2
            disease: l distinct 2, l entropy 2, ...
        """
        lines = [ClassSizeSummary.__str__(self)]
        lines.extend(summary.text() for summary in self.sensitive.values())
        return "\n".join(lines)

    def _repr_html_(self) -> str:
        """The counts and each sensitive attribute's measures as HTML tables (escaped)."""
        measures = table(
            [
                (name, key.replace("_", " "), value if value is not None else summary.reasons[key])
                for name, summary in self.sensitive.items()
                for key, value in ((key, getattr(summary, key)) for key in KEYS)
            ],
            header=("attribute", "measure", "value"),
        )
        parts = [self._rows_html()]
        if self.sensitive:
            parts.append(section("sensitive attributes", measures))
        return summary_box(f"{self.k}-anonymous: {'yes' if self.k_anonymous else 'no'}", *parts)

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym check --json`` prints.

        Example:
            >>> import polars as pl
            >>> measure_table(pl.DataFrame({"zip": ["1", "1"]}), ["zip"], 2).as_dict()
            {'smallest_class': 2, 'k': 2, 'rows': 2, 'classes': 1, 'rows_below_k': 0, \
'k_anonymous': True, 'sensitive': {}}
        """
        return {
            "smallest_class": self.smallest_class,
            "k": self.k,
            "rows": self.rows,
            "classes": self.classes,
            "rows_below_k": self.rows_below_k,
            "k_anonymous": self.k_anonymous,
            "sensitive": {name: summary.as_dict() for name, summary in self.sensitive.items()},
        }


def measure_table(
    frame: pl.DataFrame, columns: Sequence[str], k: int, sensitive: Sequence[str] = ()
) -> CheckSummary:
    """Class sizes of ``frame`` on ``columns`` and the measures of each ``sensitive``."""
    sizes = measure(frame, columns, k)
    return CheckSummary(
        rows=sizes.rows,
        classes=sizes.classes,
        smallest_class=sizes.smallest_class,
        rows_below_k=sizes.rows_below_k,
        k=sizes.k,
        sensitive={name: measure_sensitive(frame, columns, name) for name in sensitive},
    )


def measure_sensitive(
    frame: pl.DataFrame, columns: Sequence[str], attribute: str
) -> SensitiveSummary:
    """Every measure of ``attribute`` over the classes of ``frame`` on ``columns``."""
    if frame.height == 0:
        return SensitiveSummary(
            attribute=attribute,
            l_distinct=None,
            l_entropy=None,
            recursive_c_l=None,
            alpha_k=None,
            t_equal=None,
            t_ordered=None,
            beta_basic=None,
            beta_enhanced=None,
            delta_disclosure=None,
            reasons=dict.fromkeys(KEYS, "the table has no rows"),
        )
    reference = Reference.of(value_counts(frame.get_column(attribute)))
    reasons: dict[str, str] = {}
    ranking: Ranking | None = None
    try:
        ranking = Ranking.of(reference, numeric_order(list(reference.counts)))
    except InputError as error:
        reasons["t_ordered"] = f"'{attribute}' is not ordered: {error}"
    smallest = l_distinct = frame.height
    least_entropy = math.inf
    alpha = t_equal = t_ordered = beta = Fraction(0)
    delta = 0.0
    for counts in class_value_counts(frame, columns, attribute):
        smallest = min(smallest, rows(counts))
        l_distinct = min(l_distinct, distinct_values(counts))
        least_entropy = min(least_entropy, entropy(counts))
        alpha = max(alpha, largest_share(counts))
        t_equal = max(t_equal, emd_equal(counts, reference))
        if ranking is not None:
            t_ordered = max(t_ordered, emd_ordered(counts, ranking))
        beta = max(beta, basic_beta(counts, reference))
        if "beta_enhanced" not in reasons and (beyond := beyond_cap(counts, reference)):
            reasons["beta_enhanced"] = _enhanced_reason(counts, beyond, reference)
        delta = max(delta, delta_disclosure(counts, reference))
    # Every class holds at least l_distinct values, so each ratio is a number.
    c = max(
        recursive_ratio(counts, l_distinct) or Fraction(0)
        for counts in class_value_counts(frame, columns, attribute)
    )
    return SensitiveSummary(
        attribute=attribute,
        l_distinct=l_distinct,
        l_entropy=math.exp(least_entropy),
        recursive_c_l=(float(c), l_distinct),
        alpha_k=(float(alpha), smallest),
        t_equal=float(t_equal),
        t_ordered=None if ranking is None else float(t_ordered),
        beta_basic=float(beta),
        beta_enhanced=None if "beta_enhanced" in reasons else float(beta),
        delta_disclosure=delta,
        reasons=reasons,
    )


def _enhanced_reason(counts: Counts, beyond: Mapping[Value, float], reference: Reference) -> str:
    """Why no β suffices: the class's value furthest beyond its cap −ln p (first in text order)."""
    value = max(sorted(beyond, key=lambda v: (v is None, v or "")), key=beyond.__getitem__)
    n = rows(counts)
    p = reference.counts[value] / reference.total
    gain = float(relative_gains(counts, reference)[value])
    return (
        f"no beta satisfies enhanced beta-likeness: value {value!r} has share "
        f"{counts[value] / n:.4g} in a class of {n} rows against {p:.4g} in the table, a "
        f"relative gain of {gain:.4g} above its cap -ln p = {-math.log(p):.4g}"
    )
