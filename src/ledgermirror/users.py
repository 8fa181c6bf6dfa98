"""API users with their own row limit (the reference's ``hiero.mirror.rest.users``): a name, a password stored
as a PBKDF2-SHA256 hash, and an optional ``limit`` that replaces the configured maximum ``limit`` for their
requests, sent as HTTP Basic credentials.

Users come from the settings (``LEDGERMIRROR_USERS``, a JSON array, or ``LEDGERMIRROR_USERS_FILE``, a JSON
file holding one), never from the database the API reads. Each entry is
``{"username": ..., "password_hash": "pbkdf2_sha256$<iterations>$<salt b64>$<hash b64>", "limit": N}``;
``ledgermirror hash-password`` writes the hash. The checks are the reference's (a username and a password
string, a positive integer limit, unique usernames), with its messages.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ALGORITHM = "pbkdf2_sha256"
DEFAULT_ITERATIONS = 200_000
"""PBKDF2 rounds of a new hash; verified credentials are cached by the API, so this is paid once per user."""


class UsersError(ValueError):
    """The users configuration is invalid (the service does not start)."""


@dataclass(frozen=True, slots=True)
class ApiUser:
    username: str
    password_hash: str
    limit: int | None = None

    def verify(self, password: str) -> bool:
        return verify_password(password, self.password_hash)


def hash_password(password: str, *, iterations: int = DEFAULT_ITERATIONS, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    parts = (ALGORITHM, str(iterations), base64.b64encode(salt).decode(), base64.b64encode(digest).decode())
    return "$".join(parts)


def _split(stored: str) -> tuple[int, bytes, bytes]:
    parts = stored.split("$")
    if len(parts) != 4 or parts[0] != ALGORITHM or not parts[1].isdigit() or int(parts[1]) < 1:
        raise UsersError(f"a password hash must be {ALGORITHM}$<iterations>$<salt>$<hash>")
    try:
        return int(parts[1]), base64.b64decode(parts[2], validate=True), base64.b64decode(parts[3], validate=True)
    except ValueError:
        raise UsersError("a password hash has invalid base64") from None


def verify_password(password: str, stored: str) -> bool:
    """Constant-time comparison of the password's hash with the stored one."""
    iterations, salt, expected = _split(stored)
    actual = hashlib.pbkdf2_hmac("sha256", password.encode(), salt, iterations)
    return hmac.compare_digest(actual, expected)


def parse_users(value: Any) -> tuple[ApiUser, ...]:
    """Validate a decoded JSON users list."""
    if not isinstance(value, list):
        raise UsersError("users must be an array")
    users: list[ApiUser] = []
    for index, item in enumerate(value):
        if not isinstance(item, dict):
            raise UsersError(f"users[{index}] must be an object")
        name, stored, limit = item.get("username"), item.get("password_hash"), item.get("limit")
        if not isinstance(name, str) or not name:
            raise UsersError(f"users[{index}] must have a username string")
        if not isinstance(stored, str):
            raise UsersError(f"users[{index}] must have a password_hash string")
        _split(stored)
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0):
            raise UsersError(f"users[{index}].limit must be a positive integer")
        users.append(ApiUser(name, stored, limit))
    _check_unique(users)
    return tuple(users)


def _check_unique(users: Sequence[ApiUser]) -> None:
    seen: set[str] = set()
    duplicates: list[str] = []
    for user in users:
        if user.username in seen and user.username not in duplicates:
            duplicates.append(user.username)
        seen.add(user.username)
    if duplicates:
        raise UsersError(f"Duplicate usernames in users configuration: {', '.join(duplicates)}")


def users_from_text(text: str, source: str) -> tuple[ApiUser, ...]:
    try:
        decoded = json.loads(text)
    except ValueError as error:
        raise UsersError(f"{source} is not JSON: {error}") from None
    return parse_users(decoded)


def users_from_file(path: Path) -> tuple[ApiUser, ...]:
    try:
        text = path.read_text()
    except OSError as error:
        raise UsersError(f"cannot read the users file {path}: {error}") from None
    return users_from_text(text, str(path))
