"""``POST /api/v1/contracts/call``: a call executed or estimated by the EVM (``ledgermirror.evm``, py-evm) over
the mirror's tables at the requested block, as the reference's web3 module answers it (upstream-web3.md §1-§3,
docs/contracts-call.md).

The EVM runs in a worker process (``api/evm_workers.py``); each account, storage slot, block hash, token or rate
it touches is asked back and read once from PostgreSQL on the request's pinned database
(``contract_call_state.py``): balances and nonces from ``entity`` (``entity_history`` and the balance snapshots
for a past block), runtime bytecode from ``contract``, storage from ``contract_state`` (or rebuilt from
``contract_state_change`` as of the block's end). Writes stay in the worker's memory. At most
``contract_call_concurrency`` calls run at once per API worker (the rest wait in order, ``429`` past half the
time budget); each has ``contract_call_timeout_ms`` in total (then ``503``, its worker killed) and at most
``contract_call_max_gas``.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import UnsupportedMediaType
from ledgermirror.api.evm_workers import WorkerDied, WorkerFailed
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources.contracts import contract_call_query as q
from ledgermirror.api.resources.contracts.contract_call_overrides import MAX_OVERRIDES, OverriddenState
from ledgermirror.api.resources.contracts.contract_call_request import (
    MAX_STRING,
    Block,
    Web3Error,
    bad_request,
    parse_call,
)
from ledgermirror.api.resources.contracts.contract_call_state import TREASURY_NUM, MirrorState, hash32
from ledgermirror.db.sql import template
from ledgermirror.evm.calls import Job, JobResult
from ledgermirror.evm.execution import BlockContext, Call, Outcome, TimeBudgetExceeded
from ledgermirror.evm.revert import revert_reason

_log = logging.getLogger(__name__)

PATH = "/api/v1/contracts/call"
FEE_COLLECTOR_NUM = 98
TURN_WAIT_SHARE = 0.5
"""A call waits for a turn at most this share of its time budget (then ``429``), so that it has the rest to run."""


def _long_zero(num: int) -> bytes:
    return num.to_bytes(20, "big")


async def _block(ctx: AppContext, block: Block) -> tuple[int, int, int, str]:
    """``(index, consensus_start, consensus_end, hash)`` of the requested block, or ``Unknown block number``."""
    if block.latest:
        statement = template(q.BLOCK_LATEST)
    elif block.earliest:
        statement = template(q.BLOCK_EARLIEST)
    elif block.number is not None:
        statement = template(q.BLOCK_BY_NUMBER, number=block.number)
    else:
        statement = template(q.BLOCK_BY_HASH, prefix=f"{block.hash}%")
    rows = await ctx.database.fetch(statement)
    if not rows:
        raise bad_request("Unknown block number")
    row = rows[0]
    return int(row["index"]), int(row["consensus_start"]), int(row["consensus_end"]), str(row["hash"])


_HALTS = {"OutOfGas": "INSUFFICIENT_GAS", "InvalidContractId": "INVALID_CONTRACT_ID"}
"""The halts reported by name (others are ``CONTRACT_EXECUTION_EXCEPTION``)."""


def _failure(outcome: Outcome) -> Web3Error:
    """A failed execution as the reference answers it: the revert's data and its ``Error(string)`` message."""
    if outcome.reverted:
        return Web3Error(
            400, [("CONTRACT_REVERT_EXECUTED", revert_reason(outcome.output), "0x" + outcome.output.hex())]
        )
    status = _HALTS.get(outcome.error, "CONTRACT_EXECUTION_EXCEPTION")
    return Web3Error(400, [(status, "", "0x")])


def _answer(result: JobResult) -> bytes:
    if result.status == "ok":
        return result.output
    if result.status == "invalid_contract":
        raise Web3Error(400, [("INVALID_CONTRACT_ID", "", "")])
    if result.status == "insufficient_balance":
        raise Web3Error(400, [("INSUFFICIENT_PAYER_BALANCE", "", "")])
    if result.status == "payer_not_found":
        raise Web3Error(400, [("PAYER_ACCOUNT_NOT_FOUND", "Sender account not found.", "")])
    assert result.outcome is not None
    raise _failure(result.outcome)


