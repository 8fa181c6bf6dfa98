"""Stream files unpacked in a process of their own: record files and block files decompressed and hashed ahead.

Of the work of reading and verifying a file, the part that needs neither the address book nor the import's
state runs here, on the machine's other core, instead of holding the interpreter lock that the import's row
builder and writer share:

* a record file (``record_file_reader.unpack_v6_file``): gunzip, the file hash, the offsets of every item's
  bytes, the running hash folded over the items (two SHA-384 an item), and what each item gives ahead
  (``items_read_ahead.read_ahead``: where its transaction body is, its record's hbar transfers, its
  ``transaction`` row's values and a CryptoTransfer's approved debits). The
  import's process then only parses the header, the records and the bodies, and ``verify.verify_record_chain``
  compares the folded hash with the file's own when it was folded from the file's own start hash
  (``RecordFile.folded``);
* a block file (``block_source.unpack_block_file``): zstd, the roots of the five sub-trees of its root hash
  (one SHA-384 an item, and more up the trees), and for a wrapped record block the v6 record file's hash,
  layout and folded running hash (``block_file.BlockDigest``). The import's process parses the block and
  combines the sub-tree roots with the header's timestamp and the footer's hashes it read itself.

Nothing is trusted for being computed here: these are the same functions on the same bytes, and every check of
docs/importer.md still decides in the import's process.

The process is ``python -m ledgermirror.importer.stream_unpacker``, fed through its standard input: each
request and answer is a length-prefixed pickle (the import's own child, never anything from outside). A file
the wire-level reads refuse comes back unpacked only (a record file) or not at all (a block file: it is
unpacked on a thread and refused there); a process that stops answering is left, and the files are unpacked on
a thread as before (``StreamUnpacker.unpack`` and ``unpack_block`` never fail for the process's sake).
"""

from __future__ import annotations

import asyncio
import collections
import fcntl
import logging
import pickle
import signal
import struct
import sys
from typing import Any, BinaryIO

from ledgermirror.importer.block_file import BlockDigest
from ledgermirror.importer.block_source import decompress, unpack_block_file
from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.record_file_reader import Unpacked, unpack_record_file, unpack_v6_file

_log = logging.getLogger(__name__)

_FRAME = struct.Struct(">Q")
_READ_LIMIT = 1 << 24
"""The answer stream's buffer: a whole decompressed file fits (mainnet's largest are a few MB)."""
CLOSE_SECONDS = 5.0
"""How long closing waits for the process to exit before it is killed."""
PIPE_BYTES = 1 << 20
"""What each of the process's pipes holds (Linux's default is 64 KiB, the default most a user may set 1 MiB). The
import's event loop reads answers and sends requests only between the files whose rows it builds, each some
20 ms of Python that never yields: with 64 KiB, an answer (about 110 KB for a file of 208 transactions) filled
the pipe and the process waited, mid-answer, for the next read, and had at most one request's bytes to go on.
With a megabyte on each side it unpacks the files asked for while the rows are built (:func:`widen_pipes`)."""


class _Gone(Exception):
    """The process stopped answering: the request is unpacked on a thread instead."""


RECORD = "record"
BLOCK = "block"
"""What a request asks for: a record file unpacked (:func:`unpack_v6_file`) or a block file
(:func:`unpack_block_file`)."""


def _unpacked_block(name: str, data: bytes) -> tuple[bytes, BlockDigest | None]:
    """A block file unpacked without its digest, on a thread (raises as :func:`decompress` does)."""
    return decompress(name, data), None


