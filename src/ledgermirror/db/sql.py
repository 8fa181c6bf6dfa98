"""The one place where SQL text is composed.

Static parts (``SELECT ... FROM ... JOIN ...``) are constants of the resource modules; everything dynamic goes
through :class:`Select`, which appends conditions on allow-listed :data:`Column` names and binds every value as
a ``$n`` parameter, or through :func:`template`, which binds named ``{markers}``. A statement built from pieces
is a :class:`Fragment` whose :meth:`~Fragment.fill` writes in other fragments, sort directions and integer
literals (row limits, a deployment's constants) and keeps every other marker for :func:`template`, so nested
templates need no doubled braces. No value from a request is ever formatted into SQL text, but for a row limit
(:func:`integer_literal`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, NamedTuple, NewType


class Op(Enum):
    """A comparison operator (the filter language's ``eq:``, ``gt:``, ... and SQL's ``=``, ``>``, ...)."""

    EQ = "eq"
    NE = "ne"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"

    __hash__ = object.__hash__
    """By identity (members are singletons): ``Enum``'s own hash is a Python call on the name, paid at every
    dict lookup keyed by an operator (each condition of each statement)."""


class Order(Enum):
    """A sort direction."""

    ASC = "asc"
    DESC = "desc"

    __hash__ = object.__hash__
    """By identity, as :class:`Op`'s."""


Column = NewType("Column", str)
"""A column reference taken from a resource's allow-list, never from user input."""

_OPERATORS = {Op.EQ: "=", Op.NE: "<>", Op.GT: ">", Op.GTE: ">=", Op.LT: "<", Op.LTE: "<="}
_IDENTIFIER = re.compile(r"^[a-z_][a-z0-9_]{0,62}$", re.ASCII)


class Statement(NamedTuple):
    """A statement's text and its bound values (a named tuple: made for every statement, at a third of a frozen
    dataclass's cost)."""

    text: str
    args: tuple[Any, ...]


class _Binder(dict[str, str]):
    """``{name}`` markers of a template -> ``$n``, binding each name's value once, in order of appearance."""

    def __init__(self, values: dict[str, Any], args: list[Any]) -> None:
        super().__init__()
        self._values = values
        self._args = args

    def __missing__(self, name: str) -> str:
        if name not in self._values:
            raise KeyError(f"no value for the template parameter {name!r}")
        self._args.append(self._values[name])
        self[name] = f"${len(self._args)}"
        return self[name]


def template(text: str | Fragment, **values: Any) -> Statement:
    """A static statement whose parameters are named ``{name}`` markers (each bound once, however often it
    appears). For fixed statements that ``Select`` does not shape: unions, lateral joins, aggregates."""
    args: list[Any] = []
    source = text.text if isinstance(text, Fragment) else text
    return Statement(source.format_map(_Binder(values, args)), tuple(args))


class _Parts(dict[str, str]):
    """The parts to write in, as SQL text; any other ``{marker}`` is kept as it is (for a later fill or for
    :func:`template`)."""

    __slots__ = ()

    def __missing__(self, name: str) -> str:
        return "{" + name + "}"


def _sql_text(name: str, part: Part) -> str:
    if type(part) is Fragment:
        return part.text
    if type(part) is Order:
        return part.value
    try:
        return integer_literal(part)  # type: ignore[arg-type]
    except TypeError as error:
        raise TypeError(f"{name}: {error}") from None


@functools.lru_cache(maxsize=4096)
def _filled(text: str, parts: tuple[tuple[str, str], ...]) -> str:
    """``text`` with ``parts`` written in. A pure function of static text, remembered: a request's statement is
    composed from the same few pieces (and the same few row limits) again and again, and keeping the other
    markers costs a Python call each."""
    return text.format_map(_Parts(parts))


@dataclass(frozen=True, slots=True)
class Fragment:
    """A piece of static SQL with named ``{markers}``, written with single braces however deeply it nests."""

    text: str

    def fill(self, **parts: Part) -> Fragment:
        """This fragment with ``parts`` written into their markers (a fragment's text, an order's ``asc`` or
        ``desc``, an integer as a literal); every other marker is kept, for a later fill or :func:`template`.
        A marker inside a part is never read as one of this fill's: each part is written in as it is."""
        return Fragment(_filled(self.text, tuple([(name, _sql_text(name, part)) for name, part in parts.items()])))

    def __add__(self, other: Fragment) -> Fragment:
        return Fragment(self.text + other.text)


