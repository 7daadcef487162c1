"""Builders that derive a value generalization hierarchy from a column's values.

Writing a hierarchy file for every column is tedious when the generalization
follows a rule: numeric intervals, masking digits of a code, coarser calendar
units, or plain suppression. Each builder yields a value generalization
hierarchy in the sense of Samarati & Sweeney 1998 and Samarati 2001
("Protecting respondents' identities in microdata release"): every level is a
coarser domain and a function of the level below. Samarati illustrates such
hierarchies with exactly these rules, for example ZIP codes losing their
rightmost digits; ARX offers interval and masking builders in the same spirit.

Every builder keeps level 0 as the distinct values exactly as given, so the
result covers the column, and maps the missing value (``None``) to itself on
every level below the root.

Example:
    >>> IntervalBuilder(widths=(5, 10)).build(["34"], column="age", source="t.csv").levels
    (('34',), ('30-34',), ('30-39',), ('*',))
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from itertools import pairwise
from typing import Protocol

from kanonym.errors import DateFormatError, InputError, clip, echo
from kanonym.hierarchy._values import ROOT, show, text_order
from kanonym.hierarchy.hierarchy import Hierarchy

Level = tuple[str | None, ...]


class HierarchyBuilder(Protocol):
    """Anything that builds a :class:`Hierarchy` from the values of a column.

    ``spec`` is the builder's textual form (for example ``"interval:5,10,20"``),
    used as the built hierarchy's name; ``parse_hierarchy`` reads it back.
    """

    @property
    def spec(self) -> str:
        """The builder as a hierarchy spec string."""
        ...

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build a hierarchy whose leaves are the distinct ``values``."""
        ...


def _distinct(values: Sequence[str | None], *, column: str, source: str) -> list[str | None]:
    distinct = list(dict.fromkeys(values))
    if not distinct:
        raise InputError(f"{source}: column '{column}': no values to build a hierarchy from")
    if "" in distinct:
        raise InputError(
            f"{source}: column '{column}': value '' is an empty string; "
            "kanonym reads an empty field as the missing value (None)"
        )
    return distinct


_INTEGER = re.compile(r"[+-]?\d+", re.ASCII)
_DECIMAL = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d{1,3})?", re.ASCII)
"""A decimal number; the exponent is bounded so that parsing stays cheap."""


def _number(text: str) -> int | Fraction | None:
    """The exact value of a decimal number, or None if ``text`` is not one."""
    text = text.strip()
    # Integers are by far the common case, and int is much faster than Fraction.
    if _INTEGER.fullmatch(text) is not None:
        return int(text)
    if _DECIMAL.fullmatch(text) is not None:
        return Fraction(text)
    return None


