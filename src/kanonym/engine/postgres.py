"""The PostgreSQL engine: the rows stay in the database, only the frequency set leaves it.

The input is a table or a query on a PostgreSQL server, named by a URL:
``postgresql://USER@HOST:PORT/DB?table=SCHEMA.T`` or ``...?query=SELECT ...``
(the password comes from ``PGPASSWORD``, ``.pgpass`` or a service file, never
from a message: :func:`redact` hides any password a URL carries). The work is
split as the engine seam (:mod:`kanonym.engine.base`) puts it:

* **group** is one ``GROUP BY`` over the quasi-identifiers (values compared
  as text, the missing value a value of its own), copied out in bulk with
  ``COPY ... TO STDOUT``: the frequency set is all that leaves the server, and
  the search runs on it unchanged.
* **generalize** loads one small mapping table per quasi-identifier (raw value
  -> code and label at the chosen level) and a table of the suppressed classes
  with ``COPY ... FROM STDIN``, then builds the release with one
  ``CREATE TEMP TABLE ... AS SELECT`` that joins the mappings, leaves out the
  suppressed classes and orders the rows by a seeded hash (the shuffle).
* **verify** re-checks the release in SQL, with code that shares nothing with
  the mapping tables: every released row must be a distinct input row
  generalized along the hierarchies themselves (``EXCEPT ALL`` against
  labels recomputed from :attr:`Hierarchy.levels`), as many rows as the
  search says, and no class below k (``GROUP BY ... HAVING count(*) < k``).

Everything runs in one transaction on one connection; a release written to a
table of the same database (:meth:`PostgresEngine.publish`) is created and
filled in that transaction and committed only after the re-check passed.

psycopg 3 (the ``postgres`` extra) is imported only when this engine is used.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import numpy as np
import polars as pl

from kanonym.encode import EncodedTable, Grouped, encode_grouped
from kanonym.engine.base import (
    Expected,
    Generalization,
    TupleRecoding,
    verify_counted_models,
    verify_covering,
)
from kanonym.errors import DestinationExistsError, InputError, VerificationError
from kanonym.hierarchy import Hierarchy

if TYPE_CHECKING:
    import psycopg
    from psycopg.sql import SQL, Composable, Composed

SCHEMES = ("postgresql://", "postgres://")
# Our own query parameters; every other one (sslmode, ...) goes to the server.
_OWN = ("table", "query")
_RELEASE = "kanonym_release"
WORK_MEM = "256MB"
"""The session's ``work_mem``: what one sort or hash may hold before spilling to disk."""
# A local recoding's release keeps each quasi-identifier's input value beside its label
# for the re-check (never fetched nor published).
_RAW = "_kanonym_raw_{}"
_HASH = "_kanonym_hash"


def is_postgres_url(data: object) -> bool:
    """Whether ``data`` names a PostgreSQL input or output (a ``postgresql://`` URL)."""
    return isinstance(data, str) and data.startswith(SCHEMES)


def redact(url: str) -> str:
    """``url`` with any password replaced by ``***`` (for messages, reports and ledgers).

    Example:
        >>> redact("postgresql://ann:s3cret@db:5432/health?table=public.visits")
        'postgresql://ann:***@db:5432/health?table=public.visits'
    """
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


@dataclass(frozen=True)
class PostgresLocation:
    """A table or query on a server, parsed from a URL.

    Attributes:
        conninfo: the URL without kanonym's own parameters (what psycopg connects to).
        table: ``(schema, name)`` of the table, or None for a query.
        query: the ``SELECT`` whose rows are the input, or None for a table.
        shown: the URL as messages show it (password redacted).
    """

    conninfo: str
    table: tuple[str, str] | None
    query: str | None
    shown: str

    @classmethod
    def parse(cls, url: str, *, what: str = "input") -> PostgresLocation:
        """Read ``postgresql://USER@HOST:PORT/DB?table=SCHEMA.T`` (or ``?query=``).

        Raises:
            InputError: the URL names neither or both of a table and a query,
                or the table name is not ``NAME`` or ``SCHEMA.NAME``.
        """
        shown = redact(url)
        parts = urlsplit(url)
        params = parse_qsl(parts.query, keep_blank_values=True)
        own = {k: v for k, v in params if k in _OWN}
        rest = [(k, v) for k, v in params if k not in _OWN]
        if ("table" in own) == ("query" in own):
            raise InputError(
                f"{shown}: name the {what} with ?table=SCHEMA.NAME or ?query=SELECT ..."
                " (one of the two)"
            )
        conninfo = urlunsplit(parts._replace(query=urlencode(rest)))
        if "query" in own:
            return cls(conninfo, None, own["query"], shown)
        name = own["table"]
        pieces = name.split(".")
        if not 1 <= len(pieces) <= 2 or not all(pieces):
            raise InputError(f"{shown}: table '{name}' is not NAME or SCHEMA.NAME")
        schema, table = pieces if len(pieces) == 2 else ("public", pieces[0])
        return cls(conninfo, (schema, table), None, shown)


