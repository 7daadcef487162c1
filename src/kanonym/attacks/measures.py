"""Re-identification risk of a table on its quasi-identifiers (``kanonym risk``).

The table (raw or released) is grouped on the quasi-identifiers with Polars;
missing values group together, an ordinary value as everywhere in kanonym, and
every other cell, a released ``*`` included, is taken literally. Write f_j for
the rows of class j in the table (the *sample*), J for its classes, n for its
rows and, when a population table containing the sample is given, F_j for the
rows of the population holding class j's values. A record's risk is the
probability that an attacker who matches it on the quasi-identifiers picks the
right person.

==========================  =================================================
measure                     definition
==========================  =================================================
sample uniqueness           rows in classes of size 1, over n: the share of
                            records the quasi-identifiers single out (Sweeney
                            2000, "Uniqueness of simple demographics in the
                            U.S. population"; Sweeney 2002, section 1)
class sizes                 the distribution of f_j: size -> classes of it
prosecutor risk             the attacker knows the target is in the table:
                            record risk 1/f_j; highest = 1/min f_j; average
                            (success rate) = Σ_j f_j (1/f_j) / n = J/n (El Emam
                            & Dankar 2008, "Protecting privacy using
                            k-anonymity", JAMIA 15(5); ARX's risk analysis)
journalist risk             the attacker does not know whether the target is
                            in the table and links from the population: record
                            risk 1/F_j; highest = 1/min F_j (El Emam & Dankar
                            2008); average = max(J / Σ_j F_j, Σ_j (f_j/F_j)/n),
                            as El Emam's "Guide to the De-Identification of
                            Personal Health Information" (2013) and ARX define
                            it; needs a population table
marketer risk               the expected share of records re-identified when
                            every record is linked: Σ_j (f_j/F_j) / n with a
                            population table, J/n without one, the table then
                            being its own population (Dankar & El Emam 2010,
                            "A method for evaluating marketer re-identification
                            risk")
records at risk             records whose risk is strictly above the threshold
                            (ARX's "records at risk"); the default threshold
                            0.2 is the risk of a class of five
==========================  =================================================

Example (the race/ZIP table of Samarati's 2008 slides: six records alone in their class,
three Asians in 94139; every record's risk is above 0.2):
    >>> import polars as pl
    >>> t = pl.DataFrame({"race": ["asian"] * 5 + ["black"] * 2 + ["white"] * 2,
    ...                   "zip": ["94142", "94141", "94139", "94139", "94139",
    ...                           "94138", "94139", "94139", "94141"]})
    >>> r = measure_risk(t, ["race", "zip"])
    >>> r.classes, r.sample_uniques, dict(r.class_sizes)
    (7, 6, {1: 6, 3: 1})
    >>> r.prosecutor.highest, round(r.prosecutor.average, 4), r.prosecutor.records_at_risk
    (1.0, 0.7778, 9)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt
import polars as pl

from kanonym._html import summary_box, table
from kanonym.attacks.defaults import DEFAULT_THRESHOLD
from kanonym.attacks.population import PopulationEstimates, estimate_population
from kanonym.errors import InputError, echo

CLASS_SIZE = "__kanonym_size"
"""The column of :func:`class_sizes` holding each class's size."""
_POPULATION_SIZE = "__kanonym_population_size"


def class_sizes(frame: pl.DataFrame, columns: Sequence[str]) -> pl.DataFrame:
    """One row per class of ``frame`` on ``columns``: its values and its size.

    Missing values group together (an ordinary value).

    Example:
        >>> class_sizes(pl.DataFrame({"a": ["x", None, None]}), ["a"]).sort("a").rows()
        [(None, 2), ('x', 1)]
    """
    return frame.group_by(list(columns)).agg(pl.len().cast(pl.Int64).alias(CLASS_SIZE))


DIRECT_IDENTIFIER_UNIQUENESS = 0.95
"""Share of rows holding a value no other row holds from which a column counts as a
likely direct identifier (a name, an SSN, a record number): it singles out (nearly)
every record on its own, Sweeney's sample uniqueness (2000) of the column alone."""


