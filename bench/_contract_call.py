"""``bench/contract_call``: the whole route (body checks, block lookup, state reads from PostgreSQL, py-evm,
answer) in this process through ASGI, as ``bench/apicpu`` calls the other routes. Without ``--data-dir`` on a
throwaway embedded database holding the test contracts of ``tests/contracts/`` loaded as mirrored rows (through
the spec loader); with ``--data-dir`` on a database ``bench/generate`` filled (``medium``, say), whose contracts of
index 2 and 3 (mod 4) run the same compiled ``Erc20`` and ``CallTarget`` (``dataset/evm_code.py``): the calls go
to the first of each and the ERC-20's creator, found in the data.

For each call it reports the CPU per call of this process (the API), of its EVM worker processes and of
PostgreSQL (its postmaster's process tree, ``_procstat.py``), and calls per second one after another (wall time,
one client). ``--with-load`` also measures ``GET /api/v1/blocks?limit=1`` and ``GET /api/v1/accounts/{id}`` (p50,
p99) while ``--heavy`` clients call the loop at once, more than the route's ``--concurrency`` limit lets run: what
the route leaves to the rest of the API when saturated. Bounded: ``--calls`` calls per case and round,
``--rounds`` rounds, ``--seconds`` under load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import asyncpg
import psutil
from bench._driver import Post
from bench._explain import send_in_process
from bench._procstat import postmaster_pids, usage

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan
from ledgermirror.conformance.loader import load_setup
from ledgermirror.dataset import evm_code
from ledgermirror.db.sql import template
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
FIRST_RUNNING = "select id from contract where runtime_bytecode = {code} order by id limit 1"
CREATOR = """select payer_account_id from contract_result
where contract_id = {id} and created_contract_ids = array[{id}]::bigint[] order by consensus_timestamp limit 1"""
TOTAL_SUPPLY = "select value from contract_state where contract_id = {id} and slot = {slot}"


@dataclass(frozen=True, slots=True)
class Targets:
    """Where the calls go: the ERC-20 (num), its holder (20-byte address, hex), its balance there, the
    CallTarget (num), and an account for ``GET /api/v1/accounts/{id}``."""

    token: int
    holder: str
    balance: int
    target: int
    account: int

    def cases(self) -> dict[str, dict[str, Any]]:
        return {
            "balanceOf": {
                "to": "0x" + format(self.token, "040x"),
                "data": "0x" + _selector("balanceOf(address)") + "00" * 12 + self.holder,
            },
            "loop": {
                "to": "0x" + format(self.target, "040x"),
                "data": "0x" + _selector("loop(uint256)") + _word(10_000),
            },
            "create": {"data": "0x" + ERC20_INIT},
        }


THROWAWAY = Targets(token=1002, holder=HOLDER, balance=12345, target=1001, account=1010)


async def targets_in(owner_url: str) -> Targets:
    """The first ERC-20 and CallTarget of a generated data set and the ERC-20's creator (who holds its supply)."""
    conn = await asyncpg.connect(owner_url)
    try:
        found = [
            template(FIRST_RUNNING, code=evm_code.runtime(name)) for name in (evm_code.ERC20, evm_code.CALL_TARGET)
        ]
        token, target = [await conn.fetchval(statement.text, *statement.args) for statement in found]
        if token is None or target is None:
            raise SystemExit("no contract of this data set runs the compiled Erc20 and CallTarget: regenerate it")
        creator_query = template(CREATOR, id=token)
        creator = await conn.fetchval(creator_query.text, *creator_query.args)
        supply_query = template(TOTAL_SUPPLY, id=token, slot=bytes(31) + b"\x02")
        supply = await conn.fetchval(supply_query.text, *supply_query.args)
    finally:
        await conn.close()
    num = (2**38 - 1) & creator
    return Targets(
        token & (2**38 - 1), format(num, "040x"), int.from_bytes(supply, "big"), target & (2**38 - 1), num
    )


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


async def _round(app: Any, body: dict[str, Any], calls: int, postgres: list[int]) -> tuple[float, ...]:
    """API CPU, worker CPU, PostgreSQL CPU and wall seconds of ``calls`` calls one after another."""
    cpu, workers, pg, wall = time.process_time(), _worker_cpu(), usage(postgres).cpu_seconds, time.perf_counter()
    for _ in range(calls):
        _, reply = await send_in_process(app, _post(body))
        if reply.status != 200:
            raise SystemExit(f"{body} answered {reply.status}: {reply.body[:200]!r}")
    return (
        time.process_time() - cpu,
        _worker_cpu() - workers,
        usage(postgres).cpu_seconds - pg,
        time.perf_counter() - wall,
    )


def _percentiles(latencies: list[float]) -> str:
    latencies = sorted(latencies)
    p50 = latencies[len(latencies) // 2] * 1000
    p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] * 1000
    return f"{len(latencies)} requests, p50 {p50:.1f} ms, p99 {p99:.1f} ms"


