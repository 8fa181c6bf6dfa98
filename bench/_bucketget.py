"""``bench/bucketget``: the client's CPU a GET from a bucket, by the ways ``obstore`` can read an object.

The bucket source reads every stream file with one GET (``importer/sources.BucketStore.read``). This measures
what a GET costs the importing process itself, against the real S3 server (``weed mini`` on 127.0.0.1), for
``--objects`` objects of ``--size`` bytes read ``--concurrency`` at a time, in ``--rounds`` rounds of every way:

- ``two-awaits``: ``await obstore.get_async``, then ``await result.bytes_async()`` (what the importer does);
- ``one-await``: ``await obstore.get_range_async`` over the whole object (one await, but the size must be known);
- ``thread-pool``: the synchronous ``obstore.get(...).bytes()`` on a pool of ``--concurrency`` threads;
- ``sequential``: the synchronous call, one after the other on the calling thread.

Reported for each: wall time and the process's CPU time (every thread, ``getrusage``) per GET, and the number
of threads the process has after it. The server's own CPU is not included. Loopback only, bounded by the
number of objects.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import os
import resource
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import obstore
from bench._s3server import weed_mini

WAYS = ("two-awaits", "one-await", "thread-pool", "sequential")


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _threads() -> int:
    return len(os.listdir("/proc/self/task"))


def _reader(
    way: str, store: Any, size: int, pool: concurrent.futures.ThreadPoolExecutor
) -> Callable[[str], Awaitable[bytes]]:
    async def two_awaits(key: str) -> bytes:
        result = await obstore.get_async(store, key)
        return bytes(await result.bytes_async())

    async def one_await(key: str) -> bytes:
        return bytes(await obstore.get_range_async(store, key, start=0, end=size))

    async def thread_pool(key: str) -> bytes:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(pool, lambda: bytes(obstore.get(store, key).bytes()))

    return {"two-awaits": two_awaits, "one-await": one_await, "thread-pool": thread_pool}[way]


async def _read_all(read: Callable[[str], Awaitable[bytes]], keys: list[str], concurrency: int) -> int:
    limit = asyncio.Semaphore(concurrency)

    async def one(key: str) -> int:
        async with limit:
            return len(await read(key))

    return sum(await asyncio.gather(*(one(key) for key in keys)))


async def _put_all(store: Any, keys: list[str], data: bytes) -> None:
    limit = asyncio.Semaphore(16)

    async def one(key: str) -> None:
        async with limit:
            await obstore.put_async(store, key, data)

    await asyncio.gather(*(one(key) for key in keys))


def measure(objects: int, size: int, concurrency: int, rounds: int) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="bench-bucketget-") as folder, weed_mini(Path(folder)) as server:
        store = server.store()
        keys = [f"objects/{index:06d}" for index in range(objects)]
        data = os.urandom(size)
        asyncio.run(_put_all(store, keys, data))
        with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
            for round_number in range(1, rounds + 1):
                for way in WAYS:
                    started, cpu = time.perf_counter(), _cpu_seconds()
                    if way == "sequential":
                        read = sum(len(bytes(obstore.get(store, key).bytes())) for key in keys)
                    else:
                        read = asyncio.run(_read_all(_reader(way, store, size, pool), keys, concurrency))
                    wall, cpu = time.perf_counter() - started, _cpu_seconds() - cpu
                    if read != objects * size:
                        raise RuntimeError(f"{way}: read {read} bytes, expected {objects * size}")
                    rows.append(
                        {
                            "round": round_number,
                            "way": way,
                            "wall_us_per_get": wall / objects * 1e6,
                            "cpu_us_per_get": cpu / objects * 1e6,
                            "threads": _threads(),
                        }
                    )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bench/bucketget", description=__doc__.split("\n\n")[0])
    parser.add_argument("--objects", type=int, default=3000)
    parser.add_argument("--size", type=int, default=8000, help="bytes an object (a record file is about 8 KB)")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--json", type=Path, help="also write the rows as JSON")
    args = parser.parse_args(argv)
    if min(args.objects, args.size, args.concurrency, args.rounds) < 1:
        parser.error("--objects, --size, --concurrency and --rounds must be at least 1")
    rows = measure(args.objects, args.size, args.concurrency, args.rounds)
    print(f"{args.objects} GETs of {args.size} bytes, {args.concurrency} at a time (weed mini on 127.0.0.1)")
    print(f"{'round':>5}  {'way':<12} {'wall µs/GET':>12} {'CPU µs/GET':>11} {'threads':>8}")
    for row in rows:
        print(
            f"{row['round']:>5}  {row['way']:<12} {row['wall_us_per_get']:>12.0f} {row['cpu_us_per_get']:>11.0f}"
            f" {row['threads']:>8}"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0
