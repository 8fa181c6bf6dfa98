"""``GET /api/v1/transactions/{transactionIdOrHash}``: every transaction with one transaction id, or one hash.

The path is a hash (48 bytes: 64 base64 or base64url characters, or 96 hex digits with an optional ``0x``) or a
transaction id ``shard.realm.num-seconds-nanos``. ``nonce`` and ``scheduled`` (equality only, the last value
wins) narrow the rows. An id is looked up by payer and valid start within the consensus window the network allows
(1 s before to 35 min after); a successful SCHEDULECREATE whose scheduled execution is not among the rows widens
the window to the longest schedule life. Inner transactions of a batch follow their batch. Cache-Control is 600 s,
or 5 s while a recent schedule may still execute (the reference's rule). Statements are in
``transaction_query.py``; each transaction renders as in the list, ``assessed_custom_fees`` first when present.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

import orjson
from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.grammar import EQ_ONLY
from ledgermirror.api.querystring.params import ParamSet, ParamSpec
from ledgermirror.api.resources.transactions import transaction_query
from ledgermirror.api.resources.transactions.account_transactions_query import STAKING_REWARD_ACCOUNT_NUM
from ledgermirror.api.resources.transactions.transaction_query import IdLookup, Narrowing
from ledgermirror.api.resources.transactions.transaction_render import render
from ledgermirror.api.resources.transactions.transaction_schema import ONE_TRANSACTION_RESPONSE
from ledgermirror.ledger import protobuf
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId, format_encoded
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.transaction_codes import SCHEDULECREATE, result_number

PATH_PARAMETER = "transactionIdOrHash"
INVALID_ID = (
    'Invalid Transaction id. Please use "shard.realm.num-sss-nnn" format where sss are seconds and nnn are '
    "nanoseconds"
)
_HASH = re.compile(r"^([0-9A-Za-z+\-/_]{64}|(0x)?[0-9A-Fa-f]{96})$", re.ASCII)
_TRANSACTION_ID = re.compile(r"^(\d+)\.(\d+)\.(\d+)-(\d{1,19})-(\d{1,9})$", re.ASCII)
_DOCUMENTED_PATH = r"^(\d{1,3}\.\d{1,4}\.\d{1,11}-\d{1,10}-\d{1,9}|[0-9A-Za-z_\-]{64}|(0x)?[0-9A-Fa-f]{96})$"
INT32_MAX = 2**31 - 1
SCHEDULE_WINDOW_NS = 89_285 * 60 * 1_000_000_000
"""How long after its creation a schedule may still execute (the reference's
``maxScheduledTransactionConsensusTimestampRange``)."""
SCHEDULE_MAX_AGE = 5
SUCCESS_RESULTS = frozenset(
    {
        result_number("SUCCESS"),
        result_number("FEE_SCHEDULE_FILE_PART_UPLOADED"),
        result_number("SUCCESS_BUT_MISSING_EXPECTED_OPERATION"),
    }
)

NONCE = ParamSpec[int](
    "nonce",
    values.integer_between(0, INT32_MAX),
    "Only the transaction (or child) with this nonce.",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "integer", "format": "int32", "minimum": 0, "maximum": INT32_MAX},
)
SCHEDULED = ParamSpec[bool](
    "scheduled",
    values.true_false,
    "Only the scheduled execution (true) or only the rest (false).",
    ops=EQ_ONLY,
    repeatable=False,
    schema={"type": "boolean"},
)
PARAMS = ParamSet([NONCE, SCHEDULED], per_value=True)


def parse_path(text: str) -> bytes | IdLookup:
    """The 48 hash bytes, or the transaction id's payer and valid start; 400 for anything else."""
    if _HASH.fullmatch(text):
        try:
            if len(text) == 64:
                return base64.urlsafe_b64decode(text.replace("+", "-").replace("/", "_"))
            return bytes.fromhex(text.removeprefix("0x"))
        except (binascii.Error, ValueError):
            raise BadRequest(INVALID_ID) from None
    return parse_transaction_id(text)


