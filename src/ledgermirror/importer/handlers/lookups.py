"""Accounts given by alias and contracts given by EVM address (the reference's ``EntityIdService.lookup``).

An ``AccountID`` may name an account by its alias (a serialized key, or a 20-byte EVM address) and a
``ContractID`` a contract by its EVM address (a create2 address, or a lazily created account's). The
reference resolves them where a handler needs the entity: a CryptoDelete obtainer (not the account a
CryptoUpdate or CryptoDelete names: an alias there updates nothing), allowance owners, airdrop senders and
receivers (a claim or cancel whose party does not resolve is skipped), TokenReject, node accounts, auto-renew
accounts of topics, tokens and contracts, ContractCall/Update/Delete and a contract obtainer, hook contracts,
function results and their created contracts. It resolves them from what it has seen: entities created
earlier in the stream (``entity.alias``, ``entity.evm_address``) and those created in the same file (a
CryptoCreate's receipt account and record alias, a ContractCreate's ``evm_address``). A long-zero address
(twelve zero bytes, then the num) needs no lookup. What is not found stays 0.0.0, as in the reference (a
recoverable error there).

:class:`~.aliases.Aliases` is the batch's table; handlers stay free of the database:
:func:`rows_of_file_with_lookups` reads the keys a file needs from ``entity`` (``db.aliases``) before its rows
are built.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import asyncpg

from ledgermirror.db import aliases as stored_aliases
from ledgermirror.importer.handlers.aliases import long_zero
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.file_rows import items_of_file, rows_of_items
from ledgermirror.importer.handlers.item import Item
from ledgermirror.importer.handlers.synthetic_logs import address_lookups, complete_addresses

if TYPE_CHECKING:
    from ledgermirror.importer.handlers.context import FileState
    from ledgermirror.importer.record_file import RecordFile
    from ledgermirror.importer.sidecar_file import SidecarFile

LOOKUP_BODIES = frozenset(
    {
        "cryptoUpdateAccount",
        "cryptoDelete",
        "cryptoApproveAllowance",
        "cryptoCreateAccount",
        "contractCall",
        "contractUpdateInstance",
        "contractDeleteInstance",
        "contractCreateInstance",
        "ethereumTransaction",
        "systemDelete",
        "systemUndelete",
        "tokenAirdrop",
        "tokenClaimAirdrop",
        "tokenCancelAirdrop",
        "tokenReject",
        "nodeCreate",
        "nodeUpdate",
        "hook_store",
        "consensusCreateTopic",
        "consensusUpdateTopic",
        "tokenCreation",
        "tokenUpdate",
    }
)
"""Bodies whose ids the handlers look up (the others never name an entity by alias where it matters)."""


def _keys(message: Any) -> Iterator[bytes]:
    """The aliases and EVM addresses inside a message (every nesting level, set fields only)."""
    for descriptor, value in message.ListFields():
        if descriptor.message_type is None:
            continue
        name = descriptor.message_type.name
        values = value if descriptor.is_repeated else (value,)
        for nested in values:
            if name == "AccountID" and nested.WhichOneof("account") == "alias":
                yield bytes(nested.alias)
            elif name == "ContractID" and nested.WhichOneof("contract") == "evm_address":
                yield bytes(nested.evm_address)
            elif not descriptor.message_type.GetOptions().map_entry:
                yield from _keys(nested)


def wanted(items: Iterable[Item]) -> set[bytes]:
    """The keys the handlers of ``items`` will look up (long-zero addresses left out)."""
    found: set[bytes] = set()
    for item in items:
        if item.body_name in LOOKUP_BODIES:
            found.update(key for key in _keys(getattr(item.body, item.body_name)) if long_zero(key) is None)
        name = item.record.WhichOneof("body")  # contractCallResult or contractCreateResult, or neither
        if name is not None and (address := getattr(item.record, name).contractID.evm_address):
            found.add(bytes(address))
    return found


class LookupReads(Protocol):
    """The two reads of row building (``db.aliases``). The import driver's overlapped build answers them from
    the committed database only where the batch being written cannot change the answer
    (``importer/overlap.py``)."""

    async def entity_ids(self, keys: Sequence[bytes]) -> dict[bytes, int]: ...

    async def evm_addresses(self, entity_ids: Sequence[int]) -> dict[int, bytes]: ...

    def deferred(self, entity_ids: Sequence[int], completion: Callable[[], Awaitable[None]]) -> bool:
        """Whether :meth:`evm_addresses` of ``entity_ids`` would wait for a write in flight; then
        ``completion`` is run once it committed, before the batch is written."""


class DatabaseReads:
    """:class:`LookupReads` on one connection, as it stands (inside the import's open transaction)."""

    def __init__(self, conn: asyncpg.Connection) -> None:
        self.conn = conn

    async def entity_ids(self, keys: Sequence[bytes]) -> dict[bytes, int]:
        return await stored_aliases.entity_ids(self.conn, keys)

    async def evm_addresses(self, entity_ids: Sequence[int]) -> dict[int, bytes]:
        return await stored_aliases.evm_addresses(self.conn, entity_ids)

    def deferred(self, entity_ids: Sequence[int], completion: Callable[[], Awaitable[None]]) -> bool:
        return False


def _reads_of(reads: LookupReads | asyncpg.Connection) -> LookupReads:
    """``reads``, or a connection's reads as it stands."""
    return DatabaseReads(reads) if isinstance(reads, asyncpg.Connection) else reads


async def rows_of_file_with_lookups(
    reads: LookupReads | asyncpg.Connection,
    record_file: RecordFile,
    batch: Batch,
    sidecars: Sequence[SidecarFile] = (),
) -> None:
    """``rows_of_file``, with the aliases and EVM addresses its items name read from ``entity`` first (those
    the batch already knows from its own creates are not read); at the end of the file its synthetic
    ``Transfer`` logs get their parties' EVM addresses (``synthetic_logs.complete_addresses``) unless the batch
    is told not to (``Batch.synthetic_log_addresses``), or are held for :func:`complete_held_addresses` when the
    batch holds them (``Batch.hold_addresses``: the import's batches)."""
    reads = _reads_of(reads)
    items = items_of_file(record_file, sidecars)
    missing = [key for key in wanted(items) if key not in batch.aliases.known]
    if missing:
        for key, entity_id in (await reads.entity_ids(missing)).items():
            batch.aliases.learn(key, entity_id)
    file = rows_of_items(record_file, items, batch, sidecars)
    if batch.synthetic_log_addresses and file.synthetic_transfers:
        batch.held_addresses.append(_held(file, batch))
        if not batch.hold_addresses:
            await complete_held_addresses(reads, batch)


@dataclass(slots=True)
class HeldAddresses:
    """A file's synthetic ``Transfer`` logs waiting for their parties' EVM addresses (``Batch.held_addresses``)."""

    file: FileState
    entity_ids: set[int]
    """The ids whose addresses the logs need (``synthetic_logs.address_lookups``)."""
    given: dict[int, bytes]
    """The address the batch gave each of them at the end of the file (b"": none): later files may give one."""


def _held(file: FileState, batch: Batch) -> HeldAddresses:
    entity_ids = address_lookups(file)
    given: dict[int, bytes] = {}
    for entity_id in entity_ids:
        held = batch.latest("entity", entity_id)
        found = held.get("evm_address") if held is not None else None
        given[entity_id] = bytes(found) if found else b""
    return HeldAddresses(file, entity_ids, given)


async def complete_held_addresses(reads: LookupReads | asyncpg.Connection, batch: Batch) -> None:
    """Complete the synthetic logs of the batch's held files (``synthetic_logs.complete_addresses``) with one
    read of the addresses they all need: each file gets the database's address, else the one the batch gave
    the entity at the end of that file, as if it had read them then (the database does not change while a
    gathering reads it, but for the write in flight, whose entities ``reads`` puts off until it committed)."""
    held, batch.held_addresses = batch.held_addresses, []
    if not held:
        return
    reads = _reads_of(reads)
    entity_ids = sorted(set().union(*(file.entity_ids for file in held)))

    async def complete() -> None:
        stored = await reads.evm_addresses(entity_ids)
        for file in held:
            given = file.given
            answers = {entity_id: stored.get(entity_id) or given[entity_id] for entity_id in file.entity_ids}
            complete_addresses(file.file, batch, answers)

    if not reads.deferred(entity_ids, complete):
        await complete()
