"""The ``kanonym`` command.

Exit status (:data:`EXIT_STATUS`, also in ``kanonym --help``): 0 success; 1
no safe release possible (no transformation satisfies the models within the
limits, or none was found before the time limit), a release failed its final
verification, or the table is not k-anonymous (``check``); 2 bad input, with a
one-line message on stderr naming the file, column, value or option, and
nothing written. Library messages name Python parameters; they are printed
with this command's options (:mod:`kanonym.cli.flags`).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn, get_args

from kanonym._version import __version__
from kanonym.cli import attacks, explore, serve
from kanonym.cli.flags import (
    add_columns,
    add_level_flags,
    add_role_flags,
    as_flags,
    renamed_hint,
)
from kanonym.cli.help import DELIMITER_HELP, examples
from kanonym.cli.jobs import INPUT_HINT, job_options
from kanonym.cli.ledger_commands import LEDGER_HANDLERS, add_ledger_commands
from kanonym.cli.progress import SearchProgressBar
from kanonym.cli.summary import print_warnings, summary, written
from kanonym.config import (
    ReleaseJob,
    job_from_options,
    parse_fraction,
)
from kanonym.engine.choose import is_location
from kanonym.errors import (
    BudgetExceededError,
    ColumnNotFoundError,
    DateFormatError,
    DestinationExistsError,
    InputError,
    KanonymError,
    NestedColumnError,
    NoSolutionError,
    RepeatedLeafError,
    StaleTransformationError,
    UnassignedColumnsError,
    VerificationError,
    echo,
)
from kanonym.hierarchy import DUPLICATES
from kanonym.io.paths import check_destinations
from kanonym.io.read import read_schema
from kanonym.io.table import nested_columns
from kanonym.io.write import COMMITTED
from kanonym.metrics import DEFAULT_METRIC, METRICS
from kanonym.options import EngineName
from kanonym.recoding import RECODINGS
from kanonym.release.pipeline import anonymize, check, run_job
from kanonym.result import Result
from kanonym.search import ALGORITHMS, DEFAULT_ALGORITHM, DEFAULT_POLICY, POLICIES

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2
EXIT_INTERRUPTED = 130
"""Ctrl-C, as shells report a process ended by SIGINT (128 + 2)."""
EXIT_BROKEN_PIPE = 141
"""The reader of stdout went away, as a shell reports a program ended by SIGPIPE."""

EXIT_STATUS = """\
exit status:
  0    success
  1    no safe release: no transformation satisfies the models within the limits
       (or none was found before --time-limit), the release failed its final
       verification, apply's levels no longer suffice, or release: the source's
       privacy budget has too little left; check: the table is not
       k-anonymous; link: an identity matches 1 to k-1 released rows
  2    bad input (a one-line message names the file, column, value or option)
  130  interrupted (Ctrl-C)"""
"""The exit statuses, as ``kanonym --help`` ends (:mod:`kanonym.errors` maps the errors)."""


_REQUIRED = "the following arguments are required: "
_TABLE_SUFFIXES = (".csv", ".tsv", ".txt", ".gz", ".parquet", ".pq")
_NEGATIVE_NUMBER = re.compile(r"-\d+(\.\d*)?|-\.\d+")
_NEEDS_EQUALS = frozenset({"COL=HIERARCHY", "COL=W", "COL=L"})


class _ParseError(Exception):
    """argparse rejected the arguments; raised instead of exiting while a repair is tried."""


class _Parser(argparse.ArgumentParser):
    """argparse, but usage errors are one line and exit 2 like all bad input.

    A list option (``nargs="+"``, such as ``--qi``) takes every value up to the
    next option, so ``--qi a=x b=y patients.csv`` swallowed the input. When a
    positional argument is then missing, the trailing values of a list that
    look like tables (an existing file, or a name ending in .csv, .parquet and
    the like) are taken as the positional arguments instead, provided the
    arguments then parse; with a job file (which may name the input) only a
    value that does not fit the list's grammar is (``COL=HIERARCHY`` without
    ``=``). Otherwise the error says how to give the input.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Raw epilogs: every command's help ends with examples laid out by hand.
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self._raising = False

    def error(self, message: str) -> NoReturn:
        if self._raising:
            raise _ParseError(message)
        self.exit(EXIT_BAD_INPUT, f"kanonym: error: {message}{renamed_hint(message)}\n")

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        tokens = list(sys.argv[1:] if args is None else args)
        if namespace is not None:  # not how kanonym parses: nothing to retry with
            return super().parse_known_args(tokens, namespace)
        try:
            parsed, extras = self._attempt(tokens)
        except _ParseError as failure:
            message = str(failure)
            missing = message.removeprefix(_REQUIRED).split(", ")
            if not message.startswith(_REQUIRED) or all(m.startswith("-") for m in missing):
                self.error(message)
            repaired = self._with_input_moved(tokens, must_misfit=False)
            if repaired is None:
                self.error(f"{message}; {INPUT_HINT}" if self._list_options() else message)
            return repaired
        if getattr(parsed, "input", "") is None and self._optional_input():
            repaired = self._with_input_moved(
                tokens, must_misfit=getattr(parsed, "config", None) is not None
            )
            if repaired is not None:
                return repaired
        return parsed, extras

    def _attempt(self, tokens: list[str]) -> tuple[argparse.Namespace, list[str]]:
        self._raising = True
        try:
            return super().parse_known_args(tokens, None)
        finally:
            self._raising = False

    def _optional_input(self) -> bool:
        return any(a.dest == "input" and a.nargs == "?" for a in self._positionals._group_actions)

    def _list_options(self) -> list[argparse.Action]:
        return [a for a in self._actions if a.option_strings and a.nargs == "+"]

    def _list_action(self, token: str) -> argparse.Action | None:
        """The list option ``token`` names (exactly or by an unambiguous prefix), if any."""
        if "=" in token:
            return None  # --qi=a=b gives the option its one value
        actions = self._option_string_actions
        action = actions.get(token)
        if action is None and token.startswith("--"):
            matches = {actions[o] for o in actions if o.startswith(token)}
            action = matches.pop() if len(matches) == 1 else None
        return action if action is not None and action.nargs == "+" else None

    def _with_input_moved(
        self, tokens: list[str], *, must_misfit: bool
    ) -> tuple[argparse.Namespace, list[str]] | None:
        """The parse with a list's trailing table names taken as positional, if one parses."""
        runs: list[tuple[int, argparse.Action, list[int]]] = []
        current: tuple[int, argparse.Action, list[int]] | None = None
        for index, token in enumerate(tokens):
            if token == "--":
                break
            if token.startswith("-") and len(token) > 1 and not _NEGATIVE_NUMBER.fullmatch(token):
                action = self._list_action(token)
                current = None if action is None else (index, action, [])
                if current is not None:
                    runs.append(current)
            elif current is not None:
                current[2].append(index)
        for _, action, values in reversed(runs):
            tail: list[int] = []
            for index in reversed(values[1:]):  # the list keeps its first value
                token = tokens[index]
                if not _looks_like_table(token) or (must_misfit and _fits(action, token)):
                    break
                tail.insert(0, index)
            # The most values first (audit takes several releases), then fewer (link's second).
            for count in range(len(tail), 0, -1):
                moved = tail[-count:]
                kept = [t for i, t in enumerate(tokens) if i not in moved]
                # After a "--" they are positional wherever they stand, and they keep
                # their order after positional arguments given earlier.
                if "--" not in kept:
                    kept.append("--")
                cut = kept.index("--") + 1
                reordered = [*kept[:cut], *(tokens[i] for i in moved), *kept[cut:]]
                try:
                    parsed, extras = self._attempt(reordered)
                except _ParseError:
                    continue
                if not extras and getattr(parsed, "input", "") is not None:
                    return parsed, extras
        return None


