"""``GET /api/v1/tokens/{tokenId}``: one token with its entity fields and custom fee schedule, now or as of a
``timestamp`` (``eq``/``lte``: versions started at or before it, ``lt``: strictly before; the last filter
counts).

As of a timestamp, the token, its entity and its custom fee schedule are each the newest version (current row
or ``_history``) that started by then. No token, no entity or no fee schedule: ``404 Not found``.
"""

from __future__ import annotations

import base64
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import Op
from ledgermirror.api.querystring.params import ParamSet, ParamSpec
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.tokens import token_custom_fees, token_ref
from ledgermirror.db.sql import template
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

TIMESTAMP = ParamSpec[int](
    "timestamp",
    values.timestamp,
    "The token as of this consensus time (seconds[.nanoseconds]): eq and lte take the versions in effect then, "
    "lt those before. The last value counts.",
    ops=frozenset({Op.EQ, Op.LT, Op.LTE}),
    schema=schemas.TIMESTAMP_QUERY,
    example="lte:1700000000.000000000",
)

PARAMS = ParamSet([TIMESTAMP], per_value=True)

_COLUMNS = """t.token_id, t.created_timestamp, t.decimals, t.fee_schedule_key, t.freeze_default, t.freeze_key,
    t.initial_supply, t.kyc_key, t.max_supply, t.metadata, t.metadata_key, t.name, t.pause_key,
    t.pause_status::text as pause_status, t.supply_key, t.supply_type::text as supply_type, t.symbol,
    t.total_supply, t.treasury_account_id, t.type::text as type, t.wipe_key,
    greatest(lower(t.timestamp_range), lower(e.timestamp_range)) as modified_timestamp,
    e.key, e.auto_renew_account_id, e.auto_renew_period, e.deleted, e.expiration_timestamp, e.memo,
    cf.fixed_fees, cf.fractional_fees, cf.royalty_fees, lower(cf.timestamp_range) as fees_created"""

_CURRENT = f"""select {_COLUMNS}
from token t
join entity e on e.id = t.token_id
join custom_fee cf on cf.entity_id = t.token_id
where t.token_id = {{token}}"""


def _as_of(table: str, key: str) -> str:
    """The newest version of ``table`` (current or ``_history``) started at or before ``{at}``."""
    return f"""(select * from (
        select * from {table} where {key} = {{token}} and lower(timestamp_range) <= {{at}}
        union all
        select * from {table}_history where {key} = {{token}} and lower(timestamp_range) <= {{at}}
    ) versions order by lower(timestamp_range) desc limit 1)"""


_HISTORICAL = f"""select {_COLUMNS}
from {_as_of("token", "token_id")} t
join {_as_of("entity", "id")} e on true
join {_as_of("custom_fee", "entity_id")} cf on true"""


def _expiry(row: Any) -> int | None:
    if row["expiration_timestamp"] is not None:
        return int(row["expiration_timestamp"])
    if row["auto_renew_period"] is not None and row["created_timestamp"] is not None:
        return int(row["created_timestamp"]) + int(row["auto_renew_period"]) * 1_000_000_000
    return None


