"""``GET /api/v1/contracts/results/{transactionIdOrHash}/actions``: the call tree of one contract transaction
(the sidecar actions), paginated by ``index``.

The path is a 32-byte Ethereum hash (64 hex digits, optional ``0x``), found in ``contract_transaction_hash``
(a successful transaction first, then the newest), or a transaction id ``shard.realm.num-sss-nnn`` (nonce 0),
found in ``transaction`` within 35 minutes of its valid start (success first, then the newest). Nothing found is
``404 Not found``; a transaction without actions an empty list. ``index`` takes eq, gt, gte, lt and lte (``ne``
is ``Invalid parameter: index``); ``order`` defaults to asc.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import BadRequest, NotFound
from ledgermirror.api.listing import ListSpec
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.common import LIMIT, ORDER
from ledgermirror.api.querystring.grammar import RANGE_OPS, Order
from ledgermirror.api.querystring.pagination import Anchor
from ledgermirror.api.querystring.params import ParamSet, ParamSpec, ParsedQuery
from ledgermirror.api.resources import schemas
from ledgermirror.api.resources.contracts import contract_encoding
from ledgermirror.api.resources.transactions import transaction
from ledgermirror.api.resources.transactions.transaction_query import ID_WINDOW_NS
from ledgermirror.db.sql import Column, Op, Select, Statement, template
from ledgermirror.ledger.entity_id import format_encoded
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.timestamps import format_ns

PATH_PARAMETER = "transactionIdOrHash"
INT32_MAX = 2**31 - 1
_PATH_PATTERN = r"^((0x)?[0-9A-Fa-f]{64}|\d{1,3}\.\d{1,4}\.\d{1,11}-\d{1,10}-\d{1,9})$"
_ETHEREUM_HASH = re.compile(r"^(0x)?([0-9A-Fa-f]{64})$", re.ASCII)

INDEX = ParamSpec[int](
    "index",
    values.integer_between(0, INT32_MAX),
    "The action's index within the transaction, with an optional operator (eq, gt, gte, lt, lte).",
    ops=RANGE_OPS,
    schema={"type": "string", "pattern": r"^\d{1,9}$"},
    example="gt:1",
)
PARAMS = ParamSet([INDEX, LIMIT, ORDER])

BY_HASH_SQL = """select consensus_timestamp, payer_account_id
from contract_transaction_hash
where hash = {hash}
order by transaction_result = 22 desc, consensus_timestamp desc
limit 1"""
BY_ID_SQL = """select consensus_timestamp, payer_account_id
from transaction
where valid_start_ns = {valid_start} and payer_account_id = {payer} and nonce = 0
  and consensus_timestamp between {valid_start} and {latest}
order by result = 22 desc, consensus_timestamp desc
limit 1"""
ACTIONS_SQL = """select call_depth, call_operation_type, call_type, caller, caller_type, consensus_timestamp, gas,
       gas_used, index, input, recipient_account, recipient_address, recipient_contract, result_data,
       result_data_type, value
