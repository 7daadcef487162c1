"""The one place where a library message's Python parameters become command-line options.

The library names its parameters between backquotes (`` `max_suppression` ``,
`` `algorithm='greedy'` ``, see :mod:`kanonym.errors`), so that a Python caller
is told what to pass; :func:`as_flags` rewrites them as the option of the
command that ran (``--max-suppression``, ``--algorithm greedy``). A parameter
is its option with ``-`` for ``_`` unless :data:`FLAGS` or the command's entry
in :data:`COMMAND_FLAGS` says otherwise. One word, one meaning: ``--qi
COL=HIERARCHY`` is the column -> hierarchy mapping (``quasi_identifiers``) and
``--columns COL ...`` a plain list of names (``columns``); the measuring
commands take the latter (:func:`add_columns`) and refuse ``--qi``.

Example:
    >>> as_flags("`max_suppression` must be in [0, 1]; or use `algorithm='greedy'`", "anonymize")
    '--max-suppression must be in [0, 1]; or use --algorithm greedy'
    >>> as_flags("`columns`: name at least one column", "check")
    '--columns: name at least one column'
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Mapping, Sequence

from kanonym.models.spec import GRAMMAR as MODEL_GRAMMAR

FLAGS: Mapping[str, str] = {
    "quasi_identifiers": "--qi",
    "models": "--model",
    "weights": "--weight",
    "min_levels": "--min-level",
    "max_levels": "--max-level",
    "duplicates": "--hierarchy-duplicates",
}
"""Parameter -> option, where the option is not the parameter with ``-`` for ``_``."""

COMMAND_FLAGS: Mapping[str, Mapping[str, str]] = {
    # apply_transformation(data, report): the report read is --from-report.
    "apply": {"report": "--from-report"},
}
"""Command -> its own parameter -> option entries, which take precedence over :data:`FLAGS`."""

_PARAMETER = re.compile(r"`([a-z][a-z0-9_]*)(?:=('[^'`]*'|\"[^\"`]*\"|[^`]*))?`")


def flag(parameter: str, command: str | None = None) -> str:
    """The option of ``command`` that sets ``parameter``.

    Example:
        >>> flag("time_limit"), flag("min_levels"), flag("report", "apply")
        ('--time-limit', '--min-level', '--from-report')
    """
    own = COMMAND_FLAGS.get(command or "", {})
    return own.get(parameter) or FLAGS.get(parameter) or "--" + parameter.replace("_", "-")


def as_flags(message: str, command: str | None = None) -> str:
    """``message`` with each backquoted parameter written as ``command``'s option.

    `` `name=value` `` becomes ``--name value`` (quotes dropped), `` `name=True` ``
    the switch alone, and `` `name=False` `` or `` `name=None` `` "no ``--name``".
    """

    def option(match: re.Match[str]) -> str:
        name, value = match.group(1), match.group(2)
        written = flag(name, command)
        if value is None or value == "True":
            return written
        if value in ("False", "None"):
            return f"no {written}"
        if value[:1] in "'\"" and value[-1:] == value[:1] and len(value) > 1:
            value = value[1:-1]
        return f"{written} {value}"

    return _PARAMETER.sub(option, message)


RENAMED: Mapping[str, str] = {
    "--new-report": "apply's --new-report is now --report; the report it applies is --from-report",
    "--from-report": "apply reads the report to apply with --from-report (formerly --report)",
}
"""A renamed option -> the hint added to a usage error that names it (0.x renames)."""


def renamed_hint(message: str) -> str:
    """``"; <hint>"`` for the first renamed option a usage error names, or ``""``.

    Example:
        >>> renamed_hint("unrecognized arguments: --new-report r.json")
        "; apply's --new-report is now --report; the report it applies is --from-report"
    """
    for option, hint in RENAMED.items():
        if re.search(rf"{re.escape(option)}\b", message):
            return f"; {hint}"
    return ""


COLUMNS_HELP = (
    "column names to group the rows on, compared as they are in the file (not COL=HIERARCHY)"
)


class RefusedQi(argparse.Action):
    """``--qi`` on a command that takes plain column names: a usage error naming ``--columns``.

    ``--qi`` is the column -> hierarchy mapping (``--qi COL=HIERARCHY``, as
    ``quasi_identifiers`` in Python); ``check``, ``risk`` and ``disclosure``
    measure values as they are and take ``--columns COL ...``. An old ``--qi``
    there is refused rather than read, and the message writes the fix.
    """

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[object] | None,
        option_string: str | None = None,
    ) -> None:
        given = [] if values is None or isinstance(values, str) else [str(v) for v in values]
        names = " ".join(value.partition("=")[0] for value in given) or "COL ..."
        command = parser.prog.rsplit(" ", 1)[-1]
        parser.error(
            f"{command} takes plain column names with --columns, not --qi (--qi COL=HIERARCHY "
            f"gives anonymize its hierarchies): write --columns {names}"
        )


def add_columns(parser: argparse.ArgumentParser) -> None:
    """Add the required ``--columns COL ...`` of a measuring command, and refuse ``--qi``."""
    parser.add_argument(
        "--columns", nargs="+", action="extend", metavar="COL", required=True, help=COLUMNS_HELP
    )
    parser.add_argument("--qi", nargs="*", action=RefusedQi, help=argparse.SUPPRESS)


def add_role_flags(parser: argparse.ArgumentParser) -> None:
    """The column roles and models of a job: ``--qi``, ``--identifying``, ``--sensitive``,
    ``--insensitive``, ``--keep-unlisted`` and ``--model`` (``anonymize``, ``explore``)."""
    parser.add_argument(
        "--qi",
        nargs="+",
        action="extend",
        metavar="COL=HIERARCHY",
        help="quasi-identifier and its hierarchy: an ARX CSV file, interval:W1,W2,..., "
        "mask, date[:FORMAT], suppress or order:F1,F2,...[:ORDER]",
    )
    parser.add_argument(
        "--identifying",
        nargs="+",
        action="extend",
        metavar="COL",
        help="column removed from the release, such as a name or an SSN",
    )
    parser.add_argument(
        "--sensitive",
        nargs="+",
        action="extend",
        metavar="COL[=HIERARCHY]",
        help="sensitive column, released as is; a hierarchy for hierarchical t-closeness",
    )
    parser.add_argument(
        "--insensitive",
        nargs="+",
        action="extend",
        metavar="COL",
        help="column released unchanged that no model reads; every column must have a role "
        "(--qi, --identifying, --sensitive or --insensitive)",
    )
    parser.add_argument(
        "--keep-unlisted",
        action="store_true",
        default=None,
        help="release the columns named in no role unchanged instead of refusing them "
        "(the reports list them)",
    )
    parser.add_argument(
        "--model",
        nargs="+",
        action="extend",
        metavar="SPEC",
        help="privacy model beyond k, e.g. l-diversity:distinct:3:COL or "
        f"t-closeness:equal:0.2:COL; the forms are {MODEL_GRAMMAR}",
    )


def add_level_flags(parser: argparse.ArgumentParser) -> None:
    """The metric's weights and the levels allowed: ``--weight``, ``--min-level`` and
    ``--max-level`` (``anonymize``, ``explore``)."""
    parser.add_argument(
        "--weight",
        nargs="+",
        action="extend",
        metavar="COL=W",
        help="weight of a quasi-identifier in entropy, loss, precision and height (default 1)",
    )
    parser.add_argument(
        "--min-level", nargs="+", action="extend", metavar="COL=L", help="least level allowed"
    )
    parser.add_argument(
        "--max-level", nargs="+", action="extend", metavar="COL=L", help="greatest level allowed"
    )
