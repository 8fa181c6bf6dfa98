"""Wrapped record blocks carrying v2 and v5 record files (mainnet's 2019-2022 history as block nodes serve it):
read in the version their proof names, the original file rebuilt from the wrapped contents and verified by the
signatures over its hash; the same rows as the record stream; tampered ones refused with nothing written.

The reference's reader cases (``CompositeRecordFileItemReaderTest``) run on our reader; the end-to-end cases
use simulated networks whose files are v2, then v5, then v6 (``simulate --record-version mixed``)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import zstandard
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.importer import stream_writer
from tests.importer.blocks_support import (
    NODES,
    SECONDS,
    SEED,
    TPS,
    block_path,
    copy,
    digests,
    import_stream,
    rewrite_block,
)
from tests.importer.importing import fetch
from tests.support import Ledger

from ledgermirror.importer import block_hash
from ledgermirror.importer.address_book import read_address_book
from ledgermirror.importer.block_file import WrappedRecordFile, read_block, split_items
from ledgermirror.importer.block_source import SourceBlock, block_bytes
from ledgermirror.importer.block_verify import amended, verify_block
from ledgermirror.importer.errors import ConsensusNotReached, StreamFileError, StreamParseError
from ledgermirror.importer.wrapped_record_file import read_wrapped_record_file
from ledgermirror.ledger.protobuf import hapi_module
from ledgermirror.runtime import Prepared
from ledgermirror.simulator import block_files, stream_files
from ledgermirror.simulator.emitter import StreamItem
from ledgermirror.simulator.run import simulate

pytestmark = pytest.mark.usefixtures("ledger")

FILES = SECONDS // 2
VERSIONS = [2, 2, 5, 5, 6, 6]
SKIP: dict[str, tuple[str, ...]] = {
    "record_file": (
        "load_start",
        "load_end",
        "size",
        "wrapped_record_block_hash",
        "previous_wrapped_record_block_hash",
    ),
    "sidecar_file": ("size",),
    "signature_evidence": ("imported_at",),  # when the evidence was recorded (the wall clock); the node sets agree
}
V2_BLOCK, V5_BLOCK = 1, 3


@pytest.fixture(scope="module")
def networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("legacy-block-networks")
    out = {}
    for fmt in ("records", "blocks", "cutover"):
        out[fmt] = root / fmt
        simulate(out[fmt], nodes=NODES, seconds=SECONDS, tps=TPS, seed=SEED, fmt=fmt, record_version="mixed")
    return out


def _files(url: str) -> list[Any]:
    return fetch(url, "select * from record_file order by index")


def _truth(network: Path) -> list[dict[str, Any]]:
    return list(json.loads((network / "truth.json").read_text())["record_files"]["files"])


def test_wrapped_v2_and_v5_files_write_the_rows_of_the_record_stream(
    database: Prepared, ledger: Ledger, networks: dict[str, Path]
) -> None:
    url = database.owner_url
    assert import_stream(url, networks["records"], "records").files == FILES
    from_records = digests(url, SKIP)
    ledger.reset()
    assert import_stream(url, networks["blocks"], "blocks").files == FILES
    from_blocks = digests(url, SKIP)
    assert from_blocks.pop("import_status")[0] == 1
    assert {name: value for name, value in from_blocks.items() if from_records.get(name) != value} == {}
    assert set(from_blocks) == set(from_records)
    rows = _files(url)
    listed = _truth(networks["blocks"])
    assert [row["version"] for row in rows] == VERSIONS == [file["version"] for file in listed]
    assert [(row["name"], row["hash"], row["prev_hash"], row["file_hash"], row["index"]) for row in rows] == [
        (file["name"], file["hash"], file["previous_hash"], file["file_hash"], file["block_number"])
        for file in listed
    ]
    assert [row["hapi_version_minor"] for row in rows] == [None, None, 66, 66, 66, 66]  # none for v2
    proofs = [
        read_block(path.name, zstandard.ZstdDecompressor().decompress(path.read_bytes(), max_output_size=1 << 30))
        for path in (block_path(networks["blocks"], number) for number in range(FILES))
    ]
    assert [block.proof.signed_record_file_proof.version for block in proofs] == VERSIONS
    assert fetch(url, "select last_proof, last_proof_verified from import_status")[0] == (
        "signed record file",
        True,
    )


def test_a_mixed_network_cuts_over_to_blocks_mid_run(database: Prepared, networks: dict[str, Path]) -> None:
    url = database.owner_url
    assert import_stream(url, networks["cutover"], "auto").files == FILES
    rows = _files(url)
    assert [(row["index"], row["version"]) for row in rows] == list(enumerate(VERSIONS))
    wrapped = [row["wrapped_record_block_hash"] is not None for row in rows]
    assert wrapped == [index >= FILES // 2 for index in range(FILES)]  # the v5 file of block 3 came wrapped


# Tampering ----------------------------------------------------------------------------------------------------


def _items_class() -> Any:
    return hapi_module("block.stream.block_item_pb2").BlockItem


def _edit(kind: int, change: Callable[[Any], None]) -> Callable[[list[tuple[int, bytes]]], list[bytes]]:
    def edit(items: list[tuple[int, bytes]]) -> list[bytes]:
        out = []
        for item_kind, data in items:
            if item_kind == kind:
                message = _items_class().FromString(data)
                change(message)
                out.append(message.SerializeToString())
            else:
                out.append(data)
        return out

    return edit


def _change_record(message: Any) -> None:
    message.record_file.record_file_contents.record_stream_items[0].record.transactionFee += 1


def _change_start_hash(message: Any) -> None:
    start = message.record_file.record_file_contents.start_object_running_hash
    start.hash = bytes(48)


def _proof_version(version: int) -> Callable[[Any], None]:
    def change(message: Any) -> None:
        message.block_proof.signed_record_file_proof.version = version

    return change


def _drop_signatures(message: Any) -> None:
    del message.block_proof.signed_record_file_proof.record_file_signatures[:]


def _amend_with_a_change(message: Any) -> None:
    wrapped = message.record_file
    amendment = wrapped.amendments.add()
    amendment.CopyFrom(wrapped.record_file_contents.record_stream_items[0])
    amendment.record.memo += "!"


RECORD, PROOF = block_hash.RECORD_FILE, block_hash.BLOCK_PROOF
TAMPERS: dict[str, tuple[int, Callable[[Any], None], int, str]] = {
    "a changed record in the wrapped v2 file": (RECORD, _change_record, V2_BLOCK, "consensus"),
    "a changed record in the wrapped v5 file": (RECORD, _change_record, V5_BLOCK, "consensus"),
    "a v2 file's previous hash changed": (RECORD, _change_start_hash, V2_BLOCK, "consensus"),
    "a v5 file read as v6": (PROOF, _proof_version(6), V5_BLOCK, "consensus"),
    "a v2 file read as v5": (PROOF, _proof_version(5), V2_BLOCK, "parse"),  # it has no end running hash
    "a v5 file read as v2": (PROOF, _proof_version(2), V5_BLOCK, "consensus"),
    "an unsupported version": (PROOF, _proof_version(0), V2_BLOCK, "parse"),
    "every signature of a v5 block dropped": (PROOF, _drop_signatures, V5_BLOCK, "consensus"),
    "an amendment that changes a v2 item": (RECORD, _amend_with_a_change, V2_BLOCK, "consensus"),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_a_tampered_wrapped_legacy_file_is_refused_with_nothing_written(
    database: Prepared, networks: dict[str, Path], tmp_path: Path, tamper: str
) -> None:
    url = database.owner_url
    network = copy(networks["blocks"], tmp_path / "net")
    kind, change, number, check = TAMPERS[tamper]
    rewrite_block(network, number, _edit(kind, change))
    with pytest.raises(StreamFileError) as refused:
        import_stream(url, network, "blocks", files_per_transaction=2)
    assert refused.value.check == check
    if tamper == "an unsupported version":
        assert "Unsupported record file version 0" in str(refused.value)
    if tamper == "every signature of a v5 block dropped":  # BlockStreamVerifierIntegrationTest's message
        assert (
            f"No record file signatures for the wrapped record block {_truth(network)[number]['name']} "
            f"with block number {number}"
        ) in str(refused.value)
    assert [row["index"] for row in _files(url)] == list(range(number))
    before = sum(file["count"] for file in _truth(network)[:number])
    assert fetch(url, "select count(*) from transaction")[0][0] == before


def _corrupt_then_amend_back(message: Any) -> None:
    """The block node's contents lost something of the first item; its amendment restores the original."""
    wrapped = message.record_file
    item = wrapped.record_file_contents.record_stream_items[0]
    amendment = wrapped.amendments.add()
    amendment.CopyFrom(item)
    item.record.memo = "not what the network wrote"


