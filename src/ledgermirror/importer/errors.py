"""Typed errors of stream reading and verification: each names the file and the check that refused it."""

from __future__ import annotations

from typing import ClassVar


class StreamFileError(Exception):
    """A stream file was refused. ``file_name`` is the file, ``check`` the check that failed."""

    check: ClassVar[str] = "stream file"

    def __init__(self, file_name: str, detail: str) -> None:
        self.file_name = file_name
        self.detail = detail
        super().__init__(f"{self.check} check failed for file {file_name}: {detail}")


class StreamParseError(StreamFileError):
    """The bytes are not a well-formed stream file of a supported version."""

    check = "parse"


class AddressBookError(StreamFileError):
    """The address book cannot be read (bad protobuf, bad key, bad account)."""

    check = "address book"


class SignatureRejected(StreamFileError):
    """One node's signature does not verify against that node's key (or the node is unknown)."""

    check = "signature"

    def __init__(self, file_name: str, node_id: int, detail: str) -> None:
        self.node_id = node_id
        super().__init__(file_name, f"node {node_id}: {detail}")


class ConsensusNotReached(StreamFileError):
    """No group of valid signatures agreeing on the same hashes holds enough stake."""

    check = "consensus"


class HashMismatch(StreamFileError):
    """A hash of the file differs from the one it must equal (the reference's message template)."""

    kind: ClassVar[str] = "Hash"

    def __init__(self, file_name: str, expected: bytes, actual: bytes) -> None:
        self.expected = expected
        self.actual = actual
        StreamFileError.__init__(self, file_name, f"Expected = {expected.hex()}, Actual = {actual.hex()}")
        self.args = (f"{self.kind} hash mismatch for file {file_name}. {self.detail}",)


class FileHashMismatch(HashMismatch):
    check = "file hash"
    kind = "File"


class MetadataHashMismatch(HashMismatch):
    check = "metadata hash"
    kind = "Metadata"


class PreviousHashMismatch(HashMismatch):
    """The file does not continue the chain: its previous hash is not the prior file's hash."""

    check = "previous hash"
    kind = "Previous"


class RunningHashMismatch(HashMismatch):
    """The running hash recomputed over the items is not the end running hash the file states."""

    check = "running hash"
    kind = "Running"


class SidecarHashMismatch(HashMismatch):
    check = "sidecar hash"
    kind = "Sidecar"


class SidecarMissing(StreamFileError):
    check = "sidecar"


class ConsensusTimestampOrder(StreamFileError):
    """Consensus timestamps are not strictly increasing (inside the file or after the prior file)."""

    check = "consensus timestamp order"


class BlockNumberMismatch(StreamFileError):
    """The block number is not the prior file's block number plus one."""

    check = "block number"


class BlockProofRejected(StreamFileError):
    """A block's proof is missing, of a kind that does not fit the block, or its signatures do not verify."""

    check = "block proof"


class ImporterError(RuntimeError):
    """The import cannot run (no address book, another importer holds the database)."""
