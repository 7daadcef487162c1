"""The value generalization hierarchy (VGH) of one column.

A value generalization hierarchy maps every original value of an attribute (a
leaf, level 0) to progressively more general values, level by level, up to a
single most general value, the root (Samarati & Sweeney 1998, "Generalizing data
to provide anonymity when disclosing information"; Samarati 2001, "Protecting
respondents' identities in microdata release", IEEE TKDE 13(6), section 3). Each
level is a domain; the generalization relationship between consecutive domains
is a function, so every value has exactly one parent. The height is the highest
level.

Example (ZIP codes, height 2):
    02138 -> 0213* -> *
    02139 -> 0213* -> *
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from kanonym.errors import HierarchyError, InputError, clip
from kanonym.hierarchy._values import check_delimiter, show, text_order


@dataclass(frozen=True)
class RepeatedLeaf:
    """A value an ARX file lists on several lines with different generalizations.

    Read with ``duplicates="last"``, the last of those lines is kept, as ARX
    does; the others are dropped. Line numbers count from 1.

    Attributes:
        leaf: the value (None: the missing value).
        kept_line, kept: the line kept and its generalizations, level 1 up.
        dropped: ``(line, generalizations)`` of each other line that listed
            the value with other generalizations.
    """

    leaf: str | None
    kept_line: int
    kept: tuple[str | None, ...]
    dropped: tuple[tuple[int, tuple[str | None, ...]], ...]

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form used in the report's ``repeated_leaves``.

        Example:
            >>> RepeatedLeaf("94", 3, ("[90,99]", "*"), ((1, ("[1,94]", "*")),)).as_dict()
            ... # doctest: +NORMALIZE_WHITESPACE
            {'leaf': '94', 'kept': {'line': 3, 'generalizations': ['[90,99]', '*']},
             'dropped': [{'line': 1, 'generalizations': ['[1,94]', '*']}]}
        """
        return {
            "leaf": self.leaf,
            "kept": {"line": self.kept_line, "generalizations": list(self.kept)},
            "dropped": [{"line": line, "generalizations": list(row)} for line, row in self.dropped],
        }


