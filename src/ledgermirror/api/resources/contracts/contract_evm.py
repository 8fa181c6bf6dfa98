"""``GET /api/v1/contracts/results/{transactionIdOrHash}/opcodes``: a stored contract call replayed by the EVM
(``ledgermirror.evm``) on the state just before it, every operation traced, in the reference's answer shape
(upstream-web3.md §4). ``POST /api/v1/contracts/call`` is ``contract_call.py``.

The path is a transaction id (``shard.realm.num-sss-nnn``) or a 32-byte hash, as the reference's gateway routes
only those to web3 (anything else is ``404``); ``stack`` (default true), ``memory`` and ``storage`` (default
false) choose what each operation shows; the client must accept gzip (``406`` otherwise, as the reference). The
transaction is found through ``contract_transaction_hash`` or ``transaction``, its ``contract_result`` and
``ethereum_transaction`` give the call (sender, target, input, value, gas limit), and the state is read as of one
nanosecond before its consensus timestamp in the block holding it. A creation runs its init code
(:func:`init_code`; ``404`` when the mirror does not hold it). The replay is compared with the stored result
(:func:`mismatches`); docs/contracts-call.md lists what else differs.
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page, query_of
from ledgermirror.api.errors import NotFound
from ledgermirror.api.evm_workers import WorkerDied, WorkerFailed
from ledgermirror.api.freshness import EXPOSE, EXPOSED
from ledgermirror.api.querystring import values
from ledgermirror.api.querystring.params import ParamSet, ParamSpec
from ledgermirror.api.resources.contracts import contract_call_query as q
from ledgermirror.api.resources.contracts.contract_call_request import Web3Error
from ledgermirror.api.resources.contracts.contract_call_state import MirrorState, hash32
from ledgermirror.db.sql import template
from ledgermirror.evm.calls import Job, JobResult
from ledgermirror.evm.execution import BlockContext, Call, TimeBudgetExceeded
from ledgermirror.evm.tracer import TraceOptions, TraceTooLong
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId, format_encoded

_log = logging.getLogger(__name__)
OPCODES_PATH = "/api/v1/contracts/results/{transactionIdOrHash}/opcodes"
_HASH = re.compile(r"(0x)?([A-Fa-f0-9]{64})", re.ASCII)
_TRANSACTION_ID = re.compile(r"(\d+)\.(\d+)\.(\d+)-(\d{1,19})-(\d{1,9})", re.ASCII)
_GATEWAY = re.compile(r"(0x)?[A-Fa-f0-9]{64}|\d+\.\d+\.\d+-\d+-\d+", re.ASCII)
"""The reference gateway's rule for what it sends to web3's opcodes route."""
CONTRACT_CREATE = 8
SUCCESS = 22
MISMATCH_HEADER = "X-Replay-Mismatch"
"""Names the answer's fields in which the replay differs from the stored result (docs/contracts-call.md)."""
FEE_COLLECTOR_NUM = 98


@dataclass(frozen=True, slots=True)
class Replayed:
    """What the replay gave, as the answer shows it."""

    failed: bool
    gas: int
    output: bytes
    """The return value (empty when the replay failed); of a creation, the runtime bytecode."""


def _flag(name: str, default: str) -> ParamSpec[bool]:
    return values.switch(name, f"Whether each operation shows the {name} (true or false; default {default}).")


STACK = _flag("stack", "true")
MEMORY = _flag("memory", "false")
STORAGE = _flag("storage", "false")
OPCODES_PARAMS = ParamSet([STACK, MEMORY, STORAGE])


def _address(entity_id: int, evm_address: bytes | None) -> bytes:
    if evm_address:
        return bytes(evm_address)
    return (entity_id & ((1 << 38) - 1)).to_bytes(20, "big")


async def _timestamp(ctx: AppContext, path: str) -> int:
    """The consensus timestamp of the transaction the path names, or the reference's ``404``."""
    found = _HASH.fullmatch(path)
    if found is not None:
        rows = await ctx.database.fetch(template(q.TRACED_BY_HASH, hash=bytes.fromhex(found.group(2))))
        if not rows:
            raise Web3Error(404, [("Not Found", f"Contract transaction hash not found: {path}", "")])
        return int(rows[0]["consensus_timestamp"])
    parts = _TRANSACTION_ID.fullmatch(path)
    if parts is None:
        raise NotFound()
    shard, realm, num, seconds, nanos = (int(part) for part in parts.groups())
    try:
        payer = EntityId(shard, realm, num).encoded
    except InvalidEntityId:
        raise Web3Error(400, [("Bad Request", f"Invalid entity ID: {shard}.{realm}.{num}", "")]) from None
    valid_start = seconds * 1_000_000_000 + nanos
    rows = await ctx.database.fetch(template(q.TRACED_BY_ID, payer=payer, valid_start=valid_start))
    if not rows:
        raise Web3Error(404, [("Not Found", f"Transaction not found: {path}", "")])
    return int(rows[0]["consensus_timestamp"])


def is_creation(row: Any) -> bool:
    """A contract creation: an Ethereum transaction without a ``to``, or a ContractCreate."""
    if row["ethereum"]:
        return not row["to_address"]
    return bool(row["transaction_type"] == CONTRACT_CREATE)


