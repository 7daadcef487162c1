"""``kanonym release`` and ``kanonym audit``: the release ledger on the command line.

``release`` takes every option of ``anonymize`` (flags or a TOML job file) plus
the ledger's: ``--ledger LEDGER`` (an SQLite file or a ``postgresql://`` URL of a
schema; ``ledger = "..."`` in the job file),
``--key COL``, ``--based-on ID`` and ``--replay ID`` (keys ``key``, ``based-on``,
``replay``). ``audit`` links releases (files, or ledger release numbers with
``--ledger``) and exits 1 when the linked table is not k-anonymous.
``ledger list`` and ``ledger show ID`` print what a ledger recorded; ``ledger
budget`` lists the sources' differential-privacy budgets, or sets one
(``--epsilon E --delta D``: parameters ``epsilon`` and ``delta`` of
:meth:`kanonym.Ledger.set_budget`).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kanonym import release
from kanonym.cli.jobs import job_options
from kanonym.cli.progress import SearchProgressBar
from kanonym.cli.summary import print_warnings, summary, written
from kanonym.config import job_from_options
from kanonym.engine.postgres import is_postgres_url
from kanonym.errors import InputError, LedgerPendingError

if TYPE_CHECKING:
    from kanonym.attacks.complementary import AuditResult
    from kanonym.ledger import BudgetStatus, LedgerEntry, LedgerRelease
    from kanonym.release.recorded import Ledger

_LEDGER_KEYS = ("ledger", "key", "based-on", "replay")
"""Job-file keys of ``release`` beyond those of ``anonymize``."""


_RELEASE_EXAMPLES = """Examples:
  kanonym release patients.csv --ledger releases.sqlite --key patient_id \\
      --qi birth_date=date zip=mask sex=suppress --identifying name ssn \\
      --insensitive diagnosis --k 5 --output release1.csv --report release1.json
  kanonym release patients-2025.csv --ledger releases.sqlite --based-on 1 \\
      --qi birth_date=date zip=mask sex=suppress --identifying name ssn \\
      --insensitive diagnosis --k 5 --output release2.csv
  kanonym release "postgresql://ann@db/health?table=public.visits" \\
      --ledger "postgresql://ann@db/health?schema=kanonym_ledger" --key visit_id \\
      --qi age=interval:5,10,20 zip=mask --insensitive diagnosis --k 5 \\
      --output "postgresql://ann@db/health?table=release.visits_k5"
"""

_AUDIT_EXAMPLES = """Examples:
  kanonym audit --ledger releases.sqlite 1 3
  kanonym audit gt1.csv gt3.csv --qi zip=mask birth_date=birth.csv --k 2 --json
"""

_LEDGER_EXAMPLES = """Examples:
  kanonym ledger list releases.sqlite
  kanonym ledger show releases.sqlite 2 --json
  kanonym ledger budget releases.sqlite patients.csv --epsilon 1 --delta 1e-6
  kanonym ledger budget releases.sqlite
"""


def add_ledger_commands(commands: argparse._SubParsersAction[Any]) -> None:
    """Add ``release`` (all of ``anonymize``'s options and the ledger's), ``audit``, ``ledger``."""
    release = commands.add_parser(
        "release",
        parents=[commands.choices["anonymize"]],
        conflict_handler="resolve",
        help="anonymize, then record the release in a ledger (seed, complementary and "
        "temporal policies)",
        description="Anonymize like 'kanonym anonymize', under the ledger's policies against "
        "unsorted matching, complementary and temporal attacks (Sweeney 2002, section 4), "
        "then record the release. Before recording, the release is linked with every "
        "earlier release of its source as 'kanonym audit' would; one that links below k is "
        "refused (exit 1, nothing written).",
        epilog=_RELEASE_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    release.add_argument(
        "--ledger",
        metavar="LEDGER",
        help="ledger: an SQLite file, or postgresql://USER@HOST:PORT/DB?schema=NAME (a schema "
        "shared by every officer releasing from that server); created if absent",
    )
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
        "audit",
        help="link releases on their shared columns and check k on the linked table",
        description="Link releases as an attacker would (Sweeney 2002, section 4.2) and check "
        "k on the linked table; exit 1 if a class is below k. With --ledger and release "
        "numbers, the quasi-identifiers, hierarchies and k are those the ledger recorded.",
        epilog=_AUDIT_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
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
        help="quasi-identifier and its hierarchy: an ARX CSV file, mask or suppress "
        "(required for files; with --ledger, default: those the releases were made with)",
    )
    linking.add_argument(
        "--k",
        type=int,
        help="the k the linked table must reach (required for files; with --ledger, default: "
        "the largest k of the releases)",
    )
    linking.add_argument(
        "--ledger",
        metavar="LEDGER",
        help="ledger (SQLite file or postgresql:// URL) whose release numbers to read",
    )
    linking.add_argument("--delimiter", metavar="D", help="CSV delimiter (default: sniffed)")
    linking.add_argument("--json", action="store_true", help="print one JSON object")

    ledger = commands.add_parser(
        "ledger",
        help="list the releases a ledger recorded, show one, or list and set privacy budgets",
        epilog=_LEDGER_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = ledger.add_subparsers(
        dest="ledger_action",
        required=True,
        help="list: every release; show: one release; budget: the sources' privacy budgets",
    )
    listing = actions.add_parser(
        "list",
        help="one line per recorded release",
        epilog=_LEDGER_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    listing.add_argument(
        "ledger_file", metavar="LEDGER", help="ledger: SQLite file or postgresql:// URL"
    )
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    showing = actions.add_parser(
        "show",
        help="everything recorded of one release",
        epilog=_LEDGER_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    showing.add_argument(
        "ledger_file", metavar="LEDGER", help="ledger: SQLite file or postgresql:// URL"
    )
    showing.add_argument("release_id", type=int, metavar="ID", help="release number")
    showing.add_argument("--json", action="store_true", help="print one JSON object")
    budgeting = actions.add_parser(
        "budget",
        help="list the sources' differential-privacy budgets, or set one",
        description="Without SOURCE: every source with a privacy budget, what its releases "
        "spent (epsilons and deltas add up: sequential composition), what is left, and which "
        "releases spent it. With SOURCE alone: that source. With SOURCE, --epsilon and "
        "--delta: set its budget, or change it (never below what was spent: exit 2); the "
        "ledger is created if absent. A differentially private release of a source with no "
        "budget is refused (exit 2), and one whose charge exceeds what is left (exit 1).",
        epilog=_LEDGER_EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    budgeting.add_argument(
        "ledger_file", metavar="LEDGER", help="ledger: SQLite file or postgresql:// URL"
    )
    budgeting.add_argument(
        "source",
        nargs="?",
        metavar="SOURCE",
        help="the source as 'kanonym release' names it: a file (its absolute path is used) or "
        "a postgresql://...?table=SCHEMA.T URL",
    )
    budgeting.add_argument(
        "--epsilon", type=float, metavar="E", help="the budget's epsilon (finite, > 0)"
    )
    budgeting.add_argument("--delta", type=float, metavar="D", help="the budget's delta, in [0, 1)")
    budgeting.add_argument(
        "--json", action="store_true", help="print one JSON object (an array when listing)"
    )


def _text(value: object, key: str, where: str) -> str | None:
    if value is not None and not isinstance(value, str):
        raise InputError(f"{where}: '{key}' must be a string, got {value!r}")
    return value


def _number(value: object, key: str, where: str) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
        raise InputError(f"{where}: '{key}' must be a release number, got {value!r}")
    return value


def _release(args: argparse.Namespace) -> int:
    from kanonym.figures.render import require_vl_convert, start_workers

    options, base_dir, where = job_options(args)
    from_file: dict[str, object] = {}
    for name in _LEDGER_KEYS:
        for spelling in (name, name.replace("-", "_")):
            if spelling in options:
                from_file[name] = options.pop(spelling)
    ledger_file = _text(from_file.get("ledger"), "ledger", where)
    ledger_path: str | Path
    if args.ledger is not None:
        ledger_path = args.ledger if is_postgres_url(args.ledger) else Path(args.ledger)
    elif ledger_file is not None:
        # A URL is kept as it is; a file is taken from the job file's folder.
        ledger_path = ledger_file if is_postgres_url(ledger_file) else base_dir / ledger_file
    else:
        raise InputError(f"{where}: '--ledger LEDGER' is required")
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
        more_outputs={"ledger": ledger_path if isinstance(ledger_path, Path) else None},
    )
    if job.check_lattice:
        # The ledger writes its page in the transaction that records it: no extra checks there.
        raise InputError(
            f"{where}: 'check-lattice' is for kanonym anonymize; release draws its lattice "
            "as the search checked it: leave it out"
        )
    if job.report_html is not None:
        require_vl_convert()  # before the search, not after it
        start_workers()  # the figures' renderers start while the search runs
    ledger = release.Ledger(ledger_path)
    with SearchProgressBar(enabled=not args.quiet) as bar:
        made = _release_recorded(
            ledger,
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
            engine=job.engine,
            replace=job.replace,
        )
    if made is None:
        return 1
    print_warnings(made.result)
    if not args.quiet:
        files = written(job.output, job.report, job.report_html)
        print(f"{summary(made.result)}; wrote {files}; {_recorded(made, ledger.name)}")
    return 0


def _release_recorded(ledger: Ledger, *args: Any, **kwargs: Any) -> LedgerRelease | None:
    """:meth:`Ledger.release`; None (after saying why) if recorded but not all written."""
    try:
        return ledger.release(*args, **kwargs)
    except LedgerPendingError as error:
        # Not bad input and not a failed check: the release exists but is incomplete.
        print(f"kanonym: release: {error}", file=sys.stderr)
        return None


def _recorded(made: LedgerRelease, ledger: str) -> str:
    entry = made.entry
    notes = [f"recorded as release {entry.id} in {ledger} (seed {entry.seed})"]
    if entry.complementary:
        notes.append(
            f"quasi-identifier enlarged with {', '.join(entry.complementary)}, published by "
            "earlier releases of this source (complementary release)"
        )
    if entry.based_on is not None:
        notes.append(f"based on release {entry.based_on}")
    if entry.replay_of is not None:
        notes.append(f"re-run of release {entry.replay_of}, reproduced exactly")
    if entry.charge is not None:
        notes.append(
            f"charged epsilon {entry.charge.epsilon:g}, delta {entry.charge.delta:g} to the "
            "privacy budget of its source"
        )
    return "; ".join(notes)


def _audit(args: argparse.Namespace) -> int:
    ledger = None if args.ledger is None else release.Ledger(args.ledger, create=False)
    if ledger is not None and args.qi is None:
        # Everything the audit needs was recorded with the releases.
        numbers = []
        for name in args.releases:
            if not name.isdigit():
                raise InputError(
                    f"kanonym audit: '{name}' is not a release number of {ledger.name}; to audit "
                    "files, give --qi COL=HIERARCHY ... and --k"
                )
            numbers.append(int(name))
        result = ledger.audit(numbers, k=args.k)
    else:
        if args.qi is None or args.k is None:
            raise InputError(
                "kanonym audit: files need --qi COL=HIERARCHY ... and --k (with --ledger and "
                "release numbers both default to what the ledger recorded)"
            )
        hierarchies: dict[str, str] = {}
        for item in args.qi:
            column, sep, spec = item.partition("=")
            if not sep or not column or not spec:
                raise InputError(
                    f"kanonym audit: qi entry '{item}' is not of the form COL=HIERARCHY"
                )
            if column in hierarchies:
                raise InputError(f"kanonym audit: quasi-identifier '{column}' is given twice")
            hierarchies[column] = spec
        releases: list[str | Path] = [
            ledger.entry(int(name)).output if ledger is not None and name.isdigit() else Path(name)
            for name in args.releases
        ]
        from kanonym.attacks.complementary import audit

        result = audit(
            releases, hierarchies, k=args.k, delimiter=args.delimiter, base_dir=Path.cwd()
        )
    print(json.dumps(result.as_dict()) if args.json else _audit_text(result))
    return 0 if result.k_anonymous else 1


def _ledger(args: argparse.Namespace) -> int:
    if args.ledger_action == "budget":
        return _budget(args)
    ledger = release.Ledger(args.ledger_file, create=False)
    if args.ledger_action == "show":
        entry = ledger.entry(args.release_id)
        document = entry.as_dict()
        if args.json:
            print(json.dumps(document))
        else:
            for key, value in document.items():
                shown = json.dumps(value) if isinstance(value, dict | list | tuple) else value
                print(f"{key:<18} {shown}")
        return 0
    entries = ledger.entries()
    if args.json:
        print(json.dumps([_listed(entry) for entry in entries]))
        return 0
    if not entries:
        print(f"{ledger.name}: no release recorded")
    for entry in entries:
        how = ", ".join(
            f"{what} {number}"
            for what, number in (("based on", entry.based_on), ("replay of", entry.replay_of))
            if number is not None
        )
        charge = entry.charge
        print(
            f"{entry.id:>4}  {entry.created}  {entry.source} -> {entry.output}  k={entry.k}  "
            f"{entry.released_rows} of {entry.source_rows} rows  "
            f"qi {', '.join(entry.quasi_identifiers)}"
            + ("" if charge is None else f"  epsilon={charge.epsilon:g} delta={charge.delta:g}")
            + (f"  ({how})" if how else "")
        )
    return 0


def _budget(args: argparse.Namespace) -> int:
    """``ledger budget``: list the budgets, show one, or set one."""
    setting = args.epsilon is not None or args.delta is not None
    if setting and (args.source is None or args.epsilon is None or args.delta is None):
        raise InputError(
            "kanonym ledger budget: a budget is set with SOURCE, --epsilon E and --delta D "
            "(--delta 0 for pure epsilon-differential privacy)"
        )
    if setting:
        ledger = release.Ledger(args.ledger_file)
        statuses = [ledger.set_budget(args.source, epsilon=args.epsilon, delta=args.delta)]
    else:
        ledger = release.Ledger(args.ledger_file, create=False)
        statuses = [ledger.budget(args.source)] if args.source is not None else ledger.budgets()
    if args.json:
        documents = [status.as_dict() for status in statuses]
        print(json.dumps(documents if args.source is None else documents[0]))
        return 0
    if not statuses:
        print(f"{ledger.name}: no privacy budget set")
    for status in statuses:
        print(("budget set: " if setting else "") + _budget_line(status))
    return 0


def _budget_line(status: BudgetStatus) -> str:
    ids = ", ".join(str(i) for i in status.releases) or "none"
    return (
        f"{status.source}  epsilon {status.epsilon_spent:g} of {status.epsilon_budget:g} spent, "
        f"{status.epsilon_remaining:g} left  delta {status.delta_spent:g} of "
        f"{status.delta_budget:g} spent, {status.delta_remaining:g} left  releases {ids}"
    )


def _listed(entry: LedgerEntry) -> dict[str, object]:
    """A release's one-line summary as JSON-ready values."""
    return {
        "id": entry.id,
        "created": entry.created,
        "source": entry.source,
        "output": entry.output,
        "k": entry.k,
        "quasi_identifiers": {name: r.source for name, r in entry.quasi_identifiers.items()},
        "released_rows": entry.released_rows,
        "source_rows": entry.source_rows,
        "based_on": entry.based_on,
        "replay_of": entry.replay_of,
        "complementary": list(entry.complementary),
        "charge": None if entry.charge is None else dataclasses.asdict(entry.charge),
    }


def _audit_text(result: AuditResult) -> str:
    from kanonym.attacks.complementary import CLASSES  # loaded by the audit already

    verdict = "is" if result.k_anonymous else "is NOT"
    lines = [
        f"linked {', '.join(result.releases)} on {', '.join(result.join_columns)}: "
        f"{result.linked_rows} linked rows in {result.classes.height} classes "
        f"(smallest {result.smallest_class}); the linked table {verdict} {result.k}-anonymous: "
        f"{result.classes_below_k} classes ({result.records_below_k} records) below k"
    ]
    for row in result.below_k.iter_rows(named=True):
        shown = ", ".join(f"{q}={row[q]}" for q in result.columns)
        lines.append(f"  below k, shown generalized: [{shown}] ({row[CLASSES]} class(es))")
    return "\n".join(lines)


LEDGER_HANDLERS: Mapping[str, Callable[[argparse.Namespace], int]] = {
    "release": _release,
    "audit": _audit,
    "ledger": _ledger,
}
"""Command name -> handler, merged into the CLI's handlers."""
