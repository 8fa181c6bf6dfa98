"""The unit the setup converters produce: one row for one table, values still as Python objects."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from ledgermirror.conformance.values import is_history
from ledgermirror.db import schema


class Row(NamedTuple):
    """A row to insert. ``values`` maps column name to value, in insert order; :func:`values.pg_text`
    renders each value when the row is written."""

    table: str
    values: dict[str, Any]


def routed(base: str, values: dict[str, Any]) -> Row:
    """A row for ``base`` or its ``_history`` twin (the schema model's routing), by the row's
    ``timestamp_range``: the reference sends a range that does not end in ``,)`` to the twin."""
    return Row(schema.routed(base, is_history(values["timestamp_range"])).name, values)


def pick(source: dict[str, Any], columns: Iterable[str]) -> dict[str, Any]:
    """The given columns of a merged item; a missing column is NULL (JS ``undefined``)."""
    return {column: source.get(column) for column in columns}


def every_column(table: str, source: dict[str, Any]) -> dict[str, Any]:
    """Every column of ``table`` (the schema model's list) from a merged item; a missing one is NULL."""
    return pick(source, schema.table(table).column_names)