def decoded_file(content: bytes | None) -> bytes | None:
    """A bytecode or call data file's content, hex text (an optional ``0x``, surrounding whitespace ignored),
    as bytes; None when there is none or it is not hex."""
    if not content:
        return None
    try:
        text = content.decode("ascii").strip()
        return bytes.fromhex(text[2:] if text[:2] in {"0x", "0X"} else text)
    except ValueError:
        return None


async def _file(ctx: AppContext, file_id: Any, at: int) -> bytes | None:
    if file_id is None:
        return None
    rows = await ctx.database.fetch(template(q.FILE_CONTENT_AT, file=int(file_id), at=at))
    content = rows[0]["content"] if rows else None
    return decoded_file(None if content is None else bytes(content))


async def init_code(ctx: AppContext, row: Any, timestamp: int) -> bytes | None:
    """A creation's init code, None when the mirror does not hold it. An Ethereum creation's is its call data
    (or its call data file's content). A ContractCreate's is its bytecode file's content at the creation, else
    the contract's ``initcode``, else the result's ``failed_initcode``, followed by the constructor parameters
    (the result's ``function_parameters``) unless it already ends with them: an ``initcode`` taken from the
    bytecode sidecar is the code that ran, parameters included."""
    if row["ethereum"]:
        data = bytes(row["call_data"] or b"")
        return data or await _file(ctx, row["call_data_id"], timestamp)
    base = await _file(ctx, row["file_id"], timestamp)
    for stored in (row["initcode"], row["failed_initcode"]):
        if base is None and stored:
            base = bytes(stored)
    if base is None:
        return None
    parameters = bytes(row["function_parameters"] or b"")
    return base if base.endswith(parameters) else base + parameters


def _call(row: Any, creation_code: bytes | None) -> Call:
    """The call the stored result was: from its Ethereum transaction when it has one, else the result's input;
    ``creation_code`` is a creation's init code (``to`` None)."""
    sender = _address(int(row["sender_id"] or 0), row["sender_evm_address"])
    contract = _address(int(row["contract_id"]), row["contract_evm_address"])
    if row["ethereum"]:
        value = (
            int.from_bytes(bytes(row["ethereum_value"] or b""), "big", signed=True) if row["ethereum_value"] else 0
        )
        gas = int(row["ethereum_gas_limit"])
        if creation_code is not None:
            return Call(sender, None, creation_code, max(value, 0), gas)
        return Call(sender, bytes(row["to_address"]), bytes(row["call_data"] or b""), max(value, 0), gas)
    if creation_code is not None:
        return Call(sender, None, creation_code, int(row["amount"] or 0), int(row["gas_limit"]))
    data = bytes(row["function_parameters"] or b"")
    return Call(sender, contract, data, int(row["amount"] or 0), int(row["gas_limit"]))


@dataclass(frozen=True, slots=True)
class Replay:
    """A stored call ready to run again: its consensus timestamp, stored result row, the call and its block."""

    timestamp: int
    row: Any
    call: Call
    block: BlockContext


async def prepare_replay(ctx: AppContext, path: str) -> Replay:
    """The stored call the path names (a transaction id or hash), or the reference's ``404``s."""
    if _GATEWAY.fullmatch(path) is None:
        raise NotFound()
    timestamp = await _timestamp(ctx, path)
    rows = await ctx.database.fetch(template(q.TRACED_RESULT, timestamp=timestamp))
    if not rows:
        raise Web3Error(404, [("Not Found", f"Contract result not found: {timestamp}", "")])
    row = rows[0]
    creation_code = None
    if is_creation(row):
        creation_code = await init_code(ctx, row, timestamp)
        if creation_code is None:
            raise Web3Error(404, [("Not Found", f"Contract init code not found: {timestamp}", "")])
    call = _call(row, creation_code)
    blocks = await ctx.database.fetch(template(q.BLOCK_OF, timestamp=timestamp))
    if not blocks:
        raise Web3Error(404, [("Not Found", f"Contract result not found: {timestamp}", "")])
    block_row = blocks[0]
    block = BlockContext(
        number=int(block_row["index"]),
        timestamp=int(block_row["consensus_start"]) // 1_000_000_000,
        hash=hash32(str(block_row["hash"])),
        coinbase=(FEE_COLLECTOR_NUM).to_bytes(20, "big"),
        chain_id=ctx.settings.contract_call_chain_id,
    )
    return Replay(timestamp, row, call, block)


async def run_replay(
    ctx: AppContext, replay: Replay, state: MirrorState, trace: TraceOptions | None = None, prestate: bool = False
) -> JobResult:
    """The replay run in an EVM worker (a turn, the time budget) on ``state``."""
    settings = ctx.settings
    deadline = time.monotonic() + settings.contract_call_timeout_ms / 1000
    workers = ctx.contract_workers
    try:
        async with asyncio.timeout(settings.contract_call_timeout_ms / 1000 / 2):
            await workers.turns.acquire()
    except TimeoutError:
        raise Web3Error(429, [("Too Many Requests", "Too many contract calls at once", "")]) from None
    try:
        job = Job(replay.call, replay.block, False, False, deadline, trace=trace, prestate=prestate)
        return await workers.run(job, state.answer)
    except (TimeBudgetExceeded, WorkerDied):
        raise Web3Error(503, [("Service Unavailable", "", "")]) from None
    except WorkerFailed as error:
        if TraceTooLong.__name__ in str(error):
            raise Web3Error(400, [("Bad Request", "The trace is too long", "")]) from None
        raise
    finally:
        workers.turns.release()