def _looks_like_table(token: str) -> bool:
    """Whether a list value is more likely a table file than a column or a spec."""
    if Path(token).is_file():
        return True
    return "=" not in token and token.lower().endswith(_TABLE_SUFFIXES)


def _fits(action: argparse.Action, token: str) -> bool:
    """Whether ``token`` has the form of a value of the list option ``action``."""
    if action.metavar in _NEEDS_EQUALS:
        return "=" in token
    if action.metavar == "SPEC":
        return token.count(":") >= 2
    return True


def _build_parser() -> _Parser:
    parser = _Parser(
        prog="kanonym",
        description="Verified k-anonymous releases of tables.",
        epilog=EXIT_STATUS,
    )
    parser.add_argument("--version", action="version", version=f"kanonym {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser(
        "anonymize",
        help="generalize and suppress a table to k-anonymity",
        epilog=examples(
            "kanonym anonymize patients.csv --qi birth_date=date sex=suppress zip=mask \\\n"
            "      --identifying name ssn --insensitive diagnosis length_of_stay \\\n"
            "      --k 5 --max-suppression 4% --output release.csv --report release.json",
            "kanonym anonymize --config job.toml --k 10 --output other.csv --no-report-html",
        ),
    )
    run.add_argument(
        "input",
        nargs="?",
        help="the table: CSV (plain or gzip) or Parquet, or postgresql://USER@HOST:PORT/DB"
        "?table=SCHEMA.T (or ?query=SELECT ...; the password from PGPASSWORD or .pgpass); "
        "or the job file's input",
    )
    run.add_argument("--config", type=Path, help="TOML job file whose keys are these flag names")
    run.add_argument(
        "--engine",
        choices=get_args(EngineName),
        help="where the rows are read, transformed and re-checked (default: embedded for "
        "files, postgres for a postgresql:// input)",
    )
    run.add_argument(
        "--population",
        help="the table the input was drawn from (CSV, Parquet or postgresql:// URL), for "
        "delta-presence and k-map with a population: each input row must be one of its rows; "
        "only the input's rows are released",
    )
    add_role_flags(run)
    run.add_argument(
        "--k",
        type=int,
        help="every released row shares its quasi-identifier values with at least K-1 others",
    )
    limit = run.add_mutually_exclusive_group()
    limit.add_argument(
        "--max-suppression",
        type=_share,
        metavar="SHARE",
        help="share of the rows that may be suppressed, as a fraction or a percentage: "
        "0.04 or 4%% (default 0)",
    )
    limit.add_argument(
        "--max-suppressed-rows",
        type=int,
        metavar="N",
        help="number of rows that may be suppressed (Samarati's MaxSup), instead of a share",
    )
    run.add_argument(
        "--algorithm",
        choices=[*ALGORITHMS, *RECODINGS],
        help=f"default {DEFAULT_ALGORITHM}; optimal and incognito minimize --metric, "
        "minimal and samarati choose by --policy; mondrian and mondrian-relaxed recode "
        "cells class by class (local recoding, no suppression)",
    )
    run.add_argument(
        "--numeric",
        nargs="+",
        action="extend",
        metavar="COL",
        help="mondrian: cut these quasi-identifiers as numbers (ranges lo-hi or [lo, hi), "
        "on the column's grid)",
    )
    run.add_argument(
        "--categorical",
        nargs="+",
        action="extend",
        metavar="COL",
        help="mondrian: cut these quasi-identifiers along their hierarchies",
    )
    run.add_argument(
        "--technique",
        metavar="CLASS",
        help="Samarati's technique class: AG_TS (default; AG_CS for mu-argus), AG_ or AG_AS, "
        "AG_CS (blank cells instead of removing rows), _TS, _AS, _CS",
    )
    run.add_argument(
        "--metric",
        choices=list(METRICS),
        help=f"utility metric to minimize (optimal, incognito; default {DEFAULT_METRIC})",
    )
    run.add_argument(
        "--policy",
        choices=sorted(POLICIES),
        help=f"preference policy (minimal, samarati; default {DEFAULT_POLICY})",
    )
    run.add_argument(
        "--time-limit",
        type=float,
        metavar="SECONDS",
        help="return the best node found by then, flagged as not proven optimal",
    )
    run.add_argument("--delimiter", metavar="D", help=DELIMITER_HELP)
    run.add_argument("--seed", type=int, help="seed of the row shuffle (default: from the OS)")
    run.add_argument(
        "--output",
        help="release file (.csv or .parquet), or a new table postgresql://...?table=SCHEMA.R "
        "in the input's database (committed only after the re-check)",
    )
    run.add_argument(
        "--replace",
        action="store_true",
        default=None,
        help="let a table --output replace an existing table (files are always replaced)",
    )
    report = run.add_mutually_exclusive_group()
    report.add_argument("--report", help="report JSON file")
    report.add_argument(
        "--no-report",
        action="store_true",
        help="write no JSON report, even if the job file names one",
    )
    page = run.add_mutually_exclusive_group()
    page.add_argument(
        "--report-html",
        metavar="OUT.html",
        help="self-contained HTML report with figures (needs the report extra: vl-convert)",
    )
    page.add_argument(
        "--no-report-html",
        action="store_true",
        help="write no HTML report, even if the job file names one",
    )
    run.add_argument(
        "--check-lattice",
        action="store_true",
        default=None,
        help="check, for the HTML report's lattice figure, the nodes the search skipped "
        "(minimal nodes and the optimum shown; slow on a large table)",
    )
    run.add_argument(
        "--unset",
        nargs="+",
        action="extend",
        metavar="KEY",
        help="ignore these keys of the job file, e.g. --unset seed time-limit",
    )
    add_level_flags(run)
    run.add_argument(
        "--hierarchy-duplicates",
        choices=DUPLICATES,
        help=HIERARCHY_DUPLICATES_HELP,
    )
    run.add_argument(
        "--quiet", action="store_true", help="no progress bar, nothing printed on success"
    )

    check = commands.add_parser(
        "check",
        help="is a table k-anonymous on given columns; l, t, beta, delta of others",
        epilog=examples(
            "kanonym check release.csv --columns birth_date sex zip --k 5",
            "kanonym check release.csv --columns birth_date sex zip --k 5 --sensitive diagnosis "
            "--json",
        ),
    )
    check.add_argument("input", help="CSV or Parquet file, raw or released")
    add_columns(check)
    check.add_argument(
        "--k",
        type=int,
        required=True,
        help="smallest class size required; exit status 1 when a class is smaller",
    )
    check.add_argument(
        "--sensitive",
        nargs="+",
        action="extend",
        metavar="COL",
        default=[],
        help="measure l-diversity, t-closeness, beta-likeness, delta-disclosure and (alpha,k)",
    )
    check.add_argument("--delimiter", metavar="D", help=DELIMITER_HELP)
    check.add_argument("--json", action="store_true", help="print one JSON object")

    reapply = commands.add_parser(
        "apply",
        help="release a new batch exactly as a report's release (same levels)",
        epilog=examples(
            "kanonym apply march.csv --from-report release.json --output march-release.csv",
            "kanonym apply march.csv --from-report release.json --output march-release.csv \\\n"
            "      --report march-release.json",
        ),
    )
    reapply.add_argument(
        "input",
        help="CSV or Parquet file with the report's columns, or a postgresql:// table or query",
    )
    reapply.add_argument(
        "--engine",
        choices=get_args(EngineName),
        help="where the rows are read, transformed and re-checked (default: by the input's form)",
    )
    reapply.add_argument(
        "--replace",
        action="store_true",
        help="let a table --output replace an existing table (files are always replaced)",
    )
    reapply.add_argument(
        "--from-report",
        required=True,
        metavar="REPORT.json",
        help="report JSON of the release whose generalization to apply",
    )
    reapply.add_argument(
        "--output",
        required=True,
        help="release file (.csv or .parquet), or a new table postgresql://...?table=SCHEMA.R "
        "in the input's database",
    )
    reapply.add_argument("--delimiter", metavar="D", help=DELIMITER_HELP)
    reapply.add_argument("--seed", type=int, help="seed of the row shuffle (default: from the OS)")
    reapply.add_argument("--report", help="report JSON file for this release")
    reapply.add_argument(
        "--report-html",
        metavar="REPORT.html",
        help="HTML report of this release (needs the report extra: vl-convert)",
    )
    reapply.add_argument(
        "--hierarchy-duplicates",
        choices=DUPLICATES,
        help=HIERARCHY_DUPLICATES_HELP + " (default: as the report's release read them)",
    )
    reapply.add_argument("--quiet", action="store_true", help="print nothing on success")

    demo = commands.add_parser(
        "demo",
        help="anonymize the bundled Adult table (k=5, 4%%)",
        epilog=examples("kanonym demo", "kanonym demo --output-dir /tmp/adult --seed 1"),
    )
    demo.add_argument(
        "--output-dir",
        type=Path,
        default=Path("demo-output"),
        help="folder for the release and its reports, created if missing (default demo-output)",
    )
    demo.add_argument(
        "--seed",
        type=int,
        help="seed of the row shuffle, for the same release twice (default: from the OS)",
    )
    attacks.add_commands(commands)
    explore.add_command(commands)
    serve.add_command(commands)
    add_ledger_commands(commands)
    return parser


