"""``bench/run``: drive named scenarios against a base URL (and optionally a second one) and report."""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from dataclasses import asdict, dataclass
from urllib.parse import urlsplit

from bench._driver import drive
from bench._scenarios import SCENARIOS, SEPARATE_SERVICES, Sample, sample

from bench import _procstat


@dataclass(frozen=True, slots=True)
class Result:
    server: str
    scenario: str
    requests: int
    seconds: float
    errors: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    mean_ms: float
    connections: int
    api_cpu_ms_per_request: float
    pg_cpu_ms_per_request: float
    api_rss_mb_start: float
    api_rss_mb_end: float
    connections_per_worker: tuple[int, ...] = ()
    """How the server's connections were split between its processes, sampled during the run (most first): with
    several workers, each has its own line of requests, and an uneven split moves throughput and the tail."""

    @property
    def rps(self) -> float:
        return self.requests / self.seconds

    @property
    def little_ms(self) -> float:
        """The mean latency Little's law gives for this many connections at this throughput (a closed loop:
        every connection always has one request out)."""
        return self.connections / self.rps * 1000 if self.rps else float("nan")

    @property
    def total_cpu_ms(self) -> float:
        return self.api_cpu_ms_per_request + self.pg_cpu_ms_per_request


async def measure(
    base_url: str,
    name: str,
    data: Sample,
    *,
    seconds: float,
    connections: int,
    seed: int,
    api_pids: list[int],
    pg_data: str | None = None,
) -> Result:
    builder = SCENARIOS[name]
    await drive(base_url, builder(data, random.Random(seed)), seconds=min(2.0, seconds), connections=connections)
    pg_pids = _procstat.postmaster_pids(pg_data)
    api_before, pg_before = _procstat.usage(api_pids), _procstat.usage(pg_pids)
    split = asyncio.create_task(_split_during(api_pids, urlsplit(base_url).port or 80, seconds))
    stats = await drive(base_url, builder(data, random.Random(seed + 1)), seconds=seconds, connections=connections)
    api_after, pg_after = _procstat.usage(api_pids), _procstat.usage(pg_pids)
    count = max(1, len(stats.latencies))
    return Result(
        server=base_url,
        scenario=name,
        requests=len(stats.latencies),
        seconds=seconds,
        errors=stats.errors + sum(n for status, n in stats.statuses.items() if status >= 400),
        p50_ms=stats.percentile(0.50) * 1000,
        p90_ms=stats.percentile(0.90) * 1000,
        p99_ms=stats.percentile(0.99) * 1000,
        p999_ms=stats.percentile(0.999) * 1000,
        mean_ms=sum(stats.latencies) / count * 1000,
        connections=connections,
        api_cpu_ms_per_request=(api_after.cpu_seconds - api_before.cpu_seconds) * 1000 / count,
        pg_cpu_ms_per_request=(pg_after.cpu_seconds - pg_before.cpu_seconds) * 1000 / count,
        api_rss_mb_start=max(api_before.rss_bytes, default=0) / 2**20,
        api_rss_mb_end=max(api_after.rss_bytes, default=0) / 2**20,
        connections_per_worker=await split,
    )


async def _split_during(api_pids: list[int], port: int, seconds: float) -> tuple[int, ...]:
    """The connections' split between the server's processes, a little into the run (read off the loop)."""
    await asyncio.sleep(min(1.0, seconds / 2))
    return tuple(await asyncio.to_thread(_procstat.connections_by_process, api_pids, port))


def table(results: list[Result]) -> str:
    lines = [
        "| server | scenario | connections | req/s | mean ms (Little: C/X) | p50 ms | p90 ms | p99 ms | p99.9 ms "
        "| errors | API CPU ms/req | PG CPU ms/req | total CPU ms/req | max worker RSS MB (start→end) "
        "| connections per worker |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r.server} | {r.scenario} | {r.connections} | {r.rps:.0f} | {r.mean_ms:.1f} ({r.little_ms:.1f}) "
            f"| {r.p50_ms:.1f} | {r.p90_ms:.1f} | {r.p99_ms:.1f} | {r.p999_ms:.1f} "
            f"| {r.errors} | {r.api_cpu_ms_per_request:.3f} | {r.pg_cpu_ms_per_request:.3f} "
            f"| {r.total_cpu_ms:.3f} | {r.api_rss_mb_start:.0f}→{r.api_rss_mb_end:.0f} "
            f"| {'/'.join(map(str, r.connections_per_worker)) or '?'} |"
        )
    return "\n".join(lines)


