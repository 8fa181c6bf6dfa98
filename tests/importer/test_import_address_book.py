"""The node set follows the stream: a file updating 0.0.102 changes the keys that must sign the next files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hiero_sdk_python.hapi.services import (  # type: ignore[import-untyped]
    basic_types_pb2,
    timestamp_pb2,
    transaction_contents_pb2,
    transaction_pb2,
    transaction_record_pb2,
)
from tests.importer import stream_writer
from tests.importer.importing import fetch, run

from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.pipeline import stream_name_prefix
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

NODES = 4
SUCCESS = 22
START = 1_700_000_000 * 1_000_000_000
GENESIS_HASH = bytes(48)


@pytest.fixture(scope="module")
def old_keys() -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(NODES)]


@pytest.fixture(scope="module")
def new_keys() -> list[rsa.RSAPrivateKey]:
    return [rsa.generate_private_key(public_exponent=65537, key_size=1024) for _ in range(NODES)]


def _stamp(nanos: int) -> timestamp_pb2.Timestamp:
    return timestamp_pb2.Timestamp(seconds=nanos // 1_000_000_000, nanos=nanos % 1_000_000_000)


def _file_update(nanos: int, file_num: int, contents: bytes) -> stream_writer.Item:
    """A successful FileUpdate of 0.0.``file_num`` paid by 0.0.2, with its record."""
    transaction_id = basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(accountNum=2), transactionValidStart=_stamp(nanos - 1_000_000_000)
    )
    body = transaction_pb2.TransactionBody(
        transactionID=transaction_id,
        nodeAccountID=basic_types_pb2.AccountID(accountNum=3),
        transactionFee=100,
    )
    body.fileUpdate.fileID.fileNum = file_num
    body.fileUpdate.contents = contents
    signed = transaction_contents_pb2.SignedTransaction(bodyBytes=body.SerializeToString())
    transaction = transaction_pb2.Transaction(signedTransactionBytes=signed.SerializeToString())
    record = transaction_record_pb2.TransactionRecord(
        consensusTimestamp=_stamp(nanos), transactionID=transaction_id
    )
    record.receipt.status = SUCCESS
    return stream_writer.Item(record.SerializeToString(), transaction.SerializeToString())


def _write_file(
    root: Path,
    nanos: int,
    items: Sequence[stream_writer.Item],
    start: bytes,
    block: int,
    *,
    keys: Sequence[rsa.RSAPrivateKey],
) -> bytes:
    written = stream_writer.v6(items, start, block)
    stem = stream_name_prefix(nanos)
    for node_id, key in enumerate(keys):
        folder = root / "recordstreams" / f"record0.0.{node_id + 3}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{stem}.rcd.gz").write_bytes(written.stored)
        signature = stream_writer.signature_v6(key, written.file_hash, written.metadata_hash or b"")
        (folder / f"{stem}.rcd_sig").write_bytes(signature)
    return written.end_hash


def _stream(
    root: Path, first_keys: Sequence[rsa.RSAPrivateKey], second_keys: Sequence[rsa.RSAPrivateKey], book: bytes
) -> None:
    """File 1 (signed by ``first_keys``) updates 0.0.102 to ``book``; file 2 is signed by ``second_keys``."""
    first = START
    second = START + 2_000_000_000
    end = _write_file(root, first, [_file_update(first, 102, book)], GENESIS_HASH, 1, keys=first_keys)
    _write_file(root, second, [_file_update(second, 1234, b"contents")], end, 2, keys=second_keys)


def test_a_new_address_book_verifies_the_files_after_it(
    database: Prepared, tmp_path: Path, old_keys: list[rsa.RSAPrivateKey], new_keys: list[rsa.RSAPrivateKey]
) -> None:
    (tmp_path / "book.bin").write_bytes(stream_writer.address_book(old_keys))
    _stream(tmp_path / "streams", old_keys, new_keys, stream_writer.address_book(new_keys))
    stats = run(database.owner_url, tmp_path / "streams", book=tmp_path / "book.bin")
    assert stats.files == 2
    books = fetch(database.owner_url, "select start_consensus_timestamp from address_book order by 1")
    assert [row[0] for row in books] == [1, START + 1]


def test_the_old_keys_no_longer_count_after_the_change(
    database: Prepared, tmp_path: Path, old_keys: list[rsa.RSAPrivateKey], new_keys: list[rsa.RSAPrivateKey]
) -> None:
    (tmp_path / "book.bin").write_bytes(stream_writer.address_book(old_keys))
    _stream(tmp_path / "streams", old_keys, old_keys, stream_writer.address_book(new_keys))
    with pytest.raises(StreamFileError) as refused:
        run(database.owner_url, tmp_path / "streams", book=tmp_path / "book.bin")
    assert refused.value.check == "consensus"
    assert refused.value.file_name == f"{stream_name_prefix(START + 2_000_000_000)}.rcd_sig"
    assert [row[0] for row in fetch(database.owner_url, "select index from record_file")] == [1]