Part = Fragment | Order | int
"""What :meth:`Fragment.fill` writes into a marker: static SQL, a sort direction, or an integer literal."""


def joined(separator: str, parts: Iterable[Fragment]) -> Fragment:
    """The parts one after another with ``separator`` (static SQL: ``" and "``, ``" union "``) between them."""
    return Fragment(separator.join(part.text for part in parts))


def integer_literal(value: int) -> str:
    """An integer written into a statement: only for a deployment's constants and for row limits (a parsed,
    bounded ``limit``), never other input. A limit must be a literal for the API's generic plans
    (``db/pool.session_settings``): PostgreSQL reads ``LIMIT $n`` as a tenth of the table, and with that the
    descending token list became a merge join reading 9,000 buffers instead of 108."""
    if type(value) is not int:
        raise TypeError(f"an integer, not {type(value).__name__}")
    return str(value)


def with_constants(text: str, **constants: int) -> str:
    """``text`` with the ``{name}`` markers of ``constants`` written in as integer literals; other markers are
    kept for :func:`template`. For a deployment's constants (the unreleased-supply accounts), never request
    input: a statement whose range bounds are literals is planned once per connection and reused, where
    PostgreSQL would plan bound range bounds again on every execution (its generic plan for them looks
    costlier than a custom one, so it never switches)."""
    return Fragment(text).fill(**constants).text


def condition(column: Column, op: Op, marker: str) -> str:
    """``column <op> {marker}``: one condition of a :func:`template` statement, its value bound by name.
    ``marker`` is a plain identifier chosen by the caller, never input."""
    if not _IDENTIFIER.fullmatch(marker):
        raise ValueError(f"not a plain identifier: {marker!r}")
    return f"{column} {_OPERATORS[op]} {{{marker}}}"


_TEXTS: dict[tuple[Any, ...], str] = {}
"""A statement's text by its shape (:meth:`Select.build`). Shapes come from the code (static heads, columns,
operators, the order of conditions) and a bounded ``limit``, so they are few; the cache is emptied at
:data:`_TEXTS_MAX` all the same."""
_TEXTS_MAX = 4096
_ORDERINGS: dict[tuple[Any, ...], str] = {}
"""``order by`` texts by their columns and direction (static columns: as few as the code's orders)."""


