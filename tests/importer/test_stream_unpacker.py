"""The unpacking process (``importer/stream_unpacker.py``), a real child process: it unpacks record files and block
files as the import would itself, what it computes decides nothing on its own, and a process that is gone leaves
the files to a thread."""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import gzip
import hashlib
import logging
import os
import signal
import struct
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest
from tests.importer import stream_writer as write
from tests.importer.blocks_support import FILES, simulated
from tests.importer.fixtures import FIRST, RECORDS, SECOND, record_bytes
from tests.importer.test_block_fixtures import BLOCKS, ROOTS

from ledgermirror.importer import block_hash
from ledgermirror.importer.address_book import read_address_book
from ledgermirror.importer.block_file import BlockDigest, read_block, split_items
from ledgermirror.importer.block_source import FileBlockSource, SourceBlock, block_name, decompress
from ledgermirror.importer.block_verify import VerifiedBlock, verify_block
from ledgermirror.importer.errors import RunningHashMismatch, StreamParseError
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.record_file_reader import Unpacked, read_record_file, unpack_record_file
from ledgermirror.importer.running_hash import running_hash
from ledgermirror.importer.sources import open_store
from ledgermirror.importer.stream_unpacker import PIPE_BYTES, StreamUnpacker, widen_pipes
from ledgermirror.importer.verify import verify_record_chain

T = TypeVar("T")
T0 = 1_700_000_000_000_000_000
NAME = "2023-11-14T22_13_20Z.rcd.gz"
START = hashlib.sha384(b"genesis").digest()


def items(count: int, memo: str = "") -> list[write.Item]:
    return [write.item(T0 + n, f"{memo} {n}") for n in range(count)]


def asked_together(
    ask: Callable[[StreamUnpacker, str, bytes], Awaitable[T]], files: Sequence[tuple[str, bytes]]
) -> list[T]:
    """``ask(unpacker, name, data)`` for every file at once, of one process."""

    async def run() -> list[T]:
        unpacker = StreamUnpacker()
        try:
            return list(await asyncio.gather(*(ask(unpacker, name, data) for name, data in files)))
        finally:
            await unpacker.close()

    return asyncio.run(run())


def unpacked(*files: tuple[str, bytes]) -> list[Unpacked]:
    return asked_together(StreamUnpacker.unpack, files)


def test_the_process_unpacks_a_file_as_the_import_would_itself() -> None:
    some = items(5, "unpacked")
    written = write.v6(some, START, 10, sidecars=[(1, hashlib.sha384(b"sidecar").digest(), [1, 2])])
    (answer,) = unpacked((NAME, written.stored))
    assert answer.content == written.content and answer.content_hash == written.file_hash
    assert answer.layout is not None
    assert answer.folded == (START, running_hash(START, [(i.record, i.transaction) for i in some]))
    from_process = read_record_file(NAME, written.stored, answer)
    here = read_record_file(NAME, written.stored)
    assert here.folded is None and from_process.folded == answer.folded
    assert dataclasses.replace(from_process, folded=None) == _comparable(here, from_process)
    assert [listed.id for listed in from_process.sidecars] == [1] and answer.folded[1] == written.end_hash


def _comparable(here: RecordFile, there: RecordFile) -> RecordFile:
    """``here`` with ``there``'s items where their bytes and times agree (the parsed records are objects)."""
    assert [(i.consensus_timestamp, i.record_bytes, i.transaction_bytes) for i in here.items] == [
        (i.consensus_timestamp, i.record_bytes, i.transaction_bytes) for i in there.items
    ]
    return dataclasses.replace(here, items=there.items)


@pytest.mark.skipif(not RECORDS.is_dir(), reason="reference stream fixtures not present")
def test_the_reference_fixtures_unpack_alike_and_their_folded_hash_is_theirs() -> None:
    names = [f"{stamp}.rcd.gz" for stamp in (FIRST, SECOND)]
    datas = [record_bytes(stamp) for stamp in (FIRST, SECOND)]
    for name, data, answer in zip(names, datas, unpacked(*zip(names, datas, strict=True)), strict=True):
        record = read_record_file(name, data, answer)
        assert answer.folded == (record.previous_hash, record.hash)  # as the network folded it
        assert _comparable(read_record_file(name, data), record).items == record.items