async def _light(app: Any, paths: list[str], stop: float) -> dict[str, list[float]]:
    """The usual routes in turn, a pause between requests, until ``stop``."""
    latencies: dict[str, list[float]] = {path: [] for path in paths}
    while time.perf_counter() < stop:
        for path in paths:
            started = time.perf_counter()
            _, reply = await send_in_process(app, path)
            if reply.status != 200:
                raise SystemExit(f"{path} answered {reply.status}")
            latencies[path].append(time.perf_counter() - started)
            await asyncio.sleep(0.01)
    return latencies


async def _under_load(app: Any, targets: Targets, heavy_clients: int, seconds: float) -> None:
    paths = ["/api/v1/blocks?limit=1", f"/api/v1/accounts/0.0.{targets.account}"]
    quiet = await _light(app, paths, time.perf_counter() + min(seconds, 3.0))
    for path, latencies in quiet.items():
        print(f"GET {path} alone: {_percentiles(latencies)}")
    stop = time.perf_counter() + seconds
    loop = targets.cases()["loop"]
    statuses: dict[int, int] = {}

    async def heavy() -> None:
        while time.perf_counter() < stop:
            _, reply = await send_in_process(app, _post(loop))
            statuses[reply.status] = statuses.get(reply.status, 0) + 1

    heavy_calls = asyncio.gather(*(heavy() for _ in range(heavy_clients)))
    loaded, _ = await asyncio.gather(_light(app, paths, stop), heavy_calls)
    answered = ", ".join(f"{count} {status}" for status, count in sorted(statuses.items()))
    print(f"while {heavy_clients} clients call loop(10000) for {seconds:.0f} s (answered: {answered}):")
    for path, latencies in loaded.items():
        print(f"GET {path}: {_percentiles(latencies)}")


async def run(  # noqa: PLR0917 (the command's options)
    owner_url: str,
    api_url: str,
    calls: int,
    rounds: int,
    load: tuple[int, float] | None,
    concurrency: int,
    postgres: list[int],
    targets: Targets | None = None,
) -> dict[str, tuple[float, ...]]:
    """Measure; ``targets`` None: load the throwaway set-up first. Returns per call: API, EVM and PostgreSQL ms
    CPU, calls/s."""
    if targets is None:
        conn = await asyncpg.connect(owner_url)
        try:
            await load_setup(conn, SETUP, spec="bench")
        finally:
            await conn.close()
        targets = THROWAWAY
    settings = Settings(response_cache_entries=0, contract_call_concurrency=concurrency)
    app = create_app(settings, api_url)
    results: dict[str, tuple[float, ...]] = {}
    async with Lifespan(app):
        print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        print(f"ERC-20 0.0.{targets.token}, holder 0x{targets.holder} of {targets.balance};", end=" ")
        print(f"loop on 0.0.{targets.target}")
        _, reply = await send_in_process(app, _post(targets.cases()["balanceOf"]))
        answered = json.loads(reply.body).get("result", "0x")
        if reply.status != 200 or int(answered, 16) != targets.balance:
            raise SystemExit(f"balanceOf answered {reply.status} {reply.body[:200]!r}, not {targets.balance}")
        print(f"{'call':<10} {'API ms CPU':>11} {'EVM ms CPU':>11} {'PG ms CPU':>10} {'calls/s':>8}")
        for name, body in targets.cases().items():
            count = max(calls // 20, 2) if name == "loop" else calls
            await _round(app, body, 2, postgres)  # warm-up: prepared statements
            measured = [await _round(app, body, count, postgres) for _ in range(rounds)]
            api, evm, pg, wall = (min(result[i] for result in measured) / count for i in range(4))
            results[name] = (api * 1000, evm * 1000, pg * 1000, 1 / wall)
            print(f"{name:<10} {api * 1000:>11.3f} {evm * 1000:>11.3f} {pg * 1000:>10.3f} {1 / wall:>8.1f}")
        if load is not None:
            await _under_load(app, targets, *load)
        print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/contract_call", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data-dir", help="the embedded database folder bench/generate filled (default: throwaway)"
    )
    parser.add_argument("--calls", type=int, default=200, help="calls per case and round (loop: a twentieth)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--with-load", action="store_true", help="also time two GET routes under loop calls")
    parser.add_argument("--concurrency", type=int, default=2, help="contract_call_concurrency for the run")
    parser.add_argument("--heavy", type=int, default=0, help="with --with-load: loop clients (default 2 x limit)")
    parser.add_argument("--seconds", type=float, default=5.0, help="with --with-load: seconds under load")
    args = parser.parse_args(argv)
    load = (args.heavy or 2 * args.concurrency, args.seconds) if args.with_load else None
    with tempfile.TemporaryDirectory(prefix="lm-contract-call-") as folder:
        data_dir = Path(args.data_dir or folder)
        prepared = prepare(Settings(data_dir=data_dir), durable=args.data_dir is not None)
        try:
            postgres = postmaster_pids(str(data_dir.resolve()))
            targets = None if args.data_dir is None else asyncio.run(targets_in(prepared.owner_url))
            asyncio.run(
                run(
                    prepared.owner_url,
                    prepared.api_url,
                    args.calls,
                    args.rounds,
                    load,
                    args.concurrency,
                    postgres,
                    targets,
                )
            )
        finally:
            prepared.stop()
    return 0