class Select:
    """``head`` is static SQL (``select ... from ... join ...``); ``head_args`` binds its ``{name}`` markers
    first (e.g. a limit inside a lateral join). Conditions, order and limit follow.

    A plain comparison is kept as its column, operator and placeholder number, and :meth:`build` looks the
    whole text up by the statement's shape (head, conditions, order, limit) before writing it: the same shape
    is the same text, whatever values are bound. Composing the text was 2 µs of a one-row answer's 85, and
    the same ``str`` each time also spares the driver's statement cache hashing a new one."""

    __slots__ = ("args", "conditions", "head", "ordering", "row_limit")

    def __init__(self, head: str, head_args: dict[str, Any] | None = None) -> None:
        self.args: list[Any] = []
        self.conditions: list[str | tuple[str, Op, int]] = []
        self.ordering = ""
        self.row_limit: int | None = None
        self.head = head.format_map(_Binder(head_args, self.args)) if head_args else head

    def bind(self, value: Any) -> str:
        self.args.append(value)
        return f"${len(self.args)}"

    def where(self, condition: str) -> Select:
        """A static condition, a constant of the resource (never built from input)."""
        self.conditions.append(condition)
        return self

    def compare(self, column: Column, op: Op, value: Any) -> Select:
        args = self.args
        args.append(value)  # bind, inline: a plain comparison is most conditions of most statements
        self.conditions.append((column, op, len(args)))  # written by build, when its shape is new
        return self

    def any_of(self, column: Column, values: Sequence[Any]) -> Select:
        self.conditions.append(f"{column} = any({self.bind(list(values))})")
        return self

    def none_of(self, column: Column, values: Sequence[Any]) -> Select:
        """``column <> all($n)``: the value is none of these (an empty list excludes nothing)."""
        self.conditions.append(f"{column} <> all({self.bind(list(values))})")
        return self

    def array_contains(self, column: Column, values: Sequence[Any], element_type: str) -> Select:
        """``column @> $n::<element_type>[]``: an array column holding every value (a GIN index reads it)."""
        if not _IDENTIFIER.fullmatch(element_type):
            raise ValueError(f"not a plain type name: {element_type!r}")
        self.conditions.append(f"{column} @> {self.bind(list(values))}::{element_type}[]")
        return self

    def contains_text(self, column: Column, text: str) -> Select:
        """Case-insensitive substring match; ``%``, ``_`` and ``\\`` in the text match themselves."""
        escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        self.conditions.append(f"{column} ilike {self.bind('%' + escaped + '%')}")
        return self

    def is_true(self, column: Column) -> Select:
        self.conditions.append(f"{column} is true")
        return self

    def is_not_true(self, column: Column) -> Select:
        """``column is not true``: false or null."""
        self.conditions.append(f"{column} is not true")
        return self

    def order_by(self, columns: Sequence[Column], order: Order) -> Select:
        key = (*columns, order)
        ordering = _ORDERINGS.get(key)
        if ordering is None:
            direction = " asc" if order is Order.ASC else " desc"
            ordering = _ORDERINGS[key] = (direction + ", ").join(columns) + direction if columns else ""
        self.ordering = ordering
        return self

    def then_by(self, column: Column, order: Order) -> Select:
        """One more sort key after those of :meth:`order_by`, in its own direction (``slot asc, ts desc``)."""
        direction = "asc" if order is Order.ASC else "desc"
        self.ordering = f"{self.ordering}, {column} {direction}" if self.ordering else f"{column} {direction}"
        return self

    def limit(self, count: int) -> Select:
        """The row limit, written into the statement as a literal (:func:`integer_literal`)."""
        self.row_limit = count
        return self

    def build(self) -> Statement:
        shape = (self.head, *self.conditions, self.ordering, self.row_limit)
        text = _TEXTS.get(shape)
        if text is None:
            text = self._text()
            if len(_TEXTS) >= _TEXTS_MAX:
                _TEXTS.clear()
            _TEXTS[shape] = text
        return Statement(text, tuple(self.args))

    def _text(self) -> str:
        parts = [self.head]
        if self.conditions:
            written = [
                item if isinstance(item, str) else f"{item[0]} {_OPERATORS[item[1]]} ${item[2]}"
                for item in self.conditions
            ]
            parts.append("where " + " and ".join(written))
        if self.ordering:
            parts.append("order by " + self.ordering)
        text = "\n".join(parts)
        if self.row_limit is not None:
            text += "\nlimit " + integer_literal(self.row_limit)
        return text

    def joined_by(self, head: str) -> Select:
        """Another part of a :func:`union_all` with this one: its own head, conditions, order and limit, binding
        its values after this statement's (one list of values for the whole union)."""
        other = Select(head)
        other.args = self.args
        return other

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


def union_all(parts: Sequence[Select], column: Column, order: Order, limit: int) -> Statement:
    """``(part) union all (part) ... order by <column> limit <n>``: the parts (each ordered and limited itself,
    the second and later made by :meth:`Select.joined_by` of the first) merged in ``column``'s order, an output
    column of every part."""
    if not parts or any(part.args is not parts[0].args for part in parts):
        raise ValueError("the parts of a union share one list of values (Select.joined_by)")
    texts = "\nunion all\n".join(f"({part.build().text})" for part in parts)
    direction = "asc" if order is Order.ASC else "desc"
    text = f"{texts}\norder by {column} {direction}\nlimit {integer_literal(limit)}"
    return Statement(text, tuple(parts[0].args))


def update(table: str, assignments: dict[str, Any], key: dict[str, Any]) -> Statement:
    """``update <table> set a = $1, ... where k = $n and ...``. Table and column names come from the caller's
    allow-list (plain lower-case identifiers, checked here); every value is bound."""
    args: list[Any] = []

    def bind(value: Any) -> str:
        args.append(value)
        return f"${len(args)}"

    for name in (*table.split("."), *assignments, *key):
        if not _IDENTIFIER.fullmatch(name):
            raise ValueError(f"not a plain identifier: {name!r}")
    if not assignments or not key:
        raise ValueError("an update needs at least one assignment and one key column")
    sets = ", ".join(f"{name} = {bind(value)}" for name, value in assignments.items())
    where = " and ".join(f"{name} = {bind(value)}" for name, value in key.items())
    return Statement(f"update {table} set {sets} where {where}", tuple(args))


def quote_identifier(name: str) -> str:
    """Quote a role or schema name taken from settings; only plain lower-case identifiers are accepted."""
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"not a plain identifier: {name!r}")
    return f'"{name}"'
