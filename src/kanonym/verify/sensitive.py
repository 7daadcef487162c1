"""Measuring sensitive attributes of a finished table (``kanonym check --sensitive``).

The table is grouped on the quasi-identifiers with Polars (missing values group
together, as everywhere in kanonym); in each class the sensitive attribute's
values are counted as text, the missing value being a value of its own. Q is a
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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym.errors import InputError
from kanonym.models.distribution import (
    basic_beta,
    class_shares,
    delta_disclosure,
    distinct_values,
    emd_equal,
    emd_ordered,
    enhanced_beta,
    entropy,
    largest_share,
    numeric_order,
    recursive_c,
    relative_gains,
    table_shares,
)
from kanonym.verify.check import ClassSizeSummary, measure

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

# Classes are measured in slices of a dense (classes x values) count matrix of at
# most this many cells (128 MB), so a table with many classes and many distinct
# sensitive values is measured in bounded memory.
_CELLS_PER_SLICE = 1 << 24


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

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym check --json`` prints.

        Example:
            >>> import polars as pl
            >>> measure_table(pl.DataFrame({"zip": ["1", "1"]}), ["zip"], 2).as_dict()
            {'k': 2, 'requested_k': 2, 'rows': 2, 'classes': 1, 'rows_below_k': 0, \
'k_anonymous': True, 'sensitive': {}}
        """
        return {
            "k": self.smallest_class,
            "requested_k": self.k,
            "rows": self.rows,
            "classes": self.classes,
            "rows_below_k": self.rows_below_k,
            "k_anonymous": self.k_anonymous,
            "sensitive": {name: summary.as_dict() for name, summary in self.sensitive.items()},
        }


def measure_table(
    frame: pl.DataFrame, quasi_identifiers: Sequence[str], k: int, sensitive: Sequence[str] = ()
) -> CheckSummary:
    """Class sizes of ``frame`` on ``quasi_identifiers`` and the measures of each ``sensitive``."""
    sizes = measure(frame, quasi_identifiers, k)
    return CheckSummary(
        rows=sizes.rows,
        classes=sizes.classes,
        smallest_class=sizes.smallest_class,
        rows_below_k=sizes.rows_below_k,
        k=sizes.k,
        sensitive={name: measure_sensitive(frame, quasi_identifiers, name) for name in sensitive},
    )


def measure_sensitive(
    frame: pl.DataFrame, quasi_identifiers: Sequence[str], attribute: str
) -> SensitiveSummary:
    """Every measure of ``attribute`` over the classes of ``frame`` on ``quasi_identifiers``."""
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
    counts = ValueCounts.of(frame, quasi_identifiers, attribute)
    reasons: dict[str, str] = {}
    order: npt.NDArray[np.int64] | None = None
    try:
        order = numeric_order(counts.labels)
    except InputError as error:
        reasons["t_ordered"] = f"'{attribute}' is not ordered: {error}"
    smallest = l_distinct = counts.rows
    least_entropy = math.inf
    alpha = t_equal = t_ordered = beta = enhanced = delta = 0.0
    for matrix in counts.slices():
        smallest = min(smallest, int(matrix.sum(axis=1).min()))
        l_distinct = min(l_distinct, int(distinct_values(matrix).min()))
        least_entropy = min(least_entropy, float(entropy(matrix).min()))
        alpha = max(alpha, float(largest_share(matrix).max()))
        t_equal = max(t_equal, float(emd_equal(matrix, counts.overall).max()))
        if order is not None:
            t_ordered = max(t_ordered, float(emd_ordered(matrix, counts.overall, order).max()))
        beta = max(beta, float(basic_beta(matrix, counts.overall).max()))
        least_betas = enhanced_beta(matrix, counts.overall)
        if "beta_enhanced" not in reasons and np.isinf(least_betas).any():
            row = matrix[int(np.argmax(np.isinf(least_betas)))]
            reasons["beta_enhanced"] = _enhanced_reason(row, counts)
        enhanced = max(enhanced, float(least_betas.max()))
        delta = max(delta, float(delta_disclosure(matrix, counts.overall).max()))
    c = max(float(recursive_c(matrix, l_distinct).max()) for matrix in counts.slices())
    return SensitiveSummary(
        attribute=attribute,
        l_distinct=l_distinct,
        l_entropy=math.exp(least_entropy),
        recursive_c_l=(c, l_distinct),
        alpha_k=(alpha, smallest),
        t_equal=t_equal,
        t_ordered=None if order is None else t_ordered,
        beta_basic=beta,
        beta_enhanced=None if "beta_enhanced" in reasons else enhanced,
        delta_disclosure=delta,
        reasons=reasons,
    )


