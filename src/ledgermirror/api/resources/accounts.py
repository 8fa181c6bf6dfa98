"""``GET /api/v1/accounts``: accounts and contracts with their live balance and associated token balances.

Errors come in query-string order, invalid values and unknown keys mixed (the reference's older validator for
this route), one message per parameter.
"""

from __future__ import annotations

from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Op, Order, split_query
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import (
    Filter,
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.account_render import (
    ACCOUNT,
    ACCOUNT_FILTER,
    ENTITY_COLUMNS,
    STAKE_COLUMNS,
    boolean,
    current_balance,
    render_account,
    tokens_join,
)
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm
from ledgermirror.ledger.int64 import INT64_MAX as _INT64_MAX


def balance_amount(text: str, ctx: ParseContext) -> int:
    """A non-negative tinybar amount of at most 19 digits that fits in 64 bits."""
    if not (text.isascii() and text.isdigit() and len(text) <= 19) or int(text) > _INT64_MAX:
        raise InvalidValue(text)
    return int(text)


ACCOUNT_BALANCE = ParamSpec[int](
    "account.balance",
    balance_amount,
    "The account's balance in tinybars, with an optional operator; repeat for ranges.",
    schema={"type": "string", "pattern": r"^((gte?|lte?|eq|ne):)?\d{1,19}$"},
    example="gt:1000",
)
ACCOUNT_ID = ParamSpec[EntityId | EvmAddress](
    "account.id",
    values.entity_id(EvmForm.ANY),
    "Account id or EVM address, with an optional operator; repeat for ranges. Equalities form one list.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
)
ACCOUNT_PUBLICKEY = ParamSpec[str](
    "account.publickey",
    values.public_key,
    "The public key of the account's key (hex, optional 0x, raw or DER-encoded).",
    example="3c3d546321ff6f63d701d2ec5c277095874e19f4a235bee1e6bb19258bf362be",
)
BALANCE = ParamSpec[bool](
    "balance",
    boolean,
    "Include balances (default true); false leaves the balance object out (null).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean", "default": True},
)


class UrlOrderParamSet(ParamSet):
    """Like :class:`ParamSet`, but every message in query-string order, unknown keys among invalid values."""

    def parse(self, query_string: str, ctx: ParseContext) -> ParsedQuery:
        raw = split_query(query_string)
        for count in raw.exact_counts.values():
            if count > ctx.max_repeats:
                raise BadRequest(f"Array limit exceeded. Only {ctx.max_repeats} elements allowed in an array.")
        for check in self.checks:
            check(raw)
        messages: list[str] = []
        parsed: dict[str, list[Filter[Any]]] = {}
        specs = {spec.name: spec for spec in self.specs}
        for key, texts in raw.items.items():
            spec = specs.get(key)
            if spec is None:
                messages.append(f"Unknown query parameter: {key}")
            elif len(texts) > ctx.max_repeats:
                messages.append(
                    f"Parameter values count exceeds maximum number allowed: {key} "
                    f"count: {len(texts)} max: {ctx.max_repeats}"
                )
            else:
                try:
                    filters = [spec.parse_one(text, ctx) for text in texts]
                except InvalidValue:
                    messages.append(f"Invalid parameter: {key}")
                    continue
                parsed[key] = filters if spec.repeatable else filters[-1:]
        if messages:
            raise BadRequest(*messages)
        return ParsedQuery(raw, parsed)


PARAMS = UrlOrderParamSet([ACCOUNT_BALANCE, ACCOUNT_ID, ACCOUNT_PUBLICKEY, BALANCE, LIMIT, ORDER])

_FROM = "from entity e\nleft join entity_stake es on es.id = e.id"
_WITH_BALANCES = {
    order: f"select {ENTITY_COLUMNS}, {STAKE_COLUMNS}, tb.token_ids, tb.token_balances\n{_FROM}\n"
    + tokens_join(order, "$1")
    for order in Order
}
"""Heads with the token balance list; ``$1`` is the number of token balances per account."""
_WITHOUT_BALANCES = f"select {ENTITY_COLUMNS}, {STAKE_COLUMNS}\n{_FROM}"

_ID = Column("e.id")
_BALANCE = Column("e.balance")
_PUBLIC_KEY = Column("e.public_key")

