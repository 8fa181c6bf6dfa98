"""Starting an empty database from the network's own account balance file (``--balance-files``,
``LEDGERMIRROR_IMPORT_BALANCE_FILES``): the reference's balance downloader and parser, for the one file a mirror
that starts mid-stream needs.

Balance files sit beside the record streams, one folder per node: ``accountBalances/balance0.0.N/`` next to
``recordstreams/record0.0.N/``, or ``<network>/<shard>/<node>/balance/`` next to ``.../record/``; each
``<ts>_Balances.csv`` or ``<ts>_Balances.pb.gz`` has a ``..._sig`` signature file per node (v2 format: the
SHA-384 of the decompressed file, RSA-signed). As the reference's downloader does, a file is accepted when the
nodes' valid signatures agreeing on one hash hold a third of the stake (``verify.reach_consensus``, the address
book and node stakes in force) and the file's own hash is that hash; the balance files are not chained.

The newest balance file at or before the start (``--start-date``, else the source's first record file) is taken;
the import then starts at the record file holding its timestamp, and the file's balances are seeded after that
file's rows, plus its transfers after the balance timestamp (``handlers/balances.py``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Mapping, Sequence

from ledgermirror.importer.address_book import AddressBook
from ledgermirror.importer.balance_file import BalanceFile, file_hash_of, read_balance_file
from ledgermirror.importer.driver import Position
from ledgermirror.importer.errata import balance_file_offset_on
from ledgermirror.importer.errors import FileHashMismatch, ImporterError, StreamFileError, StreamParseError
from ledgermirror.importer.handlers.balances import snapshot_of_file
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.signature_file import SignatureFile, read_signature_file
from ledgermirror.importer.sources import SIGNATURE_SUFFIX, NodeFolder, Store, discover_nodes
from ledgermirror.importer.stream_names import instant_of, stem_of
from ledgermirror.importer.verify import reach_consensus

_log = logging.getLogger("ledgermirror.importer")

BALANCE_SIGNATURE_SUFFIXES = ("_Balances.csv_sig", "_Balances.pb_sig")
LOOK_BACK_NS = 86_400 * 1_000_000_000
"""How far before the start balance files are listed (the network writes one every 15 minutes)."""
_LIST_LIMIT = 1000
_RECORDSTREAMS = "recordstreams"


def balance_folder(folder: NodeFolder) -> str:
    """The balance folder beside a node's record folder."""
    head, _, last = folder.path.rpartition("/")
    if folder.account is not None:
        parent, _, streams = head.rpartition("/")
        base = parent if streams == _RECORDSTREAMS else head
        name = "balance" + last.removeprefix("record")
        return f"{base}/accountBalances/{name}" if base else f"accountBalances/{name}"
    return f"{head}/balance" if head else "balance"


async def _names(store: Store, folder: str, after: str) -> list[str]:
    listings = await asyncio.gather(
        *(store.names_after(folder, after, suffix, _LIST_LIMIT) for suffix in BALANCE_SIGNATURE_SUFFIXES)
    )
    return [name for names in listings for name in names]


async def first_record_instant(store: Store, folders: Sequence[NodeFolder]) -> int | None:
    """The instant of the source's first record file (its first node folders' first signature file)."""
    listings = await asyncio.gather(
        *(store.names_after(folder.path, None, SIGNATURE_SUFFIX, 1) for folder in folders)
    )
    firsts = [instant_of(names[0]) for names in listings if names]
    return min(firsts) if firsts else None


async def record_file_holding(store: Store, folders: Sequence[NodeFolder], at: int) -> int | None:
    """The instant (name) of the newest record file starting at or before ``at``: the file holding ``at``."""
    after = stem_of(at - LOOK_BACK_NS)
    listings = await asyncio.gather(
        *(store.names_after(folder.path, after, SIGNATURE_SUFFIX, _LIST_LIMIT) for folder in folders)
    )
    instants = [instant_of(name) for names in listings for name in names]
    before = [instant for instant in instants if instant <= at]
    return max(before) if before else None


