"""The vocabulary of the table model: :class:`Column`, :class:`Table` and the constructors the declarations use.

A column is declared with :func:`nullable` or :func:`not_null`: its name, its PostgreSQL type (as ``format_type``
prints it) and its default (as the Python value the default expression yields, :data:`NO_DEFAULT` for none).
The declarations themselves are in the sibling modules, one per domain; the package collects them.
"""

from __future__ import annotations

import enum
import keyword
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

HISTORY_SUFFIX = "_history"
RANGE_COLUMN = "timestamp_range"


class _NoDefault(enum.Enum):
    NO_DEFAULT = "no default"


NO_DEFAULT = _NoDefault.NO_DEFAULT
"""A column without a ``DEFAULT`` clause (its default is NULL)."""


class SchemaError(ValueError):
    """A table or column name the model does not know."""


class Kind(enum.Enum):
    """How a column's values are encoded for a binary COPY."""

    SCALAR = "scalar"  # integers, booleans, text, bytea, enums (labels as str): passed as they are
    RANGE = "range"  # int8range: asyncpg.Range, a (lower, upper) pair meaning [lower, upper), or a lower bound
    JSON = "json"  # jsonb: JSON text, or a dict/list serialised on the way
    ARRAY = "array"  # arrays: any sequence


@dataclass(frozen=True, slots=True)
class Column:
    name: str
    type: str  # format_type(atttypid, atttypmod): "bigint", "character varying(100)", "entity_id", "bigint[]"
    nullable: bool = True
    default: object = NO_DEFAULT

    @property
    def cast_type(self) -> str:
        """The type without its modifier (``character varying(100)`` -> ``character varying``): a cast to it
        converts without truncating, so the column's own length check still applies on insert."""
        head, _, rest = self.type.partition("(")
        return head + rest.partition(")")[2] if rest else self.type

    @property
    def kind(self) -> Kind:
        if self.type.endswith("[]"):
            return Kind.ARRAY
        if self.type == "int8range":
            return Kind.RANGE
        if self.type == "jsonb":
            return Kind.JSON
        return Kind.SCALAR

    @property
    def required(self) -> bool:
        """NOT NULL without a default: every inserted row must give a value."""
        return not self.nullable and self.default is NO_DEFAULT

    @property
    def default_value(self) -> Any:
        """The value an omitted column gets (None when it has no default)."""
        return None if self.default is NO_DEFAULT else self.default


@dataclass(frozen=True)
class Table:
    """One table. ``key`` is the conflict key of an upsert (empty for append-only tables without one)."""

    name: str
    columns: tuple[Column, ...]
    key: tuple[str, ...] = ()
    key_is_primary: bool = True  # False: the key is a unique index (token_airdrop), as in the reference
    history: bool = False  # has a <name>_history twin
    keep_existing: frozenset[str] = frozenset()  # an update never changes these once they are set
    replace_nulls: frozenset[str] = frozenset()  # a NULL in an update replaces the value (no coalescing)
    inserted_with: str | None = None
    """A column an upsert row must give to insert a new key (the reference's ``skipPartialUpdate``): a row
    without it only updates a key the table holds."""
    is_history_twin: bool = False
    by_name: Mapping[str, Column] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "by_name", MappingProxyType({column.name: column for column in self.columns}))
        if len(self.by_name) != len(self.columns):
            raise SchemaError(f"{self.name}: duplicate column")
        for name in (*self.key, *self.keep_existing, *self.replace_nulls, *filter(None, [self.inserted_with])):
            if name not in self.by_name:
                raise SchemaError(f"{self.name}: no column {name}")
        if self.history and RANGE_COLUMN not in self.by_name:
            raise SchemaError(f"{self.name}: a versioned table needs {RANGE_COLUMN}")

    def __hash__(self) -> int:
        """By name only: equal tables have equal names, and the generated hash (every column's every field)
        costs microseconds, too much for the writer's caches keyed by table (``db.write.merge_sql``)."""
        return hash(self.name)

    @property
    def column_names(self) -> tuple[str, ...]:
        return tuple(column.name for column in self.columns)

    @property
    def history_name(self) -> str:
        if not self.history:
            raise SchemaError(f"table {self.name} has no history twin")
        return self.name + HISTORY_SUFFIX

    def column(self, name: str) -> Column:
        try:
            return self.by_name[name]
        except KeyError:
            raise SchemaError(f"table {self.name} has no column {name}") from None

    def check_columns(self, names: Iterable[str]) -> tuple[str, ...]:
        """The names, each checked against the model."""
        checked = tuple(names)
        unknown = [name for name in checked if name not in self.by_name]
        if unknown:
            raise SchemaError(f"table {self.name} has no column {', '.join(unknown)}")
        return checked

    def twin(self) -> Table:
        """The ``<name>_history`` table: the same columns, no key."""
        return Table(self.history_name, self.columns, is_history_twin=True)


def nullable(name: str, type_: str, default: object = NO_DEFAULT) -> Column:
    """A column that may hold NULL."""
    return Column(name, type_, True, default)


def not_null(name: str, type_: str, default: object = NO_DEFAULT) -> Column:
    """A NOT NULL column."""
    return Column(name, type_, False, default)


TIMESTAMP_RANGE = not_null(RANGE_COLUMN, "int8range")
"""The ``timestamp_range`` of a versioned row: open (``[from,)``) while current, closed in ``_history``."""


def record_maker(table: Table) -> Callable[..., tuple[Any, ...]]:
    """A function that takes the table's columns by keyword and returns their values as one tuple in the
    table's column order (the order :attr:`Table.column_names` gives and a binary COPY of every column takes).
    A column left out gets its default value (None without one); a required column must be given, and an unknown
    name is a ``TypeError``. It is generated once per table (as ``dataclasses`` generates ``__init__``): a call
    costs about what a dict of the same values does, half of a dict plus the pass that reads it in this order."""
    names = table.column_names
    bad = [name for name in names if not name.isidentifier() or keyword.iskeyword(name) or name.startswith("_")]
    if bad:
        raise SchemaError(f"table {table.name}: no record maker for columns named {', '.join(bad)}")
    defaults = tuple(column.default_value for column in table.columns)
    parameters = ", ".join(
        column.name if column.required else f"{column.name}=_defaults[{index}]"
        for index, column in enumerate(table.columns)
    )
    source = f"def record(*, {parameters}):\n    return ({', '.join(names)},)\n"
    namespace: dict[str, Any] = {}
    exec(source, {"_defaults": defaults}, namespace)  # the source holds checked identifiers only
    maker: Callable[..., tuple[Any, ...]] = namespace["record"]
    maker.__qualname__ = maker.__name__ = f"{table.name}_record"
    maker.__doc__ = f"A ``{table.name}`` row as a value tuple: ({', '.join(names)})."
    return maker
