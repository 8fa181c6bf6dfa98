"""Mainnet's errata, as the reference's ``ErrataMigration`` applies them, for a ledger that is mainnet's.

* **Missing transactions** (``errata = 'INSERT'``): 113 transactions reached consensus on mainnet but are in no
  record file (2019-09 insufficient-fee transfers and a contract call, 2022-07/08 and 2023-02 FAIL_INVALID
  transfers). Each is written with the file whose time span holds it (after the previous file's last
  consensus time, up to this file's; the first file of an import from its ``--start-date``, else its own
  start), through the same handlers as any item (no HAPI version, index 0, as the reference builds them), in
  the file's transaction; its ``transaction`` and ``crypto_transfer`` rows get ``errata = 'INSERT'``. One whose
  consensus time is an item of the file itself (a block node's amendment may carry it) is not added again.
* **Balance file time offsets**: the network's balance files listed in ``balance-offsets.txt`` reflect the
  transfers up to one nanosecond before their time (``time_offset = -1``), and those from 2022-07-21 to
  2022-10-21 53 ns after (``53``); :func:`balance_file_time_offset` gives a file's offset, and the rows of
  balance files already stored in a file's time span are set with it (never synthetic snapshots).

The spurious transfers of failed 2019 CryptoTransfers (``errata = 'DELETE'``) are marked by the crypto
transfer handler as each file is imported, on every network (``handlers/common.py``).

The ledger is mainnet's when ``network`` (``ledgermirror import --network``) says ``mainnet`` (the part before
a ``-``, any case), or, when it is not given, when the address book in force holds a node key of mainnet's
bootstrap address book. The data ship inside the package (``mainnet_errata/``, Apache-2.0, from the
reference).
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import hashlib
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Protocol

import asyncpg

from ledgermirror.db import errata as stored
from ledgermirror.importer.address_book import AddressBook
from ledgermirror.importer.block_verify import BlockLink
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch
from ledgermirror.importer.handlers.file_rows import rows_of_items
from ledgermirror.importer.handlers.item import item_of
from ledgermirror.importer.handlers.lookups import LookupReads, rows_of_file_with_lookups
from ledgermirror.importer.record_file import RecordFile, RecordItem, parse_items
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.importer.verify import ChainLink

MAINNET = "mainnet"
FIXED_TIME_OFFSET = 53
FIXED_OFFSET_FIRST = 1_658_420_100_626_004_000
"""2022-07-21T16:15:00.626004Z: the first balance file with the fixed offset."""
FIXED_OFFSET_LAST = 1_666_368_000_880_378_770
"""2022-10-21T16:00:00.880378770Z: the last one."""
LISTED_TIME_OFFSET = -1
MAX_TRANSACTION_LENGTH = 64 * 1024
_DATA = "mainnet_errata"
_LENGTH = struct.Struct(">i")


class ErrataError(StreamParseError):
    """A packaged errata file cannot be read."""


@dataclass(frozen=True, slots=True)
class MissingTransaction:
    name: str
    item: RecordItem

    @property
    def consensus_timestamp(self) -> int:
        return self.item.consensus_timestamp


def _data() -> resources.abc.Traversable:
    return resources.files("ledgermirror.importer").joinpath(_DATA)


@functools.cache
def missing_transactions() -> tuple[MissingTransaction, ...]:
    """The packaged missing transactions in consensus order (the reference reads them in file name order, which
    differs where a name has fewer fraction digits; the rows are the same)."""
    folder = _data().joinpath("missingtransactions")
    found = [read_missing_transaction(entry.name, entry.read_bytes()) for entry in folder.iterdir()]
    return tuple(sorted((m for m in found if m.name.endswith(".bin")), key=lambda m: m.consensus_timestamp))


def read_missing_transaction(name: str, data: bytes) -> MissingTransaction:
    """One ``.bin`` file: ``int32 length, TransactionRecord, int32 length, Transaction``, nothing after."""
    parts: list[bytes] = []
    position = 0
    for what in ("record", "transaction"):
        if position + _LENGTH.size > len(data):
            raise ErrataError(name, f"Error parsing errata file {name}: no {what} length")
        (length,) = _LENGTH.unpack_from(data, position)
        if not 1 <= length <= MAX_TRANSACTION_LENGTH:
            expected = f"Expected value between 1 and {MAX_TRANSACTION_LENGTH} but got {length}"
            raise ErrataError(name, f"Unable to read {what}: {expected}")
        position += _LENGTH.size
        if position + length > len(data):
            raise ErrataError(name, f"Error parsing errata file {name}: truncated {what}")
        parts.append(data[position : position + length])
        position += length
    if position != len(data):
        extra = len(data) - position
        raise ErrataError(name, f"Error parsing errata file {name}: {extra} bytes after the transaction")
    [item] = parse_items(name, [(parts[0], parts[1])])
    return MissingTransaction(name, item)


@functools.cache
def balance_offset_timestamps() -> frozenset[int]:
    """The balance files whose ``time_offset`` is -1 (``balance-offsets.txt``)."""
    text = _data().joinpath("balance-offsets.txt").read_text()
    return frozenset(int(line) for line in text.split() if line)


@functools.cache
def _sorted_offsets() -> tuple[int, ...]:
    return tuple(sorted(balance_offset_timestamps()))


def balance_file_time_offset(consensus_timestamp: int) -> int:
    """The ``time_offset`` of a mainnet balance file at that time (the reference's ``ErrataMigration.onEnd``)."""
    if FIXED_OFFSET_FIRST <= consensus_timestamp <= FIXED_OFFSET_LAST:
        return FIXED_TIME_OFFSET
    return LISTED_TIME_OFFSET if consensus_timestamp in balance_offset_timestamps() else 0


@functools.cache
def mainnet_key_fingerprints() -> frozenset[str]:
    text = _data().joinpath("address-book-keys.txt").read_text()
    return frozenset(line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#"))


def is_mainnet(book: AddressBook, network: str | None = None) -> bool:
    """``network`` when given (``mainnet``, ``mainnet-...``), else whether the book holds a mainnet node key."""
    if network:
        return network.split("-", 1)[0].lower() == MAINNET
    known = mainnet_key_fingerprints()
    return any(
        hashlib.sha256(bytes.fromhex(node.public_key_hex.removeprefix("0x"))).hexdigest() in known
        for node in book.nodes
    )


def balance_file_offset_on(book: AddressBook, network: str | None, consensus_timestamp: int) -> int:
    """The ``time_offset`` of a balance file at that time on this ledger: mainnet's errata, else 0."""
    return balance_file_time_offset(consensus_timestamp) if is_mainnet(book, network) else 0


def missing_between(after: int, until: int, skip: frozenset[int] = frozenset()) -> list[MissingTransaction]:
    """The missing transactions after ``after`` up to ``until`` (inclusive), except those at the ``skip``
    times."""
    return [
        missing
        for missing in missing_transactions()
        if after < missing.consensus_timestamp <= until and missing.consensus_timestamp not in skip
    ]


class Verified(Protocol):
    """A verified record file or block (``verify.VerifiedRecordFile``, ``block_verify.VerifiedBlock``)."""

    @property
    def record(self) -> RecordFile: ...

    @property
    def sidecars(self) -> Sequence[SidecarFile]: ...


class ErrataOptions(Protocol):
    """What the import's options say about errata (``pipeline.ImportOptions``)."""

    @property
    def network(self) -> str | None: ...

    @property
    def start(self) -> int | None: ...


async def rows_with_errata(  # noqa: PLR0917
    conn: asyncpg.Connection,
    verified: Verified,
    batch: Batch,
    previous: ChainLink | BlockLink | None,
    book: AddressBook,
    options: ErrataOptions,
    reads: LookupReads | None = None,
) -> None:
    """The rows of a verified file (``lookups.rows_of_file_with_lookups``, its reads through ``reads``, else on
    ``conn``), then its errata (:func:`add_errata`, which writes on ``conn``): the one call of the import
    drivers."""
    await rows_of_file_with_lookups(reads or conn, verified.record, batch, verified.sidecars)
    await add_errata(conn, batch, verified.record, previous, book, options)


async def add_errata(  # noqa: PLR0917
    conn: asyncpg.Connection,
    batch: Batch,
    record: RecordFile,
    previous: ChainLink | BlockLink | None,
    book: AddressBook,
    options: ErrataOptions,
) -> int:
    """On mainnet, the errata of ``record``'s time span into ``batch`` (after the file's own rows): the missing
    transactions, and the offsets of the balance files stored in that span. ``previous`` is what the file
    was checked against (the last file or block). Returns the transactions added."""
    if not is_mainnet(book, options.network):
        return 0
    if isinstance(previous, BlockLink):
        previous = previous.record
    if previous is not None:
        after = previous.consensus_end
    else:
        after = (options.start if options.start is not None else record.consensus_start) - 1
    until = record.consensus_end
    listed = _sorted_offsets()
    offsets = listed[bisect.bisect_right(listed, after) : bisect.bisect_right(listed, until)]
    first, last = max(FIXED_OFFSET_FIRST, after + 1), min(FIXED_OFFSET_LAST, until)
    if offsets or first <= last:
        await stored.set_balance_file_offsets(conn, offsets, FIXED_TIME_OFFSET, first, last)
    missing = missing_between(after, until, frozenset(item.consensus_timestamp for item in record.items))
    if not missing:
        return 0
    inserted = {entry.consensus_timestamp for entry in missing}
    errata_file = dataclasses.replace(
        record, hapi_version=None, items=tuple(entry.item for entry in missing), sidecars=()
    )
    items = [item_of(entry.item, 0, hapi_version=None) for entry in missing]
    rows_of_items(errata_file, items, batch)
    for segment in batch.segments:
        for table in ("transaction", "crypto_transfer"):  # values in the model's order (batch.RECORD_COLUMNS)
            columns = RECORD_COLUMNS[table]
            at, errata = columns.index("consensus_timestamp"), columns.index("errata")
            rows = segment.inserts.get(table, [])
            for position, values in enumerate(rows):
                if values[at] in inserted:
                    rows[position] = (*values[:errata], "INSERT", *values[errata + 1 :])
    return len(missing)
