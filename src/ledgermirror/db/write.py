"""The writer: rows by table and column name into the mirror schema, typed from :mod:`ledgermirror.db.schema`.

Three ways in:

* **Append** (:func:`copy_rows`, :func:`copy_records`, or :func:`encode` + :func:`copy_chunks` to build the
  records in another thread): a batched binary ``COPY`` (asyncpg ``copy_records_to_table``). Rows are dicts
  (column name -> value) or a column-name tuple with value tuples; omitted columns get their database
  default. A row of a versioned table whose ``timestamp_range`` is closed goes to the ``<table>_history``
  twin (history routing).
* **Upsert** (:func:`upsert`): the reference importer's merge rules (``upsert_history.vm``). Rows are given
  to one statement as an array per column (staged in a temporary table where a column is an array itself),
  and for every key that already has a current row:

  1. a versioned table's current row is copied to ``<table>_history`` with its range closed at the lower
     bound of the update (``[old lower, new lower)``); an update with the same lower bound replaces the
     current version in place and makes no history row (so replaying an update changes nothing);
  2. the current row is updated column by column: *new, else existing* (a NULL or an omitted column leaves
     the stored value unchanged), except the table's ``keep_existing`` columns (kept once set) and its
     ``replace_nulls`` columns (a new version that gives NULL or omits them clears them: custom fee lists,
     NFT spenders);

  and a key without a current row is inserted (omitted columns get their defaults; for a table with
  ``inserted_with``, only by a row that gives that column: ``token``'s ``created_timestamp``). A versioned
  table's row without ``timestamp_range`` is a partial update of running values (balance, nonce): it updates an
  existing row, makes no history, and is dropped for a key the table does not hold. Several rows for one key in one
  call are applied in the order given (rows with the same lower bound are merged first). An update older
  than the current row is ignored. The three parts are one statement (:func:`merge_sql`), prepared once per
  connection: one round trip. The rows of one round are staged together whatever columns each gives: an
  omitted column is staged as NULL, which merges the same, except where it is not (:func:`flagged`: a default
  to insert, a ``replace_nulls`` column to keep), for which a bit per column says whether the row gave it.
  The work that needs no database (checks, types, rounds, the statements' arguments) is :func:`plan_upsert`,
  which another thread may do ahead (the overlapped import's row builder); :func:`write_merge` sends it.
* **Text** (:func:`insert_text`): one row whose values are PostgreSQL input text, each cast through ``text``
  to its column's type (without modifier), so PostgreSQL's own input functions parse them. The conformance
  loader uses it to reproduce what node-postgres sends.

Every statement is composed here from model names only; values are always bound or copied, never formatted.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import operator
import weakref
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import asyncpg
import orjson
from asyncpg import Range
from asyncpg.prepared_stmt import PreparedStatement

from ledgermirror.db.schema import NO_DEFAULT, RANGE_COLUMN, Kind, SchemaError, Table, table

DEFAULT_CHUNK_ROWS = 20_000
_STAGE_PREFIX = "ledgermirror_stage_"
_GIVEN = "ledgermirror_given"
"""The staging tables' extra column: which of the table's :func:`flagged` columns a staged row gives (a bit
each, in their order)."""

Row = Mapping[str, Any]
Record = tuple[Any, ...]


class WriteError(ValueError):
    """Rows the writer cannot take (a required column or key missing, a value of the wrong shape)."""


@dataclass(frozen=True, slots=True)
class CopyChunk:
    """Records ready for one binary COPY into ``table``."""

    table: str
    columns: tuple[str, ...]
    records: list[Record]


# Values ------------------------------------------------------------------------------------------------------


def as_range(value: Any) -> Range[Any] | None:
    """An ``int8range`` value: a Range as it is, ``(lower, upper)`` meaning ``[lower, upper)`` (None is
    unbounded), or a lower bound alone meaning ``[lower, ∞)``."""
    if value is None or type(value) is Range:
        return value
    if isinstance(value, (tuple, list)):
        if len(value) != 2:
            raise WriteError(f"a range needs (lower, upper), not {value!r}")
        return Range(value[0], value[1])
    if isinstance(value, int) and not isinstance(value, bool):
        return Range(value, None)
    raise WriteError(f"not a range: {value!r}")


def as_json(value: Any) -> str | None:
    """A ``jsonb`` value: JSON text as it is, anything else serialised."""
    if value is None or type(value) is str:
        return value
    return orjson.dumps(value).decode()


_CONVERTERS: dict[Kind, Callable[[Any], Any]] = {Kind.RANGE: as_range, Kind.JSON: as_json}


@functools.cache
def _converters(model: Table) -> dict[str, Callable[[Any], Any]]:
    """The table's columns whose values are converted on the way in (ranges, JSON), with their converter."""
    return {column.name: _CONVERTERS[column.kind] for column in model.columns if column.kind in _CONVERTERS}


