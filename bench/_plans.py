"""``bench/plans``: each scenario's statements explained on two databases holding the same ledger (our layout and
the reference's), side by side: planning and execution time and shared buffers, for the custom plan (planned with
the values) and the generic plan (planned once for a prepared statement, as PostgreSQL does after five
executions when it is not dearer), so that a difference that comes from the layout shows where it is.

The API runs in this process on the first database; every statement a scenario's requests send is recorded,
then explained with ``EXPLAIN (ANALYZE, BUFFERS)`` on both. Each statement runs ``--repeat`` times per layout
and mode and the fastest run counts (the machine is shared).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
from dataclasses import dataclass, field
from typing import Any

import asyncpg
from bench._explain import RecordingDatabase, sample_from_api, send_in_process
from bench._scenarios import SCENARIOS, SEPARATE_SERVICES

from ledgermirror.api.app import create_app
from ledgermirror.conformance.inprocess import Lifespan
from ledgermirror.db.pool import session_settings
from ledgermirror.db.sql import Statement, template
from ledgermirror.settings import Settings

MODES = ("custom", "generic")
_MODE_SETTING = {"custom": "force_custom_plan", "generic": "force_generic_plan"}


@dataclass(slots=True)
class Cost:
    planning_ms: float = 0.0
    execution_ms: float = 0.0
    buffers: int = 0
    nodes: list[str] = field(default_factory=list)
    estimate: float = 0.0
    """The planner's total cost: above ``jit_above_cost`` (100,000 by default) a server with JIT compiles it."""

    def add(self, other: Cost) -> None:
        self.planning_ms += other.planning_ms
        self.execution_ms += other.execution_ms
        self.buffers += other.buffers
        self.estimate = max(self.estimate, other.estimate)


def node_summary(plan: dict[str, Any]) -> list[str]:
    """Scan nodes of a plan, with their relation or index, and how many partitions an Append kept."""
    found: list[str] = []
    kind = plan.get("Node Type", "")
    if "Scan" in kind:
        found.append(f"{kind}({plan.get('Index Name') or plan.get('Relation Name')})")
    if kind in ("Append", "Merge Append"):
        removed = plan.get("Subplans Removed", 0)
        found.append(f"{kind}[{len(plan.get('Plans', []))} kept, {removed} removed at run time]")
    for child in plan.get("Plans", []):
        found += node_summary(child)
    return found


async def _literals(conn: asyncpg.Connection, statement: Statement) -> list[str]:
    """The statement's values as SQL literals of its parameters' types (``EXECUTE`` under ``EXPLAIN`` takes no
    bound parameters), quoted by PostgreSQL itself."""
    prepared = await conn.prepare(statement.text)
    literals = []
    for parameter, value in zip(prepared.get_parameters(), statement.args, strict=True):
        named = template("select format_type({oid}::oid, null)", oid=parameter.oid)
        type_name = await conn.fetchval(named.text, *named.args)
        quoted = template(f"select quote_nullable({{value}}::{type_name}) || '::{type_name}'", value=value)
        literals.append(await conn.fetchval(quoted.text, *quoted.args))
    return literals


async def analyze(conn: asyncpg.Connection, statement: Statement, mode: str, repeat: int) -> Cost:
    """The statement as a server-side prepared statement, run by ``EXECUTE`` under ``plan_cache_mode``: the
    plan the API gets (``EXPLAIN`` of the statement's text with bound values would plan it with the values
    whatever the mode, so a generic plan's own mistakes, such as a ``LIMIT $n`` read as a tenth of the
    table, would not show)."""
    for name, value in session_settings(Settings()).items():  # the API's own session, then the mode asked for
        setting = template("select set_config({name}, {value}, false)", name=name, value=value)
        await conn.execute(setting.text, *setting.args)
    await conn.execute(f"set plan_cache_mode = {_MODE_SETTING[mode]}")
    with contextlib.suppress(asyncpg.InvalidSQLStatementNameError):
        await conn.execute("deallocate lm_plans_statement")
    await conn.execute("prepare lm_plans_statement as " + statement.text)
    literals = await _literals(conn, statement)
    execute = "execute lm_plans_statement" + (f"({', '.join(literals)})" if literals else "")
    best: Cost | None = None
    for _ in range(repeat):
        text = await conn.fetchval("explain (analyze, buffers, format json) " + execute)
        report = json.loads(text)[0]
        plan = report["Plan"]
        cost = Cost(
            report["Planning Time"],
            report["Execution Time"],
            plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0),
            node_summary(plan) + ([f"JIT({report['JIT']['Functions']} functions)"] if "JIT" in report else []),
            plan["Total Cost"],
        )
        if best is None or cost.planning_ms + cost.execution_ms < best.planning_ms + best.execution_ms:
            best = cost
    assert best is not None
    return best


