"""``kanonym explore``: the optimal release for every k and suppression limit, risk
against utility, with the Pareto frontier (:mod:`kanonym.sweep`).

It takes the roles, hierarchies and models of ``anonymize`` (flags or a job
file, ``--config``, whose k and suppression limit the sweep replaces), the k
to sweep (``--k 2..20`` or a list) and the suppression limits
(``--suppression 0,2%,5%``); prints the frontier, and writes every point as
JSON (``--json``) and a page with the figure (``--html``), both or neither.
``--demo`` sweeps the bundled Adult table. Bad input exits 2 with one line,
before anything is written (:func:`kanonym.cli.main.main` maps the errors).

Example:
    >>> parse_ks(["2..5", "8,10"]), parse_limits(["0,2%", "0.05"])
    ((2, 3, 4, 5, 8, 10), (0.0, 0.02, 0.05))
"""

from __future__ import annotations

import argparse
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from kanonym.attacks.defaults import DEFAULT_THRESHOLD
from kanonym.cli.flags import add_level_flags, add_role_flags
from kanonym.cli.help import DELIMITER_HELP, examples
from kanonym.cli.jobs import job_options
from kanonym.config import job_from_options, parse_fraction
from kanonym.errors import InputError, echo
from kanonym.hierarchy import DUPLICATES
from kanonym.io import load
from kanonym.metrics import DEFAULT_METRIC, METRICS
from kanonym.sweep import DEFAULT_KS as SWEPT_KS
from kanonym.sweep import DEFAULT_LIMITS as SWEPT_LIMITS
from kanonym.sweep import explore

ParserT = TypeVar("ParserT", bound=argparse.ArgumentParser)

# The library's defaults, as the flags take them (2..20 and 0,2%,5%).
DEFAULT_KS = f"{SWEPT_KS.start}..{SWEPT_KS.stop - 1}"
DEFAULT_LIMITS = ",".join(f"{limit * 100:g}%" if limit else "0" for limit in SWEPT_LIMITS)

# job_options reads every job flag of anonymize; those explore has not are absent.
_NOT_SWEPT = (
    "k",
    "max_suppression",
    "max_suppressed_rows",
    "algorithm",
    "policy",
    "technique",
    "output",
    "report",
    "report_html",
    "numeric",
    "categorical",
    "engine",
    "replace",
    "population",
    "check_lattice",
)

# A release job needs an output; the sweep writes no release, so the job it builds
# from the flags names one in the temporary folder that nothing ever writes.
_NO_RELEASE = Path(tempfile.gettempdir()) / "kanonym-explore-writes-no-release.csv"


def k_ranges(values: Sequence[str]) -> list[tuple[int, int]]:
    """The ranges ``(first, last)`` of ``--k``, both included, a lone k as ``(k, k)``;
    checked but not expanded (a range may be far longer than any table).

    Raises:
        argparse.ArgumentTypeError: a value is neither a whole number nor a range.
    """
    ranges: list[tuple[int, int]] = []
    for value in values:
        for item in filter(None, value.split(",")):
            low, dots, high = item.partition("..")
            try:
                first, last = int(low), int(high if dots else low)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"--k {echo(item)} is neither a whole number nor a range such as 2..20"
                ) from None
            if first < 1 or last < first:
                raise argparse.ArgumentTypeError(
                    f"--k {echo(item)}: k is a whole number >= 1 and a range runs upwards (2..20)"
                )
            ranges.append((first, last))
    if not ranges:
        raise argparse.ArgumentTypeError("--k: give at least one k, e.g. --k 2..20")
    return ranges


def parse_ks(values: Sequence[str], *, rows: int | None = None) -> tuple[int, ...]:
    """The k of ``--k``: whole numbers, ranges ``A..B`` (both included), comma-separated
    or not; ascending, each once.

    With ``rows`` (the table's), each range is cut at ``rows`` before it is
    expanded: no k above the rows has a solution, and ``--k 2..1000000000``
    would otherwise build a billion points. A range wholly above keeps its
    first k, and a lone k is kept, to be shown without a solution.

    Example:
        >>> parse_ks(["2..1000000000", "50..60,80"], rows=5)
        (2, 3, 4, 5, 50, 80)

    Raises:
        argparse.ArgumentTypeError: a value is neither.
    """
    ranges = k_ranges(values)
    if rows is not None:
        ranges = [(first, max(first, min(last, rows))) for first, last in ranges]
    return tuple(sorted({k for first, last in ranges for k in range(first, last + 1)}))


def parse_limits(values: Sequence[str]) -> tuple[float, ...]:
    """The limits of ``--suppression``: fractions (0.02) or percentages (2%),
    comma-separated or not; in the order given, each once.

    Raises:
        argparse.ArgumentTypeError: a value is neither.
    """
    limits: list[float] = []
    for value in values:
        for item in filter(None, value.split(",")):
            try:
                limits.append(parse_fraction(item, "--suppression"))
            except InputError as error:
                raise argparse.ArgumentTypeError(str(error)) from None
    if not limits:
        raise argparse.ArgumentTypeError("--suppression: give at least one limit, e.g. 0,2%,5%")
    return tuple(dict.fromkeys(limits))