async def opcodes(request: Request, ctx: AppContext) -> Page:
    path = str(request.path_params["transactionIdOrHash"])
    if _GATEWAY.fullmatch(path) is None:
        raise NotFound()
    query = query_of(request, ctx, OPCODES_PARAMS)
    if "gzip" not in request.headers.get("accept-encoding", "").lower():
        raise Web3Error(406, [("Not Acceptable", "Accept-Encoding: gzip header is required", "")])
    options = TraceOptions(
        stack=query.last(STACK, True), memory=query.last(MEMORY, False), storage=query.last(STORAGE, False)
    )
    replay = await prepare_replay(ctx, path)
    call, row, timestamp = replay.call, replay.row, replay.timestamp
    result = await run_replay(ctx, replay, MirrorState(ctx, timestamp - 1), trace=options)
    outcome = result.outcome
    replayed = Replayed(
        failed=result.status != "ok",
        gas=0 if outcome is None else outcome.gas_used,
        output=outcome.output if outcome is not None and outcome.success else b"",
    )
    headers = _compared(ctx, f"{path} (consensus timestamp {timestamp})", row, replayed)
    return Page(
        {
            "address": "0x" + call.to.hex() if call.to is not None else "0x" + "00" * 20,
            "contract_id": None if call.to is None else format_encoded(int(row["contract_id"])),
            "failed": replayed.failed,
            "gas": replayed.gas,
            "opcodes": result.trace or [],
            "return_value": "0x" + replayed.output.hex(),
        },
        headers=headers,
    )


def _compared(ctx: AppContext, name: str, row: Any, replayed: Replayed) -> dict[str, str]:
    """The replay compared with the stored result: counted, logged when they differ, and the header saying so."""
    differences = mismatches(row, replayed)
    metrics = ctx.metrics
    if differences is None:
        metrics.replays_unchecked.inc()
        return {}
    if not differences:
        metrics.replays_matched.inc()
        return {}
    metrics.replays_mismatched.inc()
    _log.warning(
        "opcode replay of %s differs from the stored contract result in %s: replay failed=%s gas=%d, stored "
        "transaction_result=%s gas_used=%s",
        name,
        ",".join(differences),
        replayed.failed,
        replayed.gas,
        row["transaction_result"],
        row["gas_used"],
    )
    return {MISMATCH_HEADER: ",".join(differences), EXPOSE: f"{EXPOSED}, {MISMATCH_HEADER}"}  # for browsers


def mismatches(row: Any, replayed: Replayed) -> list[str] | None:
    """The answer's fields in which the replay differs from the stored ``contract_result`` (``failed`` against
    its ``transaction_result``, ``gas`` against ``gas_used``, ``return_value`` against ``call_result`` when both
    succeeded), in the answer's order; None when the stored result holds none of them to compare."""
    differences: list[str] = []
    checked = False
    stored_result = row["transaction_result"]
    if stored_result is not None:
        checked = True
        if replayed.failed != (int(stored_result) != SUCCESS):
            differences.append("failed")
    if row["gas_used"] is not None:
        checked = True
        if replayed.gas != int(row["gas_used"]):
            differences.append("gas")
    both_succeeded = not replayed.failed and stored_result is not None and int(stored_result) == SUCCESS
    if both_succeeded and row["call_result"] is not None:
        checked = True
        if replayed.output != bytes(row["call_result"]):
            differences.append("return_value")
    return differences if checked else None


_ERRORS: dict[str, Any] = {
    "404": {"description": "Transaction, contract result, record file or a creation's init code not found"},
    "406": {"description": "The client does not accept gzip"},
}

OPCODES_ENDPOINT = Endpoint(
    path=OPCODES_PATH,
    handler=opcodes,
    params=OPCODES_PARAMS,
    max_age=0,
    summary="Trace a contract call's opcodes",
    description="Replays the stored contract call on the state just before it and lists every operation "
    "(docs/contracts-call.md); a creation runs its init code. A replay that differs from the stored result "
    "(success, gas used, output) names the differing fields in the X-Replay-Mismatch header.",
    response_schema={"type": "object"},
    tag="contracts",
    path_params=(
        {
            "name": "transactionIdOrHash",
            "in": "path",
            "required": True,
            "description": "A transaction id (shard.realm.num-sss-nnn) or a 32-byte transaction hash",
            "schema": {"type": "string", "pattern": r"^((0x)?[A-Fa-f0-9]{64}|\d+\.\d+\.\d+-\d+-\d+)$"},
            "example": "0.0.1001-1700000000-000000001",
        },
    ),
    extra_responses=_ERRORS,
)
