"""Address books from files 0.0.101/0.0.102: reading a file's current bytes, saving a new book."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import asyncpg

from ledgermirror.db import write
from ledgermirror.ledger.transaction_codes import FILECREATE, FILEUPDATE

_CREATE_OR_UPDATE = (FILECREATE, FILEUPDATE)  # they restart a file's contents

_FILE_CONTENTS = """
select file_data from file_data
where entity_id = $1 and consensus_timestamp <= $2
  and consensus_timestamp >= coalesce((
    select max(consensus_timestamp) from file_data
    where entity_id = $1 and consensus_timestamp <= $2 and transaction_type = any($3::smallint[])
  ), 0)
order by consensus_timestamp
"""

_CLOSE_PREVIOUS = """
update address_book set end_consensus_timestamp = $2
where file_id = $1 and end_consensus_timestamp is null and start_consensus_timestamp <= $2
"""


async def file_contents(conn: asyncpg.Connection, file_id: int, consensus_timestamp: int) -> bytes:
    """The file's bytes as of ``consensus_timestamp``: its latest create/update plus every later append."""
    rows = await conn.fetch(_FILE_CONTENTS, file_id, consensus_timestamp, list(_CREATE_OR_UPDATE))
    return b"".join(bytes(row["file_data"] or b"") for row in rows)


async def save_book(
    conn: asyncpg.Connection,
    book: Mapping[str, Any],
    entries: Sequence[Mapping[str, Any]],
    endpoints: Sequence[Mapping[str, Any]],
) -> dict[str, int]:
    """Close the file's current book at the new one's start - 1, then add the new book with its rows."""
    start = book["start_consensus_timestamp"]
    await conn.execute(_CLOSE_PREVIOUS, book["file_id"], start - 1)
    counts = await write.copy_rows(conn, "address_book", [book])
    for name, rows in (("address_book_entry", entries), ("address_book_service_endpoint", endpoints)):
        if rows:
            counts.update(await write.copy_rows(conn, name, rows))
    return counts
