"""Hierarchy specs: the one-string form in which a user names a column's hierarchy.

A spec is a builder (``interval:5,10,20``, ``mask``, ``date``, ``date:%d/%m/%Y``,
``suppress``, ``order:2``) or else the path of an ARX hierarchy file. Builders produce value
generalization hierarchies in the sense of Samarati 2001 ("Protecting
respondents' identities in microdata release") from the column's own values.

Example:
    >>> parse_hierarchy("interval:5,10")
    IntervalBuilder(widths=(5, 10))
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from pathlib import Path

from kanonym.errors import InputError, echo
from kanonym.hierarchy.arx import Duplicates, load_arx
from kanonym.hierarchy.builders import (
    DateBuilder,
    HierarchyBuilder,
    IntervalBuilder,
    MaskBuilder,
    SuppressBuilder,
)
from kanonym.hierarchy.hierarchy import Hierarchy
from kanonym.hierarchy.order import ORDER_NAMES, OrderBuilder, OrderName

_WIDTH = re.compile(r"\d+", re.ASCII)
_MAX_WIDTH_DIGITS = 18


def parse_hierarchy(
    spec: str, *, base_dir: Path | None = None, duplicates: Duplicates = "error"
) -> Hierarchy | HierarchyBuilder:
    """Turn a spec into a builder, or load the ARX file it names.

    The words ``interval``, ``mask``, ``date``, ``suppress`` and ``order`` (alone or before
    a ``:``) always mean builders; write ``./mask`` for a file called ``mask``. A
    relative path is resolved against ``base_dir`` when given; ``duplicates``
    says how to read a file that lists a value on two lines with different
    generalizations (:func:`~kanonym.hierarchy.load_arx`). A malformed spec
    raises :class:`~kanonym.errors.InputError` naming it; so does a bare word
    that names no file (``masking``), as an unknown builder, with the builders
    and the closest one.

    Example:
        >>> parse_hierarchy("date:%d/%m/%Y")
        DateBuilder(format='%d/%m/%Y')
    """
    if not spec:
        raise InputError("hierarchy spec is empty")
    keyword, colon, argument = spec.partition(":")
    if keyword == "interval":
        return IntervalBuilder(widths=_parse_widths(spec, argument))
    if keyword in ("mask", "suppress"):
        if colon:
            raise InputError(f"hierarchy spec {echo(spec)}: '{keyword}' takes no argument")
        return MaskBuilder() if keyword == "mask" else SuppressBuilder()
    if keyword == "date":
        if colon and not argument:
            raise InputError(f"hierarchy spec {echo(spec)}: the date format after ':' is empty")
        return DateBuilder(format=argument or None)
    if keyword == "order":
        return _parse_order(spec, argument)
    path = Path(spec)
    if base_dir is not None and not path.is_absolute():
        path = base_dir / path
    if _WORD.fullmatch(keyword) and not _exists(path):
        # A bare word that names no file is a builder misspelled, not a missing file.
        raise InputError(
            f"unknown hierarchy builder {echo(keyword)}{_did_you_mean(keyword)}; {BUILDERS}"
        )
    return load_arx(path, duplicates=duplicates)


BUILDERS = (
    "builders are interval:W1,W2,..., mask, date[:FORMAT], suppress, order:F1,F2,...[:ORDER], "
    "or an ARX CSV file"
)
"""What a hierarchy spec may be, for error messages."""

_WORD = re.compile(r"[A-Za-z][A-Za-z_-]+")


def _exists(path: Path) -> bool:
    """Whether ``path`` exists; a name the system refuses (too long) names nothing."""
    try:
        return path.exists()
    except OSError:
        return False


def _did_you_mean(word: str) -> str:
    close = difflib.get_close_matches(word.lower(), sorted(_BUILDER_KEYWORDS), n=1, cutoff=0.6)
    if not close:
        close = [k for k in sorted(_BUILDER_KEYWORDS) if word.lower().startswith(k)]
    return f" (did you mean '{close[0]}'?)" if close else ""


def _parse_widths(spec: str, argument: str) -> tuple[int, ...]:
    if not argument:
        raise InputError(f"hierarchy spec {echo(spec)}: expected widths, as in 'interval:5,10,20'")
    widths = []
    for part in argument.split(","):
        # More digits than any width needs would also exceed int()'s limit on digits.
        if _WIDTH.fullmatch(part.strip()) is None or len(part.strip()) > _MAX_WIDTH_DIGITS:
            raise InputError(
                f"hierarchy spec {echo(spec)}: width {echo(part)} is not a positive integer"
            )
        widths.append(int(part))
    return tuple(widths)


def _parse_order(spec: str, argument: str) -> OrderBuilder:
    """``order:FANOUTS[:ORDER]`` (grammar: :class:`~kanonym.hierarchy.order.OrderBuilder`)."""
    text, colon, order_text = argument.partition(":")
    if not text:
        raise InputError(f"hierarchy spec {echo(spec)}: expected fan-outs, as in 'order:2'")
    parts = [part.strip() for part in text.split(",")]
    # A trailing '*' ends the list: 'order:4,*' is one level of 4, then the root.
    ended = parts[-1] == "*"
    numbers = parts[:-1] if ended else parts
    fanouts = []
    for part in numbers:
        if _WIDTH.fullmatch(part) is None or len(part) > _MAX_WIDTH_DIGITS:
            raise InputError(
                f"hierarchy spec {echo(spec)}: fan-out {echo(part)} is not a positive integer"
            )
        fanouts.append(int(part))
    if not fanouts:
        raise InputError(f"hierarchy spec {echo(spec)}: expected fan-outs before '*'")
    order: OrderName | tuple[str, ...] = "auto"
    date_format = None
    if colon:
        kind, date_colon, date_format_text = order_text.partition(":")
        if kind == "date" and date_colon:
            if not date_format_text:
                raise InputError(f"hierarchy spec {echo(spec)}: the date format after ':' is empty")
            order, date_format = "date", date_format_text
        elif order_text in ORDER_NAMES:
            order = order_text
        elif not order_text:
            raise InputError(f"hierarchy spec {echo(spec)}: the order after ':' is empty")
        else:
            order = tuple(order_text.split(","))
    try:
        return OrderBuilder(
            fanouts=fanouts[0] if len(fanouts) == 1 and not ended else tuple(fanouts),
            order=order,
            format=date_format,
        )
    except InputError as error:
        raise InputError(f"hierarchy spec {echo(spec)}: {error}") from None


def resolve(
    hierarchy: Hierarchy | HierarchyBuilder,
    values: Sequence[str | None],
    *,
    column: str,
    source: str,
) -> Hierarchy:
    """The hierarchy for a column: built from ``values`` if a builder, then checked to cover them.

    Raises :class:`~kanonym.errors.HierarchyError` naming ``source``, ``column``
    and the first value the hierarchy lacks.

    Example:
        >>> resolve(parse_hierarchy("suppress"), ["M", "F"], column="sex", source="t.csv").height
        1
    """
    built = (
        hierarchy
        if isinstance(hierarchy, Hierarchy)
        else hierarchy.build(values, column=column, source=source)
    )
    built.covers(values, column=column, source=source)
    return built


_BUILDER_KEYWORDS = frozenset({"interval", "mask", "date", "suppress", "order"})


def spec_file(spec: str, *, base_dir: Path | None = None) -> Path | None:
    """The ARX hierarchy file a spec names (relative to ``base_dir``), or None for a builder.

    Example:
        >>> spec_file("mask") is None, spec_file("zip.csv", base_dir=Path("/data"))
        (True, PosixPath('/data/zip.csv'))
    """
    if spec.partition(":")[0] in _BUILDER_KEYWORDS:
        return None
    path = Path(spec)
    return base_dir / path if base_dir is not None and not path.is_absolute() else path
