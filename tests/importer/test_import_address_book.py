"""The node set follows the stream: a file updating 0.0.102 changes the keys that must sign the next files."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from tests.importer import signed_streams, stream_writer
from tests.importer.importing import fetch, run

from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.pipeline import stream_name_prefix
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

NODES = 4
START = 1_700_000_000 * 1_000_000_000


@pytest.fixture(scope="module")
def old_keys() -> list[rsa.RSAPrivateKey]:
    return signed_streams.node_keys(NODES)


@pytest.fixture(scope="module")
def new_keys() -> list[rsa.RSAPrivateKey]:
    return signed_streams.node_keys(NODES)


def _stream(
    root: Path, first_keys: Sequence[rsa.RSAPrivateKey], second_keys: Sequence[rsa.RSAPrivateKey], book: bytes
) -> None:
    """File 1 (signed by ``first_keys``) updates 0.0.102 to ``book``; file 2 is signed by ``second_keys``."""
    first = START
    second = START + 2_000_000_000
    end = signed_streams.write_file(
        root,
        first,
        [signed_streams.file_update(first, 102, book)],
        signed_streams.GENESIS_HASH,
        1,
        keys=first_keys,
    )
    signed_streams.write_file(
        root, second, [signed_streams.file_update(second, 1234, b"contents")], end, 2, keys=second_keys
    )


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
