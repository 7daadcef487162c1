"""``kanonym release`` and ``kanonym audit``: the release ledger on the command line.

``release`` takes every option of ``anonymize`` (flags or a TOML job file) plus
the ledger's: ``--ledger FILE`` (or ``ledger = "..."`` in the job file),
``--key COL``, ``--based-on ID`` and ``--replay ID`` (keys ``key``, ``based-on``,
``replay``). ``audit`` links releases (files, or ledger release numbers with
``--ledger``) and exits 1 when the linked table is not k-anonymous.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kanonym import release
from kanonym.config import job_from_options
from kanonym.errors import InputError

if TYPE_CHECKING:
    from kanonym.release.audit import AuditResult
    from kanonym.release.ledger import LedgerRelease

_LEDGER_KEYS = ("ledger", "key", "based-on", "replay")
"""Job-file keys of ``release`` beyond those of ``anonymize``."""


def add_ledger_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``release`` (all of ``anonymize``'s options and the ledger's) and ``audit``."""
    release = commands.add_parser(
        "release",
        parents=[commands.choices["anonymize"]],
        conflict_handler="resolve",
        help="anonymize, then record the release in a ledger (seed, complementary and "
        "temporal policies)",
    )
    release.add_argument("--ledger", metavar="FILE", help="ledger file (SQLite), created if absent")
    release.add_argument(
        "--key",
        metavar="COL",
        help="column identifying records: never released, recorded (hashed) per record",
    )
    release.add_argument(
        "--based-on",
        type=int,
        metavar="ID",
        help="derive from ledger release ID: publish no record more specifically than it did",
    )
    release.add_argument(
        "--replay",
        type=int,
        metavar="ID",
        help="deliberately re-run ledger release ID with its seed (must reproduce it)",
    )

    linking = commands.add_parser(
        "audit", help="link releases on their shared columns and check k on the linked table"
    )
    linking.add_argument(
        "releases",
        nargs="+",
        metavar="RELEASE",
        help="release file (CSV or Parquet), or with --ledger a release number",
    )
    linking.add_argument(
        "--qi",
        nargs="+",
        action="extend",
        metavar="COL=HIERARCHY",
        required=True,
        help="quasi-identifier and its hierarchy: an ARX CSV file, mask or suppress",
    )
    linking.add_argument("--k", type=int, required=True)
    linking.add_argument("--ledger", metavar="FILE", help="ledger whose release numbers to read")
    linking.add_argument("--delimiter", metavar="D", help="CSV delimiter (default: sniffed)")
    linking.add_argument("--json", action="store_true", help="print one JSON object")


def _text(value: object, key: str, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(f"{where}: '{key}' must be a string, got {value!r}")
    return value


def _number(value: object, key: str, where: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"{where}: '{key}' must be a release number, got {value!r}")
    return value


def _release(args: argparse.Namespace) -> int:
    # main imports this module to register the commands, so its helpers load late.
    from kanonym.cli.main import _summary, job_options, print_warnings
    from kanonym.cli.progress import SearchProgressBar
    from kanonym.report.html import require_matplotlib

    options, base_dir, where = job_options(args)
    from_file: dict[str, object] = {}
    for name in _LEDGER_KEYS:
        for spelling in (name, name.replace("-", "_")):
            if spelling in options:
                from_file[name] = options.pop(spelling)
    ledger_file = _text(from_file.get("ledger"), "ledger", where)
    if args.ledger is not None:
        ledger_path = Path(args.ledger)
    elif ledger_file is not None:
        ledger_path = base_dir / ledger_file
    else:
        raise InputError(f"{where}: '--ledger FILE' is required")
    key = args.key if args.key is not None else _text(from_file.get("key"), "key", where)
    based_on = args.based_on
    if based_on is None:
        based_on = _number(from_file.get("based-on"), "based-on", where)
    replay = args.replay
    if replay is None:
        replay = _number(from_file.get("replay"), "replay", where)
    job = job_from_options(
        options,
        base_dir=base_dir,
        where=where,
        job_file=args.config,
        more_outputs={"ledger": ledger_path},
    )
    if job.report_html is not None:
        require_matplotlib()  # before the search, not after it
    ledger = release.Ledger(ledger_path)
    with SearchProgressBar(enabled=not args.quiet) as bar:
        made = ledger.release(
            job.input,
            job.config,
            output=job.output,
            report=job.report,
            report_html=job.report_html,
            key=key,
            based_on=based_on,
            replay=replay,
            delimiter=job.delimiter,
            on_progress=bar.update,
        )
    print_warnings(made.result)
    if not args.quiet:
        print(f"{_summary(made.result)}; wrote {job.output}; {_recorded(made, ledger_path)}")
    return 0


def _recorded(made: LedgerRelease, path: Path) -> str:
    entry = made.entry
    notes = [f"recorded as release {entry.id} in {path} (seed {entry.seed})"]
    if entry.complementary:
        notes.append(
            f"quasi-identifier enlarged with {', '.join(entry.complementary)}, published by "
            "earlier releases of this source (complementary release)"
        )
    if entry.based_on is not None:
        notes.append(f"based on release {entry.based_on}")
    if entry.replay_of is not None:
        notes.append(f"re-run of release {entry.replay_of}, reproduced exactly")
    return "; ".join(notes)


def _audit(args: argparse.Namespace) -> int:
    hierarchies: dict[str, str] = {}
    for item in args.qi:
        column, sep, spec = item.partition("=")
        if not sep or not column or not spec:
            raise InputError(f"kanonym audit: qi entry '{item}' is not of the form COL=HIERARCHY")
        if column in hierarchies:
            raise InputError(f"kanonym audit: quasi-identifier '{column}' is given twice")
        hierarchies[column] = spec
    ledger = None if args.ledger is None else release.Ledger(args.ledger, create=False)
    releases: list[str | Path] = [
        ledger.entry(int(name)).output if ledger is not None and name.isdigit() else Path(name)
        for name in args.releases
    ]
    result = release.audit(
        releases, hierarchies, args.k, delimiter=args.delimiter, base_dir=Path.cwd()
    )
    print(json.dumps(result.as_dict()) if args.json else _audit_text(result))
    return 0 if result.k_anonymous else 1


def _audit_text(result: AuditResult) -> str:
    from kanonym.release.audit import CLASSES  # loaded by the audit already

    verdict = "is" if result.k_anonymous else "is NOT"
    lines = [
        f"linked {', '.join(result.releases)} on {', '.join(result.join_columns)}: "
        f"{result.linked_rows} linked rows in {result.classes.height} classes "
        f"(smallest {result.smallest_class}); the linked table {verdict} {result.k}-anonymous: "
        f"{result.classes_below_k} classes ({result.records_below_k} records) below k"
    ]
    for row in result.below_k.iter_rows(named=True):
        shown = ", ".join(f"{q}={row[q]}" for q in result.quasi_identifiers)
        lines.append(f"  below k, shown generalized: [{shown}] ({row[CLASSES]} class(es))")
    return "\n".join(lines)


LEDGER_HANDLERS: Mapping[str, Callable[[argparse.Namespace], int]] = {
    "release": _release,
    "audit": _audit,
}
"""Command name -> handler, merged into the CLI's handlers."""