HIERARCHY_DUPLICATES_HELP = (
    "an ARX hierarchy file listing a value on two lines with different generalizations: "
    "error (default) refuses it, last keeps the last line as ARX does; the reports list them"
)


def _share(text: str) -> float:
    """``--max-suppression``: a fraction (0.04) or a percentage (4%)."""
    try:
        return parse_fraction(text)
    except InputError:
        raise argparse.ArgumentTypeError(
            f"{echo(text)} is neither a fraction in [0, 1] (0.04) nor a percentage (4%)"
        ) from None


def _job(args: argparse.Namespace) -> ReleaseJob:
    options, base_dir, where = job_options(args)
    return job_from_options(options, base_dir=base_dir, where=where, job_file=args.config)


def _anonymize(args: argparse.Namespace) -> int:
    job = _job(args)
    if job.report_html is not None:
        _prepare_figures()  # before the search, not after it
    with SearchProgressBar(enabled=not args.quiet) as bar:
        result = run_job(job, on_progress=bar.update)
    try:
        print_warnings(result)
        if not args.quiet:
            print(f"{summary(result)}; wrote {written(job.output, job.report, job.report_html)}")
    finally:
        result.close()
    return EXIT_OK


def _check(args: argparse.Namespace) -> int:
    _require_flat(args.input, args.sensitive)
    summary = check(
        args.input, args.columns, k=args.k, sensitive=args.sensitive, delimiter=args.delimiter
    )
    if args.json:
        print(json.dumps(summary.as_dict()))
    else:
        verdict = "is" if summary.k_anonymous else "is NOT"
        print(
            f"{args.input} {verdict} {args.k}-anonymous on {', '.join(args.columns)}: "
            f"smallest class {summary.smallest_class}, {summary.classes} classes, "
            f"{summary.rows_below_k} of {summary.rows} rows in classes smaller than {args.k}"
        )
        for measures in summary.sensitive.values():
            print(f"  {measures.text()}")
    # The sensitive measures are reported, not judged: no threshold was given.
    return EXIT_OK if summary.k_anonymous else EXIT_FAILED


