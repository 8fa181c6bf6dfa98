"""The parameter registry: one :class:`ParamSpec` per public parameter, one :class:`ParamSet` per endpoint.

A spec says which operators a parameter takes, how its value parses, and whether it repeats. Parsing a request
against a ``ParamSet`` yields a :class:`ParsedQuery` of typed filters or raises :class:`QueryError` with every
problem at once, in the reference's order: repeat-count problems, then invalid values, then unknown keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring.grammar import (
    ALL_OPS,
    BadOperator,
    Op,
    RawQuery,
    split_operator,
    split_query,
)
from ledgermirror.pg_text import storable

T = TypeVar("T")
U = TypeVar("U")


@dataclass(frozen=True, slots=True)
class ParseContext:
    """What value parsers need from the settings."""

    shard: int = 0
    realm: int = 0
    limit_default: int = 25
    limit_max: int = 100
    max_repeats: int = 100


class InvalidValue(ValueError):
    """A parser's way of saying "Invalid parameter"; ``message`` replaces that text when the reference has a
    more specific one (``Invalid entity ID "0.0.274877906944"``)."""

    def __init__(self, text: str, message: str | None = None) -> None:
        super().__init__(text)
        self.message = message


@dataclass(frozen=True, slots=True)
class Filter(Generic[T]):
    """One parsed ``key=op:value``. ``text`` is the value as the client wrote it (operator included), which a
    next link repeats; it takes no part in equality."""

    key: str
    op: Op
    value: T
    text: str = field(default="", compare=False)


@dataclass(frozen=True)
class ParamSpec(Generic[T]):
    """One public query parameter.

    ``ops`` empty means the value takes no ``op:`` prefix at all (``limit``, ``order``).
    ``repeatable`` False means the last value wins; ``single`` means a repeat is an invalid value.
    """

    name: str
    parse: Callable[[str, ParseContext], T]
    description: str
    ops: frozenset[Op] = ALL_OPS
    repeatable: bool = True
    single: bool = False
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "string"})
    example: str | None = None
    max_count: int | None = None
    """At most this many values (below the configured repeat limit), for the document; a ``Check`` enforces it."""
    doc_ops: frozenset[Op] | None = None
    """The operators the document lists when a later rule refuses some of ``ops`` with its own message."""
    pattern_has_ops: bool = False
    """The schema's pattern spells out the operators itself (an operator allowed with only some forms of the
    value, e.g. ``contract.id``: any operator with an id, ``eq`` only with an EVM address)."""

    def parse_one(self, text: str, ctx: ParseContext) -> Filter[T]:
        if not storable(text):
            raise InvalidValue(text)
        try:
            op, value = split_operator(text) if self.ops else (None, text)
        except BadOperator:
            raise InvalidValue(text) from None
        if op is None:
            op = Op.EQ
        elif op not in self.ops:
            raise InvalidValue(text)
        return Filter(self.name, op, self.parse(value, ctx), text)


@dataclass(slots=True)  # not frozen: it holds dicts (unhashable either way), and a frozen one took 1 µs to make
class ParsedQuery:
    """``values``: the filters that count (the last one of a non-repeatable parameter); ``given``: every filter
    as sent, keys in first-seen order (what a next link repeats)."""

    raw: RawQuery
    values: dict[str, list[Filter[Any]]]
    given: dict[str, list[Filter[Any]]] = field(default_factory=dict)

    def filters(self, spec: ParamSpec[T]) -> list[Filter[T]]:
        return self.values.get(spec.name, [])

    def last(self, spec: ParamSpec[T], default: U) -> T | U:
        found = self.values.get(spec.name)
        return found[-1].value if found else default

    def has(self, spec: ParamSpec[Any]) -> bool:
        return spec.name in self.values


class _InvalidValues(Exception):
    """Every invalid value of one parameter, for a ``per_value`` set."""

    def __init__(self, errors: list[InvalidValue]) -> None:
        super().__init__(len(errors))
        self.errors = errors


Check = Callable[[RawQuery], None]
"""An endpoint rule that runs before value validation (e.g. "name and token.id can not be used together")."""


class ParamSet:
    """The parameters of one endpoint, in documentation order.

    Problems are reported all at once, by default in the reference's order (repeat counts, then invalid values,
    then unknown keys); ``url_order`` reports them in query-string order instead, unknown keys among invalid
    values (the reference's older validator, ``/api/v1/accounts``).
    """

    def __init__(
        self,
        specs: Sequence[ParamSpec[Any]],
        checks: Iterable[Check] = (),
        *,
        url_order: bool = False,
        per_value: bool = False,
    ) -> None:
        self.specs = tuple(specs)
        self.checks = tuple(checks)
        self.url_order = url_order
        self.per_value = per_value
        """One message per invalid value rather than per parameter (``/transactions/{id}``)."""
        self._by_name = {spec.name: spec for spec in self.specs}

    def parse(self, query_string: str, ctx: ParseContext) -> ParsedQuery:
        raw = split_query(query_string)
        for count in raw.exact_counts.values():
            if count > ctx.max_repeats:
                raise BadRequest(f"Array limit exceeded. Only {ctx.max_repeats} elements allowed in an array.")
        for check in self.checks:
            check(raw)
        too_many: list[str] = []
        invalid: list[str] = []
        unknown: list[str] = []
        in_order: list[str] = []
        values: dict[str, list[Filter[Any]]] = {}
        given: dict[str, list[Filter[Any]]] = {}
        for key, texts in raw.items.items():
            spec = self._by_name.get(key)
            if spec is None:
                message = f"Unknown query parameter: {key}"
                (in_order if self.url_order else unknown).append(message)
                continue
            if len(texts) > ctx.max_repeats:
                message = (
                    f"Parameter values count exceeds maximum number allowed: {key} "
                    f"count: {len(texts)} max: {ctx.max_repeats}"
                )
                (in_order if self.url_order else too_many).append(message)
                continue
            try:
                if spec.single and len(texts) > 1:
                    raise InvalidValue(key)
                parsed = self._parse_values(spec, texts, ctx)
            except _InvalidValues as errors:
                found = [error.message or f"Invalid parameter: {key}" for error in errors.errors]
                (in_order if self.url_order else invalid).extend(found)
                continue
            except InvalidValue as error:
                (in_order if self.url_order else invalid).append(error.message or f"Invalid parameter: {key}")
                continue
            given[key] = parsed
            values[key] = parsed if spec.repeatable else parsed[-1:]
        messages = in_order + too_many + invalid + unknown
        if messages:
            raise BadRequest(*messages)
        return ParsedQuery(raw, values, given)

    def _parse_values(self, spec: ParamSpec[Any], texts: Sequence[str], ctx: ParseContext) -> list[Filter[Any]]:
        if not self.per_value:
            return [spec.parse_one(text, ctx) for text in texts]
        parsed: list[Filter[Any]] = []
        errors: list[InvalidValue] = []
        for text in texts:
            try:
                parsed.append(spec.parse_one(text, ctx))
            except InvalidValue as error:
                errors.append(error)
        if errors:
            raise _InvalidValues(errors)
        return parsed

    def names(self) -> list[str]:
        return [spec.name for spec in self.specs]
