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
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.record_file_reader import read_record_file, unpack_record_file
from ledgermirror.importer.sidecar_file import SidecarFile, read_sidecar_file
from ledgermirror.importer.signature_file import SignatureFile, read_signature_file
from ledgermirror.importer.sources import SIGNATURE_SUFFIX, NodeFolder, Store
from ledgermirror.importer.stream_names import data_name_of_signature, instant_of, sidecar_name
from ledgermirror.importer.stream_unpacker import StreamUnpacker
from ledgermirror.importer.verify import (
    CONSENSUS_RATIO,
    ChainLink,
    Consensus,
    VerifiedRecordFile,
    node_weights,
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
    download_wait: float = 0.0
    """Seconds the import waited for a prefetched download to finish (downloads run ahead: ``download`` sums
    their durations, overlapped with the rest; this is the part not hidden)."""
    signatures: float = 0.0
    data: float = 0.0
    files: int = 0
    node_fallbacks: int = 0
    valid_signatures: int = 0
    """Node signatures that verified and agree with the consensus (groups holding a third of stake)."""
    rejected_signatures: list[str] = field(default_factory=list)


def stem_of(name: str) -> str:
    """``2022-07-13T08_46_11.304284003Z`` of any stream file name of that instant."""
    return name.rsplit("/", 1)[-1].split(".rcd", 1)[0]


def cursor_after(name: str) -> str:
    """The listing cursor that comes after every file of ``name``'s instant (the reference lists after the
    name without extension followed by ``_``)."""
    return stem_of(name) + "_"


def listing_folders(
    folders: Sequence[NodeFolder], book: AddressBook, stakes: Mapping[int, int]
) -> list[NodeFolder]:
    """The folders worth listing: the heaviest nodes until one third of the weight is reached, plus one for
    margin. A file they list is then read by name from every node (a GET costs a tenth of a LIST), so only
    a listing cost is saved, never a signature. A node with a folder in each layout (mixed layouts) has both
    listed and its weight counted once."""
    weights = node_weights(book, stakes)
    required = weights.required(CONSENSUS_RATIO)
    by_node: dict[int | None, list[NodeFolder]] = {}
    for folder in folders:
        by_node.setdefault(folder.node_id(book), []).append(folder)

    def weight(node_id: int | None) -> int:
        return weights.of_node.get(node_id, 0) if node_id is not None else 0

    ranked = sorted(by_node, key=lambda node_id: (-weight(node_id), by_node[node_id][0].path))
    chosen: list[NodeFolder] = []
    held = 0
    for node_id in ranked:
        chosen.extend(by_node[node_id])
        if held >= required:
            break  # the margin
        held += weight(node_id)
    return chosen


async def list_candidates(
    store: Store,
    folders: Sequence[NodeFolder],
    after: str | None,
    limit: int,
    *,
    every_folder: Sequence[NodeFolder] | None = None,
) -> tuple[list[Candidate], bool]:
    """Signature files after ``after`` in the listed ``folders``, grouped by file. Returns the candidates in
    order and whether the listings were complete (no node's listing hit ``limit``); when one was cut, only
    names up to the smallest last name of the cut listings are returned, so no file is judged on part of its
    nodes. With ``every_folder``, a candidate's signatures are then read from all of those folders (by name,
    not listed), else from the folders that listed it."""
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
    if every_folder is not None:
        candidates = [Candidate(name, tuple(every_folder)) for name in sorted(by_name)]
    else:
        candidates = [Candidate(name, tuple(by_name[name])) for name in sorted(by_name)]
    return candidates, horizon is None


@dataclass(slots=True)
class Download:
    """A candidate's bytes, fetched ahead of verification: every node's signature file and, from the first
    node listing it, the data file (parsed) and its sidecars. Nothing here is trusted yet."""

    candidate: Candidate
    signatures: list[bytes | None]
    """Aligned with ``candidate.folders``."""
    folder: NodeFolder | None = None
    record: RecordFile | StreamFileError | None = None
    sidecars: dict[int, bytes] = field(default_factory=dict)


async def download(
    store: Store,
    candidate: Candidate,
    cost: VerificationCost | None = None,
    unpacker: StreamUnpacker | None = None,
) -> Download:
    """Fetch the signature files, then one copy of the data file and its sidecars (parsed for their names); the
    data file is unpacked by ``unpacker`` (a process of its own), else on a thread."""
    cost = cost if cost is not None else VerificationCost()
    started = time.perf_counter()
    name = candidate.signature_name
    signatures = list(await asyncio.gather(*(store.read(folder.key(name)) for folder in candidate.folders)))
    fetched = Download(candidate, signatures)
    first = next((index for index, data in enumerate(signatures) if data), None)
    if first is None:
        cost.download += time.perf_counter() - started
        return fetched
    folder = candidate.folders[first]
    head = signatures[first]
    assert head is not None
    data_name = data_name_of_signature(name, head[0])  # the first byte is the signature file's version
    data = await store.read(folder.key(data_name))
    cost.download += time.perf_counter() - started
    if data is None:
        return fetched
    fetched.folder = folder
    try:
        # Unpacked by another process (or on a thread, where decompressing and hashing release the GIL), this
        # overlaps the row building of the files before this one (this download runs ahead, see Prefetcher).
        if unpacker is not None:
            unpacked = await unpacker.unpack(data_name, data)
        else:
            unpacked = await asyncio.to_thread(unpack_record_file, data_name, data)
        cost.data += unpacked.seconds
        parsed = time.perf_counter()
        try:
            fetched.record = read_record_file(data_name, data, unpacked)
        finally:
            cost.data += time.perf_counter() - parsed
    except StreamFileError as error:
        fetched.record = error
    if isinstance(fetched.record, RecordFile) and fetched.record.sidecars:
        started = time.perf_counter()
        ids = [listed.id for listed in fetched.record.sidecars]
        names = [folder.sidecar_key(sidecar_name(data_name, sidecar_id)) for sidecar_id in ids]
        for sidecar_id, raw in zip(ids, await asyncio.gather(*map(store.read, names)), strict=True):
            if raw is not None:
                fetched.sidecars[sidecar_id] = raw
        cost.download += time.perf_counter() - started
    return fetched


async def fetch_verified(
    store: Store,
    candidate: Candidate,
    book: AddressBook,
    previous: ChainLink | None,
    *,
    stakes: Mapping[int, int] | None = None,
    cost: VerificationCost | None = None,
) -> VerifiedRecordFile:
    """:func:`download` then :func:`verify_download`."""
    fetched = await download(store, candidate, cost)
    return await verify_download(store, fetched, book, previous, stakes=stakes, cost=cost)


async def verify_download(
    store: Store,
    fetched: Download,
    book: AddressBook,
    previous: ChainLink | None,
    *,
    stakes: Mapping[int, int] | None = None,
    cost: VerificationCost | None = None,
) -> VerifiedRecordFile:
    """Check every node's signatures, reach consensus, then take the data file and its sidecars from the
    agreeing nodes in turn (the prefetched copy when its node agreed, else downloaded now) until one copy
    passes every check. Raises the last copy's error otherwise."""
    cost = cost if cost is not None else VerificationCost()
    candidate = fetched.candidate
    started = time.perf_counter()
    parsed: dict[int, SignatureFile | StreamFileError] = {}
    folder_of: dict[int, NodeFolder] = {}
    for folder, data in zip(candidate.folders, fetched.signatures, strict=True):
        node_id = folder.node_id(book)
        if node_id is None or data is None:
            continue
        folder_of[node_id] = folder
        try:
            parsed[node_id] = read_signature_file(candidate.signature_name, data)
        except StreamFileError as error:
            parsed[node_id] = error
    consensus = reach_consensus(candidate.signature_name, parsed, book, stakes=stakes)
    cost.rejected_signatures.extend(str(error) for error in consensus.rejected)
    cost.valid_signatures += sum(len(agreeing.node_ids) for agreeing in consensus.agreed)
    cost.signatures += time.perf_counter() - started
    last_error: StreamFileError | None = None
    for group in consensus.agreed:
        for node_id in group.node_ids:
            signature = parsed[node_id]
            assert isinstance(signature, SignatureFile)
            data_name = data_name_of_signature(candidate.signature_name, signature.version)
            try:
                if folder_of[node_id] == fetched.folder and fetched.record is not None:
                    verified = _verify_prefetched(fetched, consensus, previous, cost)
                else:
                    verified = await _verify_copy(store, folder_of[node_id], data_name, consensus, previous, cost)
            except StreamFileError as error:
                last_error = error
                cost.node_fallbacks += 1
                continue
            cost.files += 1
            return verified
    assert last_error is not None
    raise last_error


def _verify_prefetched(
    fetched: Download, consensus: Consensus, previous: ChainLink | None, cost: VerificationCost
) -> VerifiedRecordFile:
    if isinstance(fetched.record, StreamFileError):
        raise fetched.record
    record = fetched.record
    assert record is not None
    started = time.perf_counter()
    sidecars = {
        sidecar_id: read_sidecar_file(sidecar_name(record.name, sidecar_id), raw)
        for sidecar_id, raw in fetched.sidecars.items()
    }
    verify_record_file(record, consensus, previous, sidecars)
    cost.data += time.perf_counter() - started
    return VerifiedRecordFile(record, tuple(sidecars[listed.id] for listed in record.sidecars), consensus)


PREFETCH_GROWTH = 8
"""How far the prefetch window may grow: up to this many times its starting size (``prefetch_files``)."""


class Prefetcher:
    """Downloads of the next ``window`` candidates run while earlier files are verified and written. When the
    import waits for a download that took longer than the window covers (its duration above ``window`` times
    the import's own time per file: a distant bucket, each file three round trips: its signature files, its
    data file, its sidecars), the window doubles, up to ``PREFETCH_GROWTH`` times its starting size, so the
    downloads keep up with the import rather than with the latency. A source that is slow for want of CPU
    (a local server on the same cores) takes longer per file without taking longer than the window covers, and
    keeps its window: more downloads at once would not help it."""

    def __init__(
        self,
        store: Store,
        candidates: Sequence[Candidate],
        window: int,
        cost: VerificationCost,
        unpacker: StreamUnpacker | None = None,
    ) -> None:
        self._store = store
        self._unpacker = unpacker
        self._waiting = list(reversed(candidates))
        self._window = max(window, 1)
        self._max_window = self._window * PREFETCH_GROWTH
        self._cost = cost
        self._running: list[tuple[Candidate, asyncio.Task[Download], float]] = []
        self._expected = 0
        """How many of the waiting candidates, from the next one on, the store was told to expect."""
        self._returned: float | None = None
        """When the last download was handed over (the import's time per file runs from there)."""
        self._fill()

    @property
    def window(self) -> int:
        """Downloads kept running ahead now."""
        return self._window

    def _fill(self) -> None:
        while self._waiting and len(self._running) < self._window:
            candidate = self._waiting.pop()
            self._expected = max(self._expected - 1, 0)
            task = asyncio.ensure_future(download(self._store, candidate, self._cost, self._unpacker))
            self._running.append((candidate, task, time.perf_counter()))
        self._expect()

    def _expect(self) -> None:
        """Tell the store which files the downloads after the running ones will read (a window's worth, a
        sixth of a second of import at 10,000 transactions a second): a local folder then has them read from
        the disk before a download blocks the import on them."""
        wanted = min(self._window, len(self._waiting))
        while self._expected < wanted:
            candidate = self._waiting[-1 - self._expected]
            self._expected += 1
            self._store.expect(expected_keys(candidate))

    def __bool__(self) -> bool:
        return bool(self._running)

    def peek(self) -> Candidate:
        """The candidate :meth:`next` returns."""
        return self._running[0][0]

    async def next(self) -> Download:
        asked = time.perf_counter()
        busy = asked - self._returned if self._returned is not None else None
        full = len(self._running) >= self._window
        _, task, started = self._running.pop(0)
        if not task.done():
            self._fill()
            try:
                await asyncio.wait([task])
            finally:
                self._cost.download_wait += time.perf_counter() - asked
            took = time.perf_counter() - started
            if full and busy is not None and took > self._window * busy and self._window < self._max_window:
                self._window = min(self._window * 2, self._max_window)
        self._fill()
        self._returned = time.perf_counter()
        return task.result()

    def close(self) -> None:
        """Cancel the downloads not taken (a refused file or a stop ends the run)."""
        for _, task, _ in self._running:
            task.cancel()
        self._running.clear()
        self._waiting.clear()


def expected_keys(candidate: Candidate) -> list[str]:
    """What :func:`download` will read for a candidate: its signature files, and from the first folder its data
    file under either name (v6's ``.rcd.gz`` or the older ``.rcd``: the signature file's version, which decides,
    is not read yet) and its first sidecar file, if it has one (the record file lists its sidecars)."""
    name = candidate.signature_name
    keys = [folder.key(name) for folder in candidate.folders]
    if candidate.folders:
        first = candidate.folders[0]
        data_names = [data_name_of_signature(name, version) for version in (6, 5)]
        keys += [first.key(data_name) for data_name in data_names]
        keys.append(first.sidecar_key(sidecar_name(data_names[0], 1)))
    return keys


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