async def _read_body(request: Request) -> bytes:
    media_type = (request.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    if media_type != "application/json":
        raise UnsupportedMediaType(f"Content-Type '{request.headers.get('content-type', '')}' is not supported")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_STRING:
            break  # the reference's document limit: a JSON parse error (parse_call), never read further
    return bytes(body)


async def call(request: Request, ctx: AppContext) -> Page:
    settings = ctx.settings
    parsed = parse_call(await _read_body(request), settings.contract_call_max_gas)
    deadline = time.monotonic() + settings.contract_call_timeout_ms / 1000
    workers = ctx.contract_workers
    try:
        async with asyncio.timeout(settings.contract_call_timeout_ms / 1000 * TURN_WAIT_SHARE):
            await workers.turns.acquire()
    except TimeoutError:
        raise Web3Error(429, [("Too Many Requests", "Too many contract calls at once", "")]) from None
    try:
        number, start, end, block_hash = await _block(ctx, parsed.block)
        mirror = MirrorState(ctx, None if parsed.block.latest else end)
        state: MirrorState | OverriddenState = (
            OverriddenState(mirror, parsed.overrides) if parsed.overrides else mirror
        )
        block = BlockContext(
            number=number,
            timestamp=start // 1_000_000_000,
            hash=hash32(block_hash),
            coinbase=_long_zero(FEE_COLLECTOR_NUM),
            chain_id=settings.contract_call_chain_id,
        )
        sender = parsed.sender if parsed.sender is not None else _long_zero(TREASURY_NUM)
        touched = [sender, block.coinbase] + ([] if parsed.to is None else [parsed.to])
        accounts = tuple([(address, await state.account(address)) for address in dict.fromkeys(touched)])
        job = Job(
            # a creation carries no value: the reference's ContractCreate body has no initial balance
            call=Call(sender, parsed.to, parsed.data, 0 if parsed.to is None else parsed.value, parsed.gas),
            block=block,
            estimate=parsed.estimate,
            sender_given=parsed.sender is not None,
            deadline=deadline,
            accounts=accounts,
        )
        try:
            result = await workers.run(job, state.answer)
        except (TimeBudgetExceeded, WorkerDied):
            raise Web3Error(503, [("Service Unavailable", "", "")]) from None
        except WorkerFailed:
            _log.exception("contract call failed in its EVM worker")
            raise Web3Error(500, [("Internal Server Error", "", "")]) from None
    finally:
        workers.turns.release()
    return Page({"result": "0x" + _answer(result).hex()})


_STORAGE_ENTRY: dict[str, Any] = {
    "type": "object",
    "properties": {
        "key": {"type": "string", "pattern": "^(0x)?[A-Fa-f0-9]{1,64}$"},
        "value": {"type": "string", "pattern": "^(0x)?[A-Fa-f0-9]{1,64}$"},
    },
}
_REQUEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "block": {"type": "string", "description": "latest, earliest, pending, a number (decimal or 0x) or hash"},
        "data": {"type": "string", "description": "Call data or init code, hex (at most 131072 bytes)"},
        "estimate": {"type": "boolean"},
        "from": {"type": "string", "pattern": "^(0x)?[A-Fa-f0-9]{40}$"},
        "gas": {"type": "integer", "format": "int64", "minimum": 21000},
        "gasPrice": {"type": "integer", "format": "int64", "minimum": 0},
        "to": {"type": "string", "pattern": "^((0x)?[A-Fa-f0-9]{40})?$"},
        "value": {"type": "integer", "format": "int64", "minimum": 0},
        "state_overrides": {
            "type": "array",
            "maxItems": MAX_OVERRIDES,
            "description": "Per address, state the call runs on instead of the mirrored one (HIP-1485)",
            "items": {
                "type": "object",
                "required": ["address"],
                "properties": {
                    "address": {"type": "string", "pattern": "^(0x)?[A-Fa-f0-9]{40}$"},
                    "balance": {"type": ["integer", "string"], "description": "Tinybars (or a 0x quantity)"},
                    "nonce": {"type": ["integer", "string"], "description": "A number (or a 0x quantity)"},
                    "code": {"type": "string", "description": "Runtime bytecode, hex"},
                    "state": {
                        "type": "array",
                        "items": _STORAGE_ENTRY,
                        "description": "The whole storage: slots not listed read 0",
                    },
                    "state_diff": {
                        "type": "array",
                        "items": _STORAGE_ENTRY,
                        "description": "Slots replaced; the others read the mirror",
                    },
                },
            },
        },
    },
}

ENDPOINT = Endpoint(
    path=PATH,
    handler=call,
    params=ParamSet([]),
    max_age=0,
    summary="Execute or estimate a contract call",
    description="Runs the call in an EVM over the mirrored state at the requested block (docs/contracts-call.md); "
    "a revert answers 400 with its reason. Writes change nothing.",
    response_schema={"type": "object", "properties": {"result": {"type": "string"}}},
    tag="contracts",
    method="POST",
    operation_id="api_v1_contracts_call",
    request_body={"required": True, "content": {"application/json": {"schema": _REQUEST_SCHEMA}}},
    extra_responses={
        "415": {"description": "Not a JSON body"},
        "429": {"description": "Too many contract calls at once"},
    },
)