def add_command(commands: argparse._SubParsersAction[ParserT]) -> None:
    """Register ``explore`` on the ``kanonym`` parser."""
    sweep = commands.add_parser(
        "explore",
        help="choose k: the optimal release for each k and suppression limit, risk vs utility",
        epilog=examples(
            "kanonym explore --demo",
            "kanonym explore patients.csv --qi zip=mask age=interval:5,10,20 sex=suppress \\\n"
            "      --identifying name --sensitive diagnosis --k 2..10 --suppression 0,2%,5% \\\n"
            "      --json sweep.json --html sweep.html",
            "kanonym explore --config job.toml --k 2,5,10,20",
        ),
    )
    sweep.add_argument("input", nargs="?", help="the table: CSV (plain or gzip) or Parquet")
    sweep.add_argument(
        "--demo", action="store_true", help="sweep the bundled Adult table, every column a QI"
    )
    sweep.add_argument(
        "--config",
        type=Path,
        help="TOML job file (as anonymize's) for the roles, hierarchies and models; its k and "
        "suppression limit are replaced by the sweep's",
    )
    add_role_flags(sweep)
    sweep.add_argument(
        "--k",
        dest="ks",
        nargs="+",
        metavar="K",
        default=[DEFAULT_KS],
        help=f"the k to sweep: numbers and ranges A..B, e.g. 2,5,10 (default {DEFAULT_KS})",
    )
    sweep.add_argument(
        "--suppression",
        nargs="+",
        metavar="SHARE",
        default=[DEFAULT_LIMITS],
        help="the suppression limits to sweep, fractions or percentages "
        f"(default {DEFAULT_LIMITS.replace('%', '%%')})",
    )
    sweep.add_argument(
        "--risk-threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        metavar="T",
        help="record risk above which a released row is at risk "
        f"(default {DEFAULT_THRESHOLD}: classes smaller than five)",
    )
    sweep.add_argument(
        "--metric",
        choices=list(METRICS),
        help=f"utility metric each search minimizes (default {DEFAULT_METRIC})",
    )
    sweep.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="bound on each point's search (a point stopped by it is flagged)",
    )
    add_level_flags(sweep)
    sweep.add_argument(
        "--hierarchy-duplicates",
        choices=DUPLICATES,
        help="an ARX hierarchy file listing a value twice: error (default) or last (as ARX)",
    )
    sweep.add_argument("--delimiter", metavar="D", help=DELIMITER_HELP)
    sweep.add_argument("--seed", type=int, help="seed the picked release's job keeps")
    sweep.add_argument("--json", metavar="FILE", help="write every point as JSON")
    sweep.add_argument(
        "--html", metavar="FILE", help="write a page with the figure and the table (vl-convert)"
    )
    sweep.add_argument("--quiet", action="store_true", help="print nothing on success")
    sweep.set_defaults(unset=None, **dict.fromkeys(_NOT_SWEPT))


def run(args: argparse.Namespace) -> int:
    """Run ``kanonym explore``; returns the exit status."""
    try:
        # Checked here, expanded once the table's rows are known (parse_ks cuts at them).
        ranges, limits = k_ranges(args.ks), parse_limits(args.suppression)
    except argparse.ArgumentTypeError as error:
        raise InputError(str(error)) from None
    if args.demo:
        from kanonym.datasets import ADULT_COLUMNS, adult_hierarchy_path, adult_path

        if args.input is not None or args.config is not None or args.qi:
            raise InputError(
                "--demo sweeps the bundled Adult table: give no INPUT, --config or --qi"
            )
        args.input = str(adult_path())
        args.qi = [f"{column}={adult_hierarchy_path(column)}" for column in ADULT_COLUMNS]
    if args.html is not None:
        from kanonym.figures.render import require_vl_convert

        require_vl_convert()  # before the sweep, not after it
    options, base_dir, where = job_options(args)
    # The sweep writes no release: a job file's release outputs are not its own.
    for key in ("report", "report-html", "report_html", "check-lattice", "check_lattice"):
        options.pop(key, None)
    options.update(k=min(first for first, _ in ranges), output=str(_NO_RELEASE))
    job = job_from_options(
        options,
        base_dir=base_dir,
        where=where,
        job_file=args.config,
        more_outputs={"--json": _path(args.json), "--html": _path(args.html)},
    )
    if isinstance(job.input, str) or job.engine not in (None, "embedded"):
        raise InputError(f"{where}: explore reads a CSV or Parquet file into memory; give one")
    if job.population is not None:
        raise InputError(f"{where}: explore sweeps without a population table; leave it out")
    # Read once, here: its rows bound the k swept before any range is expanded.
    table = load(job.input, delimiter=job.delimiter)
    sweep = explore(
        table,
        job.config,
        ks=parse_ks(args.ks, rows=table.frame.height),
        suppression_limits=limits,
        risk_threshold=args.risk_threshold,
        delimiter=job.delimiter,
    )
    sweep.write(json_path=args.json, html_path=args.html)
    if not args.quiet:
        print(sweep)
        files = [name for name in (args.json, args.html) if name is not None]
        if files:
            print(f"wrote {' and '.join(files)}")
    return 0


def _path(name: str | None) -> Path | None:
    return None if name is None else Path(name)


HANDLERS = {"explore": run}
"""The command's handler, by name, for :func:`kanonym.cli.main.main`."""
