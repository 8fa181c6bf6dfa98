"""``bench/profile``: where a request's CPU goes inside the application, per scenario, by layer.

The application is built in this process (``create_app``) over the database the server under ``--url`` uses,
and each scenario's requests are sent to it as ASGI calls, one after another, without sockets. Two passes per
scenario:

1. plain: this thread's CPU time over ``--requests`` requests gives the application's CPU per request (no
   HTTP server, no sockets; the database's own work is not in it);
2. under ``cProfile`` with a CPU clock: each function's own time, summed by the layer its module belongs to,
   gives the layers' shares, which are applied to the plain figure (the profiler inflates Python time, so
   its absolute numbers are not used).

The HTTP server's share (uvicorn, httptools, uvloop, the socket calls) is the API CPU per request that
``bench/run`` measures minus the plain figure here. Run with the response cache off
(``LEDGERMIRROR_RESPONSE_CACHE_ENTRIES=0``), as ``bench/run`` is.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import pstats
import random
import time
from collections import Counter

from bench._driver import Post
from bench._scenarios import SCENARIOS, SEPARATE_SERVICES, sample

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan, get
from ledgermirror.settings import Settings

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("parse (query string, parameter specs)", ("ledgermirror/api/querystring/",)),
    ("SQL composition", ("ledgermirror/db/sql.py",)),
    ("pool and driver (asyncpg: protocol, row decoding)", ("asyncpg/", "ledgermirror/db/pool.py")),
    ("encodings (ids, keys, timestamps)", ("ledgermirror/ledger/",)),
    ("JSON (orjson)", ("orjson",)),
    ("ETag (md5)", ("ledgermirror/etag.py", "_hashlib", "hashlib")),
    ("metrics (prometheus_client)", ("prometheus_client/", "ledgermirror/metrics/")),
    ("framework (Starlette: middleware, routing, Request/Response)", ("starlette/",)),
    ("handler pipeline (endpoint, list pipeline, auth, middleware of ours)", ("ledgermirror/api/",)),
    ("resources (plan and render)", ("ledgermirror/api/resources/",)),
    ("event loop (asyncio, uvloop)", ("asyncio/", "uvloop", "<built-in method _asyncio", "selectors")),
)
"""Layer -> markers in a profiled function's file (or built-in's) name; the longest matching marker wins."""


def layer_of(filename: str, function: str) -> str:
    where = filename if filename != "~" else function
    best, best_len = "other (Python runtime, standard library)", 0
    for name, markers in LAYERS:
        for marker in markers:
            if marker in where and len(marker) > best_len:
                best, best_len = name, len(marker)
    return best


async def _requests(app: object, paths: list[str]) -> None:
    for path in paths:
        reply = await get(app, path)  # type: ignore[arg-type]
        if reply.status >= 400:
            raise RuntimeError(f"GET {path}: {reply.status} {reply.body[:200]!r}")


def _paths(name: str, data: object, count: int, seed: int) -> list[str]:
    next_path = SCENARIOS[name](data, random.Random(seed))  # type: ignore[arg-type]
    paths: list[str] = []
    previous: str | None = None
    for _ in range(count):
        request = next_path(previous)
        if isinstance(request, Post):
            raise SystemExit(f"{name}: POST scenarios are not profiled in process")
        paths.append(request)
        previous = None  # deep scenarios restart from the first page; links are not followed in process
    return paths


async def profile(args: argparse.Namespace) -> None:
    settings = Settings.from_env()
    dsn = args.db_url or settings.api_db_url or settings.db_url
    if not dsn:
        raise SystemExit("give --db-url (or set LEDGERMIRROR_DB_URL)")
    data = await sample(args.url)
    app = create_app(settings, dsn)
    names = args.scenario or [name for name in SCENARIOS if name not in SEPARATE_SERVICES]
    async with Lifespan(app):
        for name in names:
            paths = _paths(name, data, args.requests, args.seed)
            await _requests(app, paths[: max(len(paths) // 10, 10)])  # warm: statement caches, pool
            started = time.thread_time()
            await _requests(app, paths)
            plain_us = (time.thread_time() - started) / len(paths) * 1e6
            profiler = cProfile.Profile(time.thread_time)
            profiler.enable()
            await _requests(app, paths)
            profiler.disable()
            by_layer: Counter[str] = Counter()
            stats = pstats.Stats(profiler).stats  # type: ignore[attr-defined]
            for (filename, _line, function), (_cc, _nc, own, _cum, _callers) in stats.items():
                by_layer[layer_of(filename, function)] += own
            total = sum(by_layer.values()) or 1.0
            calls = sum(entry[1] for entry in stats.values()) / len(paths)
            print(f"\n{name}: {plain_us:.0f} µs of application CPU per request, {calls:.0f} Python calls")
            print("| layer | share | µs/request |\n|---|---|---|")
            for layer, own in by_layer.most_common():
                print(f"| {layer} | {own / total:.0%} | {own / total * plain_us:.0f} |")
            if args.functions:
                top = sorted(stats.items(), key=lambda item: -item[1][2])[: args.functions]
                for (filename, line, function), (_cc, ncalls, own, _cum, _callers) in top:
                    where = filename.rsplit("site-packages/", 1)[-1].rsplit("/src/", 1)[-1]
                    print(f"  {own / total:5.1%} {ncalls / len(paths):6.1f}/req  {function} ({where}:{line})")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/profile", description=__doc__.split("\n\n")[0])
    p.add_argument("--url", default="http://127.0.0.1:5611", help="a server on the same database, for ids")
    p.add_argument("--db-url", help="the API's database URL (default: LEDGERMIRROR_API_DB_URL / _DB_URL)")
    p.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    p.add_argument("--requests", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--functions", type=int, default=0, help="also list the N functions with most own time")
    args = p.parse_args(argv)
    try:
        import uvloop

        uvloop.run(profile(args))
    except ImportError:
        asyncio.run(profile(args))
    return 0
