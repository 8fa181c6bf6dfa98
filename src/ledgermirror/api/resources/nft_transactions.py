"""``GET /api/v1/tokens/{tokenId}/nfts/{serialNumber}/transactions``: the transactions that changed one NFT,
newest first by default.

Two steps, as the reference does: the NFT's event timestamps (the start of its current row and of every
``nft_history`` version, plus the token's deletion when its entity is deleted), then the transactions at those
timestamps, each with the first element of its ``nft_transfer`` list that moves this NFT (a token deletion
has none: null sender and receiver). Rows whose NFT row is missing, or has no creation time, answer ``206
Partial Content``: the history is known to lack its mint.
"""

from __future__ import annotations

import json
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.listing import has_more, probe_limit
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import Op, Order
from ledgermirror.api.querystring.pagination import Anchor, next_link
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, inclusive_bounds
from ledgermirror.api.resources import schemas, token_nfts, token_ref
from ledgermirror.db.sql import template
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

_WINDOW = (
    "lower(timestamp_range) between {lower} and {upper} and lower(timestamp_range) = all({equal}::bigint[]) "
    "and lower(timestamp_range) <> all({excluded}::bigint[])"
)


def _events(order: Order) -> str:
    direction = order.value
    return f"""select ts from (
    (select lower(timestamp_range) as ts from nft
     where token_id = {{token}} and serial_number = {{serial}} and {_WINDOW})
    union all
    (select lower(timestamp_range) as ts from nft_history
     where token_id = {{token}} and serial_number = {{serial}} and {_WINDOW}
     order by lower(timestamp_range) {direction} limit {{limit}})
    union all
    (select lower(timestamp_range) as ts from entity where id = {{token}} and deleted is true and {_WINDOW})
) events
order by ts {direction}
limit {{limit}}"""


_EVENTS = {order: _events(order) for order in Order}
_MINTED = "select created_timestamp from nft where token_id = {token} and serial_number = {serial}"


def _transactions(order: Order) -> str:
    return f"""select consensus_timestamp, nonce, payer_account_id, valid_start_ns, type, nft_transfer
from transaction
where consensus_timestamp = any({{stamps}}::bigint[])
order by consensus_timestamp {order.value}"""


_TRANSACTIONS = {order: _transactions(order) for order in Order}


def _transfer(row: Any, token: int, serial: int) -> dict[str, Any]:
    if row["type"] == TOKENDELETION:
        return {}
    moves = row["nft_transfer"]
    loaded = json.loads(moves) if isinstance(moves, str) else moves
    for item in loaded if isinstance(loaded, list) else []:
        if isinstance(item, dict) and item.get("token_id") == token and item.get("serial_number") == serial:
            return item
    return {}


def render(row: Any, token: int, serial: int) -> dict[str, Any]:
    transfer = _transfer(row, token, serial)
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


async def get_transactions(request: Request, ctx: AppContext) -> Page:
    token = token_ref.token_of(request.path_params, ctx)
    serial = token_nfts.serial_of(request.path_params, ctx)
    query = PARAMS.parse(request.scope["query_string"].decode("latin-1"), ctx.parse_ctx)
    limit = query.last(LIMIT, ctx.settings.limit_default)
    order = query.last(ORDER, Order.DESC)
    stamps = query.filters(TIMESTAMP)
    lower, upper = inclusive_bounds(stamps)
    probe = ctx.settings.pagination_probe
    events = await ctx.database.fetch(
        template(
            _EVENTS[order],
            token=token,
            serial=serial,
            lower=lower,
            upper=upper,
            equal=sorted({item.value for item in stamps if item.op is Op.EQ}),
            excluded=[item.value for item in stamps if item.op is Op.NE],
            limit=probe_limit(limit, probe=probe),
        )
    )
    more = has_more(len(events), limit, probe=probe)
    found = [int(event["ts"]) for event in events[:limit]]
    if not found:
        return Page({"transactions": [], "links": {"next": None}})
    rows = await ctx.database.fetch(template(_TRANSACTIONS[order], stamps=found))
    minted = await ctx.database.fetch(template(_MINTED, token=token, serial=serial))
    link = None
    if more and rows:
        last = int(rows[-1]["consensus_timestamp"])
        anchor = Anchor(TIMESTAMP.name, format_ns(last) or "", number=last)
        link = next_link(request.scope["path"], query.given, [anchor], order)
    partial = bool(rows) and (not minted or minted[0]["created_timestamp"] is None)
    body = {"transactions": [render(row, token, serial) for row in rows], "links": {"next": link}}
    return Page(body, link, status=206 if partial else 200)


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

ENDPOINT = Endpoint(
    path="/api/v1/tokens/{tokenId}/nfts/{serialNumber}/transactions",
    handler=get_transactions,
    params=PARAMS,
    max_age=1,
    summary="List an NFT's transactions",
    description="The transactions that minted, moved, wiped or burned one NFT (and its token's deletion), newest "
    "first by default, with pagination through links.next. 206 when the NFT's mint is not in the database.",
    response_schema=schemas.list_response("transactions", ITEM),
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER, token_nfts.OPENAPI_SERIAL_PARAMETER),
    extra_responses={"206": {"description": "Partial content: the NFT's mint is missing"}},
)
