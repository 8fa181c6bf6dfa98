"""``bench/contract_call``: the whole route (body checks, block lookup, state reads from PostgreSQL, py-evm,
answer) in this process through ASGI, as ``bench/apicpu`` calls the other routes, on a throwaway embedded
database holding the test contracts of ``tests/contracts/`` loaded as mirrored rows (through the spec loader).

For each call it reports the CPU per call of this process (the API) and of its EVM worker processes
(PostgreSQL's own CPU is not counted), and calls per second one after another (wall time, one client).
``--with-load`` also measures a plain
``GET /api/v1/blocks`` while ``--concurrency`` loop calls run at once, to show what the route's concurrency limit
leaves to the rest of the API. Bounded: ``--calls`` calls per case and round, ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

import asyncpg
import psutil
from bench._driver import Post
from bench._explain import send_in_process

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan
from ledgermirror.conformance.loader import load_setup
from ledgermirror.ledger.evm import keccak256
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings

COMPILED = json.loads((Path(__file__).resolve().parent.parent / "tests/contracts/compiled.json").read_text())
CONTRACTS = COMPILED["contracts"]
HOLDER = "ab" * 20


def _word(value: int) -> str:
    return format(value, "064x")


def _selector(signature: str) -> str:
    return keccak256(signature.encode())[:4].hex()


SETUP: dict[str, Any] = {
    "recordFiles": [{"index": 1, "consensus_start": 100, "consensus_end": 200, "hash": "11" * 48}],
    "accounts": [{"num": 2, "balance": 10**18}, {"num": 1010, "balance": 5, "evm_address": HOLDER}],
    "contracts": [
        {"num": 1001, "runtime_bytecode": CONTRACTS["CallTarget"]["runtime"]},
        {"num": 1002, "runtime_bytecode": CONTRACTS["Erc20"]["runtime"]},
    ],
    "contractStates": [
        {
            "contract_id": 1002,
            "slot": keccak256(bytes.fromhex("00" * 12 + HOLDER + _word(3))).hex(),
            "value": "0x" + _word(12345),
            "modified_timestamp": 50,
        }
    ],
}
ERC20_INIT = (
    CONTRACTS["Erc20"]["bytecode"]
    + _word(96)
    + _word(160)
    + _word(10**18)
    + _word(5)
    + b"Token".hex().ljust(64, "0")
    + _word(3)
    + b"TOK".hex().ljust(64, "0")
)
CASES: dict[str, dict[str, Any]] = {
    "balanceOf": {
        "to": "0x" + format(1002, "040x"),
        "data": "0x" + _selector("balanceOf(address)") + "00" * 12 + HOLDER,
    },
    "loop": {"to": "0x" + format(1001, "040x"), "data": "0x" + _selector("loop(uint256)") + _word(10_000)},
    "create": {"data": "0x" + ERC20_INIT},
}


def _post(body: dict[str, Any]) -> Post:
    return Post("/api/v1/contracts/call", json.dumps(body).encode(), "application/json")


def _worker_cpu() -> float:
    """CPU seconds so far of this process's EVM worker processes (``python -m ledgermirror.evm.worker``)."""
    total = 0.0
    for child in psutil.Process().children():
        try:
            if "ledgermirror.evm.worker" in " ".join(child.cmdline()):
                times = child.cpu_times()
                total += times.user + times.system
        except psutil.NoSuchProcess:
            continue
    return total


async def _round(app: Any, body: dict[str, Any], calls: int) -> tuple[float, float, float]:
    """API CPU, worker CPU and wall seconds of ``calls`` calls one after another."""
    cpu, workers, wall = time.process_time(), _worker_cpu(), time.perf_counter()
    for _ in range(calls):
        _, reply = await send_in_process(app, _post(body))
        if reply.status != 200:
            raise SystemExit(f"{body} answered {reply.status}: {reply.body[:200]!r}")
    return time.process_time() - cpu, _worker_cpu() - workers, time.perf_counter() - wall


async def _under_load(app: Any, concurrency: int, seconds: float) -> None:
    stop = time.perf_counter() + seconds

    async def heavy() -> None:
        while time.perf_counter() < stop:
            await send_in_process(app, _post(CASES["loop"]))

    async def light() -> list[float]:
        latencies = []
        while time.perf_counter() < stop:
            started = time.perf_counter()
            await send_in_process(app, "/api/v1/blocks?limit=1")
            latencies.append(time.perf_counter() - started)
            await asyncio.sleep(0.01)
        return latencies

    heavy_calls = asyncio.gather(*(heavy() for _ in range(concurrency)))
    latencies, _ = await asyncio.gather(light(), heavy_calls)
    latencies.sort()
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[int(len(latencies) * 0.99)] * 1000
    print(f"GET /blocks while {concurrency} loop calls run: {len(latencies)} requests,", end=" ")
    print(f"p50 {p50:.1f} ms, p99 {p99:.1f} ms")


async def run(  # noqa: PLR0917 (the command's options)
    owner_url: str, api_url: str, calls: int, rounds: int, with_load: bool, concurrency: int
) -> None:
    conn = await asyncpg.connect(owner_url)
    try:
        await load_setup(conn, SETUP, spec="bench")
    finally:
        await conn.close()
    settings = Settings(response_cache_entries=0, contract_call_concurrency=concurrency)
    app = create_app(settings, api_url)
    async with Lifespan(app):
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"{'call':<10} {'API ms CPU':>11} {'EVM ms CPU':>11} {'calls/s':>8}")
        for name, body in CASES.items():
            count = max(calls // 20, 2) if name == "loop" else calls
            await _round(app, body, 2)  # warm-up: prepared statements
            results = [await _round(app, body, count) for _ in range(rounds)]
            cpu = min(result[0] for result in results) / count
            evm = min(result[1] for result in results) / count
            wall = min(result[2] for result in results) / count
            print(f"{name:<10} {cpu * 1000:>11.3f} {evm * 1000:>11.3f} {1 / wall:>8.1f}")
        if with_load:
            await _under_load(app, concurrency, 5.0)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/contract_call", description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=200, help="calls per case and round (loop: a twentieth)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--with-load", action="store_true", help="also time GET /blocks under loop calls")
    parser.add_argument("--concurrency", type=int, default=2, help="contract_call_concurrency for the run")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="lm-contract-call-") as folder:
        prepared = prepare(Settings(data_dir=Path(folder)), durable=False)
        try:
            asyncio.run(
                run(
                    prepared.owner_url, prepared.api_url, args.calls, args.rounds, args.with_load, args.concurrency
                )
            )
        finally:
            prepared.stop()
    return 0
