"""The statements of mainnet's errata (``importer/errata.py``): the time offsets of network balance files."""

from __future__ import annotations

from collections.abc import Sequence

import asyncpg

_OFFSET_LISTED = """
update account_balance_file set time_offset = -1
where consensus_timestamp = any($1::bigint[]) and time_offset <> -1 and not synthetic
"""

_OFFSET_RANGE = """
update account_balance_file set time_offset = $1
where consensus_timestamp between $2 and $3 and time_offset <> $1 and not synthetic
"""


async def set_balance_file_offsets(
    conn: asyncpg.Connection, listed: Sequence[int], offset: int, first: int, last: int
) -> int:
    """``time_offset`` -1 for the network balance files at the ``listed`` timestamps, then ``offset`` for those
    between ``first`` and ``last`` (inclusive); returns the rows changed."""
    changed = 0
    if listed:
        changed += int((await conn.execute(_OFFSET_LISTED, list(listed))).rsplit(" ", 1)[-1])
    if first <= last:
        changed += int((await conn.execute(_OFFSET_RANGE, offset, first, last)).rsplit(" ", 1)[-1])
    return changed
