"""The record unpacking process (``importer/record_unpacker.py``), a real child process: it unpacks as the import
would itself, what it computes decides nothing on its own, and a process that is gone leaves the files to a
thread."""

from __future__ import annotations

import asyncio
import dataclasses
import gzip
import hashlib
import logging
import os
import signal
import struct

import pytest
from tests.importer import stream_writer as write
from tests.importer.fixtures import FIRST, RECORDS, SECOND, record_bytes

from ledgermirror.importer.errors import RunningHashMismatch, StreamParseError
from ledgermirror.importer.record_file import RecordFile
from ledgermirror.importer.record_file_reader import Unpacked, read_record_file, unpack_record_file
from ledgermirror.importer.record_unpacker import RecordUnpacker
from ledgermirror.importer.running_hash import running_hash
from ledgermirror.importer.verify import verify_record_chain

T0 = 1_700_000_000_000_000_000
NAME = "2023-11-14T22_13_20Z.rcd.gz"
START = hashlib.sha384(b"genesis").digest()


def items(count: int, memo: str = "") -> list[write.Item]:
    return [write.item(T0 + n, f"{memo} {n}") for n in range(count)]


def unpacked(*files: tuple[str, bytes]) -> list[Unpacked]:
    async def run() -> list[Unpacked]:
        unpacker = RecordUnpacker()
        try:
            return list(await asyncio.gather(*(unpacker.unpack(name, data) for name, data in files)))
        finally:
            await unpacker.close()

    return asyncio.run(run())


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


def test_bytes_that_do_not_decompress_are_refused_as_on_a_thread() -> None:
    name = "2023-11-14T22_13_26Z.rcd.gz"
    broken = b"\x1f\x8b" + b"not gzip at all" * 10
    with pytest.raises(StreamParseError) as here:
        unpack_record_file(name, broken)
    with pytest.raises(StreamParseError) as there:
        unpacked((name, broken))
    assert str(there.value) == str(here.value)


def test_files_asked_together_get_their_own_answers_from_one_process() -> None:
    files = [write.v6(items(n + 1, f"file {n}"), START, n) for n in range(24)]
    names = [f"2023-11-14T22_{n:02d}_20Z.rcd.gz" for n in range(24)]

    async def run() -> tuple[list[Unpacked], set[int | None]]:
        unpacker = RecordUnpacker()
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
        unpacker = RecordUnpacker()
        try:
            first = await unpacker.unpack(NAME, files[0].stored)
            pid = unpacker.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            rest = [await unpacker.unpack(NAME, written.stored) for written in files[1:]]
            return [first, *rest], unpacker.pid
        finally:
            await unpacker.close()

    with caplog.at_level(logging.WARNING, logger="ledgermirror.importer.record_unpacker"):
        answers, pid_after = asyncio.run(run())
    assert [answer.content for answer in answers] == [written.content for written in files]
    assert answers[0].layout is not None and answers[2].layout is None  # the last two unpacked on a thread
    assert pid_after is None
    assert "unpacked on a thread from now on" in caplog.text


def test_an_interrupt_of_the_process_group_leaves_the_process_to_the_import() -> None:
    async def run() -> tuple[int | None, int | None, Unpacked]:
        unpacker = RecordUnpacker()
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
        unpacker = RecordUnpacker()
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