def _enhanced_reason(row: npt.NDArray[np.int64], counts: ValueCounts) -> str:
    """Why no β suffices: the first value of ``row``'s class above its cap −ln p."""
    matrix = row[np.newaxis, :]
    gains = relative_gains(matrix, counts.overall)[0]
    p = table_shares(counts.overall)
    caps = -np.log(p)
    value = int(np.argmax(gains - caps))
    q = float(class_shares(matrix)[0, value])
    return (
        f"no beta satisfies enhanced beta-likeness: value {counts.labels[value]!r} has share "
        f"{q:.4g} in a class of {int(row.sum())} rows against {p[value]:.4g} in the table, a "
        f"relative gain of {gains[value]:.4g} above its cap -ln p = {caps[value]:.4g}"
    )


@dataclass(frozen=True, eq=False)
class ValueCounts:
    """How often each value of one attribute occurs in each class, sparsely.

    Attributes:
        classes, values, counts: one entry per (class, value) pair that occurs,
            sorted by class: class number, value code, rows.
        labels: the value of each code (text; None is the missing value).
        overall: rows holding each value code in the whole table.
        rows: rows in the table.
    """

    classes: npt.NDArray[np.int64]
    values: npt.NDArray[np.int64]
    counts: npt.NDArray[np.int64]
    labels: tuple[str | None, ...]
    overall: npt.NDArray[np.int64]
    rows: int

    @classmethod
    def of(
        cls,
        frame: pl.DataFrame,
        quasi_identifiers: Sequence[str],
        attribute: str,
        reference: pl.Series | None = None,
    ) -> ValueCounts:
        """Count ``attribute`` per class of ``frame``.

        The value codes and ``overall`` come from ``reference`` (a column with
        every value of ``frame``'s), by default the attribute in ``frame`` itself.
        """
        source = (frame.get_column(attribute) if reference is None else reference).cast(pl.String)
        labels = source.unique().sort(nulls_last=True)
        code_of = {label: code for code, label in enumerate(labels.to_list())}
        keyed = frame.select(
            # Dense ranks of structs number the classes, nulls included.
            (pl.struct(list(quasi_identifiers)).rank("dense") - 1).alias("class"),
            pl.col(attribute)
            .cast(pl.String)
            .replace_strict(code_of, return_dtype=pl.Int64)
            .alias("value"),
        )
        pairs = keyed.group_by("class", "value").len().sort("class", "value")
        return cls(
            classes=pairs["class"].to_numpy().astype(np.int64),
            values=pairs["value"].to_numpy().astype(np.int64),
            counts=pairs["len"].to_numpy().astype(np.int64),
            labels=tuple(labels.to_list()),
            overall=np.bincount(
                source.replace_strict(code_of, return_dtype=pl.Int64).to_numpy(),
                minlength=len(code_of),
            ),
            rows=frame.height,
        )

    @property
    def n_classes(self) -> int:
        """Number of classes."""
        return int(self.classes[-1]) + 1

    def matrix(self, start: int, stop: int) -> npt.NDArray[np.int64]:
        """Dense ``(classes, values)`` counts of the classes ``start`` to ``stop - 1``."""
        low, high = np.searchsorted(self.classes, [start, stop])
        matrix = np.zeros((stop - start, len(self.labels)), dtype=np.int64)
        matrix[self.classes[low:high] - start, self.values[low:high]] = self.counts[low:high]
        return matrix

    def slices(self) -> Iterator[npt.NDArray[np.int64]]:
        """Dense count matrices of consecutive classes, together covering them all."""
        step = slice_step(len(self.labels))
        for start in range(0, self.n_classes, step):
            yield self.matrix(start, min(self.n_classes, start + step))


def slice_step(values: int) -> int:
    """Classes per dense slice, so that a slice holds at most ``_CELLS_PER_SLICE`` counts."""
    return max(1, _CELLS_PER_SLICE // max(values, 1))