class StreamUnpacker:
    """The import's unpacking process, started at the first file and stopped by :meth:`close`. Answers come in
    the order of the requests (one process, one request at a time), so each waits on the next future in line."""

    def __init__(self) -> None:
        self._process: asyncio.subprocess.Process | None = None
        self._reader: asyncio.Task[None] | None = None
        self._waiting: collections.deque[asyncio.Future[Any]] = collections.deque()
        self._gone = False
        self._starting = asyncio.Lock()
        """The first files are downloaded together: one of them starts the process, the others wait for it."""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None and not self._gone else None

    async def unpack(self, name: str, data: bytes) -> Unpacked:
        """A record file unpacked by the process, or on a thread when the process is gone or did not lay it
        out."""
        try:
            answer: Unpacked | None = await self._ask(RECORD, name, data)
        except _Gone:
            answer = None
        if answer is not None:
            return answer
        return await asyncio.to_thread(unpack_record_file, name, data)

    async def unpack_block(self, name: str, data: bytes) -> tuple[bytes, BlockDigest | None]:
        """A block file decompressed and digested by the process (``block_source.BlockUnpacker``), or
        decompressed on a thread, without a digest, when the process is gone or could not read it (which then
        raises the file's error)."""
        try:
            answer: tuple[bytes | None, BlockDigest] | None = await self._ask(BLOCK, name, data)
        except _Gone:
            answer = None
        if answer is None:
            return await asyncio.to_thread(_unpacked_block, name, data)
        content, digest = answer
        return (data if content is None else content), digest

    async def _ask(self, kind: str, name: str, data: bytes) -> Any:
        if self._process is None:
            async with self._starting:
                if self._process is None and not self._gone:
                    await self._start()
        if self._gone:
            raise _Gone
        process = self._process
        assert process is not None and process.stdin is not None
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting.append(future)
        payload = pickle.dumps((kind, name, data), protocol=pickle.HIGHEST_PROTOCOL)
        process.stdin.write(_FRAME.pack(len(payload)) + payload)
        return await future

    async def _start(self) -> None:
        try:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable,
                "-m",
                __name__,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                limit=_READ_LIMIT,
            )
        except OSError as error:
            self._left(f"cannot start it: {error}")
            raise _Gone from error
        self._reader = asyncio.create_task(self._read_answers(), name="stream-unpacker-answers")

    async def _read_answers(self) -> None:
        process = self._process
        assert process is not None and process.stdout is not None
        try:
            while True:
                (size,) = _FRAME.unpack(await process.stdout.readexactly(_FRAME.size))
                answer = pickle.loads(await process.stdout.readexactly(size))
                if not self._waiting:
                    raise RuntimeError("an answer nobody asked for")
                future = self._waiting.popleft()
                if not future.done():
                    future.set_result(answer)
        except Exception as error:  # whatever ends the answers, the files go to a thread
            self._left(f"it stopped answering ({type(error).__name__}: {error})")

    def _left(self, why: str) -> None:
        if not self._gone:
            _log.warning("record files are unpacked on a thread from now on: the unpacking process %s", why)
        self._gone = True
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_exception(_Gone())

    async def close(self) -> None:
        """Stop the process (its input closed: it exits after the request in hand) and forget the requests. A
        start under way (a first file asked for while the import ends) finishes first, so its process is stopped
        too and none is left behind."""
        async with self._starting:
            process, self._process = self._process, None
            self._gone = True
        if process is None:
            return
        if process.stdin is not None:
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), CLOSE_SECONDS)
        except TimeoutError:
            process.kill()
            await process.wait()
        if self._reader is not None:
            await self._reader
        self._left("was stopped")


def answer(kind: str, name: str, data: bytes) -> Any:
    """One request's answer: a record file's :func:`unpack_v6_file`; a block file's :func:`unpack_block_file`
    (its content None when it was not compressed: the import holds those bytes already); None when the file
    could not be read (the import's process then refuses it with the whole file's checks)."""
    try:
        if kind == RECORD:
            return unpack_v6_file(name, data)
        content, digest = unpack_block_file(name, data)
    except StreamFileError:
        return None
    return (None if content is data else content), digest


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """The process's loop: a request (what it asks for, a file's name and bytes) in, its :func:`answer` out,
    until the input ends."""
    while head := requests.read(_FRAME.size):
        (size,) = _FRAME.unpack(head)
        payload = pickle.dumps(answer(*pickle.loads(requests.read(size))), protocol=pickle.HIGHEST_PROTOCOL)
        answers.write(_FRAME.pack(len(payload)) + payload)
        answers.flush()


def widen_pipes(*streams: BinaryIO) -> None:
    """Each stream's pipe made to hold :data:`PIPE_BYTES` where the system allows it (Linux; a user over the
    system's limit for pipes keeps the default: the process works as before, only waits more)."""
    for stream in streams:
        try:
            fcntl.fcntl(stream.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except (OSError, AttributeError) as error:  # AttributeError: a system without F_SETPIPE_SZ
            _log.debug("the unpacking process's pipe keeps its size: %s", error)


if __name__ == "__main__":
    # Ctrl-C reaches the whole process group: the import stops and closes the process's input, which ends it.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    widen_pipes(sys.stdin.buffer, sys.stdout.buffer)
    serve(sys.stdin.buffer, sys.stdout.buffer)
