"""``POST /api/v1/contracts/call``: a call executed or estimated by the EVM (``ledgermirror.evm``, py-evm) over
the mirror's tables at the requested block, as the reference's web3 module answers it (upstream-web3.md §1-§3,
docs/contracts-call.md).

The EVM runs in a worker thread; each account and storage slot it touches is read once from PostgreSQL (through
the request's pinned database) when first touched: balances and nonces from ``entity`` (``entity_history`` for a
past block), runtime bytecode from ``contract``, storage from ``contract_state`` (or rebuilt from
``contract_state_change`` as of the block's end). Writes stay in the EVM's in-memory state. At most
``contract_call_concurrency`` calls run at once per worker (the rest wait, then ``429``); each has
``contract_call_timeout_ms`` in total (then ``503``) and at most ``contract_call_max_gas``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from dataclasses import dataclass
from typing import Any

from starlette.requests import Request

from ledgermirror.api.context import AppContext
from ledgermirror.api.endpoint import Endpoint, Page
from ledgermirror.api.errors import UnsupportedMediaType
from ledgermirror.api.querystring.params import ParamSet
from ledgermirror.api.resources.contracts import contract_call_query as q
from ledgermirror.api.resources.contracts.contract_call_request import (
    MAX_STRING,
    Block,
    CallRequest,
    Web3Error,
    bad_request,
    parse_call,
)
from ledgermirror.api.resources.network import system_files
from ledgermirror.db.sql import Statement, template
from ledgermirror.evm.estimate import estimate_gas
from ledgermirror.evm.exchange_rate import DEFAULT_RATE
from ledgermirror.evm.execution import BlockContext, Call, Outcome, TimeBudgetExceeded, execute
from ledgermirror.evm.revert import revert_reason
from ledgermirror.evm.state import AccountState
from ledgermirror.evm.token_facade import TokenState, proxy_code
from ledgermirror.ledger.entity_id import encode_entity_id
from ledgermirror.ledger.int64 import INT64_MAX
from ledgermirror.ledger.system_files import EXCHANGE_RATE_FILE, decode_exchange_rates

PATH = "/api/v1/contracts/call"
MINIMUM_ACCOUNT_BALANCE = 10**17
"""Accounts below this many tinybars are reported with it (the reference's ``evm.minimumAccountBalance``), so a
call never fails for lack of funds."""
TREASURY_NUM = 2
SYSTEM_ACCOUNTS = 1000
"""Numbers below this are system accounts (precompiles, system contracts): never ``INVALID_CONTRACT_ID``, as the
reference serves any missing one as a stand-in account."""
FEE_COLLECTOR_NUM = 98
_LONG_ZERO_PREFIX = bytes(12)
_NUM_LIMIT = 1 << 38
_SERVER_ERROR = frozenset({"FAIL_INVALID"})


@dataclass(frozen=True, slots=True)
class _Block:
    number: int
    consensus_start: int
    consensus_end: int
    hash: str


class MirrorState:
    """The state the EVM reads (:class:`ledgermirror.evm.state.StateReader`), fetched on the event loop from the
    EVM's thread, each account and slot once per request."""

    def __init__(self, ctx: AppContext, loop: asyncio.AbstractEventLoop, at: int | None, deadline: float) -> None:
        self._ctx = ctx
        self._loop = loop
        self._at = at
        self._deadline = deadline
        self._accounts: dict[bytes, tuple[int, str, AccountState] | None] = {}
        self._slots: dict[tuple[bytes, int], int] = {}
        self._tokens: dict[bytes, TokenState | None] = {}
        self._rate: tuple[int, int] | None = None

    def _wait(self, work: Coroutine[Any, Any, Any]) -> Any:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            work.close()
            raise TimeBudgetExceeded()
        future = asyncio.run_coroutine_threadsafe(work, self._loop)
        try:
            return future.result(remaining)
        except TimeoutError:
            future.cancel()
            raise TimeBudgetExceeded() from None

    def entity(self, address: bytes) -> tuple[int, str, AccountState] | None:
        """The account's entity id, type and state; None when the mirror has no such account or contract."""
        if address not in self._accounts:
            self._accounts[address] = self._wait(self._fetch_account(address))
        return self._accounts[address]

    async def _fetch_account(self, address: bytes) -> tuple[int, str, AccountState] | None:
        settings = self._ctx.settings
        num = _long_zero_num(address)
        key: dict[str, Any]
        if num is not None:
            key = {"id": encode_entity_id(settings.shard, settings.realm, num)}
            text = q.ACCOUNT_BY_ID if self._at is None else q.ACCOUNT_BY_ID_AT
        else:
            key = {"address": address}
            text = q.ACCOUNT_BY_EVM_ADDRESS if self._at is None else q.ACCOUNT_BY_EVM_ADDRESS_AT
        values: dict[str, Any] = dict(key) if self._at is None else {**key, "at": self._at}
        rows = await self._ctx.database.fetch(template(text, **values))
        if not rows:
            return None
        row = rows[0]
        balance = int(row["balance"] or 0)
        if self._at is not None:
            treasury = encode_entity_id(settings.shard, settings.realm, TREASURY_NUM)
            statement = template(q.BALANCE_AT, treasury=treasury, id=int(row["id"]), at=self._at)
            balance = int((await self._ctx.database.fetch(statement))[0]["balance"] or 0)
        if row["type"] == "ACCOUNT":
            balance = max(balance, MINIMUM_ACCOUNT_BALANCE)
        code = bytes(row["runtime_bytecode"] or b"") if row["type"] == "CONTRACT" else b""
        return int(row["id"]), str(row["type"]), AccountState(balance, int(row["ethereum_nonce"] or 0), code)

    def account(self, address: bytes) -> AccountState | None:
        found = self.entity(address)
        if found is not None:
            return found[2]
        return None if self.token(address) is None else AccountState(0, 0, proxy_code(address))

    def slot(self, address: bytes, key: int) -> int:
        cached = self._slots.get((address, key))
        if cached is None:
            found = self.entity(address)
            cached = 0 if found is None or found[1] != "CONTRACT" else self._wait(self._fetch_slot(found[0], key))
            self._slots[(address, key)] = cached
        return cached

    def block_hash(self, number: int) -> bytes:
        return bytes(self._wait(self._fetch_block_hash(number)))

    async def _fetch_block_hash(self, number: int) -> bytes:
        rows = await self._ctx.database.fetch(template(q.BLOCK_BY_NUMBER, number=number))
        return _hash32(str(rows[0]["hash"])) if rows else b""

    def token(self, address: bytes) -> TokenState | None:
        num = _long_zero_num(address)
        if num is None:
            return None
        if address not in self._tokens:
            self._tokens[address] = self._wait(self._fetch_token(self._encoded(num)))
        return self._tokens[address]

    async def _fetch_token(self, token_id: int) -> TokenState | None:
        rows = await self._ctx.database.fetch(self._as_of(q.TOKEN, q.TOKEN_AT, id=token_id))
        if not rows:
            return None
        row = rows[0]
        return TokenState(
            name=str(row["name"]),
            symbol=str(row["symbol"]),
            decimals=int(row["decimals"]),
            total_supply=int(row["total_supply"]),
            type=str(row["type"]),
        )

    def exchange_rate(self) -> tuple[int, int]:
        if self._rate is None:
            self._rate = self._wait(self._fetch_rate())
        return self._rate

    async def _fetch_rate(self) -> tuple[int, int]:
        bounds = system_files.Window(upper=INT64_MAX if self._at is None else self._at)
        loaded = await system_files.load(self._ctx, EXCHANGE_RATE_FILE, bounds, decode_exchange_rates)
        current = None if loaded is None else loaded.content.current
        if current is None:
            return DEFAULT_RATE
        return current.hbar_equivalent, current.cent_equivalent

    def _account_id(self, address: bytes) -> int | None:
        num = _long_zero_num(address)
        if num is not None:
            return self._encoded(num)
        found = self.entity(address)
        return None if found is None else found[0]

    def token_balance(self, token: bytes, owner: bytes) -> int:
        token_num, account = _long_zero_num(token), self._account_id(owner)
        if token_num is None or account is None:
            return 0
        statement = self._as_of(
            q.TOKEN_BALANCE, q.TOKEN_BALANCE_AT, account=account, token=self._encoded(token_num)
        )
        return int(self._wait(self._fetch_amount(statement, "balance")))

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        token_num, owner_id, spender_id = _long_zero_num(token), self._account_id(owner), self._account_id(spender)
        if token_num is None or owner_id is None or spender_id is None:
            return 0
        statement = self._as_of(
            q.TOKEN_ALLOWANCE,
            q.TOKEN_ALLOWANCE_AT,
            owner=owner_id,
            spender=spender_id,
            token=self._encoded(token_num),
        )
        return int(self._wait(self._fetch_amount(statement, "amount")))

    async def _fetch_amount(self, statement: Statement, column: str) -> int:
        rows = await self._ctx.database.fetch(statement)
        return int(rows[0][column] or 0) if rows else 0

    def _as_of(self, latest: str, historical: str, **values: Any) -> Statement:
        if self._at is None:
            return template(latest, **values)
        return template(historical, **values, at=self._at)

    def _encoded(self, num: int) -> int:
        return encode_entity_id(self._ctx.settings.shard, self._ctx.settings.realm, num)

    async def _fetch_slot(self, contract: int, key: int) -> int:
        if self._at is None:
            statement = template(q.SLOTS, contract=contract, slots=[key.to_bytes(32, "big")])
        else:
            trimmed = key.to_bytes(32, "big").lstrip(b"\0")
            statement = template(q.SLOTS_AT, contract=contract, slots=[trimmed], at=self._at)
        rows = await self._ctx.database.fetch(statement)
        return int.from_bytes(bytes(rows[0]["value"]), "big") if rows and rows[0]["value"] is not None else 0


def _long_zero_num(address: bytes) -> int | None:
    if not address.startswith(_LONG_ZERO_PREFIX):
        return None
    num = int.from_bytes(address[12:], "big")
    return num if num < _NUM_LIMIT else None


def _hash32(text: str) -> bytes:
    """The first 32 bytes of a ``record_file.hash`` (hex), as the EVM sees a block hash."""
    return bytes.fromhex(text[:64].ljust(64, "0"))


def _long_zero(num: int) -> bytes:
    return num.to_bytes(20, "big")


async def _block(ctx: AppContext, block: Block) -> _Block:
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
    return _Block(int(row["index"]), int(row["consensus_start"]), int(row["consensus_end"]), str(row["hash"]))


def _failure(outcome: Outcome) -> Web3Error:
    """A failed execution as the reference answers it: the revert's data and its ``Error(string)`` message."""
    if outcome.reverted:
        return Web3Error(
            400, [("CONTRACT_REVERT_EXECUTED", revert_reason(outcome.output), "0x" + outcome.output.hex())]
        )
    status = "INSUFFICIENT_GAS" if outcome.error == "OutOfGas" else "CONTRACT_EXECUTION_EXCEPTION"
    return Web3Error(400, [(status, "", "0x")])


def _run(request: CallRequest, call: Call, block: BlockContext, state: MirrorState, deadline: float) -> bytes:
    """The answer's bytes: the output of a call, or the estimate as 8 bytes (in the EVM's thread)."""
    to = call.to
    num = None if to is None else _long_zero_num(to)
    if (
        to is not None
        and num is not None
        and num >= SYSTEM_ACCOUNTS
        and state.entity(to) is None
        and not state.token(to)
    ):
        raise Web3Error(400, [("INVALID_CONTRACT_ID", "", "")])
    if (
        request.sender is not None
        and _long_zero_num(request.sender) is None
        and state.entity(request.sender) is None
    ):
        raise Web3Error(400, [("PAYER_ACCOUNT_NOT_FOUND", "Sender account not found.", "")])
    outcome = execute(call, block, state, deadline)
    if not outcome.success:
        raise _failure(outcome)
    if not request.estimate:
        return outcome.output

    def attempt(gas: int) -> tuple[bool, int]:
        tried = execute(Call(call.sender, call.to, call.data, call.value, gas), block, state, deadline)
        return tried.success, tried.gas_used

    return estimate_gas(attempt, outcome.gas_used, call.gas).to_bytes(8, "big")


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
    gate = ctx.contract_calls
    try:
        async with asyncio.timeout(settings.contract_call_timeout_ms / 1000):
            await gate.acquire()
    except TimeoutError:
        raise Web3Error(429, [("Too Many Requests", "Too many contract calls at once", "")]) from None
    try:
        found = await _block(ctx, parsed.block)
        at = None if parsed.block.latest else found.consensus_end
        state = MirrorState(ctx, asyncio.get_running_loop(), at, deadline)
        block = BlockContext(
            number=found.number,
            timestamp=found.consensus_start // 1_000_000_000,
            hash=_hash32(found.hash),
            coinbase=_long_zero(FEE_COLLECTOR_NUM),
            chain_id=settings.contract_call_chain_id,
        )
        sender = parsed.sender if parsed.sender is not None else _long_zero(TREASURY_NUM)
        evm_call = Call(sender, parsed.to, parsed.data, parsed.value, parsed.gas)
        try:
            output = await asyncio.to_thread(_run, parsed, evm_call, block, state, deadline)
        except TimeBudgetExceeded:
            raise Web3Error(503, [("Service Unavailable", "", "")]) from None
    finally:
        gate.release()
    return Page({"result": "0x" + output.hex()})


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
