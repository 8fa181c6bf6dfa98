"""Which block (record file) a contract result or log belongs to (``upstream-contracts.md`` §1.4), one query each:

* one timestamp (:func:`block_at`): the first record file whose ``consensus_end`` is at or after it;
* a page of timestamps (:func:`blocks_of`): the record files whose ``consensus_end`` lies in
  ``[min T, max T + 10 s]`` (the reference's longest record file close interval), each timestamp mapped to the
  file whose ``[consensus_start, consensus_end]`` contains it; a timestamp no file contains has no block.

A missing block renders as ``block_hash "0x"`` and ``block_number null`` (:data:`NO_BLOCK`).
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable
from dataclasses import dataclass

from ledgermirror.api.context import AppContext
from ledgermirror.db.sql import Column, Op, Order, Select

MAX_RECORD_FILE_CLOSE_INTERVAL_NS = 10_000_000_000
"""The reference's ``maxRecordFileCloseInterval``: how far past the page's last timestamp its block may end."""
_RECORD_FILES = "select consensus_start, consensus_end, hash, index, gas_used from record_file"
_CONSENSUS_END = Column("consensus_end")


@dataclass(frozen=True, slots=True)
class Block:
    """The block fields a contract result or log carries. ``hash`` is the record file's hex text (no ``0x``),
    ``number`` its index, ``gas_used`` NULL or -1 when the file does not say."""

    hash: str
    number: int | None
    gas_used: int | None

    @property
    def block_hash(self) -> str:
        """``0x`` + the hash; ``"0x"`` when there is no block."""
        return "0x" + self.hash

    @property
    def block_gas_used(self) -> int | None:
        """``record_file.gas_used`` unless NULL or -1."""
        return None if self.gas_used is None or self.gas_used == -1 else self.gas_used


NO_BLOCK = Block(hash="", number=None, gas_used=None)


def block_at_select(timestamp: int) -> Select:
    select = Select(_RECORD_FILES).compare(_CONSENSUS_END, Op.GTE, timestamp)
    return select.order_by([_CONSENSUS_END], Order.ASC).limit(1)


def blocks_select(lowest: int, highest: int) -> Select:
    select = Select(_RECORD_FILES).compare(_CONSENSUS_END, Op.GTE, lowest)
    select.compare(_CONSENSUS_END, Op.LTE, highest + MAX_RECORD_FILE_CLOSE_INTERVAL_NS)
    return select.order_by([_CONSENSUS_END], Order.ASC)


async def block_at(ctx: AppContext, timestamp: int) -> Block:
    """The block of one consensus timestamp (:data:`NO_BLOCK` when no record file ends at or after it)."""
    rows = await ctx.database.fetch(block_at_select(timestamp).build())
    if not rows:
        return NO_BLOCK
    row = rows[0]
    return Block(hash=str(row["hash"]), number=int(row["index"]), gas_used=row["gas_used"])


async def blocks_of(ctx: AppContext, timestamps: Iterable[int]) -> dict[int, Block]:
    """The block of each timestamp of a page; a timestamp no record file contains is absent from the map (use
    ``.get(t, NO_BLOCK)``)."""
    wanted = sorted(set(timestamps))
    if not wanted:
        return {}
    rows = await ctx.database.fetch(blocks_select(wanted[0], wanted[-1]).build())
    ends = [int(row["consensus_end"]) for row in rows]
    found: dict[int, Block] = {}
    for timestamp in wanted:
        position = bisect.bisect_left(ends, timestamp)  # the first file ending at or after the timestamp
        if position == len(rows):
            continue
        row = rows[position]
        if int(row["consensus_start"]) <= timestamp:
            found[timestamp] = Block(hash=str(row["hash"]), number=int(row["index"]), gas_used=row["gas_used"])
    return found
