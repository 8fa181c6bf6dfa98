"""Wire formats: timestamps with milliseconds and an offset, date-only start dates, 12-character ids."""

from __future__ import annotations

import datetime as dt
import hashlib
import secrets
from zoneinfo import ZoneInfo

ID_ALPHABET = "0123456789bcdfghjklmnpqrstvwxyz"
"""Digits and consonants, the alphabet observed in real Statuspage ids."""
ID_LENGTH = 12


def new_id() -> str:
    return "".join(secrets.choice(ID_ALPHABET) for _ in range(ID_LENGTH))


def derived_id(*parts: str) -> str:
    """A stable id computed from some text (for the synthetic updates of automatic transitions)."""
    digest = hashlib.sha256("\x00".join(parts).encode()).digest()
    return "".join(ID_ALPHABET[byte % len(ID_ALPHABET)] for byte in digest[:ID_LENGTH])


def is_id(text: str) -> bool:
    return len(text) == ID_LENGTH and all(char in ID_ALPHABET for char in text)


def timestamp(value: dt.datetime | None, zone: str = "Etc/UTC") -> str | None:
    """``2020-02-07T10:25:14.717Z`` in UTC, ``2019-02-21T08:31:24.239-06:00`` in another zone."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=dt.UTC)
    local = value.astimezone(ZoneInfo(zone))
    head = local.strftime("%Y-%m-%dT%H:%M:%S") + f".{local.microsecond // 1000:03d}"
    offset = local.utcoffset() or dt.timedelta(0)
    if offset == dt.timedelta(0) and zone in ("Etc/UTC", "UTC", "Etc/GMT", "GMT"):
        return head + "Z"
    minutes = int(offset.total_seconds()) // 60
    sign = "-" if minutes < 0 else "+"
    minutes = abs(minutes)
    return f"{head}{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def date(value: dt.date | None) -> str | None:
    return None if value is None else value.isoformat()


def from_ns(nanos: int) -> dt.datetime:
    """A clock reading (nanoseconds since the epoch) as an aware UTC datetime (microsecond precision)."""
    return dt.datetime.fromtimestamp(nanos // 1000 / 1_000_000, tz=dt.UTC)


def parse_timestamp(text: str) -> dt.datetime:
    """An ISO 8601 timestamp with an offset (``Z`` allowed); raises ValueError otherwise."""
    value = dt.datetime.fromisoformat(text.replace("Z", "+00:00").replace("z", "+00:00"))
    if value.tzinfo is None:
        raise ValueError(f"timestamp without an offset: {text!r}")
    return value
