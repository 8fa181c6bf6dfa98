"""Entity tags, shared by the API and the status service: one tag of a body, one ``If-None-Match`` rule."""

from __future__ import annotations

import hashlib


def etag_of(body: bytes) -> str:
    """A strong tag: the quoted first 128 bits of the body's BLAKE2b hash."""
    return '"' + hashlib.blake2b(body, digest_size=16).hexdigest() + '"'


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` names the tag: ``*``, or any listed tag, weak (``W/``) or not."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(candidate.strip().removeprefix("W/") == etag for candidate in header.split(","))
