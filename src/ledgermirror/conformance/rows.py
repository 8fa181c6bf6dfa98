"""The unit the setup converters produce: one row for one table, values still as Python objects."""

from __future__ import annotations

from typing import Any, NamedTuple

from ledgermirror.conformance.values import is_history


class Row(NamedTuple):
    """A row to insert. ``values`` maps column name to value, in insert order; :func:`values.pg_text`
    renders each value when the row is written."""

    table: str
    values: dict[str, Any]


def routed(base: str, values: dict[str, Any]) -> Row:
    """A row for ``base`` or ``base_history``, by the row's ``timestamp_range``."""
    return Row(f"{base}_history" if is_history(values["timestamp_range"]) else base, values)


def pick(source: dict[str, Any], columns: tuple[str, ...] | list[str]) -> dict[str, Any]:
    """The given columns of a merged item; a missing column is NULL (JS ``undefined``)."""
    return {column: source.get(column) for column in columns}
