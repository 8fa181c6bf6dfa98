"""``bench/apicpu``: the API's own CPU per request, per scenario, with no HTTP server and no load driver.

The app runs in this process on the loaded database and is called through ASGI directly (as the conformance
runner does), so the figure is parse + plan + query round trip + render + ETag/gzip, without uvicorn and
without the noise of a load driver sharing the cores. PostgreSQL's CPU is not counted (it runs in its own
processes). Each scenario's requests follow ``links.next`` as ``bench/run`` does; the best of ``--rounds``
rounds is reported, which is the least disturbed by other work on the machine.

To compare two versions of the code on one database, run it once per source tree::

    PYTHONPATH=/path/to/other/src .venv/bin/python bench/apicpu --data-dir ~/lm-bench

``--layers`` adds one profiled round per scenario and prints where the CPU goes, by layer (``_layers.py``);
``--functions N`` also lists the N functions with the most own time.

``--callgrind`` is for a run under ``valgrind --tool=callgrind --instr-atstart=no``: each scenario's first
measured round is counted (instructions executed, the same whatever else the machine runs) and dumped as its own
file named after the scenario (``callgrind_control``); ``grep -H '^desc: Trigger\\|^totals' callgrind.out.*.*``
gives each scenario's total, to divide by ``--requests``::

    valgrind --tool=callgrind --instr-atstart=no .venv/bin/python bench/apicpu --callgrind --rounds 1 \\
        --requests 200 --data-dir ~/lm-small --scenario crypto-allowances
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

from bench._explain import sample_from_api, send_in_process
from bench._layers import breakdown, profiled
from bench._scenarios import SCENARIOS, SEPARATE_SERVICES

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan
from ledgermirror.runtime import prepare
from ledgermirror.settings import Settings


async def _one_round(app: Any, name: str, requests: int, data: Any) -> float:
    """CPU seconds of this process for ``requests`` requests of scenario ``name``."""
    next_path = SCENARIOS[name](data, random.Random(7))
    previous: str | None = None
    started = time.process_time()
    for _ in range(requests):
        request = next_path(previous)
        _, reply = await send_in_process(app, request)
        if reply.status != 200:
            raise SystemExit(f"{name}: {request!r} answered {reply.status}")
        previous = json.loads(reply.body).get("links", {}).get("next")
    return time.process_time() - started


def _callgrind(*command: str) -> None:
    """Tell the callgrind this process runs under (``callgrind_control``, valgrind's own tool)."""
    subprocess.run(["callgrind_control", *command, str(os.getpid())], capture_output=True, check=False)


async def run(
    api_url: str,
    *,
    scenarios: list[str],
    requests: int,
    rounds: int,
    layers: bool = False,
    functions: int = 0,
    callgrind: bool = False,
) -> dict[str, float]:
    app = create_app(Settings(response_cache_entries=0), api_url)
    results: dict[str, float] = {}
    async with Lifespan(app):
        data = await sample_from_api(app)
        for name in scenarios:
            await _one_round(app, name, max(requests // 10, 1), data)  # warm-up: caches, prepared statements
            if callgrind:
                _callgrind("-z")
                _callgrind("-i", "on")
            times = [await _one_round(app, name, requests, data)]
            if callgrind:
                _callgrind("-i", "off")
                _callgrind("-d", name)
            times += [await _one_round(app, name, requests, data) for _ in range(rounds - 1)]
            best = min(times)
            results[name] = best / requests * 1000
            print(f"{name:<32} {results[name]:.3f} ms CPU/request", flush=True)
            if layers or functions:
                stats = await profiled(functools.partial(_one_round, app, name, requests, data), time.process_time)
                print(breakdown(stats, requests, results[name], functions), flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/apicpu", description=__doc__.split("\n\n")[0])
    p.add_argument("--data-dir", help="the embedded database folder bench/generate filled (default: settings)")
    p.add_argument("--scenario", action="append", help="scenario (repeatable; default: all but separate services)")
    p.add_argument("--requests", type=int, default=1000, help="requests per round")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--json", help="also write the results as JSON")
    p.add_argument("--layers", action="store_true", help="also print where the CPU goes, by layer")
    p.add_argument("--functions", type=int, default=0, help="with --layers: the N functions with most own time")
    p.add_argument(
        "--callgrind",
        action="store_true",
        help="under valgrind --tool=callgrind --instr-atstart=no: count each scenario's first measured round",
    )
    args = p.parse_args(argv)
    scenarios = args.scenario or [name for name in SCENARIOS if name not in SEPARATE_SERVICES]
    unknown = sorted(set(scenarios) - set(SCENARIOS))
    if unknown:
        p.error(f"unknown scenario: {', '.join(unknown)}")
    prepared = prepare(Settings.from_env(), data_dir=None if args.data_dir is None else Path(args.data_dir))
    try:
        work = run(
            prepared.api_url,
            scenarios=scenarios,
            requests=args.requests,
            rounds=args.rounds,
            layers=args.layers,
            functions=args.functions,
            callgrind=args.callgrind,
        )
        results = asyncio.run(work)
    finally:
        prepared.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0