def connect(location: PostgresLocation) -> psycopg.Connection[Any]:
    """A connection to ``location``'s server, or an :class:`InputError` saying why not
    (without the password)."""
    try:
        import psycopg
    except ImportError as error:  # pragma: no cover - the extra is part of dev
        raise InputError(
            "PostgreSQL needs the psycopg driver: pip install 'kanonym[postgres]'"
        ) from error
    try:
        connection = psycopg.connect(location.conninfo, autocommit=False, connect_timeout=10)
    except psycopg.OperationalError as error:
        reason = _first_line(str(error))
        raise InputError(f"{location.shown}: cannot connect: {reason}") from None
    # Grouping, joining, sorting and EXCEPT ALL over millions of rows spill to disk with
    # the default 4 MB; for this session only, as any user may set it.
    connection.execute(_sql().SQL("SET work_mem = {}").format(_sql().Literal(WORK_MEM)))
    connection.commit()
    return connection


def _first_line(message: str) -> str:
    """The first non-empty line of a server message, with any password-like text hidden."""
    line = next((part.strip() for part in message.splitlines() if part.strip()), message)
    return re.sub(r"password=\S+", "password=***", line)


def _database(conninfo: str) -> tuple[str, str, str]:
    """Host, port and database of a connection URL (two URLs on one database match)."""
    parts = urlsplit(conninfo)
    return (parts.hostname or "", str(parts.port or ""), parts.path.lstrip("/"))


def _sql() -> Any:
    from psycopg import sql

    return sql


