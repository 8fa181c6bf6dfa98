"""A small closed-loop HTTP/1.1 load driver on asyncio: N keep-alive connections, each sending its next request
as soon as the previous answer is read, for a fixed time. Only loopback addresses are accepted.
"""

from __future__ import annotations

import asyncio
import ipaddress
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import orjson


@dataclass(frozen=True, slots=True)
class Post:
    path: str
    body: bytes
    content_type: str


NextPath = Callable[[str | None], "str | Post"]
"""Given the previous answer's ``links.next`` (or None), the next request: a path to GET, or a POST."""


class NotLoopback(ValueError):
    pass


@dataclass(slots=True)
class Stats:
    latencies: list[float] = field(default_factory=list)
    errors: int = 0
    statuses: dict[int, int] = field(default_factory=dict)
    timeline: list[tuple[float, float, int, bytes]] | None = None
    """When a list: each answer's end (``time.monotonic``), latency, status and, for a 5xx, its body's start
    (which failure it was); ``bench/coldstart`` reads the run in windows."""

    def percentile(self, fraction: float) -> float:
        if not self.latencies:
            return float("nan")
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def loopback_target(base_url: str) -> tuple[str, int]:
    parts = urlsplit(base_url)
    host = parts.hostname or ""
    address = ipaddress.ip_address(socket.gethostbyname(host))
    if not address.is_loopback:
        raise NotLoopback(f"{base_url}: benchmarks only send traffic to loopback addresses")
    return host, parts.port or 80


async def _read_response(reader: asyncio.StreamReader) -> tuple[int, bytes]:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    status = int(lines[0].split(b" ", 2)[1])
    length = 0
    for line in lines[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    body = await reader.readexactly(length) if length else b""
    return status, body


def _next_link(body: bytes) -> str | None:
    try:
        parsed = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    links = parsed.get("links") if isinstance(parsed, dict) else None
    return links.get("next") if isinstance(links, dict) else None


async def _connection(host: str, port: int, next_path: NextPath, stop_at: float, stats: Stats) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    previous_next: str | None = None
    try:
        while time.monotonic() < stop_at:
            request = _encode(next_path(previous_next), host)
            started = time.perf_counter()
            writer.write(request)
            status, body = await _read_response(reader)
            latency = time.perf_counter() - started
            stats.latencies.append(latency)
            stats.statuses[status] = stats.statuses.get(status, 0) + 1
            if stats.timeline is not None:
                stats.timeline.append((time.monotonic(), latency, status, body[:120] if status >= 500 else b""))
            if status >= 500:
                stats.errors += 1
            previous_next = _next_link(body) if status == 200 else None
    finally:
        writer.close()


def _encode(request: str | Post, host: str) -> bytes:
    if isinstance(request, str):
        return f"GET {request} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: identity\r\n\r\n".encode()
    head = (
        f"POST {request.path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: identity\r\n"
        f"Content-Type: {request.content_type}\r\nContent-Length: {len(request.body)}\r\n\r\n"
    )
    return head.encode() + request.body


async def drive(
    base_url: str, next_path: NextPath, *, seconds: float, connections: int, timeline: bool = False
) -> Stats:
    host, port = loopback_target(base_url)
    stats = Stats(timeline=[] if timeline else None)
    stop_at = time.monotonic() + seconds
    await asyncio.gather(*(_connection(host, port, next_path, stop_at, stats) for _ in range(connections)))
    return stats


async def get_json(base_url: str, path: str) -> object:
    """One request, for sampling ids before a run."""
    host, port = loopback_target(base_url)
    reader, writer = await asyncio.open_connection(host, port)
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nAccept-Encoding: identity\r\n\r\n".encode())
        status, body = await _read_response(reader)
    finally:
        writer.close()
    if status != 200:
        raise RuntimeError(f"GET {path}: {status} {body[:200]!r}")
    return orjson.loads(body)
