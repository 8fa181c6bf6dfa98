"""Per-user limits: HTTP Basic credentials checked against the configured users (``ledgermirror/users.py``),
before routing, as the reference's ``authHandler`` does.

No ``Authorization`` header, or one that is not well-formed Basic credentials: the request is anonymous and
keeps the public limits. Credentials that match no user (name and password): ``401`` with our error body
``Invalid credentials``. A matching user with a ``limit``: that number replaces the configured maximum
``limit`` for the request (:func:`user_limit`; ``api/endpoint.py`` applies it and keys the response cache by
it). A check's outcome is cached by the credentials' SHA-256 for a few minutes, so PBKDF2 runs once per user
and period, not per request.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import re

from starlette.requests import Request
from starlette.types import ASGIApp, Receive, Scope, Send

from ledgermirror.api.context import AppContext
from ledgermirror.api.errors import Unauthorized
from ledgermirror.api.responses import error_response

USER_LIMIT = "ledgermirror.user_limit"
"""The scope key holding an authenticated user's maximum ``limit``."""
_BASIC = re.compile(r" *[Bb][Aa][Ss][Ii][Cc] +([A-Za-z0-9._~+/-]+=*) *")


def credentials_of(header: str | None) -> tuple[str, str] | None:
    """``(username, password)`` from an ``Authorization: Basic`` header, or None when there are none."""
    if header is None:
        return None
    match = _BASIC.fullmatch(header)
    if match is None:
        return None
    try:
        decoded = base64.b64decode(match.group(1) + "=" * (-len(match.group(1)) % 4)).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None
    name, colon, password = decoded.partition(":")
    return (name, password) if colon else None


def check(ctx: AppContext, name: str, password: str) -> tuple[bool, int | None]:
    """Whether the credentials match a configured user, and that user's limit."""
    key = hashlib.sha256(f"{name}\x00{password}".encode("utf-8", "surrogatepass")).hexdigest()
    cached = ctx.credentials.get(key)
    if cached is not None:
        return cached
    user = ctx.users.get(name)
    outcome = (True, user.limit) if user is not None and user.verify(password) else (False, None)
    ctx.credentials.put(key, outcome)
    return outcome


def user_limit(request: Request) -> int | None:
    limit = request.scope.get(USER_LIMIT)
    return limit if isinstance(limit, int) else None


def _authorization(scope: Scope) -> str | None:
    """The first ``Authorization`` header, as Starlette's ``Headers.get`` reads it (without building one)."""
    for name, value in scope["headers"]:
        if name == b"authorization":
            text: str = value.decode("latin-1")
            return text
    return None


class BasicAuth:
    """ASGI middleware: anonymous, an authenticated user (their limit in the scope), or ``401``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            found = credentials_of(_authorization(scope))
            if found is not None:
                ctx: AppContext = scope["app"].state.ctx
                matched, limit = check(ctx, *found)
                if not matched:
                    await error_response(Unauthorized())(scope, receive, send)
                    return
                if limit is not None:
                    scope = dict(scope)
                    scope[USER_LIMIT] = limit
        await self.app(scope, receive, send)
