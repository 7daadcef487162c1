"""Attribute disclosure: classes that give away a sensitive value (``kanonym disclosure``).

k-anonymity hides which row is a person's, not what the rows of their class
say. Samarati's slides (2008, "Attribute Disclosure") show the two attacks
on a 2-anonymous table: everyone in Carol's class (black, female) has short
breath, so knowing Carol is in the table reveals her disease (*homogeneity*);
Hellen's class holds chest pain and short breath, and background knowledge
ruling one out reveals the other (Machanavajjhala, Kifer, Gehrke &
Venkitasubramaniam 2007, "l-diversity", section 3.1).

Per sensitive attribute, every class on the quasi-identifiers (missing values
an ordinary value, in both) is measured by its size, its number of distinct
sensitive values and its most frequent value's share q (ties: the value first
in text order, missing last). A class is

* **homogeneous** when it holds one distinct value (q = 1): the homogeneity
  attack succeeds on everyone in it;
* **dominated** when q > α, the dominance threshold (default 0.5: a majority
  value): exactly the classes violating (α,k)-anonymity's α bound (Wong, Li,
  Fu & Wang 2006, "(α,k)-anonymity"); homogeneous classes are dominated for
  every α < 1.

``diversity`` counts classes by distinct values: those with two are one fact of
background knowledge away from homogeneity.

Example (Samarati 2008's 2-anonymous table: Carol's class and the class of the two
Asian men are homogeneous; Hellen's is split 50/50, so not dominated):
    >>> import polars as pl
    >>> t = pl.DataFrame({
    ...     "race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
    ...     "sex": ["F", "F", "F", "M", "M", "F", "F", "F", "F"],
    ...     "disease": ["hypertension", "obesity", "chest pain", "obesity", "obesity",
    ...                 "short breath", "short breath", "chest pain", "short breath"]})
    >>> d = measure_disclosure(t, ["race", "sex"], ["disease"])["disease"]
    >>> d.homogeneous_classes, d.homogeneous_records, d.dominated_classes, dict(d.diversity)
    (2, 4, 2, {1: 2, 2: 1, 3: 1})
    >>> [(c.values["race"], c.top_value) for c in d.flagged]
    [('asian', 'obesity'), ('black', 'short breath')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import polars as pl

from kanonym.attacks.defaults import DEFAULT_DOMINANCE, DEFAULT_LIMIT
from kanonym.attacks.measures import shorten, size_histogram
from kanonym.errors import InputError, echo

_SIZE, _DISTINCT, _TOP, _TOP_COUNT, _ROWS, _SHARE = (
    "__kanonym_size",
    "__kanonym_distinct",
    "__kanonym_top",
    "__kanonym_top_count",
    "__kanonym_rows",
    "__kanonym_share",
)


@dataclass(frozen=True, kw_only=True)
class FlaggedClass:
    """One dominated (or homogeneous) class.

    Attributes:
        values: quasi-identifier -> the class's value.
        size: records in the class.
        distinct: distinct sensitive values in it.
        top_value: its most frequent sensitive value.
        top_share: that value's share of the class.
    """

    values: Mapping[str, object]
    size: int
    distinct: int
    top_value: str | None
    top_share: float

    @property
    def homogeneous(self) -> bool:
        """Every record of the class has the same sensitive value."""
        return self.distinct == 1

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "values": dict(self.values),
            "size": self.size,
            "distinct": self.distinct,
            "top_value": self.top_value,
            "top_share": self.top_share,
        }


@dataclass(frozen=True, kw_only=True)
class AttributeDisclosure:
    """Homogeneous and dominated classes of one sensitive attribute.

    Attributes:
        attribute: the sensitive column.
        classes: classes on the quasi-identifiers.
        homogeneous_classes, homogeneous_records: classes with one distinct
            value, and their records.
        dominated_classes, dominated_records: classes whose top value's share
            exceeds the dominance threshold, and their records.
        diversity: distinct values -> classes holding that many, ascending.
        flagged: the dominated classes, largest first, then by top share
            (highest first), then by their quasi-identifier values (ascending,
            missing last); at most the limit asked for.
    """

    attribute: str
    classes: int
    homogeneous_classes: int
    homogeneous_records: int
    dominated_classes: int
    dominated_records: int
    diversity: Mapping[int, int]
    flagged: tuple[FlaggedClass, ...] = field(default=())

    def __post_init__(self) -> None:
        if sum(self.diversity.values()) != self.classes:
            raise ValueError("diversity must count every class once")
        if self.homogeneous_classes != self.diversity.get(1, 0):
            raise ValueError("homogeneous classes are the classes of one distinct value")
        if len(self.flagged) > self.dominated_classes:
            raise ValueError("more classes flagged than dominated")

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (one attribute of ``kanonym disclosure --json``)."""
        return {
            "classes": self.classes,
            "homogeneous_classes": self.homogeneous_classes,
            "homogeneous_records": self.homogeneous_records,
            "dominated_classes": self.dominated_classes,
            "dominated_records": self.dominated_records,
            "diversity": {str(d): n for d, n in self.diversity.items()},
            "flagged": [c.as_dict() for c in self.flagged],
        }

    def text(self) -> str:
        """A few lines for people."""
        lines = [
            f"{self.attribute}: {self.homogeneous_classes} of {self.classes} classes homogeneous "
            f"({self.homogeneous_records} records), {self.dominated_classes} dominated "
            f"({self.dominated_records} records); classes by distinct values: "
            f"{shorten(self.diversity)}"
        ]
        for c in self.flagged:
            values = ", ".join(f"{name}={value}" for name, value in c.values.items())
            lines.append(
                f"  [{values}] {c.size} records, {c.top_share:.0%} {c.top_value!r}"
                + (" (homogeneous)" if c.homogeneous else f" of {c.distinct} values")
            )
        return "\n".join(lines)


