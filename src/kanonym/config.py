"""Configuration as data: what to release and how, validated when built.

The Python API, the command line and a TOML job file all build the same frozen
objects, so a release is reproducible from its job file plus its seed.

Example:
    >>> config = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=2,
    ...                              suppression=SuppressionLimit(rows=2))
    >>> config.suppression.max_rows(9), config.algorithm, config.metric, config.policy
    (2, 'optimal', 'loss', None)
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TypeVar, cast, get_args

import polars as pl

from kanonym.engine.choose import default_engine, is_location
from kanonym.engine.duck import is_duckdb_url
from kanonym.engine.postgres import is_postgres_url, redact
from kanonym.engine.spark import spark_writes
from kanonym.errors import (
    DestinationExistsError,
    HierarchyError,
    InputError,
    NestedColumnError,
    clip,
    echo,
)
from kanonym.hierarchy import (
    DUPLICATES,
    Duplicates,
    Hierarchy,
    HierarchyBuilder,
    parse_hierarchy,
    resolve,
    spec_file,
)
from kanonym.io import Table, load
from kanonym.io.paths import check_destinations
from kanonym.io.read import read_schema
from kanonym.io.table import nested_columns
from kanonym.metrics import DEFAULT_METRIC, METRICS
from kanonym.models import KAnonymity, PrivacyModel, parse_model
from kanonym.options import AlgorithmName, EngineName, MetricName, PolicyName, TechniqueName
from kanonym.recoding import RECODINGS
from kanonym.search import ALGORITHMS, DEFAULT_ALGORITHM, DEFAULT_POLICY, POLICIES
from kanonym.technique import TECHNIQUES, Technique, resolve_technique

HierarchyLike = Hierarchy | HierarchyBuilder
_Choice = TypeVar("_Choice", bound=str)


@dataclass(frozen=True, kw_only=True)
class SuppressionLimit:
    """How many rows may be suppressed: a fraction of rows or a row count (MaxSup).

    ``fraction`` follows ARX: at most ``floor(fraction * n)`` rows, computed on
    the decimal value as written (0.29 of 100 rows is 29, not 28). ``rows`` is
    Samarati's MaxSup. Giving both is a contradiction; giving neither means 0.
    """

    fraction: float | None = None
    rows: int | None = None

    def __post_init__(self) -> None:
        if self.fraction is not None and self.rows is not None:
            raise InputError(
                "`max_suppression` and `max_suppressed_rows` are mutually exclusive; give one"
            )
        if self.fraction is not None and (
            isinstance(self.fraction, bool)
            or not isinstance(self.fraction, int | float)
            or not 0 <= self.fraction <= 1
        ):
            raise InputError(
                "`max_suppression` must be a fraction in [0, 1] (0.04 for 4%), "
                f"got {echo(self.fraction)}"
            )
        if self.rows is not None and (
            isinstance(self.rows, bool) or not isinstance(self.rows, int) or self.rows < 0
        ):
            raise InputError(
                f"`max_suppressed_rows` must be a whole number >= 0, got {echo(self.rows)}"
            )

    def max_rows(self, n_rows: int) -> int:
        """MaxSup for a table of ``n_rows`` rows."""
        if self.rows is not None:
            return self.rows
        if self.fraction is not None:
            return math.floor(Decimal(repr(float(self.fraction))) * n_rows)
        return 0

    def describe(self) -> dict[str, object]:
        """The limit as given, for the report."""
        return {"fraction": self.fraction, "rows": self.rows}


def parse_fraction(value: str | float, what: str = "`max_suppression`") -> float:
    """A share given as a fraction (``0.04``) or a percentage (``"4%"``), as a fraction in [0, 1].

    A percentage is divided as written (``"29%"`` is exactly ``0.29``), so the
    suppression limit counts rows as the fraction would.

    Example:
        >>> parse_fraction("4%"), parse_fraction("0.04"), parse_fraction(0.5)
        (0.04, 0.04, 0.5)
    """
    given = value
    if isinstance(value, str):
        text = value.strip()
        try:
            number = Decimal(text.removesuffix("%").strip())
        except InvalidOperation:
            number = Decimal("NaN")
        if text.endswith("%"):
            number /= 100
        value = float(number)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise InputError(
            f"{what} must be a fraction in [0, 1] (0.04) or a percentage (4%), got {echo(given)}"
        )
    return float(value)


def _names(value: str | Iterable[str], what: str) -> tuple[str, ...]:
    names = (value,) if isinstance(value, str) else tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            raise InputError(f"{what}: column names must be non-empty strings, got {echo(name)}")
    twice = [name for name in dict.fromkeys(names) if names.count(name) > 1]
    if twice:
        raise InputError(f"{what}: column {echo(twice[0])} is named twice")
    return names


@dataclass(frozen=True, kw_only=True)
class AnonymizationConfig:
    """One anonymization job, independent of where the table comes from.

    Attributes:
        quasi_identifiers: column -> hierarchy, in input order. A hierarchy is a
            :class:`~kanonym.hierarchy.Hierarchy`, a builder, or a spec string
            (``interval:5,10,20``, ``mask``, ``date``, ``suppress``, ``order:2``
            or an ARX CSV path), parsed when the config is built.
        k: every released class holds at least k rows.
        identifying: columns dropped from the release.
        models: privacy models beyond k-anonymity, as objects such as
            ``DistinctLDiversity(attribute="disease", l=3)`` (:mod:`kanonym.models`;
            the command line and job files write them as specs, read by
            :func:`kanonym.models.parse_model`); their attributes count as
            sensitive. Hierarchical t-closeness holds its attribute's hierarchy.
        sensitive: columns released as they are, named for the report and for
            models that read them.
        insensitive: columns released as they are that no model reads.
        keep_unlisted: release the columns named in no role unchanged (the
            reports list them). By default every column of the table must have
            a role (quasi-identifier, identifying, sensitive or insensitive)
            and a table with an unlisted column is refused
            (:class:`~kanonym.errors.UnassignedColumnsError`): a column
            someone forgot to name, such as a name or an SSN, is never
            published silently.
        suppression: the suppression limit (default: none).
        algorithm: ``optimal`` (default) or ``incognito``, which minimize a
            utility metric; ``minimal`` (all k-minimal generalizations) or
            ``samarati``, which choose by a preference policy; or a local
            recoding, ``mondrian`` or ``mondrian-relaxed``
            (:mod:`kanonym.recoding`), which takes no metric, policy,
            suppression, levels or time limit.
        metric: utility metric minimized by ``optimal``/``incognito``
            (default ``loss``); must be None for the policy-ranked searches.
        policy: preference policy for ``minimal``/``samarati`` (default
            ``min-relative-distance``); must be None for the optimizing ones.
        time_limit: seconds after which an optimizing search returns the best
            node found so far, flagged as not proven optimal.
        weights: quasi-identifier -> weight (>= 0, default 1) of its part in the
            utility metrics that add up per attribute (entropy, loss,
            precision, height); Datafly and mu-Argus weight attributes likewise
            (Sweeney 2002, section 3).
        min_levels, max_levels: quasi-identifier -> the least / greatest
            hierarchy level the search may choose for it.
        seed: seed for the row shuffle; ``None`` draws one from the OS.
        numeric, categorical: quasi-identifiers a local recoding cuts as
            numbers (ranges) or along their hierarchies, overriding the
            automatic choice (:func:`kanonym.recoding.numeric_flags`).
        hierarchy_duplicates: how to read an ARX hierarchy file that lists a
            value on two lines with different generalizations: ``"error"``
            (default) refuses it, ``"last"`` keeps the last line, as ARX does
            (:func:`kanonym.hierarchy.load_arx`); the reports list those values.
        technique: Samarati's technique class (:mod:`kanonym.technique`):
            ``AG_TS`` (default), ``AG_``/``AG_AS``, ``AG_CS``, ``_TS``, ``_AS``
            or ``_CS``; None means the algorithm's default (``AG_CS`` for
            ``mu-argus``). Contradictions with the other options are rejected.
    """

    quasi_identifiers: Mapping[str, HierarchyLike | str | Path]
    k: int
    identifying: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    insensitive: tuple[str, ...] = ()
    keep_unlisted: bool = False
    models: Sequence[PrivacyModel] = ()
    suppression: SuppressionLimit = field(default_factory=SuppressionLimit)
    algorithm: AlgorithmName = "optimal"
    metric: MetricName | None = None
    policy: PolicyName | None = None
    time_limit: float | None = None
    weights: Mapping[str, float] = field(default_factory=dict)
    min_levels: Mapping[str, int] = field(default_factory=dict)
    max_levels: Mapping[str, int] = field(default_factory=dict)
    seed: int | None = None
    technique: TechniqueName | None = None
    base_dir: Path | None = None
    numeric: tuple[str, ...] = ()
    categorical: tuple[str, ...] = ()
    hierarchy_duplicates: Duplicates = "error"

    def __post_init__(self) -> None:
        if not isinstance(self.quasi_identifiers, Mapping) or not self.quasi_identifiers:
            raise InputError(
                "at least one quasi-identifier is required: `quasi_identifiers` maps each to "
                "its hierarchy"
            )
        if self.hierarchy_duplicates not in DUPLICATES:
            raise InputError(
                f"`hierarchy_duplicates` must be one of {', '.join(map(repr, DUPLICATES))}, "
                f"got {echo(self.hierarchy_duplicates)}"
            )
        parsed: dict[str, HierarchyLike] = {}
        for name, hierarchy in self.quasi_identifiers.items():
            _names(name, "`quasi_identifiers`")
            parsed[name] = _hierarchy(
                hierarchy, self.base_dir, f"quasi-identifier '{name}'", self.hierarchy_duplicates
            )
        object.__setattr__(self, "quasi_identifiers", MappingProxyType(parsed))
        object.__setattr__(self, "identifying", _names(self.identifying, "`identifying`"))
        object.__setattr__(self, "insensitive", _names(self.insensitive, "`insensitive`"))
        if not isinstance(self.keep_unlisted, bool):
            raise InputError(
                f"`keep_unlisted` must be True or False, got {echo(self.keep_unlisted)}"
            )
        # Typed callers pass models; a job built by hand may pass anything.
        given: object = self.models
        if isinstance(given, str) or not isinstance(given, Iterable):
            raise InputError(f"`models` must be a list of privacy models, got {echo(given)}")
        models: tuple[object, ...] = tuple(given)
        for model in models:
            if isinstance(model, KAnonymity):
                raise InputError("`models`: k-anonymity is set by `k`, not given as a model")
            if not isinstance(model, PrivacyModel):
                hint = (
                    f"; read a spec with kanonym.models.parse_model({echo(model)})"
                    if isinstance(model, str)
                    else ""
                )
                raise InputError(
                    "`models` holds privacy model objects such as "
                    f"DistinctLDiversity(attribute='disease', l=3), got {echo(model)}{hint}"
                )
        object.__setattr__(self, "models", models)
        # The attributes the models read are released as they are.
        named = list(_names(self.sensitive, "`sensitive`"))
        for model in self.models:
            named.extend(a for a in model.sensitive_attributes if a not in named)
        object.__setattr__(self, "sensitive", tuple(named))
        if isinstance(self.k, bool) or not isinstance(self.k, int) or self.k < 1:
            raise InputError(f"`k` must be a whole number >= 1, got {echo(self.k)}")
        roles = {
            "quasi-identifying": tuple(parsed),
            "identifying": self.identifying,
            "sensitive": self.sensitive,
            "insensitive": self.insensitive,
        }
        seen: dict[str, str] = {}
        for role, names in roles.items():
            for name in names:
                if name in seen:
                    raise InputError(f"column {echo(name)} is both {seen[name]} and {role}")
                seen[name] = role
        if self.algorithm in RECODINGS:
            _check_local_recoding(self)
        elif self.algorithm not in ALGORITHMS:
            raise InputError(
                f"unknown algorithm {echo(self.algorithm)}; "
                f"choose one of {sorted([*ALGORITHMS, *RECODINGS])}"
            )
        elif ALGORITHMS[self.algorithm].uses_metric:
            if self.policy is not None:
                raise InputError(
                    f"a preference `policy` applies only to minimal and samarati, not to "
                    f"'{self.algorithm}'; give `metric` instead"
                )
            object.__setattr__(self, "metric", self.metric or DEFAULT_METRIC)
            if self.metric not in METRICS:
                raise InputError(
                    f"unknown metric {echo(self.metric)}; choose one of {sorted(METRICS)}"
                )
        else:
            if self.metric is not None:
                raise InputError(
                    f"a utility `metric` applies only to optimal and incognito, not to "
                    f"'{self.algorithm}'; give `policy` instead"
                )
            object.__setattr__(self, "policy", self.policy or DEFAULT_POLICY)
            if self.policy not in POLICIES:
                raise InputError(
                    f"unknown policy {echo(self.policy)}; choose one of {sorted(POLICIES)}"
                )
        if self.time_limit is not None and (
            isinstance(self.time_limit, bool)
            or not isinstance(self.time_limit, int | float)
            or not self.time_limit > 0
        ):
            raise InputError(
                f"`time_limit` must be a number of seconds > 0, got {echo(self.time_limit)}"
            )
        for what, values in (
            ("`weights`", self.weights),
            ("`min_levels`", self.min_levels),
            ("`max_levels`", self.max_levels),
        ):
            for name, value in values.items():
                if name not in parsed:
                    raise InputError(f"{what}: {echo(name)} is not a quasi-identifier")
                whole = isinstance(value, int) and not isinstance(value, bool)
                if what == "`weights`":
                    if not (whole or isinstance(value, float)) or not 0 <= value < math.inf:
                        raise InputError(
                            f"{what}: the weight of '{name}' must be a number >= 0, "
                            f"got {echo(value)}"
                        )
                elif not whole or value < 0:
                    raise InputError(
                        f"{what}: the level of '{name}' must be a whole number >= 0, "
                        f"got {echo(value)}"
                    )
        for name, low in self.min_levels.items():
            high = self.max_levels.get(name)
            if high is not None and low > high:
                raise InputError(
                    f"`min_levels`: level {low} of '{name}' is above its `max_levels` {high}"
                )
        object.__setattr__(self, "weights", MappingProxyType(dict(self.weights)))
        object.__setattr__(self, "min_levels", MappingProxyType(dict(self.min_levels)))
        object.__setattr__(self, "max_levels", MappingProxyType(dict(self.max_levels)))
        if self.seed is not None and (
            isinstance(self.seed, bool) or not isinstance(self.seed, int) or self.seed < 0
        ):
            raise InputError(f"`seed` must be a whole number >= 0, got {echo(self.seed)}")
        _check_axis_kinds(self, parsed)
        limit = self.suppression
        resolved = resolve_technique(
            self.technique,
            algorithm=self.algorithm,
            limits_suppression=bool(limit.fraction or limit.rows),
            bounds_levels=bool(self.min_levels or self.max_levels),
        )
        object.__setattr__(self, "technique", resolved.name)

    def unassigned(self, columns: Sequence[str]) -> tuple[str, ...]:
        """The columns among ``columns`` named in no role, in their order.

        Example:
            >>> config = AnonymizationConfig(quasi_identifiers={"zip": "mask"}, k=2,
            ...                              identifying=("name",), insensitive=("visit",))
            >>> config.unassigned(["name", "zip", "ssn", "visit", "notes"])
            ('ssn', 'notes')
        """
        named = {*self.hierarchies, *self.identifying, *self.sensitive, *self.insensitive}
        return tuple(column for column in columns if column not in named)

    def weight_vector(self, names: Sequence[str]) -> tuple[float, ...]:
        """The weight of each quasi-identifier in ``names``, 1 where none was given."""
        return tuple(self.weights.get(name, 1.0) for name in names)

    @property
    def local_recoding(self) -> bool:
        """Whether the algorithm is a local recoding (:data:`kanonym.recoding.RECODINGS`)."""
        return self.algorithm in RECODINGS

    @property
    def granularity(self) -> Technique:
        """The technique class as an object (``technique`` holds its name)."""
        # __post_init__ replaced None by the resolved name.
        return TECHNIQUES[cast(str, self.technique)]

    @property
    def hierarchies(self) -> Mapping[str, HierarchyLike]:
        """Quasi-identifier -> parsed hierarchy or builder."""
        # __post_init__ replaced every spec string by its parsed hierarchy.
        return cast(Mapping[str, HierarchyLike], self.quasi_identifiers)


def _hierarchy(
    source: HierarchyLike | str | Path,
    base_dir: Path | None,
    owner: str,
    duplicates: Duplicates = "error",
) -> HierarchyLike:
    """A hierarchy or builder as given; a spec string or CSV path parsed.

    A malformed spec's message names its column (``owner``); a file's names the
    file. ``duplicates`` is how a file listing a value twice is read.
    """
    if isinstance(source, str | Path):
        try:
            return parse_hierarchy(str(source), base_dir=base_dir, duplicates=duplicates)
        except HierarchyError:
            raise
        except InputError as error:
            if str(error).startswith(("unknown hierarchy builder", "hierarchy spec")):
                raise InputError(f"{owner}: {error}") from None
            raise
    return source


def _check_local_recoding(config: AnonymizationConfig) -> None:
    """Reject the options a local recoding has no use for (it neither searches nor suppresses)."""
    name = config.algorithm
    given = [
        parameter
        for parameter, value in (
            ("`metric`", config.metric),
            ("`policy`", config.policy),
            ("`time_limit`", config.time_limit),
            ("`min_levels`", config.min_levels or None),
            ("`max_levels`", config.max_levels or None),
        )
        if value is not None
    ]
    if given:
        raise InputError(
            f"{', '.join(given)}: option(s) of the lattice searches, "
            f"meaningless for the local recoding '{name}'"
        )
    if config.suppression.fraction or config.suppression.rows:
        raise InputError(
            f"'{name}' suppresses nothing (local recoding generalizes cells, CG_CS); "
            "drop `max_suppression` / `max_suppressed_rows`"
        )


def _check_axis_kinds(config: AnonymizationConfig, quasi_identifiers: Mapping[str, object]) -> None:
    """``numeric`` and ``categorical`` name distinct quasi-identifiers, for a local recoding."""
    numeric = _names(config.numeric, "`numeric`")
    categorical = _names(config.categorical, "`categorical`")
    object.__setattr__(config, "numeric", numeric)
    object.__setattr__(config, "categorical", categorical)
    if (numeric or categorical) and not config.local_recoding:
        raise InputError(
            "`numeric` and `categorical` apply to local recoding (mondrian), "
            f"not to '{config.algorithm}'"
        )
    for what, names in (("`numeric`", numeric), ("`categorical`", categorical)):
        for name in names:
            if name not in quasi_identifiers:
                raise InputError(f"{what}: {echo(name)} is not a quasi-identifier")
    both = sorted(set(numeric) & set(categorical))
    if both:
        raise InputError(f"column {echo(both[0])} is named both numeric and categorical")


@dataclass(frozen=True, kw_only=True)
class ReleaseJob:
    """An anonymization job with its files: what ``kanonym anonymize`` runs.

    ``input`` and ``output`` are files, or ``postgresql://`` URLs (kept as
    strings) for the PostgreSQL engine; ``engine`` names the engine (None: the
    input's form decides); ``replace`` lets a table output replace an existing
    table; ``population`` is the table the input was drawn from, for the models
    that judge a class by its population (a file or URL, read by its own
    default engine); ``check_lattice`` checks, for the HTML report's lattice
    figure only, the nodes the search did not need (:meth:`kanonym.Result.write`).
    """

    input: Path | str
    output: Path | str
    config: AnonymizationConfig
    report: Path | None = None
    delimiter: str | None = None
    report_html: Path | None = None
    engine: EngineName | None = None
    replace: bool = False
    population: Path | str | None = None
    check_lattice: bool = False


# Keys of a job file are the long flag names of ``kanonym anonymize``.
JOB_KEYS = frozenset(
    {
        "input",
        "output",
        "engine",
        "replace",
        "population",
        "report",
        "report-html",
        "delimiter",
        "qi",
        "identifying",
        "sensitive",
        "insensitive",
        "keep-unlisted",
        "models",
        "k",
        "max-suppression",
        "max-suppressed-rows",
        "algorithm",
        "metric",
        "policy",
        "time-limit",
        "weight",
        "min-level",
        "max-level",
        "seed",
        "numeric",
        "categorical",
        "technique",
        "hierarchy-duplicates",
        "check-lattice",
    }
)


def canonical_key(key: str) -> str:
    """A job key as :data:`JOB_KEYS` spells it: ``-`` for ``_``, ``models`` for ``model``.

    Example:
        >>> canonical_key("max_suppression"), canonical_key("model")
        ('max-suppression', 'models')
    """
    name = key.replace("_", "-")
    # The command line's repeatable --model fills the job file's `models`.
    return "models" if name == "model" else name


def refuse_two_spellings(options: Mapping[str, object], where: str) -> None:
    """Refuse a key given in two spellings, such as ``max-suppression`` and ``max_suppression``.

    Keys may use ``-`` or ``_``; a job giving one key both ways would use one
    value and silently ignore the other.

    Example:
        >>> refuse_two_spellings({"max-suppression": 0.1, "max_suppression": 0.5}, "job.toml")
        Traceback (most recent call last):
        ...
        kanonym.errors.InputError: job.toml: 'max-suppression' and 'max_suppression' are one \
key spelled two ways, so one value would be ignored; keep one of them
    """
    seen: dict[str, str] = {}
    for key in options:
        first = seen.setdefault(canonical_key(key), key)
        if first != key:
            raise InputError(
                f"{where}: {echo(first)} and {echo(key)} are one key spelled two ways, so one "
                "value would be ignored; keep one of them"
            )


def _qi_mapping(value: object, where: str) -> dict[str, str]:
    if isinstance(value, Mapping):
        return {str(k): str(v) for k, v in value.items()}
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list):
        raise InputError(f"{where}: qi must be a table or a list of COL=HIERARCHY strings")
    mapping: dict[str, str] = {}
    for item in value:
        column, sep, spec = str(item).partition("=")
        if not sep or not column or not spec:
            raise InputError(f"{where}: qi entry {echo(item)} is not of the form COL=HIERARCHY")
        if column in mapping:
            raise InputError(f"{where}: quasi-identifier {echo(column)} is given twice")
        mapping[column] = spec
    return mapping


class _Options:
    """Typed access to flag-named options; every error names where they came from."""

    def __init__(self, options: Mapping[str, object], where: str) -> None:
        refuse_two_spellings(options, where)
        self.values = {canonical_key(key): value for key, value in options.items()}
        self.where = where
        unknown = sorted(set(self.values) - JOB_KEYS)
        if unknown:
            listed = ", ".join(echo(key) for key in unknown[:3]) + (
                f" and {len(unknown) - 3} more" if len(unknown) > 3 else ""
            )
            raise InputError(
                f"{where}: unknown key(s) {listed}; known: {', '.join(sorted(JOB_KEYS))}"
            )

    def _bad(self, key: str, expected: str) -> InputError:
        return InputError(f"{self.where}: '{key}' must be {expected}, got {echo(self.values[key])}")

    def integer(self, key: str) -> int | None:
        value = self.values.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self._bad(key, "a whole number")
        return value

    def number(self, key: str) -> float | None:
        value = self.values.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self._bad(key, "a number")
        return float(value)

    def fraction(self, key: str) -> float | None:
        """A fraction, or a percentage written as a string (``"4%"``)."""
        value = self.values.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise self._bad(key, 'a fraction (0.04) or a percentage ("4%")')
        try:
            return parse_fraction(value, key)
        except InputError as error:
            raise InputError(f"{self.where}: {error}") from None

    def text(self, key: str) -> str | None:
        value = self.values.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self._bad(key, "a string")
        return value

    def choice(self, key: str, choices: Sequence[_Choice]) -> _Choice | None:
        """One of ``choices``, given as a string."""
        value = self.values.get(key)
        if value is None:
            return None
        for choice in choices:
            if value == choice:
                return choice
        raise self._bad(key, " or ".join(f"'{choice}'" for choice in choices))

    def boolean(self, key: str) -> bool:
        value = self.values.get(key, False)
        if not isinstance(value, bool):
            raise self._bad(key, "true or false")
        return value

    def names(self, key: str) -> tuple[str, ...]:
        value = self.values.get(key)
        if value is None:
            return ()
        if isinstance(value, str):
            return (value,)
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad(key, "a list of column names")
        return tuple(value)

    def per_column(self, key: str, kind: type[int] | type[float]) -> dict[str, int | float]:
        """A table ``{COL = V}`` or a list of ``COL=V`` strings, values of ``kind``."""
        value = self.values.get(key)
        if value is None:
            return {}
        if isinstance(value, str):
            value = [value]
        pairs: list[tuple[str, object]] = []
        if isinstance(value, Mapping):
            pairs = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            for item in value:
                column, sep, text = str(item).partition("=")
                if not sep or not column:
                    raise InputError(
                        f"{self.where}: {key} entry {echo(item)} is not of the form COL=VALUE"
                    )
                pairs.append((column, text))
        else:
            raise self._bad(key, "a table or a list of COL=VALUE strings")
        result: dict[str, int | float] = {}
        for column, raw in pairs:
            try:
                number = kind(raw) if isinstance(raw, str) else raw
            except ValueError:
                raise InputError(
                    f"{self.where}: {key} of {echo(column)}: {echo(raw)} is not a number"
                ) from None
            if isinstance(number, bool) or not isinstance(number, int | float):
                raise InputError(
                    f"{self.where}: {key} of {echo(column)} must be a number, got {echo(raw)}"
                )
            result[column] = number
        return result

    def location(self, key: str, base_dir: Path) -> Path | str | None:
        """A file (as :meth:`path`), or data named where it lives (a database URL, a Spark
        table, a URI: :func:`kanonym.engine.choose.is_location`), kept as it is."""
        value = self.text(key)
        return value if is_location(value) else self.path(key, base_dir)

    def path(self, key: str, base_dir: Path) -> Path | None:
        value = self.text(key)
        if value is not None and value.endswith(("/", os.sep)):
            # A Path drops the slash: 'out/new/' would be written as a file named 'new'.
            raise InputError(
                f"{self.where}: {key} {value} ends with a '/', so it names a folder: give a "
                "file path (e.g. a name inside that folder)"
            )
        return None if value is None else base_dir / value


def job_from_options(
    options: Mapping[str, object],
    *,
    base_dir: Path,
    where: str = "options",
    job_file: Path | None = None,
    more_outputs: Mapping[str, Path | None] | None = None,
) -> ReleaseJob:
    """Build a :class:`ReleaseJob` from flag-named options (TOML keys or CLI flags).

    Keys may use ``-`` or ``_``. Relative paths (input, output, report,
    hierarchy files) are resolved against ``base_dir``: the job file's folder,
    or the working directory for command-line flags. Before any file is read,
    the destinations (output, report, report-html and ``more_outputs``) are
    checked with :func:`kanonym.io.paths.check_destinations` against the
    inputs (the table, the hierarchy files and ``job_file``) and each other.
    A Parquet input is refused, from its footer alone, when a column it
    releases or reads holds lists, arrays or structs
    (:class:`~kanonym.errors.NestedColumnError`): only identifying columns,
    which are dropped, may.
    """
    opts = _Options(options, where)
    k = opts.integer("k")
    if k is None and any(m.startswith("differential-privacy:") for m in opts.names("models")):
        k = 1  # differential privacy derives its own k (SafePub); k-anonymity adds nothing
    source = opts.location("input", base_dir)
    output = opts.location("output", base_dir)
    population = opts.location("population", base_dir)
    for key, value in (
        ("input", source),
        ("output", output),
        ("qi", opts.values.get("qi")),
        ("k", k),
    ):
        if value is None:
            raise InputError(f"{where}: '{key}' is required")
    assert source is not None and output is not None and k is not None
    qi = _qi_mapping(opts.values["qi"], where)
    report, report_html = opts.path("report", base_dir), opts.path("report-html", base_dir)
    sensitive_specs = {
        name: spec
        for name, sep, spec in (entry.partition("=") for entry in opts.names("sensitive"))
        if sep
    }
    engine = cast(EngineName | None, opts.choice("engine", get_args(EngineName)))
    if is_postgres_url(output) and not (is_postgres_url(source) and engine in (None, "postgres")):
        raise InputError(
            f"{where}: output {redact(str(output))} is a PostgreSQL table, written by the "
            "PostgreSQL engine of that database: give a postgresql:// input there too"
        )
    published = _published_by_engine(source, output, engine)
    if is_location(output) and not published:
        raise InputError(
            f"{where}: output {redact(str(output))} is written by the engine that reads its "
            "kind of input (a table by its database's engine, spark-table: by Spark): give "
            "such an input (and engine), or a file output"
        )
    replace = opts.boolean("replace")
    check_lattice = opts.boolean("check-lattice")
    if check_lattice and report_html is None:
        # It checks the lattice for the HTML report's figure, and for nothing else.
        raise InputError(
            f"{where}: 'check-lattice' checks the lattice for the HTML report only: give "
            "'report-html' (--report-html) too, or leave it out"
        )
    folder = isinstance(output, Path) and output.is_dir()
    if published and folder and not replace:
        # Refused before the search, as a file destination's problems are.
        raise DestinationExistsError(str(output), "directory")
    check_destinations(
        {
            "output": None if isinstance(output, str) or (published and folder) else output,
            "report": report,
            "report-html": report_html,
            **(more_outputs or {}),
        },
        {
            "input table": None if isinstance(source, str) else source,
            "population table": population if isinstance(population, Path) else None,
            "job file": job_file,
            **{
                f"hierarchy file of '{name}'": spec_file(spec, base_dir=base_dir)
                for name, spec in {**qi, **sensitive_specs}.items()
            },
        },
    )
    duplicates = opts.choice("hierarchy-duplicates", DUPLICATES) or "error"
    delimiter = opts.text("delimiter")
    models = parse_models(
        opts.names("models"),
        sensitive_specs,
        base_dir=base_dir,
        duplicates=duplicates,
        table=cache(lambda: _load_for_models(source, delimiter)),
    )
    # The values a job file or the command line gives are checked by the config;
    # the casts only tell mypy which names it accepts.
    config = AnonymizationConfig(
        quasi_identifiers=qi,
        k=k,
        identifying=opts.names("identifying"),
        sensitive=tuple(entry.partition("=")[0] for entry in opts.names("sensitive")),
        insensitive=opts.names("insensitive"),
        keep_unlisted=opts.boolean("keep-unlisted"),
        models=models,
        suppression=SuppressionLimit(
            fraction=opts.fraction("max-suppression"), rows=opts.integer("max-suppressed-rows")
        ),
        algorithm=cast(AlgorithmName, opts.text("algorithm") or DEFAULT_ALGORITHM),
        metric=cast(MetricName | None, opts.text("metric")),
        policy=cast(PolicyName | None, opts.text("policy")),
        time_limit=opts.number("time-limit"),
        weights={c: float(w) for c, w in opts.per_column("weight", float).items()},
        min_levels=cast(dict[str, int], opts.per_column("min-level", int)),
        max_levels=cast(dict[str, int], opts.per_column("max-level", int)),
        seed=opts.integer("seed"),
        technique=cast(TechniqueName | None, opts.text("technique")),
        base_dir=base_dir,
        numeric=opts.names("numeric"),
        categorical=opts.names("categorical"),
        hierarchy_duplicates=duplicates,
    )
    if not isinstance(source, str):
        _refuse_nested(source, config)
    return ReleaseJob(
        input=source,
        output=output,
        report=report,
        report_html=report_html,
        delimiter=delimiter,
        config=config,
        engine=engine,
        replace=replace,
        population=population,
        check_lattice=check_lattice,
    )


def _published_by_engine(source: Path | str, output: Path | str, engine: str | None) -> bool:
    """Whether the job's engine writes ``output`` itself (a table of its database; Parquet
    or a table through Spark; a file the streaming or DuckDB engine streams) rather than
    kanonym writing a file."""
    chosen = engine or default_engine(source)
    if chosen == "postgres":
        return is_postgres_url(output)
    if chosen == "spark":
        return spark_writes(output)
    if chosen == "duckdb":
        return is_duckdb_url(output) or not is_location(output)
    if chosen == "streaming":
        return not is_location(output)
    return False


def _load_for_models(source: Path | str, delimiter: str | None) -> Table:
    """The input in memory, for a model that builds a sensitive attribute's hierarchy."""
    if isinstance(source, str):
        raise InputError(
            f"{redact(source)}: models that read a sensitive attribute need the table in "
            "memory (the embedded engine); read it into a file or DataFrame first"
        )
    return load(source, delimiter=delimiter)


