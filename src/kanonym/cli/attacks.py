"""The attack commands: ``risk``, ``qi-scan``, ``link`` and ``disclosure``.

Each prints a few lines for people, or one JSON object with ``--json`` (keys: docs, Risk and
attacks). They measure and write nothing. Exit status: 0, except ``link``,
which exits 1 when some identity matches 1 to k - 1 released rows (as
``check`` exits 1 on a table that is not k-anonymous); bad input exits 2 with
one line on stderr (raised as :class:`~kanonym.errors.InputError`, mapped by
:func:`kanonym.cli.main.main`).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TypeVar

from kanonym import attacks
from kanonym.attacks.defaults import (
    DEFAULT_DOMINANCE,
    DEFAULT_K,
    DEFAULT_LIMIT,
    DEFAULT_MAX_SIZE,
    DEFAULT_THRESHOLD,
)
from kanonym.cli.flags import add_columns
from kanonym.cli.help import DELIMITER_HELP, examples
from kanonym.errors import InputError, echo

EXIT_OK, EXIT_LINKED = 0, 1
DEFAULT_TOP = 10

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)


def add_commands(commands: argparse._SubParsersAction[ParserT]) -> None:
    """Register the four subcommands on the ``kanonym`` parser."""
    measure = commands.add_parser(
        "risk",
        help="re-identification risk: uniqueness, prosecutor, journalist, marketer",
        epilog=examples(
            "kanonym risk release.csv --columns birth_date sex zip",
            "kanonym risk sample.csv --columns birth_date sex zip --population-size 2000000",
        ),
    )
    measure.add_argument("input", help="CSV or Parquet file, raw or released")
    add_columns(measure)
    population = measure.add_mutually_exclusive_group()
    population.add_argument(
        "--population",
        metavar="FILE",
        help="population table containing INPUT: journalist risk, population uniqueness",
    )
    population.add_argument(
        "--population-size",
        type=int,
        metavar="N",
        help="population size for the population uniqueness estimates (Zayatz, Pitman)",
    )
    measure.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="T",
        help=f"record risk above which a record is at risk (default {DEFAULT_THRESHOLD})",
    )
    _common(measure, DELIMITER_HELP)

    scan = commands.add_parser(
        "qi-scan",
        help="rank column combinations by how many records they make unique",
        epilog=examples(
            "kanonym qi-scan patients.csv --max-size 3",
            "kanonym qi-scan patients.csv --columns birth_date sex zip diagnosis --json",
        ),
    )
    scan.add_argument("input", help="CSV or Parquet file")
    scan.add_argument(
        "--columns",
        nargs="+",
        action="extend",
        metavar="COL",
        help="candidate columns (default: all)",
    )
    scan.add_argument(
        "--max-size",
        type=int,
        default=DEFAULT_MAX_SIZE,
        metavar="M",
        help=f"largest combination (default {DEFAULT_MAX_SIZE})",
    )
    scan.add_argument(
        "--time-limit", type=float, metavar="SECONDS", help="stop after this long, and say so"
    )
    scan.add_argument(
        "--top",
        type=int,
        default=DEFAULT_TOP,
        metavar="N",
        help=f"combinations printed (default {DEFAULT_TOP}; --json lists all)",
    )
    _common(scan, DELIMITER_HELP)

    attack = commands.add_parser(
        "link",
        help="link an identified table to a release; count each identity's matches",
        epilog=examples(
            "kanonym link release.csv voters.csv --on sex zip dob=birth_date \\\n"
            "      --qi zip=mask birth_date=date --k 5",
        ),
    )
    attack.add_argument("release", help="the released table (CSV or Parquet)")
    attack.add_argument("external", help="the identified table, e.g. a voter list")
    attack.add_argument(
        "--on",
        nargs="+",
        action="extend",
        metavar="COL|EXT_COL=REL_COL",
        required=True,
        help="compared columns; EXT_COL=REL_COL when the names differ",
    )
    attack.add_argument(
        "--qi",
        nargs="+",
        action="extend",
        metavar="COL=HIERARCHY",
        default=[],
        help="release column and the hierarchy it was generalized with",
    )
    attack.add_argument(
        "--k",
        type=int,
        default=DEFAULT_K,
        help=f"count identities matching 1 to k-1 records (default {DEFAULT_K})",
    )
    _common(attack, DELIMITER_HELP)

    attribute = commands.add_parser(
        "disclosure",
        help="classes whose sensitive values are homogeneous or dominated",
        epilog=examples(
            "kanonym disclosure release.csv --columns birth_date sex zip --sensitive diagnosis",
        ),
    )
    attribute.add_argument("input", help="CSV or Parquet file, raw or released")
    add_columns(attribute)
    attribute.add_argument(
        "--sensitive",
        nargs="+",
        action="extend",
        metavar="COL",
        required=True,
        help="sensitive columns whose values a class may disclose",
    )
    attribute.add_argument(
        "--dominance",
        type=float,
        default=DEFAULT_DOMINANCE,
        metavar="A",
        help=f"a class is dominated when one value's share exceeds A (default {DEFAULT_DOMINANCE})",
    )
    attribute.add_argument(
        "--limit",
        type=int,
        default=DEFAULT_LIMIT,
        metavar="N",
        help=f"dominated classes listed per attribute (default {DEFAULT_LIMIT})",
    )
    _common(attribute, DELIMITER_HELP)


def _common(parser: argparse.ArgumentParser, delimiter_help: str) -> None:
    parser.add_argument("--delimiter", metavar="D", help=delimiter_help)
    parser.add_argument("--json", action="store_true", help="print one JSON object")


def _split(item: str, what: str, form: str) -> tuple[str, str]:
    left, sep, right = item.partition("=")
    if not sep or not left or not right:
        raise InputError(f"{what} {echo(item)} is not of the form {form}")
    return left, right


def _risk(args: argparse.Namespace) -> int:
    summary = attacks.risk(
        args.input,
        args.columns,
        population=args.population,
        population_size=args.population_size,
        threshold=args.threshold,
        delimiter=args.delimiter,
    )
    if args.json:
        print(json.dumps(summary.as_dict()))
        return EXIT_OK
    text = summary.text()
    # The measures' reasons name what is missing; here, the option that supplies it.
    fixes = {
        "estimates": "needs the population size: give --population-size N or --population FILE",
        "journalist": "needs a population table: give --population FILE",
        "population_uniques": "needs a population table: give --population FILE",
    }
    for key, fix in fixes.items():
        reason = summary.reasons.get(key)
        if reason:
            text = text.replace(f"({reason})", f"({fix})")
    print(text)
    return EXIT_OK


def _qi_scan(args: argparse.Namespace) -> int:
    if args.top < 0:
        raise InputError(f"--top must be >= 0, got {args.top}")
    scan = attacks.qi_scan(
        args.input,
        args.columns,
        max_size=args.max_size,
        time_limit=args.time_limit,
        delimiter=args.delimiter,
    )
    print(json.dumps(scan.as_dict()) if args.json else scan.text(args.top))
    return EXIT_OK


def _link(args: argparse.Namespace) -> int:
    # The attacks load on first use (kanonym._lazy); an anonymize run never needs them.
    from kanonym.attacks.linkage import GeneralizedReleaseError

    on: list[str | tuple[str, str]] = [
        _split(item, "--on", "COL or EXT_COL=REL_COL") if "=" in item else item for item in args.on
    ]
    hierarchies: dict[str, str] = {}
    for item in args.qi:
        column, spec = _split(item, "--qi", "COL=HIERARCHY")
        if column in hierarchies:
            raise InputError(f"--qi: release column {echo(column)} is given twice")
        hierarchies[column] = spec
    try:
        summary = attacks.link(
            args.release,
            args.external,
            on,
            quasi_identifiers=hierarchies,
            k=args.k,
            delimiter=args.delimiter,
        )
    except GeneralizedReleaseError as error:
        held = "; ".join(
            f"'{column}' holds e.g. {', '.join(echo(v) for v in labels)}"
            for column, labels in error.columns.items()
        )
        wanted = " ".join(f"{column}=HIERARCHY" for column in error.columns)
        raise InputError(
            f"{error.source}: the release looks generalized ({held}) and no hierarchy was "
            f"given: add --qi {wanted} with the hierarchies it was made with"
        ) from None
    if args.json:
        print(json.dumps(summary.as_dict()))
    else:
        print(f"linked {args.external} against {args.release}")
        print(summary.text())
    return EXIT_LINKED if summary.below_k else EXIT_OK


def _disclosure(args: argparse.Namespace) -> int:
    summary = attacks.disclosure(
        args.input,
        args.columns,
        args.sensitive,
        dominance=args.dominance,
        limit=args.limit,
        delimiter=args.delimiter,
    )
    print(json.dumps(summary.as_dict()) if args.json else summary.text())
    return EXIT_OK


HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "risk": _risk,
    "qi-scan": _qi_scan,
    "link": _link,
    "disclosure": _disclosure,
}
"""Subcommand -> handler returning the exit status."""