def test_a_forged_end_hash_is_refused_with_the_hash_folded_by_the_process() -> None:
    some = items(3, "forged")
    forged = write.v6(some, START, 10, end=hashlib.sha384(b"anything").digest())
    (answer,) = unpacked((NAME, forged.stored))
    record = read_record_file(NAME, forged.stored, answer)
    with pytest.raises(RunningHashMismatch) as refused:
        verify_record_chain(record, None)
    assert refused.value.expected == forged.end_hash
    assert refused.value.actual == running_hash(START, [(i.record, i.transaction) for i in some])


def test_a_folded_hash_from_another_start_is_not_taken() -> None:
    """Only a hash folded from the file's own start hash stands in for folding the items here."""
    forged = write.v6(items(3, "other start"), START, 10, end=hashlib.sha384(b"anything").digest())
    record = read_record_file(NAME, forged.stored)
    claimed = dataclasses.replace(record, folded=(hashlib.sha384(b"another start").digest(), forged.end_hash))
    with pytest.raises(RunningHashMismatch):
        verify_record_chain(claimed, None)
    agreeing = dataclasses.replace(record, folded=(START, forged.end_hash))  # what a false answer would need
    verify_record_chain(agreeing, None)  # the start check is what keeps a wrong answer from being taken


def test_bytes_the_wire_reads_refuse_come_back_unpacked_only_and_are_refused_as_ever() -> None:
    name = "2023-11-14T22_13_24Z.rcd.gz"
    broken = gzip.compress(struct.pack(">i", 6) + write.field(3, b"\xff\xff\xff"), mtime=0)
    (answer,) = unpacked((name, broken))
    assert answer.layout is None and answer.folded is None and answer.content_hash is not None
    with pytest.raises(StreamParseError) as there:
        read_record_file(name, broken, answer)
    with pytest.raises(StreamParseError) as here:
        read_record_file(name, broken)
    assert str(there.value) == str(here.value)


def test_files_asked_together_get_their_own_answers_from_one_process() -> None:
    files = [write.v6(items(n + 1, f"file {n}"), START, n) for n in range(24)]
    names = [f"2023-11-14T22_{n:02d}_20Z.rcd.gz" for n in range(24)]

    async def run() -> tuple[list[Unpacked], set[int | None]]:
        unpacker = StreamUnpacker()
        pids: set[int | None] = set()

        async def one(name: str, data: bytes) -> Unpacked:
            answer = await unpacker.unpack(name, data)
            pids.add(unpacker.pid)
            return answer

        try:
            return list(await asyncio.gather(*(one(n, f.stored) for n, f in zip(names, files, strict=True)))), pids
        finally:
            await unpacker.close()

    answers, pids = asyncio.run(run())
    assert [answer.content for answer in answers] == [written.content for written in files]
    assert all(answer.layout is not None for answer in answers)
    assert len(pids) == 1 and None not in pids


def test_a_killed_process_leaves_the_files_to_a_thread(caplog: pytest.LogCaptureFixture) -> None:
    files = [write.v6(items(2, f"after {n}"), START, n) for n in range(3)]

    async def run() -> tuple[list[Unpacked], int | None]:
        unpacker = StreamUnpacker()
        try:
            first = await unpacker.unpack(NAME, files[0].stored)
            pid = unpacker.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            rest = [await unpacker.unpack(NAME, written.stored) for written in files[1:]]
            return [first, *rest], unpacker.pid
        finally:
            await unpacker.close()

    with caplog.at_level(logging.WARNING, logger="ledgermirror.importer.stream_unpacker"):
        answers, pid_after = asyncio.run(run())
    assert [answer.content for answer in answers] == [written.content for written in files]
    assert answers[0].layout is not None and answers[2].layout is None  # the last two unpacked on a thread
    assert pid_after is None
    assert "unpacked on a thread from now on" in caplog.text