def _is_closed(value: Range[Any] | None) -> bool:
    return value is not None and value.upper is not None


# Append ------------------------------------------------------------------------------------------------------


def _check_columns(model: Table, columns: tuple[str, ...]) -> None:
    model.check_columns(columns)
    missing = [column.name for column in model.columns if column.required and column.name not in columns]
    if missing:
        raise WriteError(f"table {model.name}: rows need {', '.join(missing)}")


def _convert(model: Table, columns: tuple[str, ...], records: list[Record]) -> list[Record]:
    """Records with range and JSON values in the form asyncpg's binary COPY takes."""
    converters = _converters(model)
    conversions = [(index, converters[name]) for index, name in enumerate(columns) if name in converters]
    for index, convert in conversions:
        wanted = Range if convert is as_range else str
        if set(map(type, map(operator.itemgetter(index), records))) <= {wanted, type(None)}:
            continue
        records = list(records)  # only the records holding a value to convert are made again
        for position, record in enumerate(records):
            value = record[index]
            if value is not None and type(value) is not wanted:
                records[position] = (*record[:index], convert(value), *record[index + 1 :])
    return records


def encode_records(
    table_name: str, columns: Sequence[str], records: Iterable[Sequence[Any]], *, route: bool = True
) -> list[CopyChunk]:
    """Value tuples in ``columns`` order as COPY chunks, typed from the model; with ``route``, rows of a
    versioned table with a closed range go to its history twin."""
    names = tuple(columns)
    given: list[Sequence[Any]] = records if isinstance(records, list) else list(records)
    if set(map(type, given)) - {tuple}:
        given = [record if type(record) is tuple else tuple(record) for record in given]
    rows = cast("list[Record]", given)  # every one a tuple now
    for size in set(map(len, rows)):
        if size != len(names):
            raise WriteError(f"table {table_name}: a record has {size} values for {len(names)} columns")
    return _chunks(table(table_name), names, rows, route)


def _chunks(model: Table, names: tuple[str, ...], rows: list[Record], route: bool) -> list[CopyChunk]:
    _check_columns(model, names)
    rows = _convert(model, names, rows)
    if not (route and model.history and RANGE_COLUMN in names):
        return [CopyChunk(model.name, names, rows)] if rows else []
    at = names.index(RANGE_COLUMN)
    current = [record for record in rows if not _is_closed(record[at])]
    if len(current) == len(rows):
        return [CopyChunk(model.name, names, rows)]
    closed = [record for record in rows if _is_closed(record[at])]
    chunks = [CopyChunk(model.name, names, current)] if current else []
    chunks.append(CopyChunk(model.history_name, names, closed))
    return chunks


def _records(columns: tuple[str, ...], rows: list[Row]) -> list[Record]:
    if not columns:
        raise WriteError("a row needs at least one column")
    if len(columns) == 1:
        return [(row[columns[0]],) for row in rows]
    return list(map(operator.itemgetter(*columns), rows))


def encode(table_name: str, rows: Iterable[Row], *, route: bool = True) -> list[CopyChunk]:
    """Rows by column name as COPY chunks: one per target table and set of columns given."""
    model = table(table_name)
    members = rows if isinstance(rows, list) else list(rows)
    if not members:
        return []
    first = tuple(members[0])
    # The common case: every row gives the same columns. A row without one of them fails the lookup, so equal
    # total sizes mean no row has any other column either.
    if sum(map(len, members)) == len(first) * len(members):
        try:
            return _chunks(model, first, _records(first, members), route)
        except KeyError:
            pass
    groups: dict[tuple[str, ...], list[Row]] = {}
    for row in members:
        groups.setdefault(tuple(row), []).append(row)
    return [
        chunk
        for columns, group in groups.items()
        for chunk in _chunks(model, columns, _records(columns, group), route)
    ]


