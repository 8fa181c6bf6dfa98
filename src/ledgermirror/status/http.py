"""HTTP details of the public JSON: ETag/304, HEAD, CORS ``*``, a short cache, and the in-memory body cache."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from starlette.requests import Request
from starlette.responses import Response

from ledgermirror.clock import Clock

CORS = {
    "access-control-allow-origin": "*",
    "access-control-allow-methods": "GET, HEAD, OPTIONS",
    "access-control-allow-headers": "*",
}
JSON_TYPE = "application/json; charset=utf-8"


def etag_of(body: bytes) -> str:
    return '"' + hashlib.sha256(body).hexdigest()[:32] + '"'


def _matches(header: str | None, etag: str) -> bool:
    if not header:
        return False
    if header.strip() == "*":
        return True
    tags = [part.strip().removeprefix("W/") for part in header.split(",")]
    return etag in tags


def json_response(request: Request, body: bytes, max_age: int, media_type: str = JSON_TYPE) -> Response:
    """A public answer (JSON unless told): 304 on a matching ETag; HEAD gets the headers without the body."""
    etag = etag_of(body)
    headers = {**CORS, "etag": etag, "cache-control": f"public, max-age={max_age}", "vary": "Accept-Encoding"}
    if _matches(request.headers.get("if-none-match"), etag):
        return Response(status_code=304, headers=headers)
    if request.method == "HEAD":
        headers["content-length"] = str(len(body))
        return Response(b"", headers=headers, media_type=media_type)
    return Response(body, headers=headers, media_type=media_type)


def preflight() -> Response:
    return Response(status_code=204, headers={**CORS, "access-control-max-age": "86400"})


def not_found() -> Response:
    return Response(b"", status_code=404, headers=CORS)


@dataclass(slots=True)
class _Entry:
    body: bytes
    expires_ns: int


class BodyCache:
    """Rendered bodies per path, kept ``ttl`` seconds of the injected clock; cleared on every write."""

    def __init__(self, clock: Clock, ttl_seconds: int) -> None:
        self._clock = clock
        self._ttl_ns = ttl_seconds * 1_000_000_000
        self._entries: dict[str, _Entry] = {}

    def get(self, key: str) -> bytes | None:
        entry = self._entries.get(key)
        if entry is None or self._clock.now_ns() >= entry.expires_ns:
            return None
        return entry.body

    def put(self, key: str, body: bytes) -> None:
        if self._ttl_ns > 0:
            self._entries[key] = _Entry(body, self._clock.now_ns() + self._ttl_ns)

    def clear(self) -> None:
        self._entries.clear()