@dataclass(frozen=True)
class Hierarchy:
    """A validated value generalization hierarchy (Samarati 2001, section 3).

    ``levels[j][i]`` is leaf ``i`` generalized to level ``j``; ``levels[0]`` holds
    the leaves, all distinct. ``None`` is the missing value: an ordinary value that
    is mapped like any other and never matches a different value. The constructor
    raises :class:`~kanonym.errors.HierarchyError` unless every level has one value
    per leaf, the leaves are distinct, each level is a function of the level below
    (no value has two parents) and the top level holds a single value, which is
    not the missing value unless it is the only leaf.

    Example:
        >>> h = Hierarchy(
        ...     name="zip",
        ...     levels=(("02138", "02139", "02141"), ("0213*", "0213*", "0214*"), ("*",) * 3),
        ... )
        >>> h.height, h.level_values(1)
        (2, ('0213*', '0214*'))
    """

    name: str
    levels: tuple[tuple[str | None, ...], ...]
    repeated_leaves: tuple[RepeatedLeaf, ...] = field(default=(), compare=False, repr=False)
    """Values the ARX file listed on several lines, the last kept (``duplicates="last"``)."""

    def __post_init__(self) -> None:
        where = f"hierarchy {self.name}"
        if not self.levels or not self.levels[0]:
            raise HierarchyError(f"{where}: needs at least one level and one leaf")
        size = len(self.levels[0])
        for j, level in enumerate(self.levels):
            if len(level) != size:
                raise HierarchyError(
                    f"{where}: level {j} has {len(level)} values but level 0 has {size} leaves"
                )
            # An empty field is read as the missing value, so an empty string could
            # never survive a round trip through a file: None is the only spelling.
            if "" in level:
                raise HierarchyError(
                    f"{where}: level {j} value '' is an empty string; the missing value is None"
                )
        for j in range(1, len(self.levels)):
            parent_of: dict[str | None, str | None] = {}
            for child, parent in zip(self.levels[j - 1], self.levels[j], strict=True):
                known = parent_of.setdefault(child, parent)
                if known != parent:
                    raise HierarchyError(
                        f"{where}: level {j - 1} value {show(child)} has two parents "
                        f"at level {j}: {show(known)} and {show(parent)}"
                    )
        seen: set[str | None] = set()
        for leaf in self.levels[0]:
            if leaf in seen:
                raise HierarchyError(f"{where}: level 0 value {show(leaf)} appears twice")
            seen.add(leaf)
        top = self.levels[-1]
        for value in top:
            if value != top[0]:
                raise HierarchyError(
                    f"{where}: top level {self.height} holds more than one value: "
                    f"{show(top[0])} and {show(value)}"
                )
        # A cell generalized to the missing value would be written as an empty field
        # and read back as missing data: a root above the leaves must be a value. (A
        # lone leaf, height 0, generalizes nothing and may be the missing value.)
        if top[0] is None and self.height > 0:
            raise HierarchyError(
                f"{where}: top level {self.height} is the missing value (an empty cell in a "
                "file); the root every value generalizes to must be a value, such as '*'"
            )

    @property
    def height(self) -> int:
        """The highest level: ``len(levels) - 1``; 0 when there are only leaves."""
        return len(self.levels) - 1

    @property
    def leaves(self) -> tuple[str | None, ...]:
        """The original values (level 0), in the hierarchy's row order."""
        return self.levels[0]

    def covers(self, values: Iterable[str | None], *, column: str, source: str) -> None:
        """Raise :class:`~kanonym.errors.HierarchyError` unless every value is a leaf.

        A table can only be generalized with a hierarchy that knows each of its
        values. When several values are absent, the message names the first in
        lexicographic order (missing last), whatever order ``values`` comes in.

        Example:
            >>> h = Hierarchy(name="sex.csv", levels=(("F", "M"), ("*", "*")))
            >>> h.covers(["M", "F", "M"], column="sex", source="adult.csv")
        """
        leaves = set(self.levels[0])
        absent = {value for value in values if value not in leaves}
        if absent:
            first = min(absent, key=text_order)
            raise HierarchyError(
                f"{source}: column '{column}': value {show(first)} is not in hierarchy {self.name}"
            )

    def level_values(self, level: int) -> tuple[str | None, ...]:
        """The distinct values at ``level`` (0 to ``height``), in first-seen row order.

        Example:
            >>> Hierarchy(name="h", levels=(("a", "b"), ("*", "*"))).level_values(1)
            ('*',)
        """
        if not 0 <= level <= self.height:
            raise IndexError(f"hierarchy {self.name}: level {level} is outside 0..{self.height}")
        return tuple(dict.fromkeys(self.levels[level]))

    def to_arx_csv(self, delimiter: str = ";") -> str:
        """Write the hierarchy in ARX's CSV format; the inverse of ``load_arx``.

        ARX (arx.deidentifier.org) stores a hierarchy as one row per leaf holding
        its generalizations left to right, with no header. The missing value is an
        empty cell; a cell holding the delimiter, a quote or a line break is quoted.

        Example:
            >>> print(Hierarchy(name="h", levels=(("a;b", None), ("*", "*"))).to_arx_csv(), end="")
            "a;b";*
            ;*
        """
        check_delimiter(delimiter)
        lines = []
        for row in zip(*self.levels, strict=True):
            line = delimiter.join(_arx_cell(value, delimiter) for value in row)
            # A lone empty cell would be a blank line, which readers skip.
            lines.append(line or '""')
        return "".join(f"{line}\n" for line in lines)

    def write_arx(self, path: str | Path, delimiter: str = ";") -> None:
        """Write :meth:`to_arx_csv` to the file ``path`` in UTF-8, which ``load_arx`` reads back.

        Lines end in ``\\n`` on every system, so a line break inside a quoted
        cell stays the value it was. A file that cannot be written raises
        :class:`~kanonym.errors.InputError`.

        Example:
            >>> import pathlib, tempfile
            >>> file = pathlib.Path(tempfile.mkdtemp()) / "sex.csv"
            >>> Hierarchy(name="sex", levels=(("F", "M"), ("*", "*"))).write_arx(file)
            >>> file.read_text(encoding="utf-8")
            'F;*\\nM;*\\n'
        """
        file = Path(path)
        text = self.to_arx_csv(delimiter)
        try:
            file.write_bytes(text.encode("utf-8"))
        except OSError as error:
            raise InputError(
                f"{clip(str(file))}: cannot write hierarchy file: "
                f"{error.strerror or type(error).__name__}"
            ) from error


def _arx_cell(value: str | None, delimiter: str) -> str:
    if value is None:
        return ""
    # The csv module leaves a lone carriage return unquoted when lines end in
    # "\n", which would split the row on reading; quoting here covers it.
    if any(char in value for char in (delimiter, '"', "\r", "\n")):
        return '"' + value.replace('"', '""') + '"'
    return value