def parse_models(
    specs: Sequence[str],
    hierarchies: Mapping[str, str | Path],
    *,
    base_dir: Path | None,
    duplicates: Duplicates,
    table: Callable[[], Table],
) -> tuple[PrivacyModel, ...]:
    """The privacy models a job written as text names (``--model`` specs, job files, reports).

    Each spec is read by :func:`kanonym.models.parse_model`. ``hierarchies``
    maps a sensitive attribute to its hierarchy spec (``--sensitive
    ATTR=HIERARCHY``), which hierarchical and ordered t-closeness read: an ARX
    file is read as it is, a builder (``mask``, ``interval:...``) is built on
    the attribute's values in ``table()``, called only then.

    Raises:
        InputError: a malformed spec or hierarchy, or an attribute that the
            table lacks or its hierarchy does not cover.

    Example:
        >>> import polars as pl
        >>> from kanonym.io import load
        >>> rows = load(pl.DataFrame({"salary": ["30", "40", "90"]}))
        >>> models = parse_models(["t-closeness:hierarchical:0.5:salary"],
        ...                       {"salary": "interval:50"}, base_dir=None,
        ...                       duplicates="error", table=lambda: rows)
        >>> models[0].hierarchy.level_values(1)
        ('0-49', '50-99')
    """
    resolved: dict[str, Hierarchy] = {}
    for name, spec in hierarchies.items():
        source = _hierarchy(spec, base_dir, f"sensitive attribute '{name}'", duplicates)
        if not isinstance(source, Hierarchy):
            rows = table()
            if name not in rows.frame.columns:
                raise InputError(f"{rows.source}: sensitive attribute {echo(name)} is not a column")
            values = rows.frame.get_column(name).cast(pl.String).unique().to_list()
            source = resolve(source, values, column=name, source=rows.source)
        resolved[name] = source
    return tuple(parse_model(spec, sensitive_hierarchies=resolved) for spec in specs)


