"""api/evm_workers.py with real worker processes (``python -m ledgermirror.evm.worker``): a job answered through
the pipe, a worker whose job fails unexpectedly reported as such and replaced, a deadline that kills the worker."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from ledgermirror.api.evm_workers import WorkerFailed, WorkerPool
from ledgermirror.evm.calls import Job
from ledgermirror.evm.execution import BlockContext, Call, TimeBudgetExceeded
from ledgermirror.evm.state import AccountState
from ledgermirror.ledger.evm import keccak256

CONTRACTS = json.loads((Path(__file__).resolve().parents[1] / "contracts" / "compiled.json").read_text())
TARGET = (1001).to_bytes(20, "big")
SENDER = (2).to_bytes(20, "big")
BLOCK = BlockContext(number=1, timestamp=1, hash=bytes(32), coinbase=(98).to_bytes(20, "big"), chain_id=296)


def job(signature: str, argument: int | None = None, seconds: float = 20.0) -> Job:
    data = keccak256(signature.encode())[:4] + (b"" if argument is None else argument.to_bytes(32, "big"))
    return Job(Call(SENDER, TARGET, data, 0, 15_000_000), BLOCK, False, False, time.monotonic() + seconds)


async def state(question: tuple[Any, ...]) -> Any:
    """A tiny world: the test contract at 0.0.1001 whose storage holds 5 in every slot."""
    what = question[0]
    if what == "account":
        code = bytes.fromhex(CONTRACTS["contracts"]["CallTarget"]["runtime"]) if question[1] == TARGET else b""
        return AccountState(10**18, 0, code)
    if what == "slot":
        return 5
    raise AssertionError(question)  # nothing else is asked: not "token" of a contract's address


async def broken(question: tuple[Any, ...]) -> Any:
    return "not an account"


def test_jobs_failures_and_deadlines() -> None:
    async def scenario() -> None:
        pool = WorkerPool(1)
        try:
            done = await pool.run(job("counter()"), state)
            assert (done.status, done.output) == ("ok", (5).to_bytes(32, "big"))
            with pytest.raises(WorkerFailed, match="AttributeError"):
                await pool.run(job("counter()"), broken)
            with pytest.raises(TimeBudgetExceeded):
                await pool.run(job("loop(uint256)", 10**6, seconds=1.0), state)
            again = await pool.run(job("counter()"), state)  # a replacement answers
            assert again.output == (5).to_bytes(32, "big")
        finally:
            pool.close()

    asyncio.run(scenario())