def value_uniqueness(frame: pl.DataFrame, columns: Sequence[str]) -> dict[str, float]:
    """Per column, the share of rows whose value no other row of ``frame`` holds.

    A missing value is a value of its own, as everywhere in kanonym; an empty
    table has uniqueness 0.

    Example:
        >>> frame = pl.DataFrame({"ssn": ["1", "2", "3", "4"], "sex": ["F", "F", "M", "M"]})
        >>> value_uniqueness(frame, ["ssn", "sex"])
        {'ssn': 1.0, 'sex': 0.0}
    """
    if frame.height == 0 or not columns:
        return dict.fromkeys(columns, 0.0)
    shares = frame.select(pl.col(column).is_unique().mean() for column in columns).row(0)
    return {column: float(share) for column, share in zip(columns, shares, strict=True)}


def size_histogram(sizes: npt.NDArray[np.int64]) -> dict[int, int]:
    """Class size -> number of classes of that size, sizes ascending.

    Example:
        >>> size_histogram(np.array([2, 1, 1, 5]))
        {1: 2, 2: 1, 5: 1}
    """
    values, counts = np.unique(sizes, return_counts=True)
    return {int(v): int(c) for v, c in zip(values, counts, strict=True)}


@dataclass(frozen=True, kw_only=True)
class AttackerRisk:
    """The risk of one attacker model (definitions: the module docstring).

    Attributes:
        highest: the largest record risk.
        average: the expected share of records re-identified (success rate).
        records_at_risk: records whose risk is strictly above the threshold.
        share_at_risk: ``records_at_risk`` over the table's rows.

    Example:
        >>> AttackerRisk(highest=0.5, average=0.4, records_at_risk=2, share_at_risk=0.4).as_dict()
        {'highest': 0.5, 'average': 0.4, 'records_at_risk': 2, 'share_at_risk': 0.4}
    """

    highest: float
    average: float
    records_at_risk: int
    share_at_risk: float

    def __post_init__(self) -> None:
        for name in ("highest", "average", "share_at_risk"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise ValueError(f"{name} must be a probability, got {value}")
        if self.average > self.highest:
            raise ValueError(f"average risk {self.average} exceeds the highest {self.highest}")

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form."""
        return {
            "highest": self.highest,
            "average": self.average,
            "records_at_risk": self.records_at_risk,
            "share_at_risk": self.share_at_risk,
        }


@dataclass(frozen=True, kw_only=True)
class RiskSummary:
    """Re-identification risk of a table on its quasi-identifiers (``kanonym.risk``).

    Attributes:
        columns: the quasi-identifiers' column names grouped on, in the order given.
        rows: records in the table (n).
        classes: equivalence classes (J).
        class_sizes: class size -> number of classes of that size, ascending.
        threshold: the record risk above which a record is at risk.
        prosecutor: risk when the target is known to be in the table.
        journalist: risk when linking from a population table (None without one).
        marketer: expected share of records re-identified by linking them all.
        population_rows: rows of the population table, or the population size given.
        population_uniques: records unique on the quasi-identifiers in the
            population table (None without one).
        estimates: population uniqueness estimated from the table alone
            (Zayatz, Pitman), None without a population size.
        reasons: why a measure is None, by its key.
    """

    columns: tuple[str, ...]
    rows: int
    classes: int
    class_sizes: Mapping[int, int]
    threshold: float
    prosecutor: AttackerRisk
    journalist: AttackerRisk | None
    marketer: float
    population_rows: int | None
    population_uniques: int | None
    estimates: PopulationEstimates | None
    reasons: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if sum(self.class_sizes.values()) != self.classes:
            raise ValueError("class_sizes must count every class once")
        if sum(size * count for size, count in self.class_sizes.items()) != self.rows:
            raise ValueError("class_sizes must add up to the rows")
        for key in ("journalist", "population_uniques", "estimates"):
            if (getattr(self, key) is None) != (key in self.reasons):
                raise ValueError(f"{key}: a reason is given exactly when it is None")

    @property
    def sample_uniques(self) -> int:
        """Records alone in their class."""
        return self.class_sizes.get(1, 0)

    @property
    def sample_uniqueness(self) -> float:
        """Share of records alone in their class (Sweeney's uniqueness)."""
        return self.sample_uniques / self.rows

    @property
    def population_uniqueness(self) -> float | None:
        """Share of the population's records unique in it (with a population table)."""
        if self.population_uniques is None or self.population_rows is None:
            return None
        return self.population_uniques / self.population_rows

    def as_dict(self) -> dict[str, object]:
        """The object ``kanonym risk --json`` prints (keys: docs, Risk and attacks).

        Example:
            >>> d = measure_risk(pl.DataFrame({"zip": ["1", "1", "2"]}), ["zip"]).as_dict()
            >>> d["class_sizes"], d["sample_uniqueness"], d["prosecutor"]["highest"]
            ({'1': 1, '2': 1}, 0.3333333333333333, 1.0)
        """
        out: dict[str, object] = {
            "columns": list(self.columns),
            "rows": self.rows,
            "classes": self.classes,
            "class_sizes": {str(size): count for size, count in self.class_sizes.items()},
            "sample_uniques": self.sample_uniques,
            "sample_uniqueness": self.sample_uniqueness,
            "threshold": self.threshold,
            "prosecutor": self.prosecutor.as_dict(),
        }
        out["journalist"] = None if self.journalist is None else self.journalist.as_dict()
        if self.journalist is None:
            out["journalist_reason"] = self.reasons["journalist"]
        out["marketer"] = self.marketer
        out["population_rows"] = self.population_rows
        out["population_uniques"] = self.population_uniques
        if self.population_uniques is None:
            out["population_uniques_reason"] = self.reasons["population_uniques"]
        out["population_uniqueness"] = self.population_uniqueness
        out["estimates"] = None if self.estimates is None else self.estimates.as_dict()
        if self.estimates is None:
            out["estimates_reason"] = self.reasons["estimates"]
        return out

    def __str__(self) -> str:
        """:meth:`text`: a few lines for people."""
        return self.text()

    def _repr_html_(self) -> str:
        """The measures as an HTML table, for notebooks (every value escaped).

        Example:
            >>> summary = measure_risk(pl.DataFrame({"<zip>": ["1", "1", "2"]}), ["<zip>"])
            >>> "&lt;zip&gt;" in summary._repr_html_(), "<zip>" in summary._repr_html_()
            (True, False)
        """
        rows: list[tuple[object, ...]] = [
            ("records", self.rows, ""),
            ("classes", self.classes, ""),
            ("sample uniques", self.sample_uniques, f"{self.sample_uniqueness:.2%}"),
        ]
        attackers = [("prosecutor", self.prosecutor), ("journalist", self.journalist)]
        for name, attacker in attackers:
            if attacker is None:
                rows.append((f"{name} risk", None, self.reasons[name]))
                continue
            rows.append((f"{name} risk: highest", attacker.highest, ""))
            rows.append((f"{name} risk: average", attacker.average, ""))
            rows.append(
                (
                    f"{name} risk: records above {self.threshold:g}",
                    attacker.records_at_risk,
                    f"{attacker.share_at_risk:.2%}",
                )
            )
        rows.append(("marketer risk", self.marketer, ""))
        if self.population_uniques is not None:
            rows.append(
                ("population uniques", self.population_uniques, f"{self.population_uniqueness:.2%}")
            )
        sizes = table(
            [("class size: classes", shorten(self.class_sizes))],
        )
        return summary_box(
            f"re-identification risk on {', '.join(self.columns)}",
            table(rows, header=("measure", "value", "")),
            sizes,
        )

    def text(self) -> str:
        """Several lines for people."""
        lines = [
            f"{self.rows} records, {self.classes} classes on {', '.join(self.columns)}; "
            f"{self.sample_uniques} sample uniques ({self.sample_uniqueness:.2%})",
            f"class sizes (size: classes): {shorten(self.class_sizes)}",
            _attacker_line("prosecutor", self.prosecutor, self.threshold),
        ]
        if self.journalist is None:
            lines.append(f"journalist risk: none ({self.reasons['journalist']})")
        else:
            lines.append(_attacker_line("journalist", self.journalist, self.threshold))
        lines.append(f"marketer risk: {self.marketer:.4g}")
        if self.population_uniques is not None:
            lines.append(
                f"population: {self.population_rows} records, {self.population_uniques} unique "
                f"({self.population_uniqueness:.2%})"
            )
        if self.estimates is None:
            lines.append(f"population uniques estimated: none ({self.reasons['estimates']})")
        else:
            lines.append(self.estimates.text())
        return "\n".join(lines)


def shorten(counts: Mapping[int, int], shown: int = 12) -> str:
    """``a: b`` pairs of a distribution, the first ``shown`` of them and how many more.

    Example:
        >>> shorten({1: 5, 2: 3, 7: 1}, shown=2)
        '1: 5, 2: 3, … (1 more, up to 7)'
    """
    pairs = list(counts.items())
    text = ", ".join(f"{key}: {value}" for key, value in pairs[:shown])
    if len(pairs) > shown:
        text += f", … ({len(pairs) - shown} more, up to {pairs[-1][0]})"
    return text


def _attacker_line(name: str, risk: AttackerRisk, threshold: float) -> str:
    return (
        f"{name} risk: highest {risk.highest:.4g}, average {risk.average:.4g}, "
        f"{risk.records_at_risk} records ({risk.share_at_risk:.2%}) above {threshold:g}"
    )


def _attacker(
    record_risk: npt.NDArray[np.float64],
    sizes: npt.NDArray[np.int64],
    average: float,
    threshold: float,
) -> AttackerRisk:
    """An attacker's risk from each class's record risk and size (rows of the table)."""
    at_risk = int(sizes[record_risk > threshold].sum())
    highest = float(record_risk.max())
    return AttackerRisk(
        highest=highest,
        # An average cannot exceed its largest term; summing f/F in floating
        # point could lift it an ulp above when every class has the same risk.
        average=min(average, highest),
        records_at_risk=at_risk,
        share_at_risk=at_risk / int(sizes.sum()),
    )


def prosecutor_risk(
    sizes: npt.NDArray[np.int64], *, threshold: float = DEFAULT_THRESHOLD
) -> AttackerRisk:
    """Prosecutor risk of a table whose classes hold ``sizes`` rows (f_j).

    The attacker knows the target is in the table: a record's risk is 1/f_j,
    the highest 1/min f_j, the average J/n (classes over rows), and the
    records at risk those whose risk is strictly above ``threshold`` (El Emam
    & Dankar 2008, "Protecting privacy using k-anonymity", JAMIA 15(5); ARX's
    risk analysis). It needs only the class sizes, so a search's (the sweep's)
    and a report's share it with :func:`measure_risk`. No class (nothing
    released) has risk 0 throughout.

    Example (classes of 2, 5 and 3 rows; a class of five is at 0.2, not above):
        >>> prosecutor_risk(np.array([2, 5, 3]), threshold=0.2).as_dict()
        {'highest': 0.5, 'average': 0.3, 'records_at_risk': 5, 'share_at_risk': 0.5}
    """
    if not len(sizes):
        return AttackerRisk(highest=0.0, average=0.0, records_at_risk=0, share_at_risk=0.0)
    return _attacker(1.0 / sizes, sizes, len(sizes) / float(sizes.sum()), threshold)


def check_threshold(threshold: float) -> None:
    """A risk threshold is a probability in (0, 1]; else an InputError.

    Example:
        >>> check_threshold(0)
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: risk threshold must be in (0, 1], got 0
    """
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise InputError(f"risk threshold must be a number, got {echo(threshold)}")
    if not 0.0 < threshold <= 1.0:
        raise InputError(f"risk threshold must be in (0, 1], got {threshold}")


def measure_risk(
    frame: pl.DataFrame,
    columns: Sequence[str],
    *,
    threshold: float = DEFAULT_THRESHOLD,
    population: pl.DataFrame | None = None,
    population_size: int | None = None,
    source: str = "<DataFrame>",
    population_source: str = "<population>",
) -> RiskSummary:
    """Every risk measure of ``frame`` (the module docstring defines them).

    ``population`` is a table holding every record of ``frame`` (and others)
    with the same quasi-identifier columns; it enables journalist risk and the
    exact population uniqueness, and fixes the population size. Without it,
    ``population_size`` (at least the table's rows) enables the estimates of
    population uniqueness (Zayatz, Pitman); giving both is a contradiction.

    Raises:
        InputError: no rows, a bad threshold or population size, both
            ``population`` and ``population_size``, or a class of the table with
            fewer records in the population than in the table.
    """
    check_threshold(threshold)
    if frame.height == 0:
        raise InputError(f"{source}: the table has no rows")
    if population is not None and population_size is not None:
        raise InputError("give a population table or a population size, not both")
    classes = class_sizes(frame, columns)
    sizes = classes[CLASS_SIZE].to_numpy().astype(np.int64)
    rows, n_classes = int(sizes.sum()), len(sizes)
    histogram = size_histogram(sizes)
    prosecutor = prosecutor_risk(sizes, threshold=threshold)
    reasons: dict[str, str] = {}
    journalist: AttackerRisk | None = None
    population_uniques: int | None = None
    marketer = n_classes / rows
    if population is None:
        reasons["journalist"] = "no population table given"
        reasons["population_uniques"] = "no population table given"
    else:
        population_classes = class_sizes(population, columns)
        in_population = _population_sizes(
            classes, population_classes, columns, source, population_source
        )
        marketer = float((sizes / in_population).sum()) / rows
        # El Emam (2013): the larger of J / ΣF and the marketer risk Σ (f/F) / n.
        journalist = _attacker(
            1.0 / in_population,
            sizes,
            max(n_classes / float(in_population.sum()), marketer),
            threshold,
        )
        population_size = population.height
        population_uniques = int((population_classes[CLASS_SIZE] == 1).sum())
    estimates: PopulationEstimates | None = None
    if population_size is None:
        reasons["estimates"] = "needs the population size (a population table or its size)"
    else:
        estimates = estimate_population(histogram, population_size)
    return RiskSummary(
        columns=tuple(columns),
        rows=rows,
        classes=n_classes,
        class_sizes=histogram,
        threshold=threshold,
        prosecutor=prosecutor,
        journalist=journalist,
        marketer=marketer,
        population_rows=population_size,
        population_uniques=population_uniques,
        estimates=estimates,
        reasons=reasons,
    )


def _population_sizes(
    classes: pl.DataFrame,
    population_classes: pl.DataFrame,
    columns: Sequence[str],
    source: str,
    population_source: str,
) -> npt.NDArray[np.int64]:
    """F_j for every class of the table, in ``classes``' row order (both :func:`class_sizes`).

    The population must contain the table: every class must hold at least as
    many records there (InputError naming the first class that does not).
    """
    counted = population_classes.rename({CLASS_SIZE: _POPULATION_SIZE})
    # Values are compared as text, so a CSV sample matches a typed population frame.
    as_text = [pl.col(name).cast(pl.String) for name in columns]
    joined = (
        classes.with_columns(as_text)
        .join(
            counted.with_columns(as_text),
            on=list(columns),
            how="left",
            nulls_equal=True,
            maintain_order="left",
        )
        .with_columns(pl.col(_POPULATION_SIZE).fill_null(0))
    )
    short = joined.filter(pl.col(_POPULATION_SIZE) < pl.col(CLASS_SIZE))
    if short.height:
        row = short.row(0, named=True)
        values = ", ".join(f"{name}={echo(row[name])}" for name in columns)
        raise InputError(
            f"population {population_source} does not contain table {source}: the class "
            f"({values}) has {row[CLASS_SIZE]} records in the table but {row[_POPULATION_SIZE]} in "
            "the population"
        )
    return joined[_POPULATION_SIZE].to_numpy().astype(np.int64)