@dataclass(frozen=True, kw_only=True)
class IntervalBuilder:
    """Generalize numbers into nested intervals, then to ``*``.

    Level ``k`` groups a value ``v`` into the interval of width ``widths[k-1]``
    starting at ``floor(v / w) * w``; since each width is a multiple of the one
    before, intervals nest and each level is a function of the one below, as a
    value generalization hierarchy requires (Samarati 2001). A column of integers
    gets inclusive labels (``30-34``); any other number makes every label
    half-open (``[30, 35)``). Negative values and decimals work; anything else
    raises :class:`~kanonym.errors.InputError`.

    Example:
        >>> b = IntervalBuilder(widths=(5, 10, 20))
        >>> b.spec
        'interval:5,10,20'
        >>> b.build(["34", "-3"], column="age", source="t.csv").levels
        (('-3', '34'), ('-5--1', '30-34'), ('-10--1', '30-39'), ('-20--1', '20-39'), ('*', '*'))
    """

    widths: tuple[int, ...]

    def __post_init__(self) -> None:
        where = f"hierarchy spec {echo(self.spec)}"
        if not self.widths:
            raise InputError(f"{where}: an interval hierarchy needs at least one width")
        for width in self.widths:
            # bool is an int subclass, but True as a width is surely a mistake.
            if not isinstance(width, int) or isinstance(width, bool) or width <= 0:
                raise InputError(f"{where}: width {echo(width)} is not a positive integer")
        for smaller, larger in pairwise(self.widths):
            if larger <= smaller:
                raise InputError(f"{where}: widths must increase, but {larger} follows {smaller}")
            if larger % smaller:
                raise InputError(
                    f"{where}: width {larger} is not a multiple of {smaller}, "
                    "so its intervals would not nest"
                )

    @property
    def spec(self) -> str:
        """``interval:`` followed by the widths, comma-separated."""
        return "interval:" + ",".join(str(width) for width in self.widths)

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build the interval hierarchy; leaves sorted numerically, missing last."""
        distinct = _distinct(values, column=column, source=source)
        numbers: dict[str, int | Fraction] = {}
        for value in distinct:
            if value is not None:
                number = _number(value)
                if number is None:
                    raise InputError(
                        f"{source}: column '{column}': value {show(value)} "
                        "is not a number (interval hierarchy)"
                    )
                numbers[value] = number

        def numeric_order(value: str | None) -> tuple[bool, int | Fraction, str]:
            if value is None:
                return (True, 0, "")
            return (False, numbers[value], value)

        leaves = sorted(distinct, key=numeric_order)
        integral = all(number.denominator == 1 for number in numbers.values())
        levels: list[Level] = [tuple(leaves)]
        for width in self.widths:
            levels.append(
                tuple(
                    None
                    if leaf is None
                    else _interval_label(numbers[leaf], width, integral=integral)
                    for leaf in leaves
                )
            )
        levels.append((ROOT,) * len(leaves))
        return Hierarchy(name=self.spec, levels=tuple(levels))


def _interval_label(number: int | Fraction, width: int, *, integral: bool) -> str:
    low = (number // width) * width
    if integral:
        return f"{low}-{low + width - 1}"
    return f"[{low}, {low + width})"


@dataclass(frozen=True, kw_only=True)
class MaskBuilder:
    """Mask characters from the right with ``*``, one more per level, then ``*``.

    With ``L`` the length of the longest value, level ``i`` (``1 <= i < L``)
    replaces the ``i`` rightmost characters by ``*`` (a value of ``i`` characters
    or fewer becomes all ``*``, keeping its length) and level ``L`` is the root.
    This is Samarati's ZIP code hierarchy (Samarati 2001: 94138 -> 9413* -> 941**).

    Example:
        >>> MaskBuilder().build(["02138"], column="zip", source="t.csv").levels
        (('02138',), ('0213*',), ('021**',), ('02***',), ('0****',), ('*',))
    """

    @property
    def spec(self) -> str:
        """Always ``mask``."""
        return "mask"

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build the masking hierarchy; leaves sorted lexicographically, missing last."""
        leaves = sorted(_distinct(values, column=column, source=source), key=text_order)
        longest = max((len(leaf) for leaf in leaves if leaf is not None), default=1)
        levels: list[Level] = [tuple(leaves)]
        for masked in range(1, longest):
            levels.append(tuple(None if leaf is None else _mask(leaf, masked) for leaf in leaves))
        levels.append((ROOT,) * len(leaves))
        return Hierarchy(name=self.spec, levels=tuple(levels))


def _mask(value: str, masked: int) -> str:
    kept = max(len(value) - masked, 0)
    return value[:kept] + "*" * (len(value) - kept)


_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?)?", re.ASCII)
"""The ISO forms accepted without a format: a date, optionally with a time of day."""