def _require_flat(source: str, columns: Sequence[str]) -> None:
    """Refuse a Parquet input whose named columns hold lists or structs, from its footer."""
    schema = read_schema(source)
    nested = {} if schema is None else nested_columns(schema)
    for column in columns:
        if column in nested:
            raise NestedColumnError(source, column, nested[column])


def _apply(args: argparse.Namespace) -> int:
    # A table output (or input) lives where its engine is: checked by the engine itself.
    check_destinations(
        {
            "--output": None if is_location(args.output) else args.output,
            "--report": args.report,
            "--report-html": args.report_html,
        },
        {
            "input table": None if is_location(args.input) else args.input,
            "report": args.from_report,
        },
    )
    if args.report_html is not None:
        _prepare_figures()  # before any work, not after it
    try:
        from kanonym.release.apply import apply_transformation  # only this command needs it

        result = apply_transformation(
            args.input,
            args.from_report,
            seed=args.seed,
            delimiter=args.delimiter,
            hierarchy_duplicates=args.hierarchy_duplicates,
            engine=args.engine,
        )
    except StaleTransformationError as error:
        # Not bad input: the batch is valid, the recorded levels just no longer suffice.
        message = " ".join(str(error).split())
        print(f"kanonym: apply: {message}; nothing written", file=sys.stderr)
        return EXIT_FAILED
    with result:
        return _applied(args, result)


