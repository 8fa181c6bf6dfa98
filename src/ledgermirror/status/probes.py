"""Readiness probes of the services the page shows: the REST API's readiness URL (a plain HTTP ``GET``, ready on
a 2xx) and the gRPC API (a channel that gets ready). Each answers ``(ready, detail)`` within a few seconds."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import grpc

PROBE_SECONDS = 3.0


async def http_ready(url: str, timeout: float = PROBE_SECONDS) -> tuple[bool, str]:
    """``GET url`` (``http://`` only): ready when the status is 2xx."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False, f"not an http:// URL: {url}"
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    host = parts.hostname
    port = parts.port or 80
    try:
        async with asyncio.timeout(timeout):
            reader, writer = await asyncio.open_connection(host, port)
            try:
                authority = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
                request = f"GET {path} HTTP/1.1\r\nHost: {authority}\r\nConnection: close\r\n\r\n"
                writer.write(request.encode("ascii"))
                await writer.drain()
                line = await reader.readline()
            finally:
                writer.close()
    except (OSError, TimeoutError) as error:
        return False, f"{url}: {type(error).__name__}"
    fields = line.decode("latin-1").split()
    if len(fields) < 2 or not fields[1].isdigit():
        return False, f"{url}: not an HTTP answer"
    status = int(fields[1])
    return 200 <= status < 300, f"{url}: HTTP {status}"


async def grpc_ready(target: str, timeout: float = PROBE_SECONDS) -> tuple[bool, str]:
    """Ready when an insecure channel to ``target`` (``host:port``) gets ready within ``timeout``."""
    async with grpc.aio.insecure_channel(target) as channel:
        try:
            await asyncio.wait_for(channel.channel_ready(), timeout)
        except TimeoutError:
            return False, f"{target}: no connection within {timeout:g} s"
    return True, f"{target}: connected"