def _refuse_nested(source: Path, config: AnonymizationConfig) -> None:
    """Refuse, before the table is read, a nested column the job would release or read.

    Polars can neither generalize lists or structs nor write them as CSV; it
    failed with a traceback after the search. Identifying columns are dropped,
    so they may hold anything.
    """
    schema = read_schema(source)
    if schema is None:
        return
    for column, kind in nested_columns(schema).items():
        if column not in config.identifying:
            raise NestedColumnError(str(source), column, kind)


def read_job_file(path: Path) -> dict[str, object]:
    """The raw options of a TOML job file; errors name the file.

    A key written in two spellings (``max-suppression`` and
    ``max_suppression``) is refused: one value would be ignored.
    """
    try:
        with path.open("rb") as handle:
            options = tomllib.load(handle)
    except FileNotFoundError:
        raise InputError(f"{path}: job file not found") from None
    except OSError as error:
        raise InputError(f"{path}: cannot read job file ({error.strerror})") from None
    except tomllib.TOMLDecodeError as error:
        raise InputError(f"{path}: not valid TOML ({clip(str(error))})") from None
    except UnicodeDecodeError as error:
        # TOML is UTF-8 by definition; a file saved as cp1252 or latin-1 fails here.
        raise InputError(
            f"{path}: the job file is not UTF-8 (byte {error.object[error.start]:#04x} at offset "
            f"{error.start}); save it as UTF-8"
        ) from None
    except RecursionError:
        # tomllib parses nested arrays and inline tables recursively.
        raise InputError(
            f"{path}: arrays or inline tables nested too deeply for a job file; "
            "a job's values are flat lists and tables"
        ) from None
    refuse_two_spellings(options, str(path))
    return options