def _applied(args: argparse.Namespace, result: Result) -> int:
    """Write an applied release and say what was written."""
    result.write(
        args.output, report=args.report, report_html=args.report_html, replace=args.replace
    )
    print_warnings(result)
    if not args.quiet:
        applied = result.transformation or {}
        levels = ", ".join(f"{name}={level}" for name, level in applied.items())
        # The metric the report's search minimized, as anonymize printed it.
        metric = result.config.metric or DEFAULT_METRIC
        print(
            f"applied [{levels}] from {args.from_report}: released {result.released_rows} of "
            f"{result.input_rows} rows ({result.suppressed_rows} suppressed, limit "
            f"{result.max_suppressed_rows}); {metric} {result.metrics[metric]:.6g}, "
            f"{result.metrics['equivalence_classes']} classes; "
            f"wrote {written(args.output, args.report, args.report_html)}"
        )
    return EXIT_OK


def _demo(args: argparse.Namespace) -> int:
    from kanonym.datasets import ADULT_COLUMNS, adult_hierarchies, adult_path

    started = time.perf_counter()
    out_dir: Path = args.output_dir
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"{out_dir}: exists and is not a directory")
    out_dir.mkdir(parents=True, exist_ok=True)
    output, report = out_dir / "adult-k5.csv", out_dir / "adult-k5.report.json"
    page: Path | None = out_dir / "adult-k5.report.html"
    try:
        _prepare_figures()
    except InputError as missing:
        # The demo still runs on a core install; it just cannot draw the page.
        print(f"no HTML report: {missing}")
        page = None
    print(f"kanonym {__version__} demo: UCI Adult ({adult_path().name}), k=5, 4% suppression,")
    print(f"quasi-identifiers: {', '.join(ADULT_COLUMNS)}")
    result = anonymize(
        adult_path(),
        quasi_identifiers=adult_hierarchies(),
        k=5,
        max_suppression=0.04,
        seed=args.seed,
    )
    result.write(output, report=report, report_html=page)
    config = result.config
    assert config.metric is not None
    print(
        f"{config.algorithm} search minimizing {config.metric}: "
        f"{result.nodes_checked} of the lattice's nodes checked; chosen generalization:"
    )
    for name, level in (result.transformation or {}).items():
        height = result.hierarchies[name].height
        print(f"  {name:<15} level {level} of {height}")
    for key, value in result.metrics.items():
        if key != "precision_by_attribute":
            print(
                f"  {key:<20} {value:.6g}" if isinstance(value, float) else f"  {key:<20} {value}"
            )
    print(f"released {result.released_rows} of {result.input_rows} rows (seed {result.seed})")
    written = f"{output}, {report} and {page}" if page else f"{output} and {report}"
    print(f"wrote {written} in {time.perf_counter() - started:.2f} s")
    return EXIT_OK