def test_an_interrupt_of_the_process_group_leaves_the_process_to_the_import() -> None:
    async def run() -> tuple[int | None, int | None, Unpacked]:
        unpacker = StreamUnpacker()
        try:
            await unpacker.unpack(NAME, write.v6(items(1), START, 1).stored)
            before = unpacker.pid
            assert before is not None
            os.kill(before, signal.SIGINT)  # as Ctrl-C sends it to the whole group
            await asyncio.sleep(0.2)
            answer = await unpacker.unpack(NAME, write.v6(items(2), START, 2).stored)
            return before, unpacker.pid, answer
        finally:
            await unpacker.close()

    before, after, answer = asyncio.run(run())
    assert before == after and answer.layout is not None


def test_close_stops_the_process() -> None:
    async def run() -> int:
        unpacker = StreamUnpacker()
        await unpacker.unpack(NAME, write.v6(items(1), START, 1).stored)
        pid = unpacker.pid
        assert pid is not None
        os.kill(pid, 0)  # running
        await unpacker.close()
        assert unpacker.pid is None
        return pid

    pid = asyncio.run(run())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _pipe_max() -> int:
    return (
        int(Path("/proc/sys/fs/pipe-max-size").read_text()) if Path("/proc/sys/fs/pipe-max-size").exists() else 0
    )


@pytest.mark.skipif(_pipe_max() < PIPE_BYTES, reason="the system does not allow pipes of a megabyte")
def test_the_process_pipes_hold_a_megabyte_each_way() -> None:
    """Its answers and requests wait in the pipes while the import builds rows (``PIPE_BYTES``): read from the
    process's own descriptors, through /proc."""

    async def run() -> list[int]:
        unpacker = StreamUnpacker()
        try:
            await unpacker.unpack(NAME, write.v6(items(1), START, 1).stored)
            sizes = []
            for descriptor in (0, 1):  # its standard input and output
                opened = os.open(f"/proc/{unpacker.pid}/fd/{descriptor}", os.O_RDONLY | os.O_NONBLOCK)
                try:
                    sizes.append(fcntl.fcntl(opened, fcntl.F_GETPIPE_SZ))
                finally:
                    os.close(opened)
            return sizes
        finally:
            await unpacker.close()

    assert asyncio.run(run()) == [PIPE_BYTES, PIPE_BYTES]


def test_widening_a_pipe_sets_its_size_and_leaves_anything_else_as_it_is(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "rb", closefd=False) as stream:
            default = fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ)
            widen_pipes(stream)
            widened = fcntl.fcntl(read_end, fcntl.F_GETPIPE_SZ)
    finally:
        os.close(read_end)
        os.close(write_end)
    assert widened == (PIPE_BYTES if _pipe_max() >= PIPE_BYTES else default)
    with (tmp_path / "file").open("wb") as not_a_pipe:
        widen_pipes(not_a_pipe)  # refused by the system: kept as it is, no error
        assert not_a_pipe.write(b"still usable") == 12


# Block files -----------------------------------------------------------------------------------------------------


def unpacked_blocks(*files: tuple[str, bytes]) -> list[tuple[bytes, BlockDigest | None]]:
    return asked_together(StreamUnpacker.unpack_block, files)


@pytest.mark.skipif(not BLOCKS.is_dir(), reason="reference block stream fixtures not present")
def test_the_reference_blocks_come_back_with_the_sub_trees_of_their_root_hashes() -> None:
    """The reference's root hashes (``test_block_fixtures.ROOTS``, from its ``BlockStreamReaderTest``), computed
    from the sub-tree roots the process hashed."""
    paths = {number: BLOCKS / "0000" / "0000" / "0000" / "0000" / f"{number:03d}.blk.zstd" for number in ROOTS}
    stored = {number: path.read_bytes() for number, path in paths.items()}
    answers = unpacked_blocks(*((block_name(number), stored[number]) for number in ROOTS))
    for number, (content, digest) in zip(ROOTS, answers, strict=True):
        assert content == decompress(block_name(number), stored[number])
        assert digest is not None and digest.record_layout is None  # native blocks: no record file
        block = read_block(block_name(number), content, len(stored[number]), digest.subtree_roots)
        assert block.root_hash().hex() == ROOTS[number]
        assert digest.subtree_roots == block_hash.subtree_roots(block.items)


