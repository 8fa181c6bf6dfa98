"""A contract call as the route asks it (``Job``) and its answer (``JobResult``): the checks before the EVM
(a long-zero target that does not exist, an unknown sender), the execution, and the gas estimate, over a
:class:`~ledgermirror.evm.state.StateReader`. Runs in a worker process (``evm/worker.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ledgermirror.evm.estimate import estimate_gas
from ledgermirror.evm.execution import BlockContext, Call, InsufficientBalance, Outcome, execute
from ledgermirror.evm.prestate import Recorder, Touched, touched
from ledgermirror.evm.state import AccountState, StateReader
from ledgermirror.evm.tracer import TraceOptions, Tracer

SYSTEM_ACCOUNTS = 1000
"""Numbers below this are system accounts (precompiles, system contracts): never ``INVALID_CONTRACT_ID``, as the
reference serves any missing one as a stand-in account."""
_LONG_ZERO_PREFIX = bytes(12)
_NUM_LIMIT = 1 << 38


@dataclass(frozen=True, slots=True)
class Job:
    call: Call
    block: BlockContext
    estimate: bool
    sender_given: bool
    """``from`` was in the request (an unknown opaque sender is then refused)."""
    deadline: float
    """``time.monotonic()`` (one clock for every process of the machine)."""
    accounts: tuple[tuple[bytes, AccountState | None], ...] = ()
    """Accounts every call touches (the sender, the target, the coinbase), sent with the job to save asking."""
    trace: TraceOptions | None = None
    """Trace every operation (the opcodes route): the result then carries the trace, and no estimate is made."""
    prestate: bool = False
    """Keep what the execution touched, before and after (the prestate route); no estimate is made."""


@dataclass(frozen=True, slots=True)
class JobResult:
    status: str
    """``ok``, ``failed`` (see ``outcome``), ``invalid_contract``, ``payer_not_found``, ``insufficient_balance``
    (the sender cannot pay the value)."""
    output: bytes = b""
    outcome: Outcome | None = None
    trace: list[dict[str, Any]] | None = None
    touched: tuple[Touched, ...] | None = None


def long_zero_num(address: bytes) -> int | None:
    """The entity number of a long-zero address, None for an opaque one."""
    if not address.startswith(_LONG_ZERO_PREFIX):
        return None
    num = int.from_bytes(address[12:], "big")
    return num if num < _NUM_LIMIT else None


def run_job(job: Job, reader: StateReader) -> JobResult:
    """The answer: the call's output (a creation's runtime bytecode), or the estimate as 8 bytes."""
    try:
        return _run(job, reader)
    except InsufficientBalance:
        return JobResult("insufficient_balance")


def _run(job: Job, reader: StateReader) -> JobResult:
    call = job.call
    num = None if call.to is None else long_zero_num(call.to)
    if call.to is not None and num is not None and num >= SYSTEM_ACCOUNTS and reader.account(call.to) is None:
        return JobResult("invalid_contract")
    if job.sender_given and long_zero_num(call.sender) is None and reader.account(call.sender) is None:
        return JobResult("payer_not_found")
    if job.prestate:
        recorder = Recorder(reader)
        kept: list[tuple[Touched, ...]] = []
        ran = execute(
            call,
            job.block,
            recorder,
            job.deadline,
            after=lambda state: kept.append(touched(state, recorder, job.block.coinbase)),
        )
        return JobResult("ok" if ran.success else "failed", ran.output, ran, touched=kept[0])
    if job.trace is not None:
        tracer = Tracer(job.trace)
        traced = execute(call, job.block, reader, job.deadline, tracer)
        return JobResult("ok" if traced.success else "failed", traced.output, traced, tracer.entries)
    outcome = execute(call, job.block, reader, job.deadline)
    if not outcome.success:
        return JobResult("failed", outcome=outcome)
    if not job.estimate:
        return JobResult("ok", outcome.output)

    def attempt(gas: int) -> tuple[bool, int]:
        tried = execute(Call(call.sender, call.to, call.data, call.value, gas), job.block, reader, job.deadline)
        return tried.success, tried.gas_used

    return JobResult("ok", estimate_gas(attempt, outcome.gas_used, call.gas).to_bytes(8, "big"))