def unassigned_message(error: UnassignedColumnsError) -> str:
    """The command line's wording of a table with columns named in no role."""
    identifying = [c for c in error.columns if c in error.likely_identifiers]
    others = [c for c in error.columns if c not in error.likely_identifiers]
    # A column unique on every row is a name or a number: suggest removing it, never
    # releasing it unchanged.
    example = " ".join(
        [
            *([f"--identifying {' '.join(identifying)}"] if identifying else []),
            *([f"--insensitive {' '.join(others)}"] if others else []),
        ]
    )
    flagged = (
        f" ({', '.join(repr(c) for c in identifying)} unique on (nearly) every row: likely "
        "direct identifiers)"
        if identifying
        else ""
    )
    return (
        f"{error.source}: column(s) {', '.join(repr(c) for c in error.columns)} have no "
        f"role{flagged}, and kanonym releases no column nobody named: give each one with "
        "--qi, --identifying (removed), --sensitive or --insensitive (released unchanged), "
        f"e.g. {example}, or pass --keep-unlisted to release unlisted columns unchanged "
        "(the reports list them); nothing written"
    )


def nested_message(error: NestedColumnError, command: str) -> str:
    """The command line's wording of a column holding lists or structs."""
    if command in ("anonymize", "release"):
        fix = f"flatten it or drop it with --identifying {error.column}"
    else:
        fix = "flatten it, or leave it out of the columns named"
    return (
        f"{error.source}: column '{error.column}' holds {error.kind}; kanonym releases and "
        f"measures flat values: {fix}"
    )