def parse_transaction_id(text: str) -> IdLookup:
    """``shard.realm.num-seconds-nanos`` -> the payer and valid start; 400 :data:`INVALID_ID` for anything else
    (also the contract result and action routes' transaction ids)."""
    match = _TRANSACTION_ID.fullmatch(text)
    if match is None:
        raise BadRequest(INVALID_ID)
    shard, realm, num, seconds, nanos = match.groups()
    try:
        payer = EntityId(int(shard), int(realm), int(num)).encoded
    except (InvalidEntityId, ValueError):
        raise BadRequest(INVALID_ID) from None
    valid_start = int(seconds) * 1_000_000_000 + int(nanos)
    if int(seconds) > INT64_MAX or valid_start > INT64_MAX:
        raise BadRequest(INVALID_ID)
    return IdLookup(payer, valid_start)


def _assessed_fees(raw: str | None) -> list[dict[str, Any]]:
    return [
        {
            "amount": amount,
            "collector_account_id": format_encoded(collector),
            "effective_payer_account_ids": [format_encoded(payer) for payer in payers or []],
            "token_id": format_encoded(token),
        }
        for amount, collector, payers, token in (orjson.loads(raw) if raw else [])
    ]


def render_one(row: Any, staking_account: int) -> dict[str, Any]:
    fees = _assessed_fees(row["assessed_fees"])
    body = render(row, staking_account)
    return {"assessed_custom_fees": fees, **body} if fees else body


def _is_successful_schedule_create(row: Any) -> bool:
    return row["type"] == SCHEDULECREATE and row["result"] in SUCCESS_RESULTS


def _might_miss_schedule(rows: list[Any], scheduled: bool | None) -> bool:
    if scheduled is None:
        return any(_is_successful_schedule_create(row) for row in rows) and not any(
            row["scheduled"] for row in rows
        )
    return scheduled and not rows


def schedule_max_age(rows: list[Any], now: int) -> int | None:
    """5 s while a recent successful SCHEDULECREATE may still execute; a scheduled row among them settles it."""
    max_age: int | None = None
    for row in rows:
        if row["scheduled"]:
            return None
        if _is_successful_schedule_create(row) and row["consensus_timestamp"] > now - SCHEDULE_WINDOW_NS:
            max_age = SCHEDULE_MAX_AGE
    return max_age


async def get_transaction(request: Request, ctx: AppContext) -> Page:
    query = query_of(request, ctx, PARAMS)
    narrowing = Narrowing(nonce=query.last(NONCE, None), scheduled=query.last(SCHEDULED, None))
    target = parse_path(request.path_params[PATH_PARAMETER])
    max_age: int | None = None
    if isinstance(target, bytes):
        rows = await transaction_query.by_hash(ctx, target, narrowing)
    else:
        rows = await transaction_query.by_id(ctx, target, narrowing, window=transaction_query.ID_WINDOW_NS)
        if _might_miss_schedule(rows, narrowing.scheduled):
            rows = await transaction_query.by_id(ctx, target, narrowing, window=SCHEDULE_WINDOW_NS)
        rows += await transaction_query.inner(ctx, rows, narrowing)
        if narrowing.scheduled is None:
            max_age = schedule_max_age(rows, ctx.clock.now_ns())
    if not rows:
        raise NotFound()
    if any(row["max_custom_fees"] for row in rows):
        await protobuf.preload()  # decoding them needs the HAPI classes: import them off the event loop
    staking = EntityId(ctx.settings.shard, ctx.settings.realm, STAKING_REWARD_ACCOUNT_NUM).encoded
    return Page({"transactions": [render_one(row, staking) for row in rows]}, max_age=max_age)


ENDPOINT = Endpoint(
    path=f"/api/v1/transactions/{{{PATH_PARAMETER}}}",
    handler=get_transaction,
    params=PARAMS,
    max_age=600,
    summary="Get transactions by id or hash",
    description="Every transaction with this transaction id (the transaction, its children and its scheduled "
    "execution), or the transaction with this 48-byte hash, with transfers and assessed custom fees.",
    response_schema=ONE_TRANSACTION_RESPONSE,
    tag="transactions",
    path_params=(
        {
            "name": PATH_PARAMETER,
            "in": "path",
            "required": True,
            "description": "A transaction id (shard.realm.num-seconds-nanos) or a 48-byte transaction hash "
            "(base64, base64url or hex).",
            "schema": {
                "type": "string",
                "pattern": _DOCUMENTED_PATH,
            },
        },
    ),
)