async def copy_chunks(conn: asyncpg.Connection, chunks: Iterable[CopyChunk]) -> dict[str, int]:
    """Binary COPY of each chunk; rows written per table."""
    counts: dict[str, int] = {}
    for chunk in chunks:
        await conn.copy_records_to_table(chunk.table, records=chunk.records, columns=list(chunk.columns))
        counts[chunk.table] = counts.get(chunk.table, 0) + len(chunk.records)
    return counts


def _merge_counts(total: dict[str, int], more: dict[str, int]) -> None:
    for name, count in more.items():
        total[name] = total.get(name, 0) + count


async def copy_rows(
    conn: asyncpg.Connection, table_name: str, rows: Iterable[Row], *, chunk_rows: int = DEFAULT_CHUNK_ROWS
) -> dict[str, int]:
    """Append rows (dicts by column name) with binary COPY, ``chunk_rows`` at a time; rows written per table."""
    counts: dict[str, int] = {}
    if isinstance(rows, list):
        for start in range(0, len(rows), chunk_rows):
            _merge_counts(counts, await copy_chunks(conn, encode(table_name, rows[start : start + chunk_rows])))
        return counts
    batch: list[Row] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= chunk_rows:
            _merge_counts(counts, await copy_chunks(conn, encode(table_name, batch)))
            batch = []
    if batch:
        _merge_counts(counts, await copy_chunks(conn, encode(table_name, batch)))
    return counts


async def copy_records(
    conn: asyncpg.Connection,
    table_name: str,
    columns: Sequence[str],
    records: Iterable[Sequence[Any]],
    *,
    chunk_rows: int = DEFAULT_CHUNK_ROWS,
) -> dict[str, int]:
    """Append value tuples in ``columns`` order with binary COPY, ``chunk_rows`` at a time."""
    counts: dict[str, int] = {}
    if isinstance(records, list):
        for start in range(0, len(records), chunk_rows):
            chunk = records[start : start + chunk_rows]
            _merge_counts(counts, await copy_chunks(conn, encode_records(table_name, columns, chunk)))
        return counts
    batch: list[Sequence[Any]] = []
    for record in records:
        batch.append(record)
        if len(batch) >= chunk_rows:
            _merge_counts(counts, await copy_chunks(conn, encode_records(table_name, columns, batch)))
            batch = []
    if batch:
        _merge_counts(counts, await copy_chunks(conn, encode_records(table_name, columns, batch)))
    return counts


# Upsert ------------------------------------------------------------------------------------------------------


def _quote(name: str) -> str:
    """A model name as an identifier (model names are plain lower-case words)."""
    return '"' + name + '"'


@functools.cache
def flagged(model: Table) -> tuple[str, ...]:
    """The columns whose omission in an upsert row is not the same as NULL: those with a default (an omitted one
    gets it on insert) and the ``replace_nulls`` ones (an omitted one keeps the stored value). Every other column
    omitted is staged as NULL, which merges the same, so the rows of one round are staged together whatever
    columns each gives, with a bit per flagged column in the stage's ``ledgermirror_given``."""
    names = tuple(
        column.name
        for column in model.columns
        if column.name != RANGE_COLUMN
        and column.name not in model.key
        and (column.default is not NO_DEFAULT or column.name in model.replace_nulls)
    )
    if len(names) > 62:
        raise SchemaError(f"table {model.name}: more than 62 columns with a default or replace_nulls")
    return names


@functools.cache
def stage_name(model: Table) -> str:
    """The session's staging table of ``model``: one per table and column list (a changed model gets a new
    one), created once per connection and emptied after every merge and at commit."""
    digest = hashlib.sha256(",".join((*model.column_names, _GIVEN)).encode()).hexdigest()[:8]
    return f"{_STAGE_PREFIX}{model.name}_{digest}"


def _stage_sql(model: Table) -> str:
    """Create the staging table unless the session holds it: every column of the table and the given bits, no
    constraints (a partial update omits required columns), emptied at commit (``on commit delete rows``)."""
    return (
        f"create temporary table if not exists {stage_name(model)} on commit delete rows\n"
        f"as select *, 0::bigint as {_GIVEN} from {_quote(model.name)} with no data"
    )


