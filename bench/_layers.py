"""Where a request's CPU goes inside the application, by layer: a ``cProfile`` run (on a CPU clock) whose
functions' own times are summed by the layer their module belongs to (``bench/apicpu --layers``).

The profiler inflates Python time, so only the layers' shares are read from it; ``bench/apicpu`` applies them
to its plain (unprofiled) CPU per request. The HTTP server's share (uvicorn, httptools, uvloop, the socket
calls) is what ``bench/run`` measures as API CPU per request minus that plain figure.
"""

from __future__ import annotations

import cProfile
import pstats
from collections import Counter
from collections.abc import Awaitable, Callable

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("parse (query string, parameter specs)", ("ledgermirror/api/querystring/",)),
    ("SQL composition", ("ledgermirror/db/sql.py",)),
    ("pool and driver (asyncpg: protocol, row decoding)", ("asyncpg/", "ledgermirror/db/pool.py")),
    ("encodings (ids, keys, timestamps)", ("ledgermirror/ledger/",)),
    ("JSON (orjson)", ("orjson",)),
    ("ETag (md5)", ("ledgermirror/etag.py", "_hashlib", "hashlib")),
    ("metrics (prometheus_client)", ("prometheus_client/", "ledgermirror/metrics/")),
    ("framework (Starlette: middleware, routing, Request/Response)", ("starlette/",)),
    ("handler pipeline (endpoint, list pipeline, auth, admission)", ("ledgermirror/api/",)),
    ("resources (plan and render)", ("ledgermirror/api/resources/",)),
    ("event loop (asyncio, uvloop)", ("asyncio/", "uvloop", "<built-in method _asyncio", "selectors")),
)
"""Layer -> markers in a profiled function's file (or built-in's) name; the longest matching marker wins.
Built-ins and standard-library helpers called by the layers (``len``, ``dict.get``, ``str`` and ``bytes``
methods, ``base64``) fall under "other"."""

OTHER = "other (built-ins and standard library called by the layers)"


def layer_of(filename: str, function: str) -> str:
    where = filename if filename != "~" else function
    best, best_len = OTHER, 0
    for name, markers in LAYERS:
        for marker in markers:
            if marker in where and len(marker) > best_len:
                best, best_len = name, len(marker)
    return best


async def profiled(work: Callable[[], Awaitable[object]], clock: Callable[[], float]) -> pstats.Stats:
    profiler = cProfile.Profile(clock)
    profiler.enable()
    try:
        await work()
    finally:
        profiler.disable()
    return pstats.Stats(profiler)


def breakdown(stats: pstats.Stats, requests: int, plain_ms: float, functions: int = 0) -> str:
    """A markdown table of the layers' shares and milliseconds per request; then, optionally, the
    ``functions`` functions with the most own time."""
    table = stats.stats  # type: ignore[attr-defined]
    by_layer: Counter[str] = Counter()
    for (filename, _line, function), (_cc, _calls, own, _cumulative, _callers) in table.items():
        by_layer[layer_of(filename, function)] += own
    total = sum(by_layer.values()) or 1.0
    calls = sum(entry[1] for entry in table.values()) / requests
    lines = [f"{calls:.0f} Python calls per request", "| layer | share | µs/request |", "|---|---|---|"]
    for layer, own in by_layer.most_common():
        lines.append(f"| {layer} | {own / total:.0%} | {own / total * plain_ms * 1000:.0f} |")
    if functions:
        top = sorted(table.items(), key=lambda item: -item[1][2])[:functions]
        for (filename, line, function), (_cc, ncalls, own, _cumulative, _callers) in top:
            where = filename.rsplit("site-packages/", 1)[-1].rsplit("/src/", 1)[-1]
            lines.append(f"  {own / total:5.1%} {ncalls / requests:6.1f}/req  {function} ({where}:{line})")
    return "\n".join(lines)