@pytest.fixture(scope="module")
def wrapped_network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return simulated(tmp_path_factory.mktemp("unpacked-blocks"), "blocks")


def _source_blocks(network: Path, unpacker: StreamUnpacker | None) -> list[SourceBlock]:
    async def run() -> list[SourceBlock]:
        source = FileBlockSource(open_store(str(network)))
        return [block async for block in source.blocks(None, unpacker)]

    return asyncio.run(run())


def _verified(network: Path, blocks: list[SourceBlock]) -> list[VerifiedBlock]:
    book = read_address_book((network / "addressbook.bin").read_bytes())
    verified: list[VerifiedBlock] = []
    for block in blocks:
        verified.append(verify_block(block, book, verified[-1].link() if verified else None))
    return verified


def test_wrapped_blocks_read_through_the_process_verify_as_the_import_reads_them(wrapped_network: Path) -> None:
    async def through_process() -> tuple[list[SourceBlock], int | None]:
        unpacker = StreamUnpacker()
        try:
            source = FileBlockSource(open_store(str(wrapped_network)))
            return [block async for block in source.blocks(None, unpacker)], unpacker.pid
        finally:
            await unpacker.close()

    there, pid = asyncio.run(through_process())
    here = _source_blocks(wrapped_network, None)
    assert pid is not None and len(there) == len(here) == FILES
    assert [(b.number, b.name, b.data, b.size) for b in there] == [
        (b.number, b.name, b.data, b.size) for b in here
    ]
    assert all(block.digest is None for block in here)
    for block in there:
        digest = block.digest
        assert digest is not None and digest.record_layout is not None and digest.record_folded is not None
        wrapped = read_block(block.name, block.data).wrapped
        assert wrapped is not None
        assert digest.record_file_hash == hashlib.sha384(wrapped.record_file_bytes).digest()
    with_digest, without = _verified(wrapped_network, there), _verified(wrapped_network, here)
    assert [v.root_hash for v in with_digest] == [v.root_hash for v in without]
    for taken, read_here in zip(with_digest, without, strict=True):
        record = taken.record
        assert record.folded is not None and read_here.record.folded is None
        assert record.folded == (record.previous_hash, record.hash)  # folded from its own start to its own end
        assert dataclasses.replace(record, folded=None) == _comparable(read_here.record, record)


def test_a_wrapped_blocks_folded_hash_is_taken_only_from_its_own_start_hash(
    wrapped_network: Path,
) -> None:
    """The folded hash of a digest stands in for folding the items (a false one is refused as the items' would
    be), but only when it was folded from the file's own start hash (else the import folds them itself)."""
    first = _source_blocks(wrapped_network, None)[0]
    ((content, digest),) = unpacked_blocks((block_name(first.number, compressed=False), first.data))
    assert digest is not None and digest.record_folded is not None
    forged = dataclasses.replace(
        digest, record_folded=(digest.record_folded[0], hashlib.sha384(b"not the items").digest())
    )
    with pytest.raises(RunningHashMismatch):
        _verified(wrapped_network, [dataclasses.replace(first, digest=forged)])
    other_start = dataclasses.replace(digest, record_folded=(hashlib.sha384(b"elsewhere").digest(), START))
    (verified,) = _verified(wrapped_network, [dataclasses.replace(first, data=content, digest=other_start)])
    assert verified.record.folded == other_start.record_folded  # kept on the file, not taken: no refusal