def _given(model: Table, name: str) -> str:
    """Whether the staged row gave the flagged column ``name``."""
    return f"s.{_GIVEN} & {1 << flagged(model).index(name)} <> 0"


def _history_sql(model: Table) -> str:
    """Copy each current row an update supersedes into the twin, its range closed at the update."""
    columns = ", ".join(_quote(column.name) for column in model.columns)
    values = ", ".join(
        "int8range(lower(t.timestamp_range), lower(s.timestamp_range))"
        if column.name == RANGE_COLUMN
        else f"t.{_quote(column.name)}"
        for column in model.columns
    )
    return (
        f"insert into {_quote(model.history_name)} ({columns})\n"
        f"select {values}\nfrom {_FOUND} s join {_quote(model.name)} t on {_IS_FOUND}\n"
        "where lower(t.timestamp_range) < lower(s.timestamp_range)"
    )


def _merged(model: Table, name: str) -> str:
    if name in model.replace_nulls:
        return f"case when {_given(model, name)} then s.{_quote(name)} else t.{_quote(name)} end"
    if name == RANGE_COLUMN:
        return f"s.{_quote(name)}"
    if name in model.keep_existing:
        return f"coalesce(t.{_quote(name)}, s.{_quote(name)})"
    return f"coalesce(s.{_quote(name)}, t.{_quote(name)})"


def _update_sql(model: Table, columns: tuple[str, ...], source: str, condition: str) -> str | None:
    """Merge each given row (of ``source``) into the current row of its key (matched by ``condition``)."""
    updated = [name for name in columns if name not in model.key]
    if not updated:
        return None
    assignments = ", ".join(f"{_quote(name)} = {_merged(model, name)}" for name in updated)
    if RANGE_COLUMN in columns:
        condition += " and lower(t.timestamp_range) <= lower(s.timestamp_range)"
    return f"update {_quote(model.name)} t set {assignments}\nfrom {source} s where {condition}"


def _insert_sql(model: Table, columns: tuple[str, ...], first: int) -> str:
    """Insert each given row whose key has no current row (and that gives the table's ``inserted_with``); a
    flagged column with a default it did not give gets the default (the statement's parameters from number
    ``first``, in :func:`merge_defaults` order)."""
    names = ", ".join(_quote(name) for name in columns)
    defaults = merge_defaults(model, columns)
    values = ", ".join(
        f"case when {_given(model, name)} then s.{_quote(name)} else ${defaults.index(name) + first} end"
        if name in defaults
        else f"s.{_quote(name)}"
        for name in columns
    )
    given = ""
    if model.inserted_with is not None:  # rows that do not give it insert nothing
        given = (
            f"s.{_quote(model.inserted_with)} is not null and " if model.inserted_with in columns else "false and "
        )
    return (
        f"insert into {_quote(model.name)} ({names})\nselect {values} from {_FOUND} s\n"
        f"where {given}s.{_TID} is null"
    )


def key_probe(model: Table) -> str:
    """The match of a given row (``s``) to the table's row of its key (``t``), written so that the planner can only
    probe the key's index for each given row, whatever it believes of either side's size: ``t.k = any(array[s.k])``
    is neither merge- nor hash-joinable, so the table has no way into a join but a nested loop with the given rows
    outside, and no path of its own but a sequential scan, which the writer's settings turn off (a full scan of
    the index, which the planner can materialize and scan again for each given row, is only built for an
    order a merge join would use). Joined by ``t.k = s.k`` instead, statistics taken while the table held a few
    live rows made the planner read the whole table once for every given row (docs/performance.md, ninth
    session)."""
    return " and ".join(f"t.{_quote(name)} = any(array[s.{_quote(name)}])" for name in model.key)


def _found_sql(model: Table, source: str) -> str:
    """The rows of ``source`` (a relation named ``s`` whose columns include the table's key, such as ``unnest(...)
    as s(id, amount)``), each with the table (``tableoid``: a partition of a partitioned table) and row id
    (``ctid``) of its key's current row, or NULLs: one probe of the key's index a given row (:func:`key_probe`).
    A statement joins the table to these rows by :data:`_IS_FOUND`, a fetch by row id. Run it with the writer's
    planner settings (:func:`execute_by_index`, :func:`bulk`)."""
    return (
        f"select s.*, t.tableoid as {_TABLE}, t.ctid as {_TID}\n"
        f"from {source} left join {_quote(model.name)} t on {key_probe(model)}"
    )