def ratios(first: list[Result], second: list[Result]) -> str:
    lines = [
        "| scenario | connections | req/s ratio | p99 ratio | total CPU/req ratio |",
        "|---|---|---|---|---|",
    ]
    for a, b in zip(first, second, strict=True):
        lines.append(
            f"| {a.scenario} | {a.connections} | {b.rps / a.rps:.2f} | {b.p99_ms / a.p99_ms:.2f} "
            f"| {b.total_cpu_ms / a.total_cpu_ms if a.total_cpu_ms else float('nan'):.2f} |"
        )
    return "\n".join(lines)


def _api_pids(base_url: str, given: list[int]) -> list[int]:
    if given:
        return given
    return _procstat.listening_pids(urlsplit(base_url).port or 80)


async def main_async(args: argparse.Namespace) -> int:
    names = args.scenario or [name for name in SCENARIOS if name not in SEPARATE_SERVICES]
    unknown = [name for name in names if name not in SCENARIOS]
    if unknown:
        print(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}", file=sys.stderr)
        return 2
    servers = [args.url] + ([args.compare] if args.compare else [])
    pids = {url: _api_pids(url, args.api_pid if url == args.url else args.compare_pid) for url in servers}
    data = await sample(args.url)
    results: dict[str, list[Result]] = {url: [] for url in servers}
    for name in names:
        for connections in args.connections or [64]:
            for url in servers:  # alternate servers scenario by scenario
                result = await measure(
                    url,
                    name,
                    data,
                    seconds=args.seconds,
                    connections=connections,
                    seed=args.seed,
                    api_pids=pids[url],
                    pg_data=args.pg_data,
                )
                results[url].append(result)
                print(
                    f"{name} ({connections} connections) on {url}: {result.rps:.0f} req/s, "
                    f"p99 {result.p99_ms:.1f} ms, {result.total_cpu_ms:.3f} CPU ms/req, {result.errors} errors",
                    file=sys.stderr,
                )
    everything = [r for url in servers for r in results[url]]
    print(table(everything))
    if args.compare:
        print()
        print(f"ratios ({args.compare} / {args.url}):")
        print(ratios(results[args.url], results[args.compare]))
    if args.json:
        with open(args.json, "w") as out:
            json.dump([asdict(r) | {"rps": r.rps, "little_ms": r.little_ms} for r in everything], out, indent=1)
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/run", description="Load a mirror API on 127.0.0.1 and report.")
    p.add_argument("--url", default="http://127.0.0.1:5551", help="base URL of the server under test")
    p.add_argument(
        "--scenario", action="append", help=f"scenario (repeatable; default all): {', '.join(SCENARIOS)}"
    )
    p.add_argument(
        "--seconds", type=float, default=20.0, help="measured seconds per scenario (after a 2 s warm-up)"
    )
    p.add_argument(
        "--connections",
        type=int,
        action="append",
        help="concurrent keep-alive connections (repeatable: each scenario at each count; default 64)",
    )
    p.add_argument("--compare", help="a second base URL, run in alternation; prints ratios second/first")
    p.add_argument(
        "--api-pid",
        type=int,
        action="append",
        default=[],
        help="API process id (default: the process listening on --url's port; children included)",
    )
    p.add_argument("--compare-pid", type=int, action="append", default=[], help="the same for --compare")
    p.add_argument(
        "--pg-data",
        help="count only the PostgreSQL whose data folder path contains this text "
        "(default: every PostgreSQL on the machine)",
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--json", help="also write the results as JSON")
    return p


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(main_async(parser().parse_args(argv)))
