"""A correctly signed file whose transaction cannot be read is refused as a parse error, nothing of it written."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.importer import signed_streams, stream_writer
from tests.importer.importing import fetch, run, table_counts

from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.pipeline import stream_name_prefix
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

START = 1_720_000_000 * 1_000_000_000


@pytest.mark.parametrize("files_per_transaction", [1, 50])
def test_an_unreadable_transaction_is_refused(
    database: Prepared, tmp_path: Path, files_per_transaction: int
) -> None:
    keys = signed_streams.node_keys(4)
    (tmp_path / "book.bin").write_bytes(stream_writer.address_book(keys))
    streams = tmp_path / "streams"
    second = START + 2_000_000_000
    end = signed_streams.write_file(
        streams, START, [signed_streams.file_update(START, 1001, b"x")], signed_streams.GENESIS_HASH, 1, keys=keys
    )
    garbage = stream_writer.Item(stream_writer.item(second).record, b"\x0a\x03abc\xff")  # truncated field
    signed_streams.write_file(streams, second, [garbage], end, 2, keys=keys)
    with pytest.raises(StreamParseError) as refused:
        run(database.owner_url, streams, book=tmp_path / "book.bin", files_per_transaction=files_per_transaction)
    assert refused.value.file_name == f"{stream_name_prefix(second)}.rcd.gz"
    assert refused.value.check == "parse"
    stored = [row["index"] for row in fetch(database.owner_url, "select index from record_file")]
    if files_per_transaction == 1:
        assert stored == [1]  # the file before it was committed in its own transaction
    else:
        assert stored == []  # it shared the transaction that rolled back
        assert table_counts(database.owner_url) == {}