async def _data(store: Store, folder: str, signature_name: str) -> tuple[str, bytes] | None:
    name = signature_name.removesuffix("_sig")
    for candidate in (name, name + ".gz"):
        data = await store.read(f"{folder}/{candidate}")
        if data is not None:
            return candidate, data
    return None


async def verified_balance_file(
    store: Store,
    folders: Sequence[NodeFolder],
    book: AddressBook,
    stakes: Mapping[int, int],
    name: str,
    *,
    shard: int = 0,
) -> BalanceFile:
    """The balance file whose signature files are named ``name`` in the nodes' balance folders, verified;
    raises :class:`StreamFileError` when it cannot be."""
    signatures: dict[int, SignatureFile | StreamFileError] = {}
    folder_of: dict[int, str] = {}
    for folder in folders:
        node_id = folder.node_id(book)
        if node_id is None:
            continue
        path = balance_folder(folder)
        data = await store.read(f"{path}/{name}")
        if data is None:
            continue
        folder_of[node_id] = path
        try:
            signatures[node_id] = read_signature_file(name, data)
        except StreamFileError as error:
            signatures[node_id] = error
    consensus = reach_consensus(name, signatures, book, stakes=stakes)
    agreed = consensus.agreed[0]
    refused: StreamFileError | None = None
    for node_id in agreed.node_ids:  # the first copy whose hash is the signed one
        found = await _data(store, folder_of[node_id], name)
        if found is None:
            continue
        data_name, data = found
        actual = file_hash_of(data_name, data)  # before anything of it is read
        if actual == agreed.file_hash:
            return read_balance_file(data_name, data, shard=shard)
        refused = FileHashMismatch(data_name, agreed.file_hash, actual)
    raise refused or StreamParseError(name, "no node that signed it holds the balance file")


async def nearest_balance_file(
    store: Store,
    folders: Sequence[NodeFolder],
    book: AddressBook,
    stakes: Mapping[int, int],
    target: int,
    *,
    shard: int = 0,
) -> BalanceFile:
    """The newest balance file at or before ``target`` that verifies; a file that does not is logged and the one
    before it tried. Raises :class:`ImporterError` when there is none."""
    after = stem_of(target - LOOK_BACK_NS)
    listed = await asyncio.gather(*(_names(store, balance_folder(folder), after) for folder in folders))
    names = sorted({name for names in listed for name in names if instant_of(name) <= target}, reverse=True)
    refused: list[str] = []
    for name in names:
        try:
            return await verified_balance_file(store, folders, book, stakes, name, shard=shard)
        except StreamFileError as error:
            _log.warning("balance file refused: %s", error)
            refused.append(str(error))
    reasons = f" ({'; '.join(refused)})" if refused else ""
    raise ImporterError(
        f"no verified account balance file in the day before {stem_of(target)} in {store}{reasons}"
    )


async def start_from_balance_file(store: Store, position: Position, options: ImportOptions) -> int | None:
    """An empty database's start: the verified balance file nearest at or before the start, seeded with the first
    record file, which becomes the one holding the balance file's timestamp; returns the new start."""
    if options.initial_balances is not None:
        raise ImporterError("--balance-files and --initial-balances exclude each other")
    folders = await discover_nodes(store)
    target = options.start if options.start is not None else await first_record_instant(store, folders)
    if target is None:
        raise ImporterError(f"no record files in {store} to start from")
    shard = options.balance_snapshots.shard if options.balance_snapshots is not None else 0
    found = await nearest_balance_file(store, folders, position.book, position.stakes, target, shard=shard)
    holding = await record_file_holding(store, folders, found.consensus_timestamp)
    offset = balance_file_offset_on(position.book, options.network, found.consensus_timestamp)
    position.pending_balances = dataclasses.replace(snapshot_of_file(found), time_offset=offset)
    start = options.start
    if holding is not None:
        position.cursor = stem_of(holding)
        start = holding
    _log.info(
        "starting from balance file %s (%d accounts), at the record file of %s",
        found.name,
        len(found.accounts),
        stem_of(holding) if holding is not None else "the start",
    )
    return start
