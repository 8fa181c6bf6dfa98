"""Consensus timestamps: int nanoseconds in the database, ``seconds.nanos`` strings on the wire.

>>> format_ns(1234567890000000001)
'1234567890.000000001'
>>> parse_timestamp("1234567890.5")
1234567890500000000
"""

from __future__ import annotations

import re
from datetime import UTC, datetime

from ledgermirror.ledger.int64 import INT64_MAX

_TIMESTAMP = re.compile(r"^(\d{1,17})(?:\.(\d{1,9}))?$", re.ASCII)


class InvalidTimestamp(ValueError):
    """The text is not ``seconds[.nanos]``."""


def parse_timestamp(text: str) -> int:
    match = _TIMESTAMP.fullmatch(text)
    if match is None:
        raise InvalidTimestamp(text)
    seconds, fraction = match.groups()
    nanos = int(seconds) * 1_000_000_000 + int((fraction or "0").ljust(9, "0"))
    if nanos > INT64_MAX:
        raise InvalidTimestamp(text)
    return nanos


def format_ns(value: int | None) -> str | None:
    """``seconds.nanoseconds``, nine digits after the point (this runs for every timestamp rendered).

    >>> format_ns(1_700_000_000_000_000_001), format_ns(-1), format_ns(0)
    ('1700000000.000000001', '-0.000000001', '0.000000000')
    """
    if value is None:
        return None
    if value >= 0:
        return f"{value // 1_000_000_000}.{value % 1_000_000_000:09d}"
    seconds, nanos = divmod(-value, 1_000_000_000)
    return f"-{seconds}.{nanos:09d}"


def month_start(ns: int, *, months_back: int = 0) -> int:
    """The first nanosecond (UTC) of the month of ``ns``, or of the month that many months before it (may be
    before 1970).

    >>> format_ns(month_start(1_700_000_000_000_000_000, months_back=1))  # 2023-11-14 -> 2023-10-01
    '1696118400.000000000'
    """
    moment = datetime.fromtimestamp(ns // 1_000_000_000, tz=UTC)
    months = moment.year * 12 + moment.month - 1 - months_back
    first = datetime(months // 12, months % 12 + 1, 1, tzinfo=UTC)
    return int(first.timestamp()) * 1_000_000_000