def flag_message(error: KanonymError, args: argparse.Namespace) -> str | None:
    """The command line's wording of a library error that names a parameter, or None.

    The library names its parameters (``delimiter ','``); here the fix is
    written as the option that makes it (``--delimiter ','``).
    """
    if isinstance(error, ColumnNotFoundError):
        where = f"{error.source}: column '{error.column}' not found"
        if error.delimiter is not None:
            shown = "'\\t'" if error.delimiter == "\t" else repr(error.delimiter)
            return (
                f"{where}; the header was read as one column, but the file looks "
                f"{error.delimiter!r}-separated: pass --delimiter {shown} (or leave --delimiter "
                "out to have it sniffed)"
            )
        columns = getattr(args, "columns", None) or []
        if "=" in error.column and error.column in columns and args.command in _COLUMN_COMMANDS:
            names = " ".join(item.partition("=")[0] for item in columns)
            return (
                f"{where}; {args.command} takes column names after --columns, not COL=HIERARCHY "
                f"(it measures the values as they are in the file): write --columns {names}"
            )
    if isinstance(error, DestinationExistsError):
        return f"{error.output}: {error.what} exists; choose another or give --replace"
    if isinstance(error, RepeatedLeafError):
        return (
            f"{error.problem}; keep one line per value, or give --hierarchy-duplicates last "
            '(job file: hierarchy-duplicates = "last") to keep each value\'s last line, as ARX '
            "does"
        )
    if isinstance(error, DateFormatError) and error.suggested:
        flag = _flag_of(error.column, args)
        if flag is not None:
            options = " or ".join(f"{flag} {error.column}={spec}" for spec in error.suggested)
            return f"{error}: give {options}"
    return None


_COLUMN_COMMANDS = frozenset({"check", "risk", "disclosure"})
"""Commands whose --columns takes column names, where COL=HIERARCHY may be written by mistake."""


def _flag_of(column: str, args: argparse.Namespace) -> str | None:
    """The list option that gave ``column`` its hierarchy on this command line, if one did."""
    for flag in ("qi", "sensitive"):
        if any(item.startswith(f"{column}=") for item in getattr(args, flag, None) or []):
            return f"--{flag}"
    return None


def _prepare_figures() -> None:
    """Refuse an HTML report without vl-convert, else start the processes that draw its
    figures now, so that their start-up overlaps the search instead of the report."""
    from kanonym.figures.render import require_vl_convert, start_workers

    require_vl_convert()
    start_workers()


