"""Where a numeric range may begin and end: the grid and the edges between cuts.

Mondrian (LeFevre, DeWitt & Ramakrishnan 2006) used to release a partition's
numeric values as the range from its least to its greatest value, so the
extremes of a class, often a single person's (the oldest age, ``63-103``),
were printed as they are. kanonym releases the partition's **box** instead:

* the **outer edges** are the attribute's **grid** cells holding the least and
  the greatest value, ``floor(min / g) * g`` and ``(floor(max / g) + 1) * g``.
  The step ``g`` is the width of the hierarchy's first level when that level
  is a regular interval grid holding the values it names (``interval:5``:
  5), otherwise the least of 1, 2, 5 x 10^e that is at least a tenth of the
  column's span (at least 1 for a column of integers; Adult's ages 17..90:
  10, edges 10 and 100);
* an **inner edge** is placed by the cut that made it, in the gap the cut
  leaves between the greatest value a of one part and the least value b of
  the other: the *roundest* number there (a multiple of the largest step of
  the 1, 2, 5 x 10^e ladder that has one; of those, the least) that prints
  neither neighbour: strictly between a and b, and for integers at least
  a + 2, since the part below prints its upper bound minus one. Only when
  the gap holds no such number (integers 1 or 2 apart) is it the roundest
  in (a, b], and then it prints a or b, values the cut separates whatever
  it prints (the part below holds nothing above a, the part above nothing
  below b).

A range is half-open, ``[lo, hi)``; a column of integers prints it inclusive
(``lo-hi`` with hi one less), as the ``interval`` hierarchies do. Edges are
exact decimals: a code packs a mantissa and a power of ten (or, as a last
resort for gaps too narrow for floats to tell a number inside, the rank of
the value b, whose text is exact). Its float is rounded correctly (10**e is
exact up to e = 22; past that the edge is kept clear of both values by
some float steps), so comparing floats gives the exact answer the re-check
will get from the text.

Example (ages 17..90 with no interval grid: step 10, outer edges 10 and 100;
a cut between 33 and 41 puts its edge at 40, one between 61 and 62 at 62):
    >>> import numpy as np
    >>> from decimal import Decimal
    >>> s = scale([Decimal(17), Decimal(33), Decimal(41), Decimal(90)], declared=None)
    >>> [f"{number:f}" for number in (s.step, s.low, s.high)], s.integral
    (['10', '10', '100'], True)
    >>> codes, values = s.between(np.array([33.0, 61.0]), np.array([41.0, 62.0]), np.array([2, 3]))
    >>> [f"{edge_number(int(c), ()):f}" for c in codes], values.tolist()
    (['40', '62'], [40.0, 62.0])
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

# An edge code is mantissa << SHIFT | (exponent + OFFSET); the slot 0 marks a rank.
SHIFT = 10
OFFSET = 512
_SLOTS = (1 << SHIFT) - 1
# Mantissas stay below 2**52, so codes fit int64 and mantissas are exact floats.
_EXACT = float(2**52)
# 10**0 .. 10**22 are exact floats: m * 10**e and m / 10**e are then rounded correctly.
# Past them an edge is kept some float steps away from both neighbours instead.
_POWERS = tuple(float(10**e) for e in range(23))
_DIGITS = (5, 2, 1)
_INCLUSIVE = re.compile(r"(-?\d+)-(-?\d+)")
_HALF_OPEN = re.compile(r"\[([^,\s]+), ([^,\s]+)\)")


def pack(mantissa: int, exponent: int) -> int:
    """The code of the edge mantissa x 10**exponent.

    Example:
        >>> edge_number(pack(25, -1), ())
        Decimal('2.5')
    """
    return (mantissa << SHIFT) | (exponent + OFFSET)


def rank_code(rank: IntArray) -> IntArray:
    """Codes of edges that are the values of these ranks (the last resort)."""
    return np.asarray(rank << SHIFT, dtype=np.int64)


def text(number: Decimal) -> str:
    """How a label writes an edge: plainly, or with an exponent when far from 1.

    Example:
        >>> text(Decimal("4E+1")), text(Decimal("0.250")), text(Decimal("3E-300"))
        ('40', '0.25', '3E-300')
    """
    number = number.normalize()
    if -7 <= number.adjusted() <= 20:
        return f"{number:f}"
    return str(number)


def edge_number(code: int, texts: Sequence[str]) -> Decimal:
    """The exact number of an edge code; ``texts`` are the values of the ranks, as written.

    Example:
        >>> edge_number(pack(-3, 1), ()), edge_number(0 << SHIFT, ("7.25",))
        (Decimal('-3E+1'), Decimal('7.25'))
    """
    mantissa, slot = code >> SHIFT, code & _SLOTS
    if slot == 0:
        return Decimal(texts[mantissa])
    return Decimal(mantissa).scaleb(slot - OFFSET)


def canonical(codes: IntArray) -> IntArray:
    """The same edges with no trailing zero in their mantissas: equal numbers, equal codes.

    Example:
        >>> canonical(np.array([pack(70, 0), pack(7, 1), pack(0, 3)])).tolist() == [
        ...     pack(7, 1), pack(7, 1), pack(0, 0)]
        True
    """
    mantissa, slot = codes >> SHIFT, codes & _SLOTS
    number = slot != 0
    while True:
        tens = number & (mantissa != 0) & (mantissa % 10 == 0)
        if not tens.any():
            break
        mantissa = np.where(tens, mantissa // 10, mantissa)
        slot = np.where(tens, slot + 1, slot)
    slot = np.where(number & (mantissa == 0), OFFSET, slot)
    return np.asarray((mantissa << SHIFT) | slot, dtype=np.int64)


def _float(mantissa: FloatArray, digit: int, exponent: int) -> tuple[FloatArray, bool]:
    """mantissa x digit x 10**exponent as floats, and whether they are rounded correctly.

    mantissa x digit is an exact float (below 2**52); so is 10**e up to e = 22,
    and one product or quotient of exact floats is rounded correctly.
    """
    scaled = mantissa * digit
    if 0 <= exponent < len(_POWERS):
        return np.asarray(scaled * _POWERS[exponent], dtype=np.float64), True
    if 0 < -exponent < len(_POWERS):
        return np.asarray(scaled / _POWERS[-exponent], dtype=np.float64), True
    return np.asarray(scaled * 10.0**exponent, dtype=np.float64), False


def _as_pair(step: Decimal) -> tuple[int, int]:
    """``step`` as (integer mantissa, exponent)."""
    sign, digits, exponent = step.normalize().as_tuple()
    assert isinstance(exponent, int)
    mantissa = int("".join(map(str, digits)))
    return (-mantissa if sign else mantissa), exponent


def _nice(target: Decimal) -> Decimal:
    """The least of 1, 2, 5 x 10**e that is at least ``target`` (> 0)."""
    exponent = target.adjusted()
    for digit, shift in ((1, 0), (2, 0), (5, 0), (1, 1)):
        step = Decimal(digit).scaleb(exponent + shift)
        if step >= target:
            return step
    raise AssertionError("unreachable: 10**(e+1) exceeds any number of exponent e")


@dataclass(frozen=True, eq=False, kw_only=True)
class Scale:
    """The grid and the ladder of round steps of one numeric attribute.

    Attributes:
        integral: every value is an integer (below 2**53): ranges print
            inclusive, ``lo-hi``; otherwise half-open, ``[lo, hi)``.
        step: the grid step (see the module docstring).
        low, high: the outer edges, grid cells of the least and greatest value.
        low_code, high_code: their edge codes; low_value, high_value their floats.
        ladder: (digit, exponent) pairs, steps digit x 10**exponent from the
            coarsest to the finest an inner edge may be a multiple of.
    """

    integral: bool
    step: Decimal
    low: Decimal
    high: Decimal
    low_code: int
    high_code: int
    low_value: float
    high_value: float
    ladder: tuple[tuple[int, int], ...]

    @property
    def width(self) -> float:
        """high − low: a range this wide tells nothing (its NCP is 1)."""
        return self.high_value - self.low_value

    def between(
        self, below: FloatArray, above: FloatArray, above_rank: IntArray
    ) -> tuple[IntArray, FloatArray]:
        """Edges for cuts whose lower part ends at ``below`` and upper part starts at ``above``.

        Codes and floats of the roundest number that prints neither
        neighbour, else the roundest in (below, above], else the value of
        ``above_rank`` itself (module docstring). Vectorized over cuts, one
        pass per ladder step.
        """
        codes = rank_code(above_rank)
        edges = np.asarray(above, dtype=np.float64).copy()
        todo = np.arange(len(below))
        # An integer part prints its upper edge minus one: that must not be ``below``.
        passes = ((below + 1.0 if self.integral else below, False), (below, True))
        for floor, reach in passes:
            for digit, exponent in self.ladder:
                if not len(todo):
                    return codes, edges
                low, high = floor[todo], above[todo]
                approximate = digit * 10.0**exponent
                mantissa = np.floor(low / approximate) + 1
                edge, _ = _float(mantissa, digit, exponent)
                # The division may round: step up once if the multiple is not above low.
                mantissa = np.where(edge <= low, mantissa + 1, mantissa)
                edge, exact = _float(mantissa, digit, exponent)
                if exact:
                    ok = ((edge <= high) if reach else (edge < high)) & (edge > low)
                else:
                    # 10**e is inexact: the float may be a few steps off the
                    # correctly rounded one, so keep well clear of both values.
                    margin = np.maximum(np.abs(edge) * 2.0**-48, 2.0**-1060)
                    ok = (edge - low > margin) & (high - edge > margin)
                ok &= np.abs(mantissa) * digit < _EXACT
                hit = todo[ok]
                whole = (mantissa[ok] * digit).astype(np.int64)
                codes[hit] = (whole << SHIFT) | (exponent + OFFSET)
                edges[hit] = edge[ok]
                todo = todo[~ok]
        return codes, edges


def scale(numbers: Sequence[Decimal], *, declared: Decimal | None) -> Scale:
    """The scale of an attribute whose distinct values are ``numbers``, in increasing order.

    ``declared`` is the grid step the hierarchy declares (:func:`declared_step`),
    if any.

    Example:
        >>> s = scale([Decimal("0.12"), Decimal("2.9")], declared=None)
        >>> [f"{number:f}" for number in (s.step, s.low, s.high)], s.integral, s.ladder[:3]
        (['0.5', '0.0', '3.0'], False, ((5, 0), (2, 0), (1, 0)))
    """
    least, greatest = numbers[0], numbers[-1]
    integral = max(abs(least), abs(greatest)) < 2**53 and all(
        n == n.to_integral_value() for n in numbers
    )
    target = (greatest - least) / 10
    if integral:
        target = max(target, Decimal(1))
        # Integer ranges print hi - 1: their edges, hence the grid, must be integers.
        if declared is not None and declared != declared.to_integral_value():
            declared = None
    step = declared if declared is not None else _nice(target if target > 0 else Decimal(1))
    while True:
        low_cell = (least / step).to_integral_value(rounding="ROUND_FLOOR")
        high_cell = (greatest / step).to_integral_value(rounding="ROUND_FLOOR") + 1
        digits, exponent = _as_pair(step)
        if max(abs(low_cell), abs(high_cell)) * abs(digits) < _EXACT:
            break
        # Values far from 0 for their spread: a coarser grid keeps mantissas exact.
        step *= 10
    low, high = low_cell * step, high_cell * step
    return Scale(
        integral=integral,
        step=step,
        low=low,
        high=high,
        low_code=pack(int(low_cell) * digits, exponent),
        high_code=pack(int(high_cell) * digits, exponent),
        low_value=float(low),
        high_value=float(high),
        ladder=_ladder(numbers, integral, high - low),
    )


def _ladder(
    numbers: Sequence[Decimal], integral: bool, width: Decimal
) -> tuple[tuple[int, int], ...]:
    """Round steps from the grid's width down to what the closest values need."""
    top = width.adjusted()
    if integral:
        bottom = 0
    else:
        floats = np.array([float(n) for n in numbers], dtype=np.float64)
        gaps = np.diff(floats)
        gaps = gaps[gaps > 0]
        if not len(gaps):
            return ()
        magnitude = float(np.abs(floats).max())
        # A step below a tenth of the narrowest gap fits in every gap; below
        # magnitude / 10**15 its multiples near the values are no longer exact.
        bottom = max(
            math.floor(math.log10(float(gaps.min()))) - 1,
            math.ceil(math.log10(magnitude)) - 15,
        )
    return tuple((digit, e) for e in range(top, bottom - 1, -1) for digit in _DIGITS)


