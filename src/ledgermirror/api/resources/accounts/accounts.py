"""``GET /api/v1/accounts``: accounts and contracts with their live balance and associated token balances.

Errors come in query-string order, invalid values and unknown keys mixed (the reference's older validator for
this route), one message per parameter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import EQ_ONLY, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import (
    InvalidValue,
    ParamSet,
    ParamSpec,
    ParseContext,
    ParsedQuery,
)
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts.account_query import (
    ACCOUNT_FILTER,
    ENTITY_COLUMNS,
    STAKE_COLUMNS,
    tokens_join,
)
from ledgermirror.api.resources.accounts.account_render import current_balance, render_account
from ledgermirror.api.resources.accounts.account_schema import ACCOUNT
from ledgermirror.db.sql import Column, Fragment, Select
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
    schema=schemas.INT64_QUERY,
    example="gt:1000",
)
ACCOUNT_ID = ParamSpec[EntityId | EvmAddress](
    "account.id",
    values.entity_id(EvmForm.ANY),
    "Account id or EVM address, with an optional operator; repeat for ranges. Equalities form one list.",
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="gte:0.0.1000",
)
ACCOUNT_PUBLICKEY = ParamSpec[str](
    "account.publickey",
    values.public_key,
    "The public key of the account's key (hex, optional 0x, raw or DER-encoded).",
    schema=schemas.PUBLIC_KEY_QUERY,
    example="3c3d546321ff6f63d701d2ec5c277095874e19f4a235bee1e6bb19258bf362be",
)
BALANCE = ParamSpec[bool](
    "balance",
    values.true_false,
    "Include balances (default true); false leaves the balance object out (null).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean", "default": True},
)


PARAMS = ParamSet([ACCOUNT_BALANCE, ACCOUNT_ID, ACCOUNT_PUBLICKEY, BALANCE, LIMIT, ORDER], url_order=True)

_FROM = "from entity e\nleft join entity_stake es on es.id = e.id"
_WITH_BALANCES = {
    order: Fragment(f"select {ENTITY_COLUMNS}, {STAKE_COLUMNS}, tb.token_ids, tb.token_balances\n{_FROM}\n")
    + tokens_join(order)
    for order in Order
}
"""Heads with the token balance list; fill ``token_limit``, the number of token balances per account."""
_WITHOUT_BALANCES = f"select {ENTITY_COLUMNS}, {STAKE_COLUMNS}\n{_FROM}"

_ID = Column("e.id")
_BALANCE = Column("e.balance")
_PUBLIC_KEY = Column("e.public_key")


@dataclass(frozen=True, slots=True)
class Accounts:
    """What the plan needs beyond the query: ``account.id`` filters with EVM addresses resolved."""

    ids: list[tuple[Op, int]]
    balances: bool
    token_limit: int
    delegation: bool


def plan(accounts: Accounts, query: ParsedQuery, limit: int, order: Order) -> Select:
    """``accounts.ids`` are the ``account.id`` filters with EVM addresses already resolved."""
    ids = accounts.ids
    if accounts.balances:
        select = Select(_WITH_BALANCES[order].fill(token_limit=accounts.token_limit).text)
    else:
        select = Select(_WITHOUT_BALANCES)
    select.where(ACCOUNT_FILTER)
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
    found = await evm_lookup.filter_ids(
        ctx, [item.value.address for item in filters if isinstance(item.value, EvmAddress)]
    )
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
            raise NothingMatches
    if unknown_equalities and not any(op is Op.EQ for op, _ in resolved):
        raise NothingMatches
    return resolved


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Accounts:
    balances = query.last(BALANCE, True)
    ids = await _resolve_ids(query, ctx)
    settings = ctx.settings
    return Accounts(
        ids, balances, settings.token_balance_limit_multiple_accounts, settings.enable_delegation_address
    )


def _anchors(accounts: Accounts, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(ACCOUNT_ID.name, str(EntityId.decode(row["id"])), number=row["id"])]


def _render(accounts: Accounts, row: Any) -> dict[str, Any]:
    balance = current_balance(row) if accounts.balances else None
    return render_account(row, balance, delegation_address=accounts.delegation)


LIST = ListSpec[Request, Accounts](
    path="/api/v1/accounts",
    items="accounts",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render_with=_render,
    anchors=_anchors,
    max_age=10,
    summary="List accounts",
    description="Accounts and contracts in ascending id order by default, each with its live hbar balance and up "
    "to LEDGERMIRROR_TOKEN_BALANCE_LIMIT_MULTIPLE_ACCOUNTS associated token balances; keyset pagination "
    "through links.next.",
    item_schema=ACCOUNT,
    tag="accounts",
)
ENDPOINT = LIST.endpoint()