MAX_MESSAGE = 2000
"""Characters of an error message printed at most (:func:`bounded`)."""


def bounded(message: str) -> str:
    """``message`` cut in its middle beyond :data:`MAX_MESSAGE` characters.

    Messages show values through :func:`kanonym.errors.echo`, which cuts each
    one; this is the net under any that does not. The start names the file
    and column, the end says how to fix it, so both are kept.

    Example:
        >>> cut = bounded("f.csv: value '" + "v" * 5000 + "' is bad; fix it")
        >>> cut[:18], cut[-16:], len(cut) < MAX_MESSAGE + 50
        ("f.csv: value 'vvvv", "' is bad; fix it", True)
    """
    if len(message) <= MAX_MESSAGE:
        return message
    head, tail = MAX_MESSAGE * 2 // 3, MAX_MESSAGE // 3
    cut = len(message) - head - tail
    return f"{message[:head]} ...({cut:,} characters cut)... {message[-tail:]}"


def run() -> NoReturn:
    """The ``kanonym`` program: :func:`main`, then exit at once.

    Every output is written and closed (atomically renamed) before
    :func:`main` returns, so the interpreter's teardown, which frees NumPy,
    Polars and numba objects one by one, has nothing left to do; it took 0.2
    to 0.3 s of a one-second run, so the process ends without it.
    """
    status = main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    try:
        args = _build_parser().parse_args(argv)
    except SystemExit as stop:  # usage errors, --help and --version end here
        return stop.code if isinstance(stop.code, int) else EXIT_BAD_INPUT
    COMMITTED.clear()  # what this run writes (main may run several times in one process)
    handlers = {"anonymize": _anonymize, "check": _check, "apply": _apply, "demo": _demo}
    handlers.update(attacks.HANDLERS)
    handlers.update(explore.HANDLERS)
    handlers.update(LEDGER_HANDLERS)
    handlers.update(serve.HANDLERS)
    try:
        return handlers[args.command](args)
    except VerificationError as error:
        message = as_flags(str(error), args.command)
        print(f"kanonym: verification failed, nothing written: {bounded(message)}", file=sys.stderr)
        return EXIT_FAILED
    except NoSolutionError as error:
        # Valid input that no release satisfies: not bad input, but nothing to publish.
        message = " ".join(as_flags(str(error), args.command).split())
        print(f"kanonym: no release: {bounded(message)}; nothing written", file=sys.stderr)
        return EXIT_FAILED
    except BudgetExceededError as error:
        # Valid input, refused by the ledger's budget: like a release no model admits.
        message = " ".join(as_flags(str(error), args.command).split())
        print(f"kanonym: privacy budget exceeded: {bounded(message)}", file=sys.stderr)
        return EXIT_FAILED
    except UnassignedColumnsError as error:
        print(f"kanonym: error: {bounded(unassigned_message(error))}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except NestedColumnError as error:
        print(f"kanonym: error: {nested_message(error, args.command)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KanonymError as error:
        worded = flag_message(error, args) or as_flags(str(error), args.command)
        message = " ".join(worded.split())
        print(f"kanonym: error: {bounded(message)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except MemoryError:
        # Polars and NumPy raise it when an allocation fails; the traceback helped no one.
        print(
            "kanonym: error: out of memory: the table and its encoding did not fit; try fewer "
            "rows or fewer quasi-identifiers (or a machine with more memory); nothing written",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        # Ctrl-C: the traceback ran through numba frames and said nothing useful. A group
        # of outputs is put in place whole with Ctrl-C held back, so either it was written
        # or nothing was (kanonym.io.write).
        written = ", ".join(str(path) for path in COMMITTED)
        outcome = f"wrote {written} before it" if written else "nothing written"
        print(f"kanonym: interrupted; {outcome}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # The reader of stdout went away (kanonym ... | head): stop quietly, like a
        # program killed by SIGPIPE, instead of a traceback on the closed pipe.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE
