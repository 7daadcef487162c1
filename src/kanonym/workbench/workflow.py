"""What the workbench knows about one workspace: the table, the roles, the job it writes.

The state is plain data, kept in memory for the server's lifetime; the files
(the uploaded table, hierarchy files, the release and its reports) live in
the workspace folder. Every release the workbench makes is built from the
same options a TOML job file holds (:meth:`Workflow.job_options`), read by
:func:`kanonym.config.job_from_options` exactly as ``kanonym anonymize
--config`` reads the file, so the downloaded job reproduces the release; the
file is written by :func:`kanonym.io.toml.toml_document`.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from kanonym.attacks.api import qi_scan
from kanonym.config import ReleaseJob, job_from_options
from kanonym.errors import InputError
from kanonym.hierarchy import Hierarchy, parse_hierarchy, resolve

ROLES = ("identifying", "quasi-identifying", "sensitive", "insensitive")
"""The role every column must be given before anything is released."""

BUILDERS = ("interval", "mask", "date", "suppress", "order", "file")
"""The ways to give a quasi-identifier its hierarchy (``file``: an ARX CSV file)."""

PREVIEW_ROWS = 12
"""Rows of the table shown on its page."""

SCAN_SECONDS = 10.0
"""Time the quasi-identifier scan may take on a large table (it ranks what it measured)."""


@dataclass(frozen=True)
class ColumnStats:
    """What the table page shows of a column: its kind, distinct values, nulls, range."""

    name: str
    kind: str
    distinct: int
    nulls: int
    low: str
    high: str


def column_stats(frame: pl.DataFrame) -> list[ColumnStats]:
    """Each column's kind (number, date or text, judged on its non-missing values),
    distinct values, missing values, and least and greatest value.

    Example:
        >>> stats = column_stats(pl.DataFrame({"age": ["34", "5", None]}))
        >>> stats[0].kind, stats[0].distinct, stats[0].nulls, stats[0].low, stats[0].high
        ('number', 3, 1, '5', '34')
    """
    stats = []
    for name in frame.columns:
        column = frame.get_column(name)
        present = column.drop_nulls()
        text = present.cast(pl.String)
        numbers = text.str.strip_chars().cast(pl.Float64, strict=False)
        dates = text.str.to_date("%Y-%m-%d", strict=False)
        if present.is_empty():
            kind, ordered = "empty", text
        elif numbers.null_count() == 0:
            kind, ordered = "number", numbers
        elif dates.null_count() == 0:
            kind, ordered = "date", text
        else:
            kind, ordered = "text", text
        low = "" if present.is_empty() else _shown(text[int(ordered.arg_min() or 0)])
        high = "" if present.is_empty() else _shown(text[int(ordered.arg_max() or 0)])
        stats.append(ColumnStats(name, kind, column.n_unique(), column.null_count(), low, high))
    return stats


def _shown(value: object) -> str:
    text = str(value)
    return text if len(text) <= 40 else text[:39] + "…"


@dataclass(frozen=True)
class Suggestion:
    """A role the quasi-identifier scan suggests for a column, and why."""

    role: str
    reason: str


def suggest_roles(frame: pl.DataFrame) -> dict[str, Suggestion]:
    """Roles suggested by :func:`kanonym.qi_scan` (pairs of columns at most, time-limited).

    A column unique on (nearly) every row is a direct identifier: suggested
    identifying. The columns of the combinations that single out the most
    records are suggested quasi-identifying. The others get no suggestion:
    only the officer knows whether a column is sensitive.
    """
    scan = qi_scan(frame, max_size=2, time_limit=SCAN_SECONDS)
    suggestions: dict[str, Suggestion] = {}
    for direct in scan.direct_identifiers:
        suggestions[direct.columns[0]] = Suggestion(
            "identifying", f"unique on {direct.uniqueness:.0%} of the rows: a direct identifier"
        )
    for combination in scan.combinations[:5]:
        if combination.unique_records == 0:
            break
        for name in combination.columns:
            if name not in suggestions:
                others = [c for c in combination.columns if c != name]
                alone = "alone" if not others else "with " + ", ".join(others)
                suggestions[name] = Suggestion(
                    "quasi-identifying",
                    f"singles out {combination.unique_records:,} records {alone}",
                )
    return suggestions


def build_hierarchy(spec: str, column: pl.Series, workspace: Path, source: str) -> Hierarchy:
    """The hierarchy a spec gives ``column``: a builder run on its values, or an ARX file
    of the workspace, checked to cover every value."""
    values = column.cast(pl.String).unique().to_list()
    parsed = parse_hierarchy(spec, base_dir=workspace)
    return resolve(parsed, values, column=column.name or "", source=source)


def fresh_seed() -> int:
    """A new seed for the row shuffle (a ledger refuses one used before for a source)."""
    return secrets.randbelow(2**31)


@dataclass
class Workflow:
    """The workbench's state for one workspace (module docstring).

    Attributes:
        table: the table's name in the workspace (None before one is loaded).
        frame: its rows.
        roles: column -> role, as the officer chose them.
        suggestions: column -> the scan's suggestion.
        hierarchies: quasi-identifier -> hierarchy spec (a builder, or the
            name of an ARX file in the workspace).
        k, suppression, metric, seed: the job's limits; ``suppression`` is a
            fraction of rows.
        models: sensitive column -> model specs (``l-diversity:distinct:2:COL``).
        name: the stem of the files the release is written to.
    """

    table: str | None = None
    frame: pl.DataFrame | None = None
    roles: dict[str, str] = field(default_factory=dict)
    suggestions: dict[str, Suggestion] = field(default_factory=dict)
    hierarchies: dict[str, str] = field(default_factory=dict)
    k: int = 5
    suppression: float = 0.0
    metric: str = "loss"
    seed: int = field(default_factory=fresh_seed)
    models: dict[str, list[str]] = field(default_factory=dict)
    name: str = "release"

    def load(self, name: str, frame: pl.DataFrame) -> None:
        """Start over on a new table: roles, hierarchies and models are the table's."""
        self.table, self.frame = name, frame
        self.roles, self.hierarchies, self.models = {}, {}, {}
        self.suggestions = suggest_roles(frame)
        self.name = f"{Path(name).stem}-anonymized"
        # A seed of its own per table: a ledger refuses a source's seed used twice.
        self.seed = fresh_seed()

    @property
    def columns(self) -> list[str]:
        """The table's columns (none before a table is loaded)."""
        return [] if self.frame is None else list(self.frame.columns)

    def with_role(self, role: str) -> list[str]:
        """The columns given ``role``, in the table's order."""
        return [name for name in self.columns if self.roles.get(name) == role]

    @property
    def unassigned(self) -> list[str]:
        """The columns without a role: while any is left, nothing is released."""
        return [name for name in self.columns if self.roles.get(name) not in ROLES]

    @property
    def unprotected(self) -> list[str]:
        """The sensitive columns without a privacy model: released unchanged, unprotected."""
        return [name for name in self.with_role("sensitive") if not self.models.get(name)]

    @property
    def missing_hierarchies(self) -> list[str]:
        """The quasi-identifiers without a hierarchy yet."""
        return [
            name for name in self.with_role("quasi-identifying") if name not in self.hierarchies
        ]

    def blockers(self) -> list[str]:
        """Why a release cannot run yet, one line each (empty: it can)."""
        if self.frame is None:
            return ["load a table first"]
        problems = []
        if self.unassigned:
            problems.append(
                "give every column a role first; without one: " + ", ".join(self.unassigned)
            )
        if not self.with_role("quasi-identifying"):
            problems.append("mark at least one column quasi-identifying")
        if self.missing_hierarchies:
            problems.append("choose a hierarchy for " + ", ".join(self.missing_hierarchies))
        return problems

    def output_suffix(self) -> str:
        """The release's format: the input's (Parquet stays Parquet, anything else is CSV)."""
        return ".parquet" if (self.table or "").endswith((".parquet", ".pq")) else ".csv"

    def job_options(self) -> dict[str, object]:
        """The job as TOML keys, paths relative to the workspace (where the job file goes).

        Raises:
            InputError: a column still has no role or a quasi-identifier no hierarchy.
        """
        problems = self.blockers()
        if problems:
            raise InputError(problems[0])
        options: dict[str, object] = {
            "input": self.table,
            "output": f"{self.name}{self.output_suffix()}",
            "report": f"{self.name}.report.json",
            "report-html": f"{self.name}.report.html",
            "k": self.k,
        }
        if self.suppression:
            options["max-suppression"] = self.suppression
        options["metric"] = self.metric
        options["seed"] = self.seed
        for role in ("identifying", "sensitive", "insensitive"):
            if self.with_role(role):
                options[role] = self.with_role(role)
        models = [
            spec for name in self.with_role("sensitive") for spec in self.models.get(name, [])
        ]
        if models:
            options["models"] = models
        options["qi"] = {
            name: self.hierarchies[name] for name in self.with_role("quasi-identifying")
        }
        return options


SWEEP_FREE_KEYS = frozenset({"k", "max-suppression", "seed", "output", "report", "report-html"})
"""The job keys a sweep does not depend on: it tries its own k and limits, and its scores
and risks do not depend on the row shuffle or the file names."""


@dataclass(frozen=True)
class JobStamp:
    """A job's options and the state of the workspace files it reads: what a run or a
    sweep was made from.

    Two stamps differ when an option differs or a file the job reads (its
    table, a hierarchy file) changed, even under the same name: its size or
    modification time (to the nanosecond) differs.

    Example:
        >>> import tempfile
        >>> folder = Path(tempfile.mkdtemp())
        >>> _ = (folder / "t.csv").write_text("a\\n1\\n")
        >>> options = {"input": "t.csv", "qi": {"a": "mask"}}
        >>> before = JobStamp.of(options, folder)
        >>> before == JobStamp.of(dict(options), folder)
        True
        >>> _ = (folder / "t.csv").write_text("a\\n12\\n")  # replaced under its name
        >>> JobStamp.of(options, folder) == before
        False
    """

    options: Mapping[str, object]
    files: Mapping[str, tuple[int, int]]

    @classmethod
    def of(cls, options: Mapping[str, object], workspace: Path) -> JobStamp:
        """The stamp of ``options`` (:meth:`Workflow.job_options`) in ``workspace``."""
        qi = options.get("qi", {})
        specs = [str(spec) for spec in qi.values()] if isinstance(qi, Mapping) else []
        files: dict[str, tuple[int, int]] = {}
        for name in (str(options["input"]), *specs):
            path = workspace / name
            if path.is_file():  # a builder's spec ("mask", "interval:5,10") names no file
                info = path.stat()
                files[name] = (info.st_size, info.st_mtime_ns)
        return cls(options=dict(options), files=files)

    def swept(self) -> JobStamp:
        """The stamp without the keys a sweep does not depend on (:data:`SWEEP_FREE_KEYS`)."""
        kept = {key: value for key, value in self.options.items() if key not in SWEEP_FREE_KEYS}
        return JobStamp(options=kept, files=self.files)


def read_job(options: Mapping[str, object], workspace: Path) -> ReleaseJob:
    """The :class:`~kanonym.config.ReleaseJob` of a job's options (:meth:`Workflow.job_options`),
    read as ``kanonym anonymize --config`` reads a job file in the workspace."""
    return job_from_options(options, base_dir=workspace, where="the workbench's job")


def job_file_name(options: Mapping[str, object]) -> str:
    """The name of a job's TOML file: its release's, with ``.toml``.

    Example:
        >>> job_file_name({"output": "adult-anonymized.parquet"})
        'adult-anonymized.toml'
    """
    return Path(str(options["output"])).with_suffix(".toml").name


def model_specs(column: str, form: Mapping[str, str]) -> list[str]:
    """The model specs a sensitive column's form fields ask for (blank fields: none).

    Example:
        >>> model_specs("disease", {"l": "2", "t": "", "beta": "1.5", "delta": ""})
        ['l-diversity:distinct:2:disease', 'beta-likeness:basic:1.5:disease']
    """
    specs = []
    for key, template in (
        ("l", "l-diversity:distinct:{}:{}"),
        ("t", "t-closeness:equal:{}:{}"),
        ("beta", "beta-likeness:basic:{}:{}"),
        ("delta", "delta-disclosure:{}:{}"),
    ):
        value = form.get(key, "").strip()
        if value:
            specs.append(template.format(value, column))
    return specs