def update_given_sql(table_name: str, assignments: str, given: str) -> str:
    """``update <table> t set <assignments>`` for each row of ``given`` (a relation named ``s`` with the table's
    key columns) whose key the table holds, by one probe of the key's index a given row (:func:`key_probe`)."""
    return f"update {_quote(table_name)} t set {assignments}\nfrom {given}\nwhere {key_probe(table(table_name))}"


@functools.cache
def merge_defaults(model: Table, columns: tuple[str, ...]) -> tuple[str, ...]:
    """The flagged columns of ``columns`` with a default: the parameters of :func:`merge_sql`, in order (none
    when it inserts nothing: partial updates of a versioned table's running values)."""
    if model.history and RANGE_COLUMN not in columns:
        return ()
    defaults = {column.name for column in model.columns if column.default is not NO_DEFAULT}
    return tuple(name for name in columns if name in defaults and name in flagged(model))


def _default_values(model: Table, columns: tuple[str, ...]) -> list[Any]:
    converters = _converters(model)
    values = []
    for name in merge_defaults(model, columns):
        value = model.by_name[name].default_value
        convert = converters.get(name)
        values.append(value if convert is None else convert(value))
    return values


_WRITER_PLANS = (
    "set local enable_hashjoin = off",
    "set local enable_mergejoin = off",
    "set local enable_seqscan = off",
    "set local plan_cache_mode = force_generic_plan",
)
"""How the writer's statements are planned. The merges join a few given rows to a table that grows to millions
of rows. Given as arrays or staged in a temporary table, which autovacuum never analyzes, the rows are a guess
to the planner, and left to itself it hashes the whole target table for every merge: a cost that grows with
the table (30 ms per merge of ``token_account`` at 46 k rows). Without hash and merge joins each given row is
one probe of the key's index. Without sequential scans (where the statement has an index to use), a table
analyzed while empty is not scanned again for each given row (after a ``vacuum analyze`` of the empty
``entity``, a first merge of 25,000 rows took 3.3 s so, and 0.23 s by index). With these, and rows matched by
:func:`key_probe`, no plan of the writer's statements depends on the tables' statistics, so each prepared
statement is planned once per connection (a generic plan) instead of for its values at every execution:
about half of a small merge's server time (an ``entity`` merge of one row, 0.25 against 0.5 to 0.6 ms; see
docs/performance.md, ninth session)."""
_DEFAULT_PLANS = (
    "set local enable_hashjoin to default",
    "set local enable_mergejoin to default",
    "set local enable_seqscan to default",
    "set local plan_cache_mode to default",
)


_BULK: weakref.WeakKeyDictionary[asyncpg.Connection, set[str]] = weakref.WeakKeyDictionary()
"""Connections inside :func:`bulk`: the staging tables it created (the writer's planner settings hold for the
whole block)."""


@contextlib.asynccontextmanager
async def bulk(conn: asyncpg.Connection, tables: Iterable[str]) -> AsyncIterator[None]:
    """Inside the caller's transaction, a block of many merges and running-value updates with fewer round
    trips: the staging tables of ``tables`` that need one (:func:`takes_arrays`) created at once, and the
    writer's planner settings (``_WRITER_PLANS``) set once for the block instead of around each statement; the
    session's settings are restored at its end (not after an error: the transaction is then aborted, and its
    rollback restores them)."""
    if not conn.is_in_transaction():
        raise WriteError("db.write.bulk needs an open transaction")
    if conn in _BULK:  # nested: the outer block holds the settings
        yield
        return
    models = [table(name) for name in dict.fromkeys(tables)]
    staging = [model for model in models if model.key and not takes_arrays(model, model.column_names)]
    await conn.execute(";\n".join([*_WRITER_PLANS, *map(_stage_sql, staging)]))
    _BULK[conn] = set(map(stage_name, staging))
    try:
        yield
    except BaseException:
        _BULK.pop(conn, None)
        raise
    _BULK.pop(conn, None)
    await conn.execute(";\n".join(_DEFAULT_PLANS))


