"""The order-based hierarchy builder: sorted values merged into groups of a fan-out.

ARX's order-based builder (Prasser and Kohlmayer 2015, "Putting statistical
disclosure control into practice: the ARX data anonymization tool", in
*Medical Data Privacy Handbook*; ``HierarchyBuilderOrderBased``) sorts a
column's distinct values and merges runs of consecutive values into groups
of a given size; each level above merges runs of consecutive groups of the
level below in the same way. Every group is contiguous in the order, so a
level is a function of the one below and the result is a value
generalization hierarchy (Samarati 2001). It suits values that have an order
but no arithmetic: grades, ranks, codes, ordinal answers.

A group is labelled by its range, ``[first, last]``: its first and last value
in the order, inclusive (``[a, a]`` for a group of one). Once a level would
hold a single group, that level is the root ``*``.

Example:
    >>> b = OrderBuilder(fanouts=2)
    >>> b.build(["a", "b", "c", "d", "e"], column="grade", source="t.csv").levels
    ... # doctest: +NORMALIZE_WHITESPACE
    (('a', 'b', 'c', 'd', 'e'),
     ('[a, b]', '[a, b]', '[c, d]', '[c, d]', '[e, e]'),
     ('[a, d]', '[a, d]', '[a, d]', '[a, d]', '[e, e]'),
     ('*', '*', '*', '*', '*'))
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from itertools import repeat
from typing import Literal, get_args

from kanonym.errors import InputError, echo
from kanonym.hierarchy._values import ROOT, show
from kanonym.hierarchy.builders import DateBuilder, Level, _distinct, _number
from kanonym.hierarchy.hierarchy import Hierarchy

OrderName = Literal["auto", "numeric", "date", "text"]
"""How an :class:`OrderBuilder` sorts values when not given an explicit order:
``numeric`` by value, ``date`` by moment, ``text`` lexicographically, and
``auto`` numeric when every value is a number, else by moment when every value
is an ISO date, else lexicographically."""

ORDER_NAMES: tuple[OrderName, ...] = get_args(OrderName)


@dataclass(frozen=True, kw_only=True)
class OrderBuilder:
    """Group sorted values into runs of ``fanouts`` per level (ARX's order-based builder).

    The distinct values are sorted by ``order``; level 1 merges each run of
    ``fanouts[0]`` consecutive values into a group (the last group may hold
    fewer), level ``i`` each run of ``fanouts[i-1]`` consecutive groups of
    level ``i - 1``, as ARX's ``HierarchyBuilderOrderBased`` does (Prasser and
    Kohlmayer 2015). An ``int`` fan-out is used on every level until a single
    group remains; with a tuple, levels stop there too, and if more than one
    group is left after the last fan-out, a root level follows. The level
    that would hold a single group is the root ``*``. A group is labelled
    ``[first, last]``, its first and last value in the order.

    ``order`` is a name (:data:`OrderName`) or an explicit tuple of values,
    first to last; then the leaves are all of those values, whether or not
    the column holds them, so the groups do not depend on the data, and a
    value of the column not in ``order`` raises
    :class:`~kanonym.errors.InputError`. Otherwise the groups are made of the
    values the column holds, so a batch with other values (``apply``) may be
    grouped differently. ``format`` is the :func:`datetime.strptime` format of
    ``order="date"`` (ISO ``YYYY-MM-DD[THH:MM[:SS]]`` without it). The
    missing value is mapped to itself below the root, as by every builder.

    Spec: ``order:FANOUTS[:ORDER]``: ``order:2`` repeats 2, ``order:3,2``
    (or ``order:3,2,*``) has those levels, ``order:4,*`` one level of 4;
    ``ORDER`` is ``numeric``, ``date``, ``date:FORMAT``, ``text`` or the
    values comma-separated (``order:2:low,mid,high,top``); the spec of an
    explicit order whose values hold a comma does not read back as it.

    Example:
        >>> b = OrderBuilder(fanouts=(2,), order=("low", "mid", "high"))
        >>> b.spec
        'order:2,*:low,mid,high'
        >>> b.build(["high", "low"], column="level", source="t.csv").levels
        (('low', 'mid', 'high'), ('[low, mid]', '[low, mid]', '[high, high]'), ('*', '*', '*'))
    """

    fanouts: int | tuple[int, ...]
    order: OrderName | tuple[str, ...] = "auto"
    format: str | None = None

    def __post_init__(self) -> None:
        fanouts = (self.fanouts,) if isinstance(self.fanouts, int) else self.fanouts
        if not isinstance(fanouts, tuple) or not fanouts:
            raise InputError(f"`fanouts` must be an int or a non-empty tuple, got {echo(fanouts)}")
        for fanout in fanouts:
            # bool is an int subclass, but True as a fan-out is surely a mistake.
            if not isinstance(fanout, int) or isinstance(fanout, bool) or fanout < 2:
                raise InputError(
                    f"`fanouts`: fan-out {echo(fanout)} must be an integer of at least 2 "
                    "(a group of one value generalizes nothing)"
                )
        if isinstance(self.order, tuple):
            self._check_explicit(self.order)
        elif self.order not in ORDER_NAMES:
            raise InputError(
                f"`order` must be one of {', '.join(ORDER_NAMES)} or a tuple of values, "
                f"got {echo(self.order)}"
            )
        if self.format is not None:
            if self.order != "date":
                raise InputError("`format` is the date format of `order='date'` only")
            try:
                DateBuilder(format=self.format)
            except InputError as error:
                raise InputError(f"`format`: {str(error).partition(': ')[2]}") from None

    @staticmethod
    def _check_explicit(order: tuple[str, ...]) -> None:
        if not order:
            raise InputError("`order` is empty: list the values, first to last")
        seen: set[str] = set()
        for value in order:
            if not isinstance(value, str) or not value:
                raise InputError(
                    f"`order`: value {echo(value)} is not a non-empty string "
                    "(the missing value needs no place in the order)"
                )
            if value in seen:
                raise InputError(f"`order`: value {show(value)} is listed twice")
            seen.add(value)

    @property
    def spec(self) -> str:
        """``order:`` then the fan-outs (a tuple's ending in ``,*``) and the order if given."""
        if isinstance(self.fanouts, int):
            fanouts = str(self.fanouts)
        else:
            fanouts = ",".join(str(fanout) for fanout in self.fanouts) + ",*"
        if isinstance(self.order, tuple):
            return f"order:{fanouts}:{','.join(self.order)}"
        if self.order == "auto":
            return f"order:{fanouts}"
        if self.format is not None:
            return f"order:{fanouts}:date:{self.format}"
        return f"order:{fanouts}:{self.order}"

    def build(self, values: Sequence[str | None], *, column: str, source: str) -> Hierarchy:
        """Build the hierarchy; leaves in the order, missing last.

        Raises :class:`~kanonym.errors.InputError` naming the column for a
        value the order cannot place, and when two groups of one level would
        get the same label (values holding ``, `` can make ``[a, b, c]``
        ambiguous).
        """
        distinct = _distinct(values, column=column, source=source)
        present = [value for value in distinct if value is not None]
        where = f"{source}: column '{column}'"
        ordered = self._sorted(present, where)
        leaves: list[str | None] = [*ordered]
        missing: Level = (None,) if None in distinct else ()
        levels: list[Level] = [(*leaves, *missing)]
        # Each group is the range (first, last) of positions in `ordered` it covers.
        groups = [(i, i) for i in range(len(ordered))]
        for fanout in self._fanouts():
            groups = [
                (groups[i][0], groups[min(i + fanout, len(groups)) - 1][1])
                for i in range(0, len(groups), fanout)
            ]
            if len(groups) <= 1:
                break
            labels = [f"[{ordered[first]}, {ordered[last]}]" for first, last in groups]
            if len(set(labels)) < len(labels):
                twice = next(label for label in labels if labels.count(label) > 1)
                raise InputError(
                    f"{where}: two groups at level {len(levels)} would both be labelled "
                    f"{show(twice)}; values holding ', ' make ranges ambiguous"
                )
            level: list[str | None] = []
            for (first, last), label in zip(groups, labels, strict=True):
                level.extend(repeat(label, last - first + 1))
            levels.append((*level, *missing))
        levels.append((ROOT,) * len(levels[0]))
        return Hierarchy(name=self.spec, levels=tuple(levels))

    def _fanouts(self) -> Iterator[int]:
        """The fan-out of each level in turn; an int one for ever (the caller stops)."""
        if isinstance(self.fanouts, int):
            return repeat(self.fanouts)
        return iter(self.fanouts)

    def _sorted(self, present: list[str], where: str) -> list[str]:
        """The values in the builder's order (for an explicit order: all of its values)."""
        if isinstance(self.order, tuple):
            known = set(self.order)
            absent = [value for value in present if value not in known]
            if absent:
                raise InputError(f"{where}: value {show(min(absent))} is not in `order`")
            return list(self.order)
        order = self.order
        if order == "auto":
            if all(_number(value) is not None for value in present):
                order = "numeric"
            elif all(DateBuilder()._parse(value) is not None for value in present):
                order = "date"
            else:
                order = "text"
        if order == "numeric":
            numbers: dict[str, int | Fraction] = {}
            for value in present:
                number = _number(value)
                if number is None:
                    raise InputError(f"{where}: value {show(value)} is not a number (`order`)")
                numbers[value] = number
            # Two spellings of one number (5 and 5.0) are two values: text breaks the tie.
            return sorted(present, key=lambda value: (numbers[value], value))
        if order == "date":
            dates = DateBuilder(format=self.format)
            moments: dict[str, datetime] = {}
            for value in present:
                moment = dates._parse(value)
                if moment is None:
                    expected = "YYYY-MM-DD" if self.format is None else f"'{self.format}'"
                    raise InputError(
                        f"{where}: value {show(value)} is not a date ({expected}; `order`)"
                    )
                moments[value] = moment
            return sorted(present, key=lambda value: (moments[value], value))
        return sorted(present)
