"""``bench/blocknode``: blocks from a local block node, over real gRPC on 127.0.0.1.

1. A stream of block files: ``ledgermirror simulate --format blocks`` in a child process (``--seconds``,
   ``--tps``, ``--nodes``, ``--seed``), or an existing one given with ``--stream DIR``.
2. A block node serving it: ``ledgermirror blocknode serve`` in a child process (its CPU is not ours).
3. **Transport**: :class:`~ledgermirror.blocknode.client.BlockNodeClient` pulls every block (status, one
   subscription, items kept as bytes, blocks joined): blocks/s, MB/s, transactions/s, this process's CPU.
4. **Import from the node**: ``ledgermirror import --source grpc://...`` (``run_stream``, once) into a fresh
   embedded database: blocks/s and transactions/s, wall and CPU of this process.
5. **Import from the files**, for comparison: the same blocks read from the folder (``run_stream`` with the
   folder as source and ``--stream blocks``). Each import starts from an emptied database (``db/reset.py``);
   the two sources alternate for ``--rounds`` rounds and the fastest run of each is reported.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import asyncpg

import ledgermirror
from ledgermirror.blocknode.client import BlockNodeClient
from ledgermirror.db.reset import reset
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.options import ImportOptions
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    source_root = str(Path(ledgermirror.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [source_root, env.get("PYTHONPATH")]))
    return env


def simulate(out: Path, *, seconds: int, tps: int, nodes: int, seed: int, timeout: float) -> float:
    command = [sys.executable, "-m", "ledgermirror", "simulate", "--out", str(out), "--format", "blocks"]
    command += ["--seconds", str(seconds), "--tps", str(tps), "--nodes", str(nodes), "--seed", str(seed)]
    started = time.perf_counter()
    subprocess.run(command, env=_environment(), check=True, timeout=timeout, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def _cpu_self() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


async def _timed(work: Callable[[], Awaitable[Any]]) -> tuple[Any, float, float]:
    cpu, wall = _cpu_self(), time.perf_counter()
    result = await work()
    return result, time.perf_counter() - wall, _cpu_self() - cpu


async def transport(address: str) -> dict[str, Any]:
    client = BlockNodeClient([address])

    async def pull() -> tuple[int, int]:
        count = size = 0
        async for block in client.blocks(None, follow=False):
            count += 1
            size += len(block.data)
        return count, size

    (blocks, size), wall, cpu = await _timed(pull)
    return {"blocks": blocks, "bytes": size, "wall_s": wall, "cpu_s": cpu}


async def import_run(owner_url: str, source: str, options: ImportOptions, stream: str) -> dict[str, Any]:
    conn = await asyncpg.connect(owner_url)
    try:
        await reset(conn)
        stats, wall, cpu = await _timed(lambda: run_stream(conn, source, options, stream))
        stored = await conn.fetchval("select count(*) from record_file")
        transactions = await conn.fetchval("select count(*) from transaction")
    finally:
        await conn.close()
    return {"blocks": stored, "transactions": transactions, "rows": stats.rows, "wall_s": wall, "cpu_s": cpu}


def _rates(run: dict[str, Any], transactions: int) -> dict[str, Any]:
    wall = run["wall_s"]
    return run | {
        "blocks_per_s": round(run["blocks"] / wall, 1),
        "tx_per_s": round(transactions / wall),
        "cpu_per_block_ms": round(1000 * run["cpu_s"] / max(run["blocks"], 1), 2),
    }


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/blocknode", description=__doc__.split("\n\n")[0])
    p.add_argument("--stream", type=Path, help="an existing `simulate --format blocks` folder")
    p.add_argument("--seconds", type=int, default=120, help="simulated seconds (default 120: 60 blocks)")
    p.add_argument("--tps", type=int, default=100, help="simulated transactions per second (default 100)")
    p.add_argument("--nodes", type=int, default=1, help="simulated nodes (default 1)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-fsync", action="store_true", help="a throwaway database server (fsync off)")
    p.add_argument("--rounds", type=int, default=2, help="imports from each source, alternated (best kept)")
    p.add_argument("--timeout", type=float, default=1800.0)
    p.add_argument("--json", type=Path, help="also write the report as JSON")
    args = p.parse_args(argv)
    with contextlib.ExitStack() as cleanup:
        work = Path(cleanup.enter_context(tempfile.TemporaryDirectory(prefix="bench-blocknode-")))
        stream: Path = args.stream or work / "stream"
        if args.stream is None:
            print(
                f"simulating {args.seconds * args.tps:,} transactions as blocks ...", file=sys.stderr, flush=True
            )
            simulate(
                stream, seconds=args.seconds, tps=args.tps, nodes=args.nodes, seed=args.seed, timeout=args.timeout
            )
        truth = json.loads((stream / "truth.json").read_text())
        transactions = int(truth["transactions"]["count"])
        node = subprocess.Popen(
            [sys.executable, "-m", "ledgermirror", "blocknode", "serve", "--blocks", str(stream), "--port", "0"],
            env=_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        cleanup.callback(node.wait, 30)
        cleanup.callback(node.terminate)
        assert node.stdout is not None
        address = node.stdout.readline().rsplit(" ", 1)[1].strip()
        print(f"block node on {address}; pulling every block ...", file=sys.stderr, flush=True)
        pulled = asyncio.run(transport(address))
        prepared = prepare(Settings(), data_dir=work / "db", durable=not args.no_fsync)
        cleanup.callback(prepared.stop)
        options = ImportOptions(
            once=True,
            address_book=stream / "addressbook.bin",
            initial_balances=stream / "initial-balances.pb.gz",
        )
        # Alternated (node, files, node, files ...): the first import into a new database pays its warm-up.
        runs: dict[str, list[dict[str, Any]]] = {"node": [], "files": []}
        for _round in range(args.rounds):
            print("importing from the block node ...", file=sys.stderr, flush=True)
            runs["node"].append(
                asyncio.run(import_run(prepared.owner_url, f"grpc://{address}", options, "blocks"))
            )
            print("importing from the files ...", file=sys.stderr, flush=True)
            runs["files"].append(asyncio.run(import_run(prepared.owner_url, str(stream), options, "blocks")))
        from_node = min(runs["node"], key=lambda run: run["wall_s"])
        from_files = min(runs["files"], key=lambda run: run["wall_s"])
    result = {
        "stream": {"blocks": truth["record_files"]["count"], "transactions": transactions},
        "transport": _rates(pulled, transactions)
        | {"mb_per_s": round(pulled["bytes"] / pulled["wall_s"] / 1e6, 1)},
        "import_from_block_node": _rates(from_node, transactions),
        "import_from_files": _rates(from_files, transactions),
    }
    print(json.dumps(result, indent=2))
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0