async def execute_by_index(conn: asyncpg.Connection, statement: str, *args: Any) -> str:
    """Run one statement that joins a few given rows (arrays, a staging table) to a large table with the
    writer's planner settings (``_WRITER_PLANS``), then restore the session's settings; its status. Left to the
    planner, an ``unnest`` of a few thousand ids would hash the whole table (``entity`` at 44 k rows: 168 ms for
    3,000 balance changes, 63 ms by index). Outside a transaction the call is one; inside :func:`bulk`, the
    statement alone."""
    if conn in _BULK:
        status: str = await conn.execute(statement, *args)
        return status
    if not conn.is_in_transaction():
        async with conn.transaction():
            return await execute_by_index(conn, statement, *args)
    await conn.execute(";\n".join(_WRITER_PLANS))
    status = await conn.execute(statement, *args)
    await conn.execute(";\n".join(_DEFAULT_PLANS))
    return status


_ROWS = "ledgermirror_rows"
"""The name of the given rows in a merge that takes them as arrays (:func:`merge_sql`)."""
_FOUND = "ledgermirror_found"
"""The name of the given rows with their keys' current rows found (:func:`_found_sql`) in a merge."""
_TABLE = "ledgermirror_table"
"""The column of :data:`_FOUND` with the table that holds the key's current row (NULL for a new key)."""
_TID = "ledgermirror_tid"
"""The column of :data:`_FOUND` with the row id of the key's current row in that table."""
_IS_FOUND = f"t.tableoid = s.{_TABLE} and t.ctid = s.{_TID}"
"""The join of a row of :func:`_found_sql` (as ``s``) to its key's current row (``t``): a fetch by row id. The
table is part of it because the partitions of a partitioned table repeat row ids."""


def takes_arrays(model: Table, columns: tuple[str, ...]) -> bool:
    """Whether a merge of ``columns`` can take its rows as one array per column (``unnest``): not when a column
    is an array itself (``unnest`` would flatten it); such merges stage their rows in a temporary table."""
    return not any(model.by_name[name].kind is Kind.ARRAY for name in columns)


@functools.cache
def merge_sql(model: Table, columns: tuple[str, ...]) -> str:
    """One statement that merges the given rows (``columns`` and the given bits) into the table: each given row's
    current row found first (:func:`_found_sql`), then the superseded versions moved to the history twin, the
    current rows updated, new keys (found nothing) inserted. Each part is a data-modifying ``with`` query; all of
    them read the table as it was before the statement, which is what the parts one after the other would read
    (the move reads the old versions before the update; the update leaves every key in place, so what the
    insert takes for new is new).

    The rows are found once, by a probe of the key's index for each given row (:func:`key_probe`), and the
    move and the update then fetch each current row by its row id; a partial update of a versioned table's
    running values (no range: no move, no insert) is one update matched by :func:`key_probe` alone. So the plan
    does not depend on the table's statistics. Joined by key, as before, it did: after statistics taken while
    the table held a few live rows among many dead pages, the planner read the whole table once for every given
    row (12,500 given rows: 23.8 s, against 0.3 s; docs/performance.md, ninth session). One statement can be
    prepared:
    :func:`_merge_rows` plans it once per connection (parsing and planning the merges as simple queries was a
    quarter of the server's CPU in an import: docs/performance.md). Run it with the writer's planner settings
    (``_WRITER_PLANS``).

    Where :func:`takes_arrays`, the rows are its first parameters, an array per column and one of the given
    bits (one round trip); otherwise they are staged first (``stage_name``) and the statement empties the stage.
    The defaults of :func:`merge_defaults` are its last parameters."""
    versioned = model.history and RANGE_COLUMN in columns
    arrays = takes_arrays(model, columns)
    source = _ROWS if arrays else stage_name(model)
    steps: list[tuple[str, str]] = []
    if arrays:
        casts = [f"${index}::{model.by_name[name].cast_type}[]" for index, name in enumerate(columns, start=1)]
        casts.append(f"${len(columns) + 1}::bigint[]")
        names = ", ".join([*map(_quote, columns), _GIVEN])
        steps.append((_ROWS, f"select * from unnest({', '.join(casts)}) as u({names})"))
    inserts = versioned or not model.history
    if inserts:
        steps.append((_FOUND, _found_sql(model, f"{source} s")))
        if versioned:
            steps.append(("step_history", _history_sql(model)))
        update = _update_sql(model, columns, _FOUND, _IS_FOUND)
    else:  # partial updates of running values: no history, no insert, so no need to find the rows first
        update = _update_sql(model, columns, source, key_probe(model))
    if update is not None:
        steps.append(("step_update", update))
    if not arrays:
        steps.append(("step_unstage", f"delete from {source}"))
    if inserts:
        last = _insert_sql(model, columns, len(columns) + 2 if arrays else 1)
    else:  # the last step is the statement
        *steps, (_, last) = steps
    if not steps:
        return last
    named = ",\n".join(f"{label} as (\n{step}\n)" for label, step in steps)
    return f"with {named}\n{last}"


