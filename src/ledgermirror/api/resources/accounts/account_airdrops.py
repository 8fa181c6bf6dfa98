"""``GET /api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/outstanding`` and ``.../pending``: pending token
airdrops the account has sent (outstanding) or may claim (pending).

The reference serves these routes from its Java service; we keep its parameters and filter semantics but answer
in our one error style (see docs/api/allowances-nfts-airdrops.md). The counterparty (``receiver.id`` for
outstanding, ``sender.id`` for pending), ``token.id`` and ``serialnumber`` select one range of the
(counterparty, token, serial number) tuple in sort order (``api/querystring/bounds.py``); per parameter the last
lower (``eq``/``gt``/``gte``) and the last upper (``lt``/``lte``) value count, at most two values each.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest
from ledgermirror.api.listing import ListSpec, Prepare, query_first
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.bounds import (
    Bound,
    Keyset,
    Limit,
    check_range,
    entity_key,
    integer_key,
    java_bound,
)
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Op, Order, RawQuery
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.accounts import account_ref
from ledgermirror.db.sql import Column, Select
from ledgermirror.ledger.entity_id import EntityId, EvmForm, format_encoded
from ledgermirror.ledger.timestamps import format_ns

MAX_VALUES = 2
PENDING = "PENDING"

_SELECT = """select amount, receiver_account_id, sender_account_id, serial_number, token_id,
    lower(timestamp_range) as timestamp_from, upper(timestamp_range) as timestamp_to
