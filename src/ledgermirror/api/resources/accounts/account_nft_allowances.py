"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/nfts``: approved-for-all NFT allowances of an
account, as owner (``owner=true``, the default) or as spender (``owner=false``).

The reference serves this route from its Java service; we keep its parameters, rules and rule messages but
answer in our one error style (see docs/api/allowances-nfts-airdrops.md). The query is validated first (bad
values, then the bound rules of ``api/querystring/bounds.py``), then the account is resolved. ``account.id``
filters the other party (the spender when ``owner=true``, the owner otherwise) and with ``token.id`` selects one
range of the (account, token) tuple.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import Keyset, Limit, check_java, entity_key, java_bound
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order, RawQuery
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import InvalidValue, ParamSet, ParamSpec, ParseContext, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

MAX_VALUES = 2
_TRUE = frozenset({"true", "yes", "on", "1"})
_FALSE = frozenset({"false", "no", "off", "0"})


def boolean(text: str, ctx: ParseContext) -> bool:
    """true/false, yes/no, on/off or 1/0, case-insensitive (the Java service's boolean conversion)."""
    lowered = text.lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise InvalidValue(text)


ACCOUNT_ID = ParamSpec[EntityId](
    "account.id",
    values.numeric_entity_id(EvmForm.NONE),
    "The other party's account id (the spender when owner=true, the owner when owner=false), with an optional "
    "operator (eq, gt, gte, lt, lte); at most two values. The primary key of the pagination.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gte:0.0.1000",
    max_count=MAX_VALUES,
    doc_ops=RANGE_OPS,
)
OWNER = ParamSpec[bool](
    "owner",
    boolean,
    "true (default): the path account is the owner; false: the path account is the spender.",
    ops=frozenset(),
    repeatable=False,
    schema={"type": "boolean", "default": True},
)
TOKEN_ID = ParamSpec[EntityId](
    "token.id",
    values.numeric_entity_id(EvmForm.NONE),
    "The token id, with an optional operator (eq, gt, gte, lt, lte); at most two values; needs account.id. A "
    "lower bound needs account.id gte or eq, an upper bound account.id lte or eq.",
    schema=schemas.ENTITY_ID_QUERY,
    example="gt:0.0.1000",
    max_count=MAX_VALUES,
    doc_ops=RANGE_OPS,
)


def _at_most_two(raw: RawQuery) -> None:
    for key in (ACCOUNT_ID.name, TOKEN_ID.name):
        count = len(raw.items.get(key, ()))
        if count > MAX_VALUES:
            raise BadRequest(
                f"Parameter values count exceeds maximum number allowed: {key} count: {count} max: {MAX_VALUES}"
            )


PARAMS = ParamSet([ACCOUNT_ID, LIMIT, ORDER, OWNER, TOKEN_ID], checks=[_at_most_two])

_SELECT = """select owner, spender, token_id, approved_for_all,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from nft_allowance"""

_APPROVED = Column("approved_for_all")
COLUMNS = {"owner": Column("owner"), "spender": Column("spender"), "token_id": Column("token_id")}

ALLOWANCE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved_for_all": {"type": "boolean"},
        "owner": schemas.ENTITY_ID,
        "spender": schemas.ENTITY_ID,
        "timestamp": schemas.TIMESTAMP_RANGE,
        "token_id": schemas.ENTITY_ID,
    },
    "required": ["approved_for_all", "owner", "spender", "timestamp", "token_id"],
}


def plan(party: Party, query: ParsedQuery, limit: int, order: Order) -> Select:
    account = party.account
    base, other = ("owner", "spender") if party.is_owner else ("spender", "owner")
    select = Select(_SELECT).compare(COLUMNS[base], Op.EQ, account).is_true(_APPROVED)
    for condition in party.keyset.conditions(lead=(base, account)):
        select.compare_rows([COLUMNS[key] for key in condition.columns], condition.op, condition.values)
    return select.order_by([COLUMNS[other], COLUMNS["token_id"]], order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "approved_for_all": row["approved_for_all"],
        "owner": format_encoded(row["owner"]),
        "spender": format_encoded(row["spender"]),
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
        "token_id": format_encoded(row["token_id"]),
    }


@dataclass(frozen=True, slots=True)
class Party:
    """The path account, which side of the allowance it is on, and the keyset bounds."""

    account: int
    is_owner: bool
    keyset: Keyset

    @property
    def other(self) -> str:
        return "spender" if self.is_owner else "owner"


async def _prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Party:
    is_owner = query.last(OWNER, True)
    party = "spender" if is_owner else "owner"
    account_limits = [Limit(item.op, item.value.encoded) for item in query.filters(ACCOUNT_ID)]
    token_limits = [Limit(item.op, item.value.encoded) for item in query.filters(TOKEN_ID)]
    account_bound = java_bound(ACCOUNT_ID.name, party, account_limits)
    token_bound = java_bound(TOKEN_ID.name, "token_id", token_limits)
    check_java(account_bound, token_bound)
    account = await account_ref.path_account(request, ctx)
    return Party(account, is_owner, Keyset((account_bound, token_bound)))


def _anchors(party: Party, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return party.keyset.anchors([entity_key(row[party.other]), entity_key(row["token_id"])])


LIST = ListSpec[Request, Party](
    path="/api/v1/accounts/{idOrAliasOrEvmAddress}/allowances/nfts",
    items="allowances",
    params=PARAMS,
    default_order=Order.ASC,
    locate=query_first,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=1,
    summary="List an account's NFT allowances",
    description="Approved-for-all NFT allowances the account has granted (owner=true) or received "
    "(owner=false), in ascending (account, token) order by default, with keyset pagination through links.next.",
    item_schema=ALLOWANCE,
    tag="accounts",
    path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