_EVM_LOOKUP = "select evm_address, id from entity where evm_address = any($1::bytea[]) and deleted is not true"


class _NothingMatches(Exception):
    """An ``account.id`` bound names an EVM address no entity has."""


def plan(
    query: ParsedQuery,
    ids: list[tuple[Op, int]],
    *,
    balances: bool,
    token_limit: int,
    limit: int,
    order: Order,
) -> Select:
    """``ids`` are the ``account.id`` filters with EVM addresses already resolved."""
    select = Select(_WITH_BALANCES[order] if balances else _WITHOUT_BALANCES)
    if balances:
        select.bind(token_limit)  # $1 of the head
    select.conditions.append(ACCOUNT_FILTER)
    equal = sorted({encoded for op, encoded in ids if op is Op.EQ})
    if equal:
        select.any_of(_ID, equal)
    for op, encoded in ids:
        if op is not Op.EQ:
            select.compare(_ID, op, encoded)
    for amount in query.filters(ACCOUNT_BALANCE):
        select.compare(_BALANCE, amount.op, amount.value)
    for key in query.filters(ACCOUNT_PUBLICKEY):
        select.compare(_PUBLIC_KEY, key.op, key.value)
    return select.order_by([_ID], order).limit(limit)


async def _resolve_ids(query: ParsedQuery, ctx: AppContext) -> list[tuple[Op, int]]:
    """Encoded ids of the ``account.id`` filters; opaque EVM addresses are looked up among live entities."""
    filters = query.filters(ACCOUNT_ID)
    addresses = [item.value.address for item in filters if isinstance(item.value, EvmAddress)]
    found: dict[bytes, int] = {}
    if addresses:
        rows = await ctx.database.fetch_raw(_EVM_LOOKUP, addresses)
        found = {bytes(row["evm_address"]): int(row["id"]) for row in rows}
    resolved: list[tuple[Op, int]] = []
    unknown_equalities = 0
    for item in filters:
        value = item.value
        if isinstance(value, EntityId):
            resolved.append((item.op, value.encoded))
        elif value.address in found:
            resolved.append((item.op, found[value.address]))
        elif item.op is Op.EQ:
            unknown_equalities += 1
        elif item.op is not Op.NE:  # "not an unknown address" holds for every account
            raise _NothingMatches
    if unknown_equalities and not any(op is Op.EQ for op, _ in resolved):
        raise _NothingMatches
    return resolved


async def list_accounts(request: Request, ctx: AppContext) -> Page:
    query = PARAMS.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.ASC)
    balances = query.last(BALANCE, True)
    try:
        ids = await _resolve_ids(query, ctx)
    except _NothingMatches:
        return Page({"accounts": [], "links": {"next": None}})
    probe = ctx.settings.pagination_probe
    statement = plan(
        query,
        ids,
        balances=balances,
        token_limit=ctx.settings.token_balance_limit_multiple_accounts,
        limit=limit + 1 if probe else limit,
        order=order,
    ).build()
    rows = await ctx.database.fetch(statement)
    more = len(rows) > limit if probe else len(rows) == limit
    rows = rows[:limit]
    delegation = ctx.settings.enable_delegation_address
    accounts = [
        render_account(row, current_balance(row) if balances else None, delegation_address=delegation)
        for row in rows
    ]
    link = None
    if more and rows:
        anchor = Anchor(
            "account.id", str(EntityId.decode(rows[-1]["id"])), to_number=values.entity_number(ctx.parse_ctx)
        )
        link = next_link(request.scope["path"], query.raw, [anchor], order)
    return Page({"accounts": accounts, "links": {"next": link}}, link)


RESPONSE: dict[str, Any] = schemas.list_response("accounts", ACCOUNT)

ENDPOINT = Endpoint(
    path="/api/v1/accounts",
    handler=list_accounts,
    params=PARAMS,
    max_age=10,
    summary="List accounts",
    description="Accounts and contracts in ascending id order by default, each with its live hbar balance and up "
    "to LEDGERMIRROR_TOKEN_BALANCE_LIMIT_MULTIPLE_ACCOUNTS associated token balances; keyset pagination "
    "through links.next.",
    response_schema=RESPONSE,
    tag="accounts",
)