def render(row: Any) -> dict[str, Any]:
    metadata = row["metadata"]
    return {
        "admin_key": render_key(row["key"]),
        "auto_renew_account": format_encoded(row["auto_renew_account_id"]),
        "auto_renew_period": row["auto_renew_period"],
        "created_timestamp": format_ns(row["created_timestamp"]),
        "custom_fees": token_custom_fees.render_custom_fees(row, row["token_id"], row["type"]),
        "decimals": str(row["decimals"]),
        "deleted": row["deleted"],
        "expiry_timestamp": _expiry(row),
        "fee_schedule_key": render_key(row["fee_schedule_key"]),
        "freeze_default": row["freeze_default"],
        "freeze_key": render_key(row["freeze_key"]),
        "initial_supply": str(row["initial_supply"]),
        "kyc_key": render_key(row["kyc_key"]),
        "max_supply": str(row["max_supply"]),
        "memo": row["memo"],
        "metadata": base64.b64encode(metadata).decode() if metadata else "",
        "metadata_key": render_key(row["metadata_key"]),
        "modified_timestamp": format_ns(row["modified_timestamp"]),
        "name": row["name"],
        "pause_key": render_key(row["pause_key"]),
        "pause_status": row["pause_status"],
        "supply_key": render_key(row["supply_key"]),
        "supply_type": row["supply_type"],
        "symbol": row["symbol"],
        "token_id": format_encoded(row["token_id"]),
        "total_supply": str(row["total_supply"]),
        "treasury_account_id": format_encoded(row["treasury_account_id"]),
        "type": row["type"],
        "wipe_key": render_key(row["wipe_key"]),
    }


async def get_token(request: Request, ctx: AppContext) -> Page:
    token = token_ref.token_of(request.path_params, ctx)
    query = query_of(request, ctx, PARAMS)
    stamps = query.filters(TIMESTAMP)
    if stamps:
        last = stamps[-1]
        at = last.value - 1 if last.op is Op.LT else last.value
        statement = template(_HISTORICAL, token=token, at=at)
    else:
        statement = template(_CURRENT, token=token)
    rows = await ctx.database.fetch(statement)
    if not rows:
        raise NotFound()
    return Page(render(rows[0]))


_STRING_NUMBER: dict[str, Any] = {"type": "string", "pattern": r"^-?\d+$"}
_TS: dict[str, Any] = {"type": ["string", "null"], "example": "1586567700.453054000"}
TOKEN_INFO: dict[str, Any] = {
    "type": "object",
    "properties": {
        "admin_key": schemas.KEY,
        "auto_renew_account": schemas.ENTITY_ID,
        "auto_renew_period": {"type": ["integer", "null"], "format": "int64"},
        "created_timestamp": _TS,
        "custom_fees": token_custom_fees.SCHEMA,
        "decimals": _STRING_NUMBER,
        "deleted": {"type": ["boolean", "null"]},
        "expiry_timestamp": {"type": ["integer", "null"], "format": "int64", "description": "nanoseconds"},
        "fee_schedule_key": schemas.KEY,
        "freeze_default": {"type": "boolean"},
        "freeze_key": schemas.KEY,
        "initial_supply": _STRING_NUMBER,
        "kyc_key": schemas.KEY,
        "max_supply": _STRING_NUMBER,
        "memo": {"type": ["string", "null"]},
        "metadata": {"type": "string", "format": "byte"},
        "metadata_key": schemas.KEY,
        "modified_timestamp": _TS,
        "name": {"type": "string"},
        "pause_key": schemas.KEY,
        "pause_status": {"type": "string", "enum": ["NOT_APPLICABLE", "PAUSED", "UNPAUSED"]},
        "supply_key": schemas.KEY,
        "supply_type": {"type": "string", "enum": ["FINITE", "INFINITE"]},
        "symbol": {"type": "string"},
        "token_id": schemas.ENTITY_ID,
        "total_supply": _STRING_NUMBER,
        "treasury_account_id": schemas.ENTITY_ID,
        "type": {"type": "string", "enum": ["FUNGIBLE_COMMON", "NON_FUNGIBLE_UNIQUE"]},
        "wipe_key": schemas.KEY,
    },
    "required": ["token_id", "custom_fees", "decimals", "type"],
}

ENDPOINT = Endpoint(
    path="/api/v1/tokens/{tokenId}",
    handler=get_token,
    params=PARAMS,
    max_age=5,
    summary="Get a token",
    description="One token: its properties, keys, supply and custom fee schedule, now or as of timestamp.",
    response_schema=TOKEN_INFO,
    tag="tokens",
    path_params=(token_ref.OPENAPI_PATH_PARAMETER,),
)