@dataclass(frozen=True, kw_only=True)
class DisclosureSummary:
    """Attribute disclosure of a table (``kanonym.disclosure``).

    Attributes:
        columns: the quasi-identifiers' column names grouped on.
        rows: records in the table.
        dominance: the share above which a value dominates its class (α).
        attributes: sensitive attribute -> its measures, in the order asked.
    """

    columns: tuple[str, ...]
    rows: int
    dominance: float
    attributes: Mapping[str, AttributeDisclosure]

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym disclosure --json`` prints (keys: docs, Risk and attacks)."""
        return {
            "columns": list(self.columns),
            "rows": self.rows,
            "dominance": self.dominance,
            "sensitive": {name: a.as_dict() for name, a in self.attributes.items()},
        }

    def text(self) -> str:
        """Lines for people."""
        head = (
            f"{self.rows} records grouped on {', '.join(self.columns)}; "
            f"dominated: top value above {self.dominance:g} of its class"
        )
        return "\n".join([head, *(a.text() for a in self.attributes.values())])


def check_dominance(dominance: float) -> None:
    """α is a share in [0, 1); else an InputError.

    Example:
        >>> check_dominance(1.0)
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: dominance must be in [0, 1), got 1.0
    """
    if isinstance(dominance, bool) or not isinstance(dominance, int | float):
        raise InputError(f"dominance must be a number, got {echo(dominance)}")
    if not 0.0 <= dominance < 1.0:
        raise InputError(f"dominance must be in [0, 1), got {dominance}")


def measure_disclosure(
    frame: pl.DataFrame,
    columns: Sequence[str],
    sensitive: Sequence[str],
    *,
    dominance: float = DEFAULT_DOMINANCE,
    limit: int = DEFAULT_LIMIT,
) -> dict[str, AttributeDisclosure]:
    """Measure each sensitive attribute (definitions: the module docstring).

    Raises:
        InputError: a bad dominance or limit, no sensitive attribute, or one
            that is also a quasi-identifier or named twice.
    """
    check_dominance(dominance)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 0:
        raise InputError(f"limit must be a whole number >= 0, got {echo(limit)}")
    if not sensitive:
        raise InputError("disclosure needs at least one sensitive column")
    if len(set(sensitive)) != len(sensitive):
        raise InputError(f"sensitive: a column is named twice in {list(sensitive)}")
    for name in sensitive:
        if name in columns:
            raise InputError(f"column '{name}' is both quasi-identifier and sensitive")
    return {name: _measure_attribute(frame, columns, name, dominance, limit) for name in sensitive}


def _measure_attribute(
    frame: pl.DataFrame,
    columns: Sequence[str],
    attribute: str,
    dominance: float,
    limit: int,
) -> AttributeDisclosure:
    qis = list(columns)
    value = pl.col(attribute)
    # Rows per (class, value), then per class: the most frequent value first,
    # ties to the value first in text order (missing last).
    per_class = (
        frame.with_columns(value.cast(pl.String))
        .group_by([*qis, attribute], maintain_order=True)
        .agg(pl.len().cast(pl.Int64).alias(_ROWS))
        .sort([_ROWS, attribute], descending=[True, False], nulls_last=True, maintain_order=True)
        .group_by(qis, maintain_order=True)
        .agg(
            pl.col(_ROWS).sum().alias(_SIZE),
            pl.len().alias(_DISTINCT),
            value.first().alias(_TOP),
            pl.col(_ROWS).first().alias(_TOP_COUNT),
        )
    )
    # top_count / size > dominance, in integers where the share is exact.
    dominated = per_class.filter(pl.col(_TOP_COUNT) > dominance * pl.col(_SIZE))
    homogeneous = per_class.filter(pl.col(_DISTINCT) == 1)
    flagged = dominated.with_columns((pl.col(_TOP_COUNT) / pl.col(_SIZE)).alias(_SHARE)).sort(
        [_SIZE, _SHARE, *qis],
        descending=[True, True, *[False] * len(qis)],
        nulls_last=True,
    )
    return AttributeDisclosure(
        attribute=attribute,
        classes=per_class.height,
        homogeneous_classes=homogeneous.height,
        homogeneous_records=int(homogeneous[_SIZE].sum()),
        dominated_classes=dominated.height,
        dominated_records=int(dominated[_SIZE].sum()),
        diversity=size_histogram(per_class[_DISTINCT].cast(pl.Int64).to_numpy()),
        flagged=tuple(
            FlaggedClass(
                values={name: row[name] for name in qis},
                size=row[_SIZE],
                distinct=row[_DISTINCT],
                top_value=row[_TOP],
                top_share=row[_SHARE],
            )
            for row in flagged.head(limit).iter_rows(named=True)
        ),
    )
