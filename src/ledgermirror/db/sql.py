"""The one place where SQL text is composed.

Static parts (``SELECT ... FROM ... JOIN ...``) are constants of the resource modules; everything dynamic goes
through :class:`Select`, which appends conditions on allow-listed :data:`Column` names and binds every value as
a ``$n`` parameter. No value is ever formatted into SQL text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NewType

from ledgermirror.api.querystring.grammar import Op, Order

Column = NewType("Column", str)
"""A column reference taken from a resource's allow-list, never from user input."""

_OPERATORS = {Op.EQ: "=", Op.NE: "<>", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$", re.ASCII)


@dataclass(frozen=True, slots=True)
class Statement:
    text: str
    args: tuple[Any, ...]


@dataclass(slots=True)
class Select:
    head: str
    conditions: list[str] = field(default_factory=list)
    args: list[Any] = field(default_factory=list)
    ordering: str = ""
    row_limit: int | None = None

    def bind(self, value: Any) -> str:
        self.args.append(value)
        return f"${len(self.args)}"

    def compare(self, column: Column, op: Op, value: Any) -> Select:
        self.conditions.append(f"{column} {_OPERATORS[op]} {self.bind(value)}")
        return self

    def any_of(self, column: Column, values: Sequence[Any]) -> Select:
        self.conditions.append(f"{column} = any({self.bind(list(values))})")
        return self

    def contains_text(self, column: Column, text: str) -> Select:
        """Case-insensitive substring match; ``%``, ``_`` and ``\\`` in the text match themselves."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        self.conditions.append(f"{column} ilike {self.bind('%' + escaped + '%')}")
        return self

    def is_true(self, column: Column) -> Select:
        self.conditions.append(f"{column} is true")
        return self

    def order_by(self, columns: Sequence[Column], order: Order) -> Select:
        direction = "asc" if order is Order.ASC else "desc"
        self.ordering = ", ".join(f"{column} {direction}" for column in columns)
        return self

    def limit(self, count: int) -> Select:
        self.row_limit = count
        return self

    def build(self) -> Statement:
        parts = [self.head]
        if self.conditions:
            parts.append("where " + " and ".join(self.conditions))
        if self.ordering:
            parts.append("order by " + self.ordering)
        text = "\n".join(parts)
        args = list(self.args)
        if self.row_limit is not None:
            args.append(self.row_limit)
            text += f"\nlimit ${len(args)}"
        return Statement(text, tuple(args))

    def compare_rows(self, columns: Sequence[Column], op: Op, values: Sequence[Any]) -> Select:
        """``(a, b) > ($1, $2)``: a row (lexicographic) comparison, which a btree index on ``(a, b)`` reads as
        one range; with one column it is a plain comparison."""
        if not columns or len(columns) != len(values):
            raise ValueError("a row comparison needs one value per column")
        if len(columns) == 1:
            return self.compare(columns[0], op, values[0])
        params = ", ".join(self.bind(value) for value in values)
        self.conditions.append(f"({', '.join(columns)}) {_OPERATORS[op]} ({params})")
        return self


def quote_identifier(name: str) -> str:
    """Quote a role or schema name taken from settings; only plain lower-case identifiers are accepted."""
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"not a plain identifier: {name!r}")
    return f'"{name}"'