def test_a_plain_block_comes_back_as_the_bytes_given_with_its_digest() -> None:
    path = BLOCKS / "0000" / "0000" / "0000" / "0000" / "007.blk.zstd"
    if not path.exists():
        pytest.skip("reference block stream fixtures not present")
    plain = decompress("007.blk.zstd", path.read_bytes())

    async def run() -> tuple[bytes, BlockDigest | None]:
        unpacker = StreamUnpacker()
        try:
            return await unpacker.unpack_block(block_name(7, compressed=False), plain)
        finally:
            await unpacker.close()

    content, digest = asyncio.run(run())
    assert content is plain  # not sent back: the import holds these bytes
    assert (
        digest is not None and read_block("7", content, None, digest.subtree_roots).root_hash().hex() == ROOTS[7]
    )


@pytest.mark.parametrize(
    ("name", "broken", "on_a_thread", "through_the_process"),
    [
        (
            "2023-11-14T22_13_26Z.rcd.gz",
            b"\x1f\x8b" + b"not gzip at all" * 10,
            unpack_record_file,
            lambda name, data: unpacked((name, data)),
        ),
        (
            block_name(9),
            b"\x28\xb5\x2f\xfd" + b"not zstd at all" * 10,
            decompress,
            lambda name, data: unpacked_blocks((name, data)),
        ),
    ],
    ids=["record file", "block file"],
)
def test_bytes_that_do_not_decompress_are_refused_as_on_a_thread(
    name: str,
    broken: bytes,
    on_a_thread: Callable[[str, bytes], object],
    through_the_process: Callable[[str, bytes], object],
) -> None:
    with pytest.raises(StreamParseError) as here:
        on_a_thread(name, broken)
    with pytest.raises(StreamParseError) as there:
        through_the_process(name, broken)
    assert str(there.value) == str(here.value)


def test_bytes_that_are_not_a_block_come_back_without_a_digest_and_are_refused_by_the_import() -> None:
    name = block_name(10, compressed=False)
    not_a_block = write.field(7, b"\x01\x02")
    ((content, digest),) = unpacked_blocks((name, not_a_block))
    assert content == not_a_block and digest is None
    with pytest.raises(StreamParseError) as there:
        read_block(name, content)
    with pytest.raises(StreamParseError) as here:
        split_items(name, not_a_block)
    assert str(there.value) == str(here.value)


def test_a_killed_process_leaves_the_blocks_to_a_thread(caplog: pytest.LogCaptureFixture) -> None:
    path = BLOCKS / "0000" / "0000" / "0000" / "0000" / "008.blk.zstd"
    if not path.exists():
        pytest.skip("reference block stream fixtures not present")
    stored = path.read_bytes()

    async def run() -> list[tuple[bytes, BlockDigest | None]]:
        unpacker = StreamUnpacker()
        try:
            first = await unpacker.unpack_block(block_name(8), stored)
            pid = unpacker.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            return [first, await unpacker.unpack_block(block_name(8), stored)]
        finally:
            await unpacker.close()

    with caplog.at_level(logging.WARNING, logger="ledgermirror.importer.stream_unpacker"):
        (first, after) = asyncio.run(run())
    assert first[0] == after[0] == decompress(block_name(8), stored)
    assert first[1] is not None and after[1] is None
    assert "unpacked on a thread from now on" in caplog.text


def _children_unpacking() -> list[int]:
    """This process's children that run the unpacking process."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"ledgermirror.importer.stream_unpacker" in command:
            found.append(int(entry.name))
    return found


def test_closing_while_the_first_file_starts_the_process_leaves_no_process_behind() -> None:
    """The import can end (a refused file) while another file's download is starting the process: closing waits
    for the start and stops that process."""
    written = write.v6(items(2, "racing"), START, 1)

    async def run() -> tuple[Unpacked, list[int]]:
        unpacker = StreamUnpacker()
        asking = asyncio.ensure_future(unpacker.unpack(NAME, written.stored))
        await asyncio.sleep(0)  # the request has begun to start the process
        await unpacker.close()
        answer = await asking
        return answer, _children_unpacking()

    answer, left = asyncio.run(run())
    assert answer.content == written.content
    assert left == []