from token_airdrop"""
_STATE = Column("state")
COLUMNS = {
    "receiver_account_id": Column("receiver_account_id"),
    "sender_account_id": Column("sender_account_id"),
    "token_id": Column("token_id"),
    "serial_number": Column("serial_number"),
}


def _id_param(name: str, description: str) -> ParamSpec[EntityId]:
    return ParamSpec[EntityId](
        name,
        values.numeric_entity_id(EvmForm.NONE),
        description + " With an optional operator (eq, gt, gte, lt, lte); at most two values.",
        schema=schemas.ENTITY_ID_QUERY,
        example="gte:0.0.1000",
        max_count=MAX_VALUES,
        doc_ops=RANGE_OPS,
    )


RECEIVER_ID = _id_param("receiver.id", "The receiver's account id; the primary key of the pagination.")
SENDER_ID = _id_param("sender.id", "The sender's account id; the primary key of the pagination.")
TOKEN_ID = _id_param("token.id", "The token id.")
SERIAL_NUMBER = ParamSpec[int](
    "serialnumber",
    values.integer_between(0),
    "The NFT serial number (0 to 2^63-1; fungible airdrops have none), with an optional operator (eq, gt, gte, "
    "lt, lte); at most two values.",
    schema=schemas.INT64_QUERY,
    example="gt:10",
    max_count=MAX_VALUES,
    doc_ops=RANGE_OPS,
)

AIRDROP: dict[str, Any] = {
    "type": "object",
    "properties": {
        "amount": {"type": ["integer", "null"], "format": "int64", "description": "null for an NFT airdrop"},
        "receiver_id": schemas.ENTITY_ID,
        "sender_id": schemas.ENTITY_ID,
        "serial_number": {"type": ["integer", "null"], "format": "int64", "description": "null when fungible"},
        "timestamp": schemas.TIMESTAMP_RANGE,
        "token_id": schemas.ENTITY_ID,
    },
    "required": ["amount", "receiver_id", "sender_id", "serial_number", "timestamp", "token_id"],
}


@dataclass(frozen=True, slots=True)
class Direction:
    """Which side of the airdrop the path account is on."""

    account_column: str
    party: ParamSpec[EntityId]
    party_column: str

    def params(self) -> ParamSet:
        keys = (self.party.name, TOKEN_ID.name, SERIAL_NUMBER.name)

        def at_most_two(raw: RawQuery) -> None:
            for key in keys:
                count = len(raw.items.get(key, ()))
                if count > MAX_VALUES:
                    raise BadRequest(
                        f"Parameter values count exceeds maximum number allowed: {key} count: {count} "
                        f"max: {MAX_VALUES}"
                    )

        return ParamSet([LIMIT, ORDER, self.party, SERIAL_NUMBER, TOKEN_ID], checks=[at_most_two])


OUTSTANDING = Direction("sender_account_id", RECEIVER_ID, "receiver_account_id")
PENDING_SIDE = Direction("receiver_account_id", SENDER_ID, "sender_account_id")
OUTSTANDING_PARAMS = OUTSTANDING.params()
PENDING_PARAMS = PENDING_SIDE.params()


def plan(airdrops: Airdrops, query: ParsedQuery, limit: int, order: Order) -> Select:
    account, side = airdrops.account, airdrops.side
    select = Select(_SELECT).compare(COLUMNS[side.account_column], Op.EQ, account)
    for condition in airdrops.keyset.conditions(lead=(side.account_column, account)):
        select.compare_rows([COLUMNS[key] for key in condition.columns], condition.op, condition.values)
    select.compare(_STATE, Op.EQ, PENDING)
    sort = [COLUMNS[side.party_column], COLUMNS["token_id"], COLUMNS["serial_number"]]
    return select.order_by(sort, order).limit(limit)


def render(row: Any) -> dict[str, Any]:
    return {
        "amount": row["amount"],
        "receiver_id": format_encoded(row["receiver_account_id"]),
        "sender_id": format_encoded(row["sender_account_id"]),
        "serial_number": row["serial_number"] or None,
        "timestamp": {"from": format_ns(row["timestamp_from"]), "to": format_ns(row["timestamp_to"])},
        "token_id": format_encoded(row["token_id"]),
    }


@dataclass(frozen=True, slots=True)
class Airdrops:
    account: int
    side: Direction
    keyset: Keyset


def _preparer(side: Direction) -> Prepare[Request, Airdrops]:
    async def prepare(request: Request, query: ParsedQuery, ctx: AppContext) -> Airdrops:
        specs: list[tuple[ParamSpec[Any], str]] = [
            (side.party, side.party_column),
            (TOKEN_ID, "token_id"),
            (SERIAL_NUMBER, "serial_number"),
        ]
        bounds: list[Bound] = []
        for spec, column in specs:
            limits = [Limit(item.op, _number(item.value)) for item in query.filters(spec)]
            if any(limit.op is Op.NE for limit in limits):
                raise BadRequest(f"Unsupported range operator ne for {spec.name}")
            bounds.append(java_bound(spec.name, column, limits))
        check_range(bounds[0])
        account = await account_ref.path_account(request, ctx)
        return Airdrops(account, side, Keyset(tuple(bounds)))

    return prepare


def _anchors(airdrops: Airdrops, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    last = [entity_key(row[airdrops.side.party_column]), entity_key(row["token_id"])]
    if row["serial_number"]:
        last.append(integer_key(row["serial_number"]))
    anchors = airdrops.keyset.anchors(last)
    if anchors and not row["serial_number"]:
        # fungible: (counterparty, token) is unique; the link drops the serial bound, as the reference
        anchors.append(Anchor(SERIAL_NUMBER.name, None))
    return anchors


def _number(value: EntityId | int) -> int:
    return value.encoded if isinstance(value, EntityId) else value


def _spec(
    side: Direction, params: ParamSet, path: str, summary: str, description: str
) -> ListSpec[Request, Airdrops]:
    return ListSpec[Request, Airdrops](
        path=path,
        items="airdrops",
        params=params,
        default_order=Order.ASC,
        locate=query_first,
        prepare=_preparer(side),
        plan=plan,
        render=render,
        anchors=_anchors,
        max_age=1,
        summary=summary,
        description=description,
        item_schema=AIRDROP,
        tag="accounts",
        path_params=(account_ref.OPENAPI_PATH_PARAMETER,),
    )


OUTSTANDING_LIST = _spec(
    OUTSTANDING,
    OUTSTANDING_PARAMS,
    "/api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/outstanding",
    "List the pending airdrops an account has sent",
    "Pending token airdrops sent by the account, in ascending (receiver, token, serial number) order by "
    "default, with keyset pagination through links.next.",
)
PENDING_LIST = _spec(
    PENDING_SIDE,
    PENDING_PARAMS,
    "/api/v1/accounts/{idOrAliasOrEvmAddress}/airdrops/pending",
    "List the pending airdrops an account may claim",
    "Pending token airdrops sent to the account, in ascending (sender, token, serial number) order by default, "
    "with keyset pagination through links.next.",
)
OUTSTANDING_ENDPOINT = OUTSTANDING_LIST.endpoint()
PENDING_ENDPOINT = PENDING_LIST.endpoint()