from contract_action"""

_TIMESTAMP = Column("consensus_timestamp")
_PAYER = Column("payer_account_id")
_INDEX = Column("index")

CALL_OPERATION_TYPES = ("UNKNOWN", "CALL", "CALLCODE", "DELEGATECALL", "STATICCALL", "CREATE", "CREATE2")
CALL_TYPES = ("NO_ACTION", "CALL", "CREATE", "PRECOMPILE", "SYSTEM")
RESULT_DATA_TYPES = {11: "OUTPUT", 12: "REVERT_REASON", 13: "ERROR"}

OPENAPI_PATH_PARAMETER = {
    "name": PATH_PARAMETER,
    "in": "path",
    "required": True,
    "description": "A 32-byte Ethereum transaction hash (64 hex digits, optional 0x) or a transaction id "
    "(shard.realm.num-sss-nnn)",
    "schema": {"type": "string", "pattern": _PATH_PATTERN},
    "example": "0.0.1001-1700000000-000000001",
}

ACTION: dict[str, Any] = {
    "type": "object",
    "properties": {
        "call_depth": {"type": "integer"},
        "call_operation_type": {"type": "string", "enum": list(CALL_OPERATION_TYPES)},
        "call_type": {"type": "string", "enum": list(CALL_TYPES)},
        "caller": schemas.ENTITY_ID,
        "caller_type": {"type": ["string", "null"], "enum": ["ACCOUNT", "CONTRACT", None]},
        "from": {"type": ["string", "null"], "description": "The caller's EVM address"},
        "gas": {"type": "integer", "format": "int64"},
        "gas_used": {"type": "integer", "format": "int64"},
        "index": {"type": "integer"},
        "input": {"type": ["string", "null"]},
        "recipient": schemas.ENTITY_ID,
        "recipient_type": {"type": ["string", "null"], "enum": ["ACCOUNT", "CONTRACT", None]},
        "result_data": {"type": ["string", "null"]},
        "result_data_type": {"type": "string", "enum": list(RESULT_DATA_TYPES.values())},
        "timestamp": {"type": "string", "example": "1586567700.453054000"},
        "to": {"type": ["string", "null"], "description": "The recipient's EVM address"},
        "value": {"type": "integer", "format": "int64"},
    },
}


@dataclass(frozen=True, slots=True)
class Found:
    """The transaction whose actions are listed."""

    consensus_timestamp: int
    payer: int


def lookup_statement(text: str) -> Statement:
    """The statement that finds the transaction the path names; 400 for a path that is neither form."""
    match = _ETHEREUM_HASH.fullmatch(text)
    if match is not None:
        return template(BY_HASH_SQL, hash=bytes.fromhex(match.group(2)))
    target = transaction.parse_path(text)
    if isinstance(target, bytes):  # a 48-byte transaction hash names no contract transaction here
        raise BadRequest(transaction.INVALID_ID)
    latest = min(target.valid_start + ID_WINDOW_NS, INT64_MAX)
    return template(BY_ID_SQL, valid_start=target.valid_start, payer=target.payer, latest=latest)


def plan(found: Found, query: ParsedQuery, row_limit: int, order: Order) -> Select:
    select = Select(ACTIONS_SQL).compare(_TIMESTAMP, Op.EQ, found.consensus_timestamp)
    select.compare(_PAYER, Op.EQ, found.payer)
    for item in query.filters(INDEX):
        select.compare(_INDEX, item.op, item.value)
    return select.order_by([_INDEX], order).limit(row_limit)


def _name(names: tuple[str, ...], number: int | None) -> str | None:
    return names[number] if number is not None and 0 <= number < len(names) else None


def _to(row: Any) -> str | None:
    address = row["recipient_address"]
    if address:
        return contract_encoding.address_hex(address)
    recipient = row["recipient_account"] or row["recipient_contract"]
    return contract_encoding.long_zero_of(recipient)


def render(row: Any) -> dict[str, Any]:
    account, contract = row["recipient_account"], row["recipient_contract"]
    recipient_type = "ACCOUNT" if account else "CONTRACT" if contract else None
    return {
        "call_depth": row["call_depth"],
        "call_operation_type": _name(CALL_OPERATION_TYPES, row["call_operation_type"] or 0),
        "call_type": _name(CALL_TYPES, row["call_type"]),
        "caller": format_encoded(row["caller"]),
        "caller_type": row["caller_type"],
        "from": contract_encoding.long_zero_of(row["caller"]),
        "gas": row["gas"],
        "gas_used": row["gas_used"],
        "index": row["index"],
        "input": contract_encoding.hex_bytes(row["input"]),
        "recipient": format_encoded(account or contract),
        "recipient_type": recipient_type,
        "result_data": contract_encoding.hex_bytes(row["result_data"]),
        "result_data_type": RESULT_DATA_TYPES.get(row["result_data_type"]),
        "timestamp": format_ns(row["consensus_timestamp"]),
        "to": _to(row),
        "value": row["value"],
    }


async def _locate(request: Request, ctx: AppContext) -> Statement:
    """The statement that finds the path's transaction (its form is checked before the query string)."""
    return lookup_statement(request.path_params[PATH_PARAMETER])


async def _prepare(statement: Statement, query: ParsedQuery, ctx: AppContext) -> Found:
    rows = await ctx.database.fetch(statement)
    if not rows:
        raise NotFound()
    return Found(rows[0]["consensus_timestamp"], rows[0]["payer_account_id"])


def _anchors(found: Found, query: ParsedQuery, row: Any, ctx: AppContext) -> list[Anchor]:
    return [Anchor(INDEX.name, str(row["index"]), number=row["index"])]


LIST = ListSpec[Statement, Found](
    path="/api/v1/contracts/results/{transactionIdOrHash}/actions",
    items="actions",
    params=PARAMS,
    default_order=Order.ASC,
    locate=_locate,
    prepare=_prepare,
    plan=plan,
    render=render,
    anchors=_anchors,
    max_age=600,
    summary="List the actions of a contract transaction",
    description="The call tree (sidecar actions) of the contract transaction with this Ethereum hash or "
    "transaction id, by index (ascending by default), with pagination through links.next.",
    item_schema=ACTION,
    tag="contracts",
    path_params=(OPENAPI_PATH_PARAMETER,),
)
ENDPOINT = LIST.endpoint()