async def run(
    api_url: str, urls: dict[str, str], *, scenarios: list[str], requests: int, repeat: int, out: Any
) -> dict[str, dict[str, dict[str, Cost]]]:
    """Totals by scenario, layout and mode; every statement's line printed to ``out``."""
    app = create_app(Settings(response_cache_entries=0), api_url)
    conns = {name: await asyncpg.connect(url) for name, url in urls.items()}
    totals: dict[str, dict[str, dict[str, Cost]]] = {}
    try:
        async with Lifespan(app):
            recorder = RecordingDatabase(app.state.ctx.database)
            app.state.ctx.db = recorder
            data = await sample_from_api(app)
            for name in scenarios:
                next_path = SCENARIOS[name](data, random.Random(7))
                previous: str | None = None
                totals[name] = {layout: {mode: Cost() for mode in MODES} for layout in urls}
                print(f"## {name}", file=out)
                for _ in range(requests):
                    request = next_path(previous)
                    recorder.statements.clear()
                    url, reply = await send_in_process(app, request)
                    body = json.loads(reply.body) if reply.body[:1] == b"{" else {}
                    previous = body.get("links", {}).get("next") if reply.status == 200 else None
                    print(f"{url}", file=out)
                    for statement in recorder.statements:
                        first_line = " ".join(statement.text.split())[:100]
                        print(f"  {first_line}", file=out)
                        for layout, conn in conns.items():
                            for mode in MODES:
                                cost = await analyze(conn, statement, mode, repeat)
                                totals[name][layout][mode].add(cost)
                                print(
                                    f"    {layout:<9} {mode:<7} plan {cost.planning_ms:7.3f} ms  "
                                    f"exec {cost.execution_ms:7.3f} ms  buffers {cost.buffers:5d}  "
                                    f"cost {cost.estimate:9.0f}  " + " ".join(cost.nodes),
                                    file=out,
                                )
    finally:
        for conn in conns.values():
            await conn.close()
    return totals


def summary(totals: dict[str, dict[str, dict[str, Cost]]], requests: int) -> str:
    layouts = list(next(iter(totals.values())))
    head = "| scenario | " + " | ".join(
        f"{layout} {mode} plan / exec ms / buffers" for layout in layouts for mode in MODES
    )
    lines = [head + " | highest cost |", "|---" * (2 + len(layouts) * len(MODES)) + "|"]
    for name, by_layout in totals.items():
        cells = [
            f"{c.planning_ms / requests:.3f} / {c.execution_ms / requests:.3f} / {c.buffers / requests:.0f}"
            for layout in layouts
            for c in (by_layout[layout][mode] for mode in MODES)
        ]
        highest = max(c.estimate for by_mode in by_layout.values() for c in by_mode.values())
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {highest:.0f} |")
    return (
        "\n".join(lines)
        + "\n(per request: the sums over its statements; highest cost: the dearest statement's estimate)"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="bench/plans", description=__doc__.split("\n\n")[0])
    p.add_argument("--ours", required=True, help="URL of the database in our layout (the API runs on it)")
    p.add_argument("--reference", required=True, help="URL of the same ledger in the reference's layout")
    p.add_argument("--scenario", action="append", help="scenario to explain (repeatable; default: all)")
    p.add_argument("--requests", type=int, default=4, help="requests per scenario")
    p.add_argument("--repeat", type=int, default=3, help="runs of each EXPLAIN ANALYZE (the fastest counts)")
    p.add_argument("--detail", help="write every statement's figures to this file (default: stderr)")
    args = p.parse_args(argv)
    scenarios = args.scenario or [name for name in SCENARIOS if name not in SEPARATE_SERVICES]
    unknown = sorted(set(scenarios) - SCENARIOS.keys())
    if unknown:
        p.error(f"unknown scenarios: {', '.join(unknown)}")
    out = open(args.detail, "w") if args.detail else sys.stderr  # noqa: SIM115
    try:
        totals = asyncio.run(
            run(
                args.ours,
                {"ours": args.ours, "reference": args.reference},
                scenarios=scenarios,
                requests=args.requests,
                repeat=args.repeat,
                out=out,
            )
        )
    finally:
        if out is not sys.stderr:
            out.close()
    print(summary(totals, args.requests))
    return 0
