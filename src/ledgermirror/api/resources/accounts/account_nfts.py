"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/nfts``: the NFTs an account owns, keyset-paginated by
(token, serial number), newest token first by default.

The account is resolved first (an unknown alias or EVM address is a 404; an unknown numeric id is an empty
list), then the query is validated with the reference's bound rules (``api/querystring/bounds.py``).
``token.id`` and ``serialnumber`` select one range of the (token, serial) tuple; ``spender.id`` filters the
approved spender (equalities form one list, at most one lower and one upper bound).
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import (
    LOWER_OPS,
    UPPER_OPS,
    Keyset,
    Limit,
    check_node,
    entity_key,
    in_query_order,
    integer_key,
    node_bound,
)
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import evm_lookup, schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmAddress, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

SERIAL_NUMBER = ParamSpec[int](
    "serialnumber",
    values.integer_between(1),
    "The serial number (1 to 2^63-1), with an optional operator (eq, gt, gte, lt, lte); needs token.id. At "
    "most one equality, one lower and one upper bound.",
    schema=schemas.POSITIVE_INT64_QUERY,
    example="gt:10",
    doc_ops=RANGE_OPS,
)
SPENDER_ID = ParamSpec[EntityId | EvmAddress](
    "spender.id",
    values.entity_id(EvmForm.ANY),
    "The approved spender's account id or EVM address, with an optional operator (eq, gt, gte, lt, lte). "
    "Equalities form one list; at most one lower and one upper bound.",
    schema=schemas.ENTITY_ID_OR_EVM_QUERY,
    example="0.0.1000",
    doc_ops=RANGE_OPS,
)
TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.LONG_ZERO),
    "The token id, with an optional operator (eq, gt, gte, lt, lte); the primary key of the pagination. With "
    "a serialnumber lower bound it needs gte or eq, with an upper bound lte or eq.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
    doc_ops=RANGE_OPS,
)

PARAMS = ParamSet([LIMIT, ORDER, SERIAL_NUMBER, SPENDER_ID, TOKEN_ID])

MULTIPLE_SPENDER_RANGES = "Multiple range params not allowed for spender.id"
SPENDER_NE = "Not equals (ne) comparison operator is not supported"

_SELECT = """select n.account_id, n.created_timestamp, n.delegating_spender,
    n.deleted or coalesce(e.deleted, false) as deleted, n.metadata, n.serial_number, n.spender,
    lower(n.timestamp_range) as modified_timestamp, n.token_id
from nft n
left join entity e on e.id = n.token_id"""
SELECT_NFT = _SELECT
"""The NFT object's columns (``n``, with its token's entity ``e``), shared with ``token_nfts.py``."""

_ACCOUNT = Column("n.account_id")
_SPENDER = Column("n.spender")
COLUMNS = {"account_id": _ACCOUNT, "token_id": Column("n.token_id"), "serial_number": Column("n.serial_number")}

NFT: dict[str, Any] = {
    "type": "object",
    "properties": {
        "account_id": schemas.ENTITY_ID,
        "created_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "delegating_spender": schemas.ENTITY_ID,
        "deleted": {"type": "boolean", "description": "The NFT or its token is deleted"},
        "metadata": {"type": ["string", "null"], "format": "byte", "description": "base64"},
        "modified_timestamp": {"type": ["string", "null"], "example": "1586567700.453054000"},
        "serial_number": {"type": "integer", "format": "int64", "example": 1},
        "spender": schemas.ENTITY_ID,
        "token_id": schemas.ENTITY_ID,
    },
    "required": [
        "account_id",
        "created_timestamp",
        "delegating_spender",
        "deleted",
        "metadata",
        "modified_timestamp",
        "serial_number",
        "spender",
        "token_id",
    ],
}


def plan(owner: Owner, query: ParsedQuery, limit: int, order: Order) -> Select:
    """``owner.spender_in``: the spender equalities as one list (None: no equality was given)."""
    account = owner.account
    select = Select(_SELECT).compare(_ACCOUNT, Op.EQ, account)
    for condition in owner.keyset.conditions(lead=("account_id", account)):
        select.compare_rows([COLUMNS[key] for key in condition.columns], condition.op, condition.values)
    if owner.spender_in is not None:
        select.any_of(_SPENDER, owner.spender_in)
    for item in owner.spender_ranges:
        select.compare(_SPENDER, item.op, item.value)
    return select.order_by([COLUMNS["token_id"], COLUMNS["serial_number"]], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    metadata = row["metadata"]
    return {
        "account_id": format_encoded(row["account_id"]),
        "created_timestamp": format_ns(row["created_timestamp"]),
        "delegating_spender": format_encoded(row["delegating_spender"]),
        "deleted": row["deleted"],
        "metadata": None if metadata is None else base64.b64encode(metadata).decode(),
        "modified_timestamp": format_ns(row["modified_timestamp"]),
        "serial_number": row["serial_number"],
        "spender": format_encoded(row["spender"]),
        "token_id": format_encoded(row["token_id"]),
    }


@dataclass(frozen=True, slots=True)
class Owner:
    """The path account, the (token, serial) keyset and the resolved spender filters."""

    account: int
    keyset: Keyset
    spender_in: list[int] | None
    spender_ranges: list[Limit]


async def _prepare(account: int, query: ParsedQuery, ctx: AppContext) -> Owner:
    token_limits = [Limit(item.op, item.value.encoded) for item in query.filters(TOKEN_ID)]
    serial_limits = [Limit(item.op, item.value) for item in query.filters(SERIAL_NUMBER)]
    bounds = in_query_order(
        list(query.given),
        {
            TOKEN_ID.name: lambda: node_bound(TOKEN_ID.name, "token_id", token_limits),
            SERIAL_NUMBER.name: lambda: node_bound(SERIAL_NUMBER.name, "serial_number", serial_limits),
        },
    )
    token, serial = bounds[TOKEN_ID.name], bounds[SERIAL_NUMBER.name]
    check_node(token, serial)
    spender_filters = query.filters(SPENDER_ID)
    ops = [item.op for item in spender_filters]
    if sum(op in LOWER_OPS for op in ops) > 1 or sum(op in UPPER_OPS for op in ops) > 1:
        raise BadRequest(MULTIPLE_SPENDER_RANGES)
    if Op.NE in ops:
        raise BadRequest(SPENDER_NE)
    spender_in: list[int] | None = [] if Op.EQ in ops else None
    spender_ranges: list[Limit] = []
    encoded_ids = await evm_lookup.filter_values(ctx, [item.value for item in spender_filters])
    for item, encoded in zip(spender_filters, encoded_ids, strict=True):
        if encoded is None and item.op is not Op.EQ:  # a bound on an EVM address no entity has
            raise NothingMatches
        if spender_in is not None and item.op is Op.EQ and encoded is not None:
            spender_in.append(encoded)
        elif encoded is not None:
            spender_ranges.append(Limit(item.op, encoded))
    return Owner(account, Keyset((token, serial)), spender_in, spender_ranges)


def _anchors(owner: Owner, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return owner.keyset.anchors([entity_key(row["token_id"]), integer_key(row["serial_number"])])


LIST = ListSpec[int, Owner](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/nfts",
    items="nfts",
    params=PARAMS,
    default_order=Order.DESC,
    locate=account_ref.path_account,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's NFTs",
    description="The NFTs the account owns, in descending (token, serial number) order by default, with keyset "
    "pagination through links.next. deleted is true when the NFT or its token is deleted.",
    item_schema=NFT,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
