"""``GET /api/v1/tokens/{tokenId}/nfts/{serialNumber}/transactions``: the transactions that changed one NFT,
newest first by default.

The NFT's events are the start of its current row and of every ``nft_history`` version, plus its token's
deletion when the token's entity is deleted (the reference's event timestamps); the page is the transactions at
those times, each with the first element of its ``nft_transfer`` list that moves this NFT (a token deletion has
none: null sender and receiver). One statement: the events (each part ordered and limited) joined to
``transaction`` by its key. A page whose NFT row is missing, or has no creation time, answers ``206 Partial
Content``: the history is known to lack its mint.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.listing import ListSpec, NothingMatches
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.querystring.window import inclusive_bounds
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.tokens import token_nfts, token_ref
from ledgermirror.db.sql import Column, Fragment, Select
from ledgermirror.ledger.entity_id import EntityId, format_encoded
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.ledger.transaction_codes import type_name, type_number

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The consensus timestamp (seconds[.nanoseconds]) with an optional operator; repeat for a range.",
    schema=schemas.TIMESTAMP_QUERY,
    example="gte:1700000000.000000000",
)

PARAMS = ParamSet([LIMIT, ORDER, TIMESTAMP])
TOKENDELETION = type_number("TOKENDELETION")

_WINDOW = Fragment(
    "lower(timestamp_range) between {lower} and {upper} and lower(timestamp_range) = all({equal}::bigint[]) "
    "and lower(timestamp_range) <> all({excluded}::bigint[])"
)
_HEAD = Fragment("""select t.consensus_timestamp, t.nonce, t.payer_account_id, t.valid_start_ns, t.type,
    t.nft_transfer, coalesce((select n.created_timestamp is not null from nft n
              where n.token_id = {token} and n.serial_number = {serial}), false) as minted
from (
    (select lower(timestamp_range) as ts from nft
     where token_id = {token} and serial_number = {serial} and {window})
    union
    (select lower(timestamp_range) as ts from nft_history
     where token_id = {token} and serial_number = {serial} and {window}
     order by lower(timestamp_range) {order} limit {limit})
    union
    (select lower(timestamp_range) as ts from entity where id = {token} and deleted is true and {window})
) events
join transaction t on t.consensus_timestamp = events.ts""")
_HEADS = {order: _HEAD.fill(order=order, window=_WINDOW) for order in Order}
"""Static SQL for one order: the events (the page size, ``{limit}``, from the history), joined to their
transactions."""
_TIMESTAMP = Column("t.consensus_timestamp")


@dataclass(frozen=True, slots=True)
class Nft:
    token: int
    serial: int
    lower: int
    upper: int
    equal: list[int]
    excluded: list[int]


async def _locate(request: Request, ctx: AppContext) -> tuple[int, int]:
    """The path's token, then its serial number."""
    return token_ref.token_of(request.path_params, ctx), token_nfts.serial_of(request.path_params, ctx)


async def _prepare(path: tuple[int, int], query: ParsedQuery, ctx: AppContext) -> Nft:
    token, serial = path
    stamps = query.filters(TIMESTAMP)
    lower, upper = inclusive_bounds(stamps)
    if lower > upper:
        raise NothingMatches
    equal = sorted({item.value for item in stamps if item.op is Op.EQ})
    excluded = [item.value for item in stamps if item.op is Op.NE]
    return Nft(token, serial, lower, upper, equal, excluded)


def plan(nft: Nft, query: ParsedQuery, limit: int, order: Order) -> Select:
    args = {
        "token": nft.token,
        "serial": nft.serial,
        "lower": nft.lower,
        "upper": nft.upper,
        "equal": nft.equal,
        "excluded": nft.excluded,
    }
    return Select(_HEADS[order].fill(limit=limit).text, args).order_by([_TIMESTAMP], order).limit(limit)


def _transfer(row: Any, nft: Nft) -> dict[str, Any]:
    if row["type"] == TOKENDELETION:
        return {}
    moves = row["nft_transfer"]
    loaded = json.loads(moves) if isinstance(moves, str) else moves
    for item in loaded if isinstance(loaded, list) else []:
        if (
            isinstance(item, dict)
            and item.get("token_id") == nft.token
            and item.get("serial_number") == nft.serial
        ):
            return item
    return {}


def render(nft: Nft, row: Any) -> dict[str, Any]:
    transfer = _transfer(row, nft)
    seconds, nanos = divmod(int(row["valid_start_ns"]), 1_000_000_000)
    receiver, sender = transfer.get("receiver_account_id"), transfer.get("sender_account_id")
    return {
        "consensus_timestamp": format_ns(row["consensus_timestamp"]),
        "nonce": row["nonce"],
        "transaction_id": f"{EntityId.decode(row['payer_account_id'])}-{seconds}-{nanos:09d}",
        "type": type_name(row["type"]),
        "is_approval": bool(transfer.get("is_approval", False)),
        "receiver_account_id": None if receiver is None else format_encoded(int(receiver)),
        "sender_account_id": None if sender is None else format_encoded(int(sender)),
    }


def _anchors(nft: Nft, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    stamp = int(row["consensus_timestamp"])
    return [Anchor(TIMESTAMP.name, format_ns(stamp) or "", number=stamp)]


def _status(nft: Nft, rows: Sequence[Any]) -> int:
    return 206 if rows and not rows[0]["minted"] else 200


ITEM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "consensus_timestamp": {"type": "string", "example": "1586567700.453054000"},
        "nonce": {"type": "integer", "minimum": 0},
        "transaction_id": {"type": "string", "example": "0.0.8-1586567700-453054000"},
        "type": {"type": "string", "example": "CRYPTOTRANSFER"},
        "is_approval": {"type": "boolean"},
        "receiver_account_id": schemas.ENTITY_ID,
        "sender_account_id": schemas.ENTITY_ID,
    },
    "required": [
        "consensus_timestamp",
        "nonce",
        "transaction_id",
        "type",
        "is_approval",
        "receiver_account_id",
        "sender_account_id",
    ],
}

LIST = ListSpec[tuple[int, int], Nft](
    path="/api/v1/tokens/{tokenId}/nfts/{serialNumber}/transactions",
    items="transactions",
    params=PARAMS,
    default_order=Order.DESC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render_with=render,
    anchors=_anchors,
    max_age=1,
    summary="List an NFT's transactions",
    description="The transactions that minted, moved, wiped or burned one NFT (and its token's deletion), newest "
    "first by default, with pagination through links.next. 206 when the NFT's mint is not in the database.",
    item_schema=ITEM,
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER, token_nfts.OPENAPI_SERIAL_PARAMETER),
    status=_status,
    extra_responses={"206": {"description": "Partial content: the NFT's mint is missing"}},
)
ENDPOINT = LIST.endpoint()
