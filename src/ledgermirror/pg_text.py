"""What PostgreSQL ``text`` can hold: every layer that passes client text to a statement checks it here first.

A top-level module, not part of ``db/``: the query-string language (``api/querystring``), the path segments of
``api/resources`` and the status service's fields read it, and ``api/querystring`` imports nothing from ``db``
but ``Op`` and ``Order``."""

from __future__ import annotations


def storable(value: str) -> bool:
    """False for text PostgreSQL refuses: a NUL character (0x00 is never valid in ``text``) or a lone surrogate
    (not encodable as UTF-8, the database encoding). Such a value reaching a statement would be a 500, not the
    client's 400."""
    if "\x00" in value:
        return False
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