_PREPARED: weakref.WeakKeyDictionary[asyncpg.Connection, dict[str, PreparedStatement]] = (
    weakref.WeakKeyDictionary()
)
"""Each connection's prepared merges, by statement (a few per table and column set; kept for the connection's
life, apart from asyncpg's own cache of 100, which the merges of one import would churn)."""


async def _prepared(conn: asyncpg.Connection, statement: str) -> PreparedStatement:
    held = _PREPARED.setdefault(conn, {})
    prepared = held.get(statement)
    if prepared is None:
        prepared = held[statement] = await conn.prepare(statement)
    return prepared


def _coalesced(model: Table, earlier: Row, later: Row) -> dict[str, Any]:
    """Two versions with the same lower bound: the later one's values over the earlier one's (a ``keep_existing``
    column keeps the earlier value once set)."""
    merged = dict(earlier)
    for name, value in later.items():
        if name in model.keep_existing and merged.get(name) is not None:
            continue
        if value is not None or name in model.replace_nulls or name not in merged:
            merged[name] = value
    return merged


def _rounds(model: Table, rows: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """Rows split into rounds with at most one row per key, keeping each key's order."""
    versions: dict[Any, list[dict[str, Any]]] = {}
    key_of = operator.itemgetter(*model.key)  # the key's value (a tuple when it has more than one column)
    for row in rows:
        key = key_of(row)
        held = versions.get(key)
        if held is None:
            versions[key] = [row]
        elif _lower(held[-1]) == _lower(row):
            held[-1] = _coalesced(model, held[-1], row)
        else:
            held.append(row)
    depth = max((len(held) for held in versions.values()), default=0)
    return [[held[index] for held in versions.values() if index < len(held)] for index in range(depth)]


def _lower(row: Row) -> Any:
    value = row.get(RANGE_COLUMN)
    return None if value is None else value.lower


def _prepared_rows(model: Table, rows: Iterable[Row]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Checked and typed rows: (rows to merge, closed versions for the history twin)."""
    merge: list[dict[str, Any]] = []
    closed: list[dict[str, Any]] = []
    for source in rows:
        row = dict(source)
        model.check_columns(row)
        missing = [name for name in model.key if row.get(name) is None]
        if missing:
            raise WriteError(f"table {model.name}: an upsert row needs its key {', '.join(missing)}")
        if RANGE_COLUMN in row or not model.history:
            for name in model.replace_nulls:
                row.setdefault(name, None)  # a new version without them clears them
        for name, convert in _converters(model).items():
            if name in row:
                row[name] = convert(row[name])
        if model.history and _is_closed(row.get(RANGE_COLUMN)):
            closed.append(row)
        else:
            merge.append(row)
    return merge, closed


@functools.cache
def _staged_columns(model: Table, ranged: bool) -> tuple[str, ...]:
    """The columns a round's rows are staged with: all of the table's, without ``timestamp_range`` for rows
    that give none (partial updates of a versioned table's running values)."""
    if ranged:
        return model.column_names
    return tuple(name for name in model.column_names if name != RANGE_COLUMN)


@dataclass(frozen=True, slots=True)
class Merge:
    """An upsert worked out without the database (:func:`plan_upsert`), for :func:`write_merge`: the rows
    checked and typed, split into rounds (at most one row per key each) and, in each round, into the column
    sets they are staged with."""

    model: Table
    closed: list[dict[str, Any]]
    """Closed versions, copied straight into the history twin."""
    rounds: list[list[tuple[tuple[str, ...], list[Any]]]]
    """Each round's statements in order: (columns, the values) where the values are an array per column and
    one of the given bits when the merge :func:`takes_arrays`, else the records to stage."""
    taken: int
    """Rows given (each closed version, and each row to merge before rows of one key and lower bound are
    coalesced)."""


def plan_upsert(table_name: str, rows: Iterable[Row]) -> Merge:
    """:func:`upsert`'s work that needs no database: the overlapped import does it in the row builder's thread
    while the writer writes the batch before."""
    model = table(table_name)
    if not model.key:
        raise WriteError(f"table {model.name} has no key to upsert on")
    merge, closed = _prepared_rows(model, rows)
    bits = [(name, 1 << index) for index, name in enumerate(flagged(model))]
    rounds: list[list[tuple[tuple[str, ...], list[Any]]]] = []
    for batch in _rounds(model, merge):
        # Two groups at most: rows with a range (versions) and rows without one (partial updates).
        groups: dict[tuple[str, ...], list[Record]] = {}
        for row in batch:
            columns = _staged_columns(model, RANGE_COLUMN in row)
            given = sum(bit for name, bit in bits if name in row)
            groups.setdefault(columns, []).append((*map(row.get, columns), given))
        rounds.append(
            [
                (columns, list(map(list, zip(*records, strict=True))) if takes_arrays(model, columns) else records)
                for columns, records in groups.items()
            ]
        )
    return Merge(model, closed, rounds, len(merge) + len(closed))


async def _merge_rows(conn: asyncpg.Connection, merge: Merge) -> None:
    model = merge.model
    if merge.closed:
        await copy_chunks(conn, encode(model.history_name, merge.closed, route=False))
    if not merge.rounds:
        return
    stage = stage_name(model)
    staged = _BULK.get(conn)
    created = staged is not None and stage in staged
    if staged is None:
        await conn.execute(";\n".join(_WRITER_PLANS))
    for statements in merge.rounds:
        for columns, values in statements:
            if takes_arrays(model, columns):
                statement = await _prepared(conn, merge_sql(model, columns))
                await statement.fetch(*values, *_default_values(model, columns))
                continue
            if not created:
                await conn.execute(_stage_sql(model))
                created = True
            await conn.copy_records_to_table(stage, records=values, columns=[*columns, _GIVEN])
            await (await _prepared(conn, merge_sql(model, columns))).fetch(*_default_values(model, columns))
    if staged is None:
        await conn.execute(";\n".join(_DEFAULT_PLANS))


async def write_merge(conn: asyncpg.Connection, merge: Merge) -> int:
    """Write a :func:`plan_upsert`; returns the rows taken. Outside a transaction the call is one; inside the
    caller's it takes no savepoint of its own (two round trips per call saved): a database error then aborts
    the caller's transaction."""
    if conn.is_in_transaction():
        await _merge_rows(conn, merge)
    else:
        async with conn.transaction():
            await _merge_rows(conn, merge)
    return merge.taken


async def upsert(conn: asyncpg.Connection, table_name: str, rows: Iterable[Row]) -> int:
    """Merge rows into a keyed table with the reference's rules (see the module text); returns rows taken
    (:func:`plan_upsert`, then :func:`write_merge`)."""
    return await write_merge(conn, plan_upsert(table_name, rows))


# Text --------------------------------------------------------------------------------------------------------


def insert_text_sql(table_name: str, columns: Sequence[str]) -> str:
    """``insert into t (a, b) values ($1::text::<type of a>, $2::text::<type of b>)``."""
    model = table(table_name)
    names = model.check_columns(columns)
    values = ", ".join(
        f"${index}::text::{model.by_name[name].cast_type}" for index, name in enumerate(names, start=1)
    )
    return f"insert into {_quote(model.name)} ({', '.join(map(_quote, names))}) values ({values})"


async def insert_text(conn: asyncpg.Connection, table_name: str, values: Mapping[str, str | None]) -> None:
    """Insert one row whose values are PostgreSQL input text (None is NULL)."""
    await conn.execute(insert_text_sql(table_name, list(values)), *values.values())


__all__ = [
    "DEFAULT_CHUNK_ROWS",
    "CopyChunk",
    "SchemaError",
    "WriteError",
    "as_json",
    "as_range",
    "bulk",
    "copy_chunks",
    "copy_records",
    "copy_rows",
    "encode",
    "encode_records",
    "execute_by_index",
    "insert_text",
    "insert_text_sql",
    "key_probe",
    "update_given_sql",
    "upsert",
]