class PostgresEngine:
    """The rows of a PostgreSQL table or query (see module docstring)."""

    name = "postgres"

    def __init__(self, url: str) -> None:
        self.location = PostgresLocation.parse(url)
        self.connection = connect(self.location)
        self._distinct: dict[str, list[str | None]] = {}
        self._groups: dict[tuple[str, ...], Grouped] = {}
        self._columns = self._read_columns()
        self.relation = self._relation("kanonym_input")
        self._rows: int | None = None

    def _relation(self, alias: str, *, as_text: bool = True) -> Composed:
        """The input as a ``FROM`` item named ``alias``: every column as text, the empty
        string read as the missing value (as kanonym reads files and data frames), unless
        ``as_text`` is false (the input as it is)."""
        sql = _sql()
        source: Composed = (
            sql.SQL("{}").format(sql.Identifier(*self.location.table))
            if self.location.table is not None
            else sql.SQL("({})").format(sql.SQL(self.location.query))
        )
        relation: Composed
        if not as_text:
            relation = sql.SQL("{} AS {}").format(source, sql.Identifier(alias))
            return relation
        texts = sql.SQL(", ").join(
            sql.SQL("NULLIF({}::text, '') AS {}").format(sql.Identifier(c), sql.Identifier(c))
            for c in self._columns
        )
        relation = sql.SQL("(SELECT {} FROM {} AS kanonym_source) AS {}").format(
            texts, source, sql.Identifier(alias)
        )
        return relation

    def _execute(self, query: Composed | SQL, params: Sequence[object] = ()) -> Any:
        """Run ``query`` and return its cursor; a server error becomes an :class:`InputError`."""
        import psycopg

        try:
            return self.connection.execute(query, params)
        except psycopg.Error as error:
            raise self._refused(error) from None

    def _refused(self, error: Exception) -> InputError:
        """A server error as one line naming the input; the failed transaction is rolled back."""
        self.connection.rollback()
        return InputError(f"{self.source}: {_first_line(str(error))}")

    def _read_columns(self) -> tuple[str, ...]:
        sql = _sql()
        cursor = self._execute(
            sql.SQL("SELECT * FROM {} LIMIT 0").format(
                self._relation("kanonym_input", as_text=False)
            )
        )
        return tuple(column.name for column in cursor.description or ())

    @property
    def source(self) -> str:
        """The input's URL, password redacted."""
        return self.location.shown

    @property
    def columns(self) -> tuple[str, ...]:
        """The input's columns, in order."""
        return self._columns

    @property
    def rows(self) -> int:
        """The input's number of rows (counted once, or summed from a grouping)."""
        if self._rows is None:
            sql = _sql()
            cursor = self._execute(sql.SQL("SELECT count(*) FROM {}").format(self.relation))
            self._rows = int(cursor.fetchone()[0])
        return self._rows

    def require(self, names: Sequence[str]) -> None:
        """Raise :class:`InputError` naming the first of ``names`` the input lacks."""
        for name in names:
            if name not in self._columns:
                raise InputError(
                    f"{self.source}: no column '{name}' (columns: {', '.join(self._columns)})"
                )

    def distinct_values(self, column: str) -> list[str | None]:
        """The distinct values of ``column`` as text."""
        return self.distinct(column)[column]

    def distinct(self, *columns: str) -> dict[str, list[str | None]]:
        """The distinct values of several columns as text, read off their grouping
        (:meth:`group`, kept for :meth:`encode`: one scan serves both, and the row count)."""
        missing = [c for c in dict.fromkeys(columns) if c not in self._distinct]
        if missing:
            grouped = self.group(list(dict.fromkeys(columns)))
            for column in missing:
                values = grouped.values.get_column(column).unique(maintain_order=True)
                self._distinct[column] = values.to_list()
        return {c: self._distinct[c] for c in columns}

    def group(self, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` (as text) with their counts: one ``GROUP BY``,
        copied out in bulk (kept: declaring and encoding group the same columns)."""
        key = tuple(columns)
        if key in self._groups:
            return self._groups[key]
        sql = _sql()
        if not columns:
            height = 1 if self.rows > 0 else 0
            return Grouped(pl.DataFrame(height=height), np.full(height, self.rows, np.int64))
        texts = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
        positions = sql.SQL(", ").join(sql.SQL(str(j + 1)) for j in range(len(columns)))
        query = sql.SQL("SELECT {}, count(*) AS kanonym_count FROM {} GROUP BY {}").format(
            texts, self.relation, positions
        )
        frame = self._copy_out(query, [*columns, "kanonym_count"])
        counts = frame.get_column("kanonym_count").cast(pl.Int64).to_numpy()
        grouped = Grouped(frame.drop("kanonym_count"), np.ascontiguousarray(counts))
        self._groups[key] = grouped
        if self._rows is None:
            self._rows = int(counts.sum())
        return grouped

    def _copy_out(self, query: Composed, names: Sequence[str]) -> pl.DataFrame:
        """The rows of ``query`` as text columns, through ``COPY ... TO STDOUT`` (CSV, every
        value quoted so that an empty string and the missing value stay apart)."""
        import psycopg

        sql = _sql()
        copy = sql.SQL("COPY ({}) TO STDOUT WITH (FORMAT csv, HEADER false, FORCE_QUOTE *)")
        buffer = io.BytesIO()
        try:
            with self.connection.cursor() as cursor, cursor.copy(copy.format(query)) as stream:
                for chunk in stream:
                    buffer.write(chunk)
        except psycopg.Error as error:
            raise self._refused(error) from None
        schema = dict.fromkeys(names, pl.String)
        if buffer.tell() == 0:
            return pl.DataFrame(schema=schema)
        buffer.seek(0)
        return pl.read_csv(buffer, has_header=False, new_columns=list(names), schema=schema)

    def _copy_in(self, table: Composable, frame: pl.DataFrame) -> None:
        """Load ``frame`` into ``table`` with ``COPY ... FROM STDIN`` (CSV, in bulk)."""
        import psycopg

        sql = _sql()
        names = sql.SQL(", ").join(sql.Identifier(c) for c in frame.columns)
        # In CSV, PostgreSQL reads an unquoted empty field as NULL and a quoted one as
        # the empty string: every text value is quoted, the missing value left empty.
        text = frame.write_csv(include_header=False, quote_style="non_numeric")
        statement = sql.SQL("COPY {} ({}) FROM STDIN WITH (FORMAT csv)").format(table, names)
        try:
            with self.connection.cursor() as cursor, cursor.copy(statement) as stream:
                stream.write(text.encode("utf-8"))
        except psycopg.Error as error:
            raise self._refused(error) from None

    def _temporary(self, table: Composable, columns: Composable) -> None:
        """Create an empty temporary table (replacing one of that name in this session)."""
        sql = _sql()
        self._execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
        self._execute(sql.SQL("CREATE TEMP TABLE {} ({})").format(table, columns))

    def encode(self, hierarchies: Mapping[str, Hierarchy]) -> EncodedTable:
        """The quasi-identifiers grouped in the server, then encoded into the frequency set."""
        encoded, _ = encode_grouped(self.group(list(hierarchies)), hierarchies)
        return encoded

    def generalize(self, plan: Generalization) -> PostgresRelease:
        """Build the release as a temporary table in the server (not yet verified)."""
        sql = _sql()
        names = plan.encoded.names
        self._execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(_RELEASE)))
        selected: list[Composable] = []
        joins: list[Composable] = []
        suppressed_keys: list[Composable] = []
        for j, name in enumerate(names):
            attribute = plan.encoded.attributes[j]
            level = plan.levels[j]
            labels = attribute.level_labels[level]
            codes = attribute.level_maps[level].tolist()
            leaves = attribute.level_labels[0]
            mapping = sql.Identifier(f"kanonym_map_{j}")
            self._temporary(mapping, sql.SQL("raw text, code bigint, label text"))
            rows = [(leaf, code, labels[code]) for leaf, code in zip(leaves, codes, strict=True)]
            present = [r for r in rows if r[0] is not None]
            null_code = next((code for leaf, code, _ in rows if leaf is None), -1)
            null_label = labels[null_code] if null_code >= 0 else None
            self._copy_in(
                mapping,
                pl.DataFrame(
                    present,
                    schema={"raw": pl.String, "code": pl.Int64, "label": pl.String},
                    orient="row",
                ),
            )
            raw = sql.SQL("s.{}").format(sql.Identifier(name))
            alias = sql.Identifier(f"m{j}")
            joins.append(
                sql.SQL("LEFT JOIN {} {} ON {}.raw = {}").format(mapping, alias, alias, raw)
            )
            selected.append(
                sql.SQL("CASE WHEN {} IS NULL THEN {} ELSE {}.label END AS {}").format(
                    raw, sql.Literal(null_label), alias, sql.Identifier(name)
                )
            )
            suppressed_keys.append(
                sql.SQL("CASE WHEN {} IS NULL THEN {} ELSE {}.code END").format(
                    raw, sql.Literal(null_code), alias
                )
            )
        kept = [c for c in self._columns if c not in plan.drop and c not in names]
        selected.extend(sql.SQL("s.{}").format(sql.Identifier(c)) for c in kept)
        # The input's column order, the identifying columns left out.
        order = [c for c in self._columns if c not in plan.drop]
        # The suppressed classes, as code tuples at the node's levels.
        suppressed = self._suppressed_classes(plan)
        where = sql.SQL("")
        if len(suppressed):
            table = sql.Identifier("kanonym_suppressed")
            columns = sql.SQL(", ").join(
                sql.SQL("{} bigint").format(sql.Identifier(f"g{j}")) for j in range(len(names))
            )
            self._temporary(table, columns)
            self._copy_in(table, suppressed)
            keys = sql.SQL(" AND ").join(
                sql.SQL("x.{} = {}").format(sql.Identifier(f"g{j}"), key)
                for j, key in enumerate(suppressed_keys)
            )
            joins.append(sql.SQL("LEFT JOIN {} x ON {}").format(table, keys))
            where = sql.SQL("WHERE x.g0 IS NULL")
        by_name = dict(zip([*names, *kept], selected, strict=True))
        query = sql.SQL(
            "CREATE TEMP TABLE {} AS SELECT {} FROM {} {} {} ORDER BY hashtextextended(s::text, {})"
        ).format(
            sql.Identifier(_RELEASE),
            sql.SQL(", ").join(by_name[c] for c in order),
            self._relation("s"),
            sql.SQL(" ").join(joins),
            where,
            sql.Literal(plan.seed),
        )
        built = self._execute(query)
        return PostgresRelease(self, _RELEASE, tuple(order), rows=max(built.rowcount, 0))

    def _suppressed_classes(self, plan: Generalization) -> pl.DataFrame:
        """The code tuples (at the node's levels) of the classes whose rows are suppressed."""
        attributes = plan.encoded.attributes
        codes = plan.encoded.frequency_set.codes[~plan.released]
        columns = {
            f"g{j}": a.level_maps[plan.levels[j]][codes[:, j]] for j, a in enumerate(attributes)
        }
        return pl.DataFrame(columns, schema=dict.fromkeys(columns, pl.Int64)).unique()

    def verify(self, released: PostgresRelease, plan: Generalization, expected: Expected) -> None:
        """Re-check the release in SQL (see module docstring).

        Raises:
            VerificationError: a released row is no input row generalized along
                the hierarchies, the number of rows differs from the search's,
                too many rows are suppressed, a class is below k, or a class
                fails a model on sensitive values (counted in the server).
        """
        sql = _sql()
        names = plan.encoded.names
        release = sql.Identifier(released.table)
        count = self._execute(sql.SQL("SELECT count(*) FROM {}").format(release)).fetchone()[0]
        missing = self.rows - int(count)
        if missing != expected.suppressed_rows or missing > expected.max_suppressed_rows:
            raise VerificationError(
                f"{self.source}: the release lacks {missing} input rows; the search suppressed "
                f"{expected.suppressed_rows} (limit {expected.max_suppressed_rows})"
            )
        self._verify_k(released, names, expected.k)
        self._verify_rows(released, plan, expected)
        verify_counted_models(self, released, names, expected)

    def _verify_rows(
        self, released: PostgresRelease, plan: Generalization, expected: Expected
    ) -> None:
        """Every released row is a distinct input row generalized along the hierarchies."""
        sql = _sql()
        names = plan.encoded.names
        selected: list[Composable] = []
        joins: list[Composable] = []
        for j, name in enumerate(names):
            hierarchy = expected.hierarchies[name]
            level = plan.levels[j]
            check = sql.Identifier(f"kanonym_check_{j}")
            self._temporary(check, sql.SQL("raw text, label text"))
            pairs = [
                (leaf, hierarchy.levels[level][row])
                for row, leaf in enumerate(hierarchy.leaves)
                if leaf is not None
            ]
            null_label = next(
                (
                    hierarchy.levels[level][row]
                    for row, leaf in enumerate(hierarchy.leaves)
                    if leaf is None
                ),
                None,
            )
            self._copy_in(
                check,
                pl.DataFrame(pairs, schema={"raw": pl.String, "label": pl.String}, orient="row"),
            )
            raw = sql.SQL("s.{}").format(sql.Identifier(name))
            alias = sql.Identifier(f"c{j}")
            joins.append(sql.SQL("LEFT JOIN {} {} ON {}.raw = {}").format(check, alias, alias, raw))
            selected.append(
                sql.SQL("CASE WHEN {} IS NULL THEN {} ELSE {}.label END").format(
                    raw, sql.Literal(null_label), alias
                )
            )
        by_name = dict(zip(names, selected, strict=True))
        expressions = [
            by_name.get(c, sql.SQL("s.{}").format(sql.Identifier(c))) for c in released.columns
        ]
        columns = sql.SQL(", ").join(sql.Identifier(c) for c in released.columns)
        query = sql.SQL(
            "SELECT count(*) FROM (SELECT {} FROM {} EXCEPT ALL SELECT {} FROM {} {}) d"
        ).format(
            columns,
            sql.Identifier(released.table),
            sql.SQL(", ").join(expressions),
            self._relation("s"),
            sql.SQL(" ").join(joins),
        )
        stray = int(self._execute(query).fetchone()[0])
        if stray:
            raise VerificationError(
                f"{self.source}: {stray} released rows are no input row generalized at levels "
                f"{dict(zip(names, plan.levels, strict=True))}"
            )

    def recode(self, plan: TupleRecoding) -> PostgresRelease:
        """Build a local recoding's release as a temporary table in the server (not yet
        verified): the plan's tuples and pieces copied in, one ``CREATE TEMP TABLE ... AS
        SELECT`` joining them (the missing value equal to itself), the rows of split units
        ranked with ``row_number()`` in the plan's order, shuffled by a seeded hash."""
        sql = _sql()
        self._execute(sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(_RELEASE)))
        tuples = sql.Identifier("kanonym_tuples")
        pieces = sql.Identifier("kanonym_pieces")
        labels = [TupleRecoding.label(j) for j in range(len(plan.names))]
        self._temporary(
            tuples,
            sql.SQL(", ").join(
                [
                    *(
                        sql.SQL("{} text").format(sql.Identifier(TupleRecoding.key(i)))
                        for i in range(len(plan.keys))
                    ),
                    sql.SQL("{} bigint, {} boolean").format(
                        sql.Identifier(TupleRecoding.UNIT), sql.Identifier(TupleRecoding.SPLIT)
                    ),
                    *(sql.SQL("{} text").format(sql.Identifier(label)) for label in labels),
                    sql.SQL("{} bigint").format(sql.Identifier(_HASH)),
                ]
            ),
        )
        # Values are never '' (the input reads it as missing), so '' stands for the
        # missing value: the join is on plain equalities, which PostgreSQL can hash.
        keys = [TupleRecoding.key(i) for i in range(len(plan.keys))]
        self._copy_in(tuples, plan.tuples.with_columns(pl.col(keys).fill_null("")))

        def hashed(values: Sequence[Composable]) -> Composed:
            """One hash of a tuple's key values (the join's hash key, see below)."""
            text = sql.SQL("concat_ws(chr(31), {})").format(sql.SQL(", ").join(values))
            found: Composed = sql.SQL("hashtextextended({}, 0)").format(text)
            return found

        # PostgreSQL costs a hash join on several columns by its most selective one and
        # knows nothing of them together: it sorted 1M Adult-shaped rows for a merge join
        # (12 s) rather than hash them. The join hashes one key, a hash of the whole
        # tuple, as selective as the tuples are distinct (with the table's statistics
        # the planner hashes it); the values themselves are compared on the rows it
        # matches (IS NOT DISTINCT FROM is no hash key: a filter, never a second hash).
        self._execute(
            sql.SQL("UPDATE {} SET {} = {}").format(
                tuples,
                sql.Identifier(_HASH),
                hashed([sql.Identifier(key) for key in keys]),
            )
        )
        self._execute(sql.SQL("ANALYZE {}").format(tuples))
        on = sql.SQL(" AND ").join(
            [
                sql.SQL("{} = t.{}").format(
                    hashed(
                        [sql.SQL("coalesce(s.{}, '')").format(sql.Identifier(n)) for n in plan.keys]
                    ),
                    sql.Identifier(_HASH),
                ),
                *(
                    sql.SQL("coalesce(s.{}, '') IS NOT DISTINCT FROM t.{}").format(
                        sql.Identifier(name), sql.Identifier(key)
                    )
                    for name, key in zip(plan.keys, keys, strict=True)
                ),
            ]
        )
        order = [c for c in self._columns if c not in plan.drop]
        raws = [_RAW.format(j) for j in range(len(plan.names))]
        position = {name: j for j, name in enumerate(plan.names)}

        def output(rows: str, labelled: str) -> Composed:
            """The released columns (labels from ``labelled``) and the input values."""
            items: list[Composable] = [
                sql.SQL("{}.{} AS {}").format(
                    sql.Identifier(labelled if c in position else rows),
                    sql.Identifier(labels[position[c]] if c in position else c),
                    sql.Identifier(c),
                )
                for c in order
            ]
            items.extend(
                sql.SQL("{}.{} AS {}").format(
                    sql.Identifier(rows), sql.Identifier(n), sql.Identifier(r)
                )
                for n, r in zip(plan.names, raws, strict=True)
            )
            joined: Composed = sql.SQL(", ").join(items)
            return joined

        branches = [
            sql.SQL("SELECT {} FROM {} JOIN {} t ON {} WHERE NOT t.{}").format(
                output("s", "t"),
                self._relation("s"),
                tuples,
                on,
                sql.Identifier(TupleRecoding.SPLIT),
            )
        ]
        if plan.pieces.height:
            self._temporary(
                pieces,
                sql.SQL(", ").join(
                    [
                        sql.SQL("{} bigint, {} bigint, {} bigint").format(
                            sql.Identifier(TupleRecoding.UNIT),
                            sql.Identifier(TupleRecoding.FIRST),
                            sql.Identifier(TupleRecoding.LAST),
                        ),
                        *(sql.SQL("{} text").format(sql.Identifier(label)) for label in labels),
                    ]
                ),
            )
            self._copy_in(pieces, plan.pieces)
            self._execute(sql.SQL("ANALYZE {}").format(pieces))
            # The rows of a split unit, ranked by the released columns as bytes, missing first.
            ranking = sql.SQL(", ").join(
                sql.SQL('s.{} COLLATE "C" NULLS FIRST').format(sql.Identifier(c))
                for c in plan.ranked(self._columns)
            )
            unit, rank = sql.Identifier(TupleRecoding.UNIT), sql.Identifier("_kanonym_rank")
            ranked = sql.SQL(
                "SELECT s.*, t.{} AS {}, row_number() OVER (PARTITION BY t.{} ORDER BY {}) AS {} "
                "FROM {} JOIN {} t ON {} WHERE t.{}"
            ).format(
                unit,
                unit,
                unit,
                ranking,
                rank,
                self._relation("s"),
                tuples,
                on,
                sql.Identifier(TupleRecoding.SPLIT),
            )
            branches.append(
                sql.SQL(
                    "SELECT {} FROM ({}) r JOIN {} p ON p.{} = r.{} AND r.{} BETWEEN p.{} AND p.{}"
                ).format(
                    output("r", "p"),
                    ranked,
                    pieces,
                    unit,
                    unit,
                    rank,
                    sql.Identifier(TupleRecoding.FIRST),
                    sql.Identifier(TupleRecoding.LAST),
                )
            )
        query = sql.SQL(
            "CREATE TEMP TABLE {} AS SELECT * FROM ({}) u ORDER BY hashtextextended(u::text, {})"
        ).format(
            sql.Identifier(_RELEASE),
            sql.SQL(" UNION ALL ").join(branches),
            sql.Literal(plan.seed),
        )
        built = self._execute(query)
        return PostgresRelease(self, _RELEASE, tuple(order), rows=max(built.rowcount, 0))

    def verify_recoding(
        self, released: PostgresRelease, plan: TupleRecoding, expected: Expected
    ) -> None:
        """Re-check a local recoding's release in SQL, sharing nothing with the plan's
        tuples: as many rows as the input; with each quasi-identifier's input value in
        place of its label, the release is the input (``EXCEPT ALL`` is empty); every
        distinct (label, input value) pair covers (:func:`~kanonym.engine.base.verify_covering`,
        one ``GROUP BY GROUPING SETS``); no class below k; the models on sensitive values.

        Raises:
            VerificationError: naming the first failure.
        """
        sql = _sql()
        release = sql.Identifier(released.table)
        count = int(self._execute(sql.SQL("SELECT count(*) FROM {}").format(release)).fetchone()[0])
        if count != self.rows:
            raise VerificationError(
                f"{self.source}: the release holds {count} rows, the input {self.rows}; a local "
                "recoding releases every row"
            )
        raws = {name: _RAW.format(j) for j, name in enumerate(plan.names)}
        as_input = sql.SQL(", ").join(sql.Identifier(raws.get(c, c)) for c in released.columns)
        stray = self._execute(
            sql.SQL(
                "SELECT count(*) FROM (SELECT {} FROM {} EXCEPT ALL SELECT {} FROM {}) d"
            ).format(
                as_input,
                release,
                sql.SQL(", ").join(sql.Identifier(c) for c in released.columns),
                self._relation("s"),
            )
        ).fetchone()[0]
        if int(stray):
            raise VerificationError(
                f"{self.source}: {stray} released rows are no input row with its "
                "quasi-identifiers recoded"
            )
        verify_covering(self.source, self._label_pairs(released, plan.names, raws), plan, expected)
        self._verify_k(released, plan.names, expected.k)
        verify_counted_models(self, released, plan.names, expected)

    def _label_pairs(
        self, released: PostgresRelease, names: Sequence[str], raws: Mapping[str, str]
    ) -> list[list[tuple[str | None, str | None]]]:
        """Per quasi-identifier, the distinct (label, input value) pairs of the release: one
        scan (``GROUPING SETS``)."""
        sql = _sql()
        if not names:
            return []
        columns = [c for name in names for c in (name, raws[name])]
        sets = sql.SQL(", ").join(
            sql.SQL("({}, {})").format(sql.Identifier(n), sql.Identifier(raws[n])) for n in names
        )
        flags = [f"_kanonym_set_{j}" for j in range(len(names))]
        query = sql.SQL("SELECT {}, {} FROM {} GROUP BY GROUPING SETS ({})").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in columns),
            sql.SQL(", ").join(
                sql.SQL("GROUPING({}) AS {}").format(sql.Identifier(n), sql.Identifier(f))
                for n, f in zip(names, flags, strict=True)
            ),
            sql.Identifier(released.table),
            sets,
        )
        frame = self._copy_out(query, [*columns, *flags])
        pairs = []
        for j, name in enumerate(names):
            # The rows of set j: the one whose flag is 0 (its label is grouped).
            mine = frame.filter(pl.col(flags[j]) == "0")
            pairs.append(list(zip(mine.get_column(name), mine.get_column(raws[name]), strict=True)))
        return pairs

    def _verify_k(self, released: PostgresRelease, names: Sequence[str], k: int) -> None:
        """No class of the release (its rows grouped on ``names``) below k."""
        sql = _sql()
        qis = sql.SQL(", ").join(sql.Identifier(n) for n in names)
        small = self._execute(
            sql.SQL(
                "SELECT count(*) FROM (SELECT 1 FROM {} GROUP BY {} HAVING count(*) < %s) c"
            ).format(sql.Identifier(released.table), qis),
            [k],
        ).fetchone()[0]
        if names and int(small) > 0:
            raise VerificationError(
                f"{self.source}: {small} released classes have fewer than k={k} rows"
            )

    def fetch(self, released: PostgresRelease) -> pl.DataFrame:
        """The release's rows, copied out in bulk (text columns), in their shuffled order."""
        return self._copy_out(released.select(), released.columns)

    def counts(self, released: PostgresRelease, columns: Sequence[str]) -> Grouped:
        """The distinct tuples of ``columns`` in the release with their counts (one
        ``GROUP BY``, copied out)."""
        sql = _sql()
        if not columns:
            return Grouped(pl.DataFrame(height=1), np.array([released.rows], np.int64))
        texts = sql.SQL(", ").join(sql.Identifier(c) for c in columns)
        positions = sql.SQL(", ").join(sql.SQL(str(j + 1)) for j in range(len(columns)))
        query = sql.SQL("SELECT {}, count(*) FROM {} GROUP BY {}").format(
            texts, sql.Identifier(released.table), positions
        )
        frame = self._copy_out(query, [*columns, "kanonym_count"])
        counts = frame.get_column("kanonym_count").cast(pl.Int64).to_numpy()
        return Grouped(frame.drop("kanonym_count"), np.ascontiguousarray(counts))

    def publishes(self, destination: str) -> bool:
        """A ``postgresql://`` output is a table this engine creates (:meth:`publish`)."""
        return is_postgres_url(destination)

    def publish(self, released: PostgresRelease, destination: str, *, replace: bool) -> None:
        """Create ``destination`` (``postgresql://...?table=SCHEMA.R`` on this database) as a
        copy of the verified release and commit: readers see the whole table or none.

        Raises:
            InputError: ``destination`` is on another database or names a query,
                the table exists and ``replace`` is false, or the server refuses
                (no permission to create): the transaction is rolled back and
                nothing is left.
        """
        import psycopg

        sql = _sql()
        target = self.destination(destination, replace=replace)
        try:
            # A savepoint: a refused statement leaves the verified release for another try.
            with self.connection.transaction():
                if replace:
                    self.connection.execute(
                        sql.SQL("DROP TABLE IF EXISTS {}").format(sql.Identifier(*target))
                    )
                self.connection.execute(
                    sql.SQL("CREATE TABLE {} AS {}").format(
                        sql.Identifier(*target), released.select()
                    )
                )
        except psycopg.Error as error:
            raise InputError(f"{self.source}: {_first_line(str(error))}") from None
        try:
            self.connection.commit()
        except psycopg.Error as error:
            raise self._refused(error) from None

    def destination(self, url: str, *, replace: bool) -> tuple[str, str]:
        """``(schema, table)`` of an output URL this engine can write, checked in the server:
        the same database, a table (not a query), absent unless ``replace``, and a schema
        the user may create tables in.

        Raises:
            InputError: naming the output and the reason.
        """
        target = PostgresLocation.parse(url, what="output")
        if target.table is None:
            raise InputError(f"{target.shown}: the output is a table: ?table=SCHEMA.NAME")
        if _database(target.conninfo) != _database(self.location.conninfo):
            raise InputError(
                f"{target.shown}: the output table must be in the input's database "
                f"({redact(self.location.conninfo)})"
            )
        schema, name = target.table
        exists, may_create = self._execute(
            _sql().SQL(
                "SELECT to_regclass(quote_ident(%s) || '.' || quote_ident(%s)) IS NOT NULL, "
                "coalesce((SELECT has_schema_privilege(oid, 'CREATE') FROM pg_namespace "
                "WHERE nspname = %s), false)"
            ),
            [schema, name, schema],
        ).fetchone()
        if exists and not replace:
            raise DestinationExistsError(target.shown, f"table {schema}.{name}")
        if not may_create:
            raise InputError(
                f"{target.shown}: no permission to create tables in schema '{schema}' "
                "(or it does not exist)"
            )
        return schema, name

    def close(self) -> None:
        """End the transaction (nothing of it is kept) and the connection."""
        if not self.connection.closed:
            self.connection.rollback()
            self.connection.close()


@dataclass(frozen=True, eq=False)
class PostgresRelease:
    """A release built in the server: a temporary table of its connection.

    Attributes:
        engine: the engine whose connection holds it.
        table: the temporary table's name.
        columns: the released columns, in order.
    """

    engine: PostgresEngine
    table: str
    columns: tuple[str, ...]
    rows: int = 0

    def select(self) -> Composed:
        """``SELECT`` of the released columns, in the release's order (a local recoding's
        table also holds the input values the re-check compares its labels with)."""
        sql = _sql()
        query: Composed = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in self.columns), sql.Identifier(self.table)
        )
        return query
