"""From node folders to verified record files: list signatures after a cursor, pair them per file across
nodes, reach consensus, then download the data file (and its sidecars) from a node that signed it.

Nothing here writes: :func:`fetch_verified` returns a :class:`~ledgermirror.importer.verify.VerifiedRecordFile`
or raises a :class:`~ledgermirror.importer.errors.StreamFileError` naming the file and the check.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ledgermirror.importer.address_book import AddressBook
from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.record_file import read_record_file
from ledgermirror.importer.sidecar_file import SidecarFile, read_sidecar_file
from ledgermirror.importer.signature_file import SignatureFile, read_signature_file
from ledgermirror.importer.sources import SIGNATURE_SUFFIX, NodeFolder, Store
from ledgermirror.importer.stream_names import data_name_of_signature, instant_of, sidecar_name
from ledgermirror.importer.verify import (
    ChainLink,
    Consensus,
    VerifiedRecordFile,
    reach_consensus,
    verify_record_file,
)


class FileUnavailable(StreamFileError):
    """No node that signed the file serves it (or one of its sidecars)."""

    check = "download"


@dataclass(frozen=True, slots=True)
class Candidate:
    """One record file as the listings show it: its signature file name and the node folders holding it."""

    signature_name: str
    folders: tuple[NodeFolder, ...]

    @property
    def stem(self) -> str:
        return stem_of(self.signature_name)

    @property
    def instant(self) -> int:
        return instant_of(self.signature_name)


@dataclass(slots=True)
class VerificationCost:
    """Seconds spent, summed over files: downloading, checking signatures, parsing and checking the data."""

    download: float = 0.0
    signatures: float = 0.0
    data: float = 0.0
    files: int = 0
    node_fallbacks: int = 0
    rejected_signatures: list[str] = field(default_factory=list)


def stem_of(name: str) -> str:
    """``2022-07-13T08_46_11.304284003Z`` of any stream file name of that instant."""
    return name.rsplit("/", 1)[-1].split(".rcd", 1)[0]


def cursor_after(name: str) -> str:
    """The listing cursor that comes after every file of ``name``'s instant (the reference lists after the
    name without extension followed by ``_``)."""
    return stem_of(name) + "_"


async def list_candidates(
    store: Store, folders: Sequence[NodeFolder], after: str | None, limit: int
) -> tuple[list[Candidate], bool]:
    """Signature files after ``after`` in every node folder, grouped by file. Returns the candidates in order
    and whether the listings were complete (no node's listing hit ``limit``); when one was cut, only names up
    to the smallest last name of the cut listings are returned, so no file is judged on part of its nodes."""
    listings = await asyncio.gather(
        *(store.names_after(folder.path, after, SIGNATURE_SUFFIX, limit) for folder in folders)
    )
    horizon: str | None = None
    for names in listings:
        if len(names) >= limit and (horizon is None or names[-1] < horizon):
            horizon = names[-1]
    by_name: dict[str, list[NodeFolder]] = {}
    for folder, names in zip(folders, listings, strict=True):
        for name in names:
            if horizon is None or name <= horizon:
                by_name.setdefault(name, []).append(folder)
    candidates = [Candidate(name, tuple(by_name[name])) for name in sorted(by_name)]
    return candidates, horizon is None


async def fetch_verified(
    store: Store,
    candidate: Candidate,
    book: AddressBook,
    previous: ChainLink | None,
    *,
    stakes: Mapping[int, int] | None = None,
    cost: VerificationCost | None = None,
) -> VerifiedRecordFile:
    """Download every node's signature file, reach consensus, then take the data file and its sidecars from
    the agreeing nodes in turn until one copy passes every check. Raises the last copy's error otherwise."""
    cost = cost if cost is not None else VerificationCost()
    started = time.perf_counter()
    nodes = [(folder.node_id(book), folder) for folder in candidate.folders]
    raw = await asyncio.gather(*(store.read(folder.key(candidate.signature_name)) for _, folder in nodes))
    cost.download += time.perf_counter() - started
    started = time.perf_counter()
    parsed: dict[int, SignatureFile | StreamFileError] = {}
    folder_of: dict[int, NodeFolder] = {}
    for (node_id, folder), data in zip(nodes, raw, strict=True):
        if node_id is None or data is None:
            continue
        folder_of[node_id] = folder
        try:
            parsed[node_id] = read_signature_file(candidate.signature_name, data)
        except StreamFileError as error:
            parsed[node_id] = error
    consensus = reach_consensus(candidate.signature_name, parsed, book, stakes=stakes)
    cost.rejected_signatures.extend(str(error) for error in consensus.rejected)
    cost.signatures += time.perf_counter() - started
    last_error: StreamFileError | None = None
    for group in consensus.agreed:
        for node_id in group.node_ids:
            signature = parsed[node_id]
            assert isinstance(signature, SignatureFile)
            data_name = data_name_of_signature(candidate.signature_name, signature.version)
            try:
                verified = await _verify_copy(store, folder_of[node_id], data_name, consensus, previous, cost)
            except StreamFileError as error:
                last_error = error
                cost.node_fallbacks += 1
                continue
            cost.files += 1
            return verified
    assert last_error is not None
    raise last_error


async def _verify_copy(  # noqa: PLR0917
    store: Store,
    folder: NodeFolder,
    data_name: str,
    consensus: Consensus,
    previous: ChainLink | None,
    cost: VerificationCost,
) -> VerifiedRecordFile:
    started = time.perf_counter()
    data = await store.read(folder.key(data_name))
    cost.download += time.perf_counter() - started
    if data is None:
        raise FileUnavailable(data_name, f"not in {folder.path}")
    started = time.perf_counter()
    record = read_record_file(data_name, data)
    cost.data += time.perf_counter() - started
    sidecars: dict[int, SidecarFile] = {}
    for listed in record.sidecars:
        name = sidecar_name(data_name, listed.id)
        started = time.perf_counter()
        raw = await store.read(folder.sidecar_key(name))
        cost.download += time.perf_counter() - started
        if raw is not None:
            sidecars[listed.id] = read_sidecar_file(name, raw)
    started = time.perf_counter()
    verify_record_file(record, consensus, previous, sidecars)
    cost.data += time.perf_counter() - started
    return VerifiedRecordFile(record, tuple(sidecars[listed.id] for listed in record.sidecars), consensus)