def _cell(label: str | None) -> tuple[Decimal, Decimal] | None:
    """A grid cell label, ``a-b`` (integers, inclusive) or ``[a, b)``, as [a, b)."""
    if label is None:
        return None
    if match := _INCLUSIVE.fullmatch(label):
        return Decimal(match[1]), Decimal(match[2]) + 1
    if match := _HALF_OPEN.fullmatch(label):
        try:
            return Decimal(match[1]), Decimal(match[2])
        except InvalidOperation:
            return None
    return None


def declared_step(
    labels: Sequence[str | None], node: Sequence[int], numbers: Sequence[Decimal]
) -> Decimal | None:
    """The width of a regular interval grid, if the hierarchy's first level is one.

    ``labels`` are the first level's labels, ``node[i]`` the node of leaf i
    and ``numbers[i]`` its value. A grid: every label an interval of one
    width w (``30-34`` or ``[30, 35)``), starting at a multiple of w, holding
    the leaves under it.

    Example:
        >>> nums = [Decimal(31), Decimal(38), Decimal(44)]
        >>> declared_step(("30-34", "35-39", "40-44"), [0, 1, 2], nums)
        Decimal('5')
        >>> declared_step(("30-39", "30-39", "40-44"), [0, 1, 2], nums) is None
        True
    """
    cells = [_cell(label) for label in labels]
    if not cells or any(c is None for c in cells):
        return None
    bounds = [c for c in cells if c is not None]
    widths = {high - low for low, high in bounds}
    if len(widths) != 1:
        return None
    width = widths.pop()
    if width <= 0 or any(low % width for low, _ in bounds):
        return None
    for leaf, number in enumerate(numbers):
        low, high = bounds[node[leaf]]
        if not low <= number < high:
            return None
    return width