@pytest.mark.parametrize("number", [V2_BLOCK, V5_BLOCK])
def test_an_amendment_restoring_the_original_item_verifies(
    database: Prepared, networks: dict[str, Path], tmp_path: Path, number: int
) -> None:
    # the reference hashes a v2/v5 file's items with its amendments merged in
    url = database.owner_url
    network = copy(networks["blocks"], tmp_path / "net")
    rewrite_block(network, number, _edit(block_hash.RECORD_FILE, _corrupt_then_amend_back))
    listed = _truth(network)[number]
    for later in range(number + 1, FILES):  # their footers name the original block's root hash
        block_path(network, later).unlink()
    assert import_stream(url, network, "blocks").files == number + 1
    first = listed["consensus_start"]
    memo = fetch(url, "select memo from transaction where consensus_timestamp = $1", first)[0][0]
    assert memo != b"not what the network wrote"
    assert _files(url)[number]["file_hash"] == _truth(network)[number]["file_hash"]


# CompositeRecordFileItemReaderTest ----------------------------------------------------------------------------


def _stamp(nanos: int) -> Any:
    return hapi_module("services.timestamp_pb2").Timestamp(seconds=nanos // 10**9, nanos=nanos % 10**9)


def _stream_item(nanos: int, transaction_hash: bytes = b"") -> Any:
    module = hapi_module("streams.record_stream_file_pb2")
    item = module.RecordStreamItem()
    item.record.consensusTimestamp.CopyFrom(_stamp(nanos))
    item.record.transactionHash = transaction_hash
    item.transaction.signedTransactionBytes = b"\x0a\x00"
    return item


def _hash_object(digest: bytes) -> Any:
    return hapi_module("streams.hash_object_pb2").HashObject(algorithm=1, length=48, hash=digest)


def _wrapped(items: list[Any], amendments: list[Any], creation: int | None = None) -> WrappedRecordFile:
    """The reference test's ``createRecordFileItemWithAmendments``: HAPI minor 64, random hashes, block 1."""
    module = hapi_module("streams.record_stream_file_pb2")
    contents = module.RecordStreamFile(block_number=1)
    contents.hapi_proto_version.minor = 64
    contents.start_object_running_hash.CopyFrom(_hash_object(hashlib.sha384(b"start").digest()))
    contents.end_object_running_hash.CopyFrom(_hash_object(hashlib.sha384(b"end").digest()))
    contents.record_stream_items.extend(items)
    first = creation if creation is not None else items[0].record.consensusTimestamp.seconds * 10**9
    return WrappedRecordFile(
        first, contents.SerializeToString(), (), tuple(item.SerializeToString() for item in amendments)
    )


def _read(wrapped: WrappedRecordFile, version: int) -> Any:
    record = read_wrapped_record_file(wrapped, version, 0)
    if version == 6 and wrapped.amendments:
        record = amended(record, wrapped.amendments)  # the v6 path applies them after its checks
    return record


# CompositeRecordFileItemReaderTest.readUnsupportedVersion
@pytest.mark.parametrize("version", [0, 1, 3, 4, 7])
def test_read_unsupported_version(version: int) -> None:
    with pytest.raises(StreamParseError, match=f"Unsupported record file version {version}"):
        read_wrapped_record_file(_wrapped([_stream_item(10**9)], []), version, 0)


# CompositeRecordFileItemReaderTest.readWithNoTransactions (v6; v2 too; an empty v5 file is refused, as the
# record path refuses one)
@pytest.mark.parametrize("version", [2, 6])
def test_read_with_no_transactions(version: int) -> None:
    creation = 1_754_103_314_210_243_000
    record = read_wrapped_record_file(_wrapped([], [], creation), version, 0)
    assert (record.consensus_end, record.consensus_start, record.count, record.items) == (
        creation,
        creation,
        0,
        (),
    )


# CompositeRecordFileItemReaderTest.readWithAmendmentAddition
@pytest.mark.parametrize("version", [2, 5, 6])
def test_read_with_amendment_addition(version: int) -> None:
    seconds = [s * 10**9 for s in range(1, 6)]
    wrapped = _wrapped(
        [_stream_item(seconds[1]), _stream_item(seconds[3])],
        [_stream_item(seconds[0]), _stream_item(seconds[2]), _stream_item(seconds[4])],
    )
    record = _read(wrapped, version)
    assert record.count == 5
    assert [item.consensus_timestamp for item in record.items] == seconds


# CompositeRecordFileItemReaderTest.readWithAmendmentReplacement
@pytest.mark.parametrize("version", [2, 5, 6])
def test_read_with_amendment_replacement(version: int) -> None:
    amended_hash = hashlib.sha384(b"amended").digest()
    wrapped = _wrapped([_stream_item(10**9), _stream_item(2 * 10**9)], [_stream_item(2 * 10**9, amended_hash)])
    record = _read(wrapped, version)
    assert record.count == 2
    assert bytes(record.items[-1].record.transactionHash) == amended_hash


# CompositeRecordFileItemReaderTest.readWithMixedAmendments
@pytest.mark.parametrize("version", [2, 5, 6])
def test_read_with_mixed_amendments(version: int) -> None:
    amended_hash = hashlib.sha384(b"amended").digest()
    wrapped = _wrapped(
        [_stream_item(10**9), _stream_item(3 * 10**9)],
        [_stream_item(2 * 10**9), _stream_item(3 * 10**9, amended_hash), _stream_item(4 * 10**9)],
    )
    record = _read(wrapped, version)
    assert record.count == 4
    assert [item.consensus_timestamp for item in record.items] == [s * 10**9 for s in range(1, 5)]
    assert bytes(record.items[2].record.transactionHash) == amended_hash


@pytest.mark.parametrize("version", [2, 5])
def test_the_rebuilt_file_is_the_original(version: int) -> None:
    """Fields as the reference's ``RecordFileItemReaderV2``/``V5`` give them: v2 hashes SHA-384(header ‖
    SHA-384(body)) and has no HAPI version, v5 hashes every byte and its hash is the end running hash."""
    wrapped = _wrapped([_stream_item(10**9), _stream_item(2 * 10**9)], [])
    record = read_wrapped_record_file(wrapped, version, 0)
    assert (record.name, record.version, record.block_number, record.metadata_hash) == (
        "1970-01-01T00_00_01.000000000Z.rcd",
        version,
        1,
        None,
    )
    assert record.previous_hash == hashlib.sha384(b"start").digest()
    if version == 2:
        assert (record.hapi_version, record.hash) == (None, record.file_hash)
    else:
        assert record.hapi_version == (0, 64, 0)
        assert record.hash == hashlib.sha384(b"end").digest()


# BlockStreamVerifierIntegrationTest: a 4-node book, 3 of the 4 signatures corrupted ------------------------------


@pytest.mark.parametrize("version", [2, 5, 6])
@pytest.mark.parametrize(("stakes", "expected"), [({}, "1/4"), (dict.fromkeys(range(4), 1000), "1000/4000")])
def test_consensus_not_reached_with_three_of_four_signatures_corrupted(
    version: int, stakes: dict[int, int], expected: str
) -> None:
    # the reference names the wrapped record file's signature (<name>.rcd_sig); we name the block
    keys = [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(4)]
    items = [StreamItem(10**18 + n, *_item_bytes(10**18 + n), "", "", ()) for n in range(3)]
    start = hashlib.sha384(b"start").digest()
    data = {
        2: lambda: stream_files.record_file_v2(items, start, 7),
        5: lambda: stream_files.record_file_v5(items, start, 7, (0, 30, 0)),
        6: lambda: stream_files.record_file(items, start, 7, (0, 30, 0), None),
    }[version]()
    block = block_files.wrapped_block(
        data, items, previous_root=bytes(48), node_keys=keys, hapi_version=(0, 30, 0), seed=1
    )
    serialized = zstandard.ZstdDecompressor().decompress(block.stored, max_output_size=1 << 30)
    book = read_address_book(stream_writer.address_book(keys))
    source = SourceBlock(7, "0000000000000000007.blk.zstd", serialized, len(block.stored))
    assert verify_block(source, book, None, stakes=stakes).record.file_hash == data.file_hash
    corrupted = _edit(block_hash.BLOCK_PROOF, _corrupt_signatures(1, 2, 3))(split_items(source.name, serialized))
    bad = SourceBlock(7, source.name, block_bytes(corrupted), source.size)
    with pytest.raises(
        ConsensusNotReached, match=f"Consensus not reached for file {source.name} with {expected} stake"
    ):
        verify_block(bad, book, None, stakes=stakes)


def _item_bytes(nanos: int) -> tuple[bytes, bytes]:
    written = stream_writer.item(nanos)
    return written.record, written.transaction


def _corrupt_signatures(*nodes: int) -> Callable[[Any], None]:
    def change(message: Any) -> None:
        for entry in message.block_proof.signed_record_file_proof.record_file_signatures:
            if entry.node_id in nodes:
                entry.signatures_bytes = bytes(len(entry.signatures_bytes))

    return change