@dataclass(frozen=True, kw_only=True)
class DateBuilder:
    """Generalize dates to month, year, decade, then ``*``.

    Level 0 is the value as written (a day, or a moment when it has a time part),
    level 1 its month ``1964-04``, level 2 its year ``1964``, level 3 its decade
    ``1960-1969`` and level 4 the root; each calendar unit is a coarser domain
    (Samarati 2001), so each level is a function of the one below. Without
    ``format`` a value must be ISO ``YYYY-MM-DD``, optionally followed by ``T``
    or a space and ``HH:MM[:SS]``; with it, a :func:`datetime.strptime` format,
    which must determine the year and the month.

    Example:
        >>> DateBuilder(format="%d/%m/%Y").build(["14/04/1964"], column="dob", source="t").levels
        (('14/04/1964',), ('1964-04',), ('1964',), ('1960-1969',), ('*',))
    """

    format: str | None = None

    def __post_init__(self) -> None:
        if self.format is None:
            return
        # A format that cannot round-trip a sample date through strftime and
        # strptime cannot supply the year and month every level above 0 needs.
        sample = datetime(2001, 2, 1)
        try:
            parsed = datetime.strptime(sample.strftime(self.format), self.format)
        except ValueError as error:
            raise InputError(
                f"hierarchy spec {echo(self.spec)}: bad date format: {clip(str(error))}"
            ) from error
        if (parsed.year, parsed.month) != (sample.year, sample.month):
            raise InputError(
                f"hierarchy spec {echo(self.spec)}: date format must give the year and the month"
            )

    @property
    def spec(self) -> str:
        """``date``, or ``date:`` followed by the strptime format."""
        return "date" if self.format is None else f"date:{self.format}"

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build the calendar hierarchy; leaves sorted lexicographically, missing last.

        A value the format does not read raises
        :class:`~kanonym.errors.DateFormatError`, which suggests the formats
        that read every value of the column (``date:%m/%d/%Y`` for US dates).
        """
        leaves = sorted(_distinct(values, column=column, source=source), key=text_order)
        moments: list[datetime | None] = []
        for leaf in leaves:
            moment = None if leaf is None else self._parse(leaf)
            if leaf is not None and moment is None:
                raise self._problem(leaf, leaves, column=column, source=source)
            moments.append(moment)
        levels: list[Level] = [tuple(leaves)]
        for label in (_month, _year, _decade):
            levels.append(tuple(None if moment is None else label(moment) for moment in moments))
        levels.append((ROOT,) * len(leaves))
        return Hierarchy(name=self.spec, levels=tuple(levels))

    def _parse(self, value: str) -> datetime | None:
        """The moment ``value`` names, or None if the format does not read it."""
        # fromisoformat also takes week dates, offsets and more; the pattern keeps
        # the accepted forms to the documented ones.
        if self.format is None and _ISO_DATE.fullmatch(value) is None:
            return None
        try:
            if self.format is None:
                return datetime.fromisoformat(value)
            return datetime.strptime(value, self.format)
        except ValueError:
            return None

    def _problem(
        self, value: str, leaves: Sequence[str | None], *, column: str, source: str
    ) -> DateFormatError:
        expected = "YYYY-MM-DD" if self.format is None else f"'{self.format}'"
        message = f"{source}: column '{column}': value {show(value)} is not a date ({expected})"
        fitting = [f for f in _formats_reading(leaves) if f != self.format]
        suggested = tuple(f"date:{form}" for form in fitting)
        if len(suggested) == 1:
            message += f"; every value of the column reads as a date with '{suggested[0]}'"
        elif suggested:
            specs = " or ".join(f"'{spec}'" for spec in suggested)
            message += (
                f"; every value of the column reads as a date with {specs} "
                "(the values do not tell which: choose the one the file was written with)"
            )
        return DateFormatError(message, column=column, suggested=suggested)


_DATE_FORMATS = (
    "%Y-%m-%d",
    "%m/%d/%Y",
    "%d/%m/%Y",
    "%Y/%m/%d",
    "%d.%m.%Y",
    "%m-%d-%Y",
    "%d-%m-%Y",
    "%Y%m%d",
    "%Y.%m.%d",
    "%d %b %Y",
    "%b %d %Y",
    "%b %d, %Y",
    "%d-%b-%Y",
    "%d %B %Y",
    "%B %d, %Y",
    "%Y-%m-%d %H:%M:%S",
    "%m/%d/%Y %H:%M",
    "%m/%d/%Y %H:%M:%S",
    "%d/%m/%Y %H:%M",
    "%d/%m/%Y %H:%M:%S",
    "%d.%m.%Y %H:%M",
    "%Y-%m",
    "%Y/%m",
    "%m/%Y",
)
"""Formats suggested when dates are not ISO, most common first; all give year and month."""

_SHORT_YEAR_FORMATS = ("%m/%d/%y", "%d/%m/%y", "%d.%m.%y", "%y%m%d")
"""Two-digit years, suggested only when no four-digit form reads the values."""

_SUGGESTION_SAMPLE = 500


def _formats_reading(leaves: Sequence[str | None]) -> list[str]:
    """The formats (at most three) that read every one of a sample of ``leaves``.

    Only for an error message, so a sample spread over the sorted values does.
    """
    present = [leaf for leaf in leaves if leaf is not None]
    step = max(1, len(present) // _SUGGESTION_SAMPLE)
    sample = present[::step]

    def reads_all(form: str) -> bool:
        try:
            for value in sample:
                datetime.strptime(value, form)
        except ValueError:
            return False
        return True

    found = [form for form in _DATE_FORMATS if reads_all(form)]
    if not found:
        found = [form for form in _SHORT_YEAR_FORMATS if reads_all(form)]
    return found[:3]


def _month(moment: datetime) -> str:
    return f"{moment.year:04d}-{moment.month:02d}"


def _year(moment: datetime) -> str:
    return f"{moment.year:04d}"


def _decade(moment: datetime) -> str:
    start = moment.year // 10 * 10
    return f"{start:04d}-{start + 9:04d}"


@dataclass(frozen=True, kw_only=True)
class SuppressBuilder:
    """The two-level hierarchy: the value, then ``*`` (suppression of the cell).

    Suppression is the most general generalization (Samarati 2001): height 1.

    Example:
        >>> SuppressBuilder().build(["M", "F"], column="sex", source="t.csv").levels
        (('F', 'M'), ('*', '*'))
    """

    @property
    def spec(self) -> str:
        """Always ``suppress``."""
        return "suppress"

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build the suppression hierarchy; leaves sorted lexicographically, missing last."""
        leaves = sorted(_distinct(values, column=column, source=source), key=text_order)
        return Hierarchy(name=self.spec, levels=(tuple(leaves), (ROOT,) * len(leaves)))
