"""Simulated block streams (wrapped record blocks with signed record file proofs): the same rows as the record
stream, the record-to-block cutover (in one run, across restarts, while following), and the tamper suite."""

from __future__ import annotations

import asyncio
import itertools
import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from tests.importer.blocks_support import (
    FILES,
    NATIVE_ABSENT,
    NATIVE_COLUMNS,
    block_path,
    copy,
    digests,
    import_stream,
    rewrite_block,
    simulated,
)
from tests.importer.importing import fetch
from tests.support import Ledger

from ledgermirror.importer import block_hash
from ledgermirror.importer.cutover import run_stream
from ledgermirror.importer.errors import StreamFileError
from ledgermirror.importer.options import ImportOptions
from ledgermirror.importer.progress import ImportStats, LogProgress
from ledgermirror.ledger.protobuf import hapi_module
from ledgermirror.runtime import Prepared

pytestmark = pytest.mark.usefixtures("ledger")

BLOCK_COLUMNS = (
    "load_start",
    "load_end",
    "size",
    "wrapped_record_block_hash",
    "previous_wrapped_record_block_hash",
)
"""The ``record_file`` columns that differ by definition between a record file and the block wrapping it: the
wall clock, the size of what was downloaded (a ``.rcd.gz`` or a ``.blk.zstd``) and the wrapped block's hashes."""
SKIP: dict[str, tuple[str, ...]] = {
    "record_file": BLOCK_COLUMNS,
    "sidecar_file": ("size",),
    "signature_evidence": ("imported_at",),
}
"""Also the ``sidecar_file`` size (a wrapped block carries the sidecar uncompressed, the record stream gzipped)
and when each file's signature evidence was recorded (the wall clock); the node sets themselves must agree."""
TAMPERED = 4


@pytest.fixture(scope="module")
def networks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("block-networks")
    return {fmt: simulated(root, fmt) for fmt in ("records", "blocks", "cutover", "native")}


@pytest.fixture(scope="module")
def record_tables(networks: dict[str, Path], database: Prepared) -> dict[str, tuple[int, str]]:
    """The tables after importing the record stream (computed once, then the tables are emptied)."""
    ledger = Ledger(database.owner_url)
    ledger.reset()
    assert import_stream(database.owner_url, networks["records"], "records").files == FILES
    tables = digests(database.owner_url, SKIP)
    ledger.reset()
    return tables


def _files(url: str) -> list[Any]:
    return fetch(url, "select * from record_file order by index")


def test_blocks_write_the_rows_of_the_record_stream(
    database: Prepared, networks: dict[str, Path], record_tables: dict[str, tuple[int, str]]
) -> None:
    url = database.owner_url
    assert import_stream(url, networks["blocks"], "blocks").files == FILES
    tables = digests(url, SKIP)
    assert tables.pop("import_status")[0] == 1
    assert set(tables) == set(record_tables)
    assert {name: value for name, value in tables.items() if record_tables[name] != value} == {}
    assert tables["transaction"][0] > 100
    rows = _files(url)
    truth = json.loads((networks["blocks"] / "truth.json").read_text())
    assert [row["name"] for row in rows] == [file["name"] for file in truth["record_files"]["files"]]
    assert all(row["wrapped_record_block_hash"] is not None for row in rows)
    assert rows[0]["previous_wrapped_record_block_hash"] == bytes(48)
    for before, after in itertools.pairwise(rows):
        assert after["previous_wrapped_record_block_hash"] == before["wrapped_record_block_hash"]
    status = fetch(url, "select * from import_status")[0]
    assert (status["last_index"], status["last_proof"], status["last_proof_verified"]) == (
        FILES - 1,
        "signed record file",
        True,
    )
    assert status["chain_only_blocks"] == 0


def test_native_blocks_write_the_rows_of_the_record_stream(
    database: Prepared, networks: dict[str, Path], record_tables: dict[str, tuple[int, str]]
) -> None:
    url = database.owner_url
    assert import_stream(url, networks["native"], "blocks").files == FILES
    tables = digests(url, {"record_file": NATIVE_COLUMNS})
    status = tables.pop("import_status")
    assert status[0] == 1
    # trace data instead of sidecar files; a TSS proof names no nodes, so there is no signature evidence
    assert set(record_tables) - set(tables) == NATIVE_ABSENT
    assert set(tables) <= set(record_tables)
    differ = {name for name, value in tables.items() if name != "record_file" and record_tables[name] != value}
    assert differ == set()
    assert tables["record_file"][0] == record_tables["record_file"][0] == FILES
    assert record_tables["signature_evidence"][0] == FILES
    assert 0 < record_tables["sidecar_file"][0] <= FILES
    # so the native import has exactly those rows fewer, and its import_status row more
    absent = sum(record_tables[name][0] for name in NATIVE_ABSENT)
    native_rows = sum(count for count, _ in tables.values()) + status[0]
    assert native_rows == sum(count for count, _ in record_tables.values()) - absent + 1
    for table in ("contract_result", "contract_log", "contract_action", "contract_state_change", "token_airdrop"):
        assert tables[table][0] > 0, table  # the mix has what the transformers rebuild
    rows = _files(url)
    assert [row["version"] for row in rows] == [7] * FILES
    assert all(row["round_start"] == row["round_end"] == row["index"] + 1 for row in rows)
    info = fetch(url, "select * from import_status")[0]
    assert (info["last_proof"], info["last_proof_verified"], info["chain_only_blocks"]) == ("tss", False, FILES)


def test_native_record_file_rows_match_but_for_the_block_columns(
    database: Prepared, networks: dict[str, Path]
) -> None:
    url = database.owner_url
    assert import_stream(url, networks["records"], "records").files == FILES
    expected = digests(url, {"record_file": NATIVE_COLUMNS})["record_file"]
    Ledger(url).reset()
    assert import_stream(url, networks["native"], "blocks").files == FILES
    assert digests(url, {"record_file": NATIVE_COLUMNS})["record_file"] == expected


def test_a_network_that_cuts_over_mid_run_imports_without_gap_or_duplicate(
    database: Prepared, networks: dict[str, Path], record_tables: dict[str, tuple[int, str]]
) -> None:
    url = database.owner_url
    network = networks["cutover"]
    truth = json.loads((network / "truth.json").read_text())
    first_block = truth["record_files"]["first_wrapped_block"]
    assert 0 < first_block < FILES
    assert import_stream(url, network).files == FILES  # --stream auto
    tables = digests(url, SKIP)
    tables.pop("import_status")
    assert {name: value for name, value in tables.items() if record_tables[name] != value} == {}
    rows = _files(url)
    assert [row["index"] for row in rows] == list(range(FILES))
    wrapped = [row["wrapped_record_block_hash"] is not None for row in rows]
    assert wrapped == [index >= first_block for index in range(FILES)]
    for before, after in itertools.pairwise(rows):
        assert after["prev_hash"] == before["hash"]  # the running hash chain continues across the switch
    assert import_stream(url, network).files == 0
    assert import_stream(url, network, "records").files == 0  # the record stream has nothing after the blocks


def test_the_cutover_waits_for_the_block_after_the_last_record_file(
    database: Prepared, networks: dict[str, Path], tmp_path: Path
) -> None:
    url = database.owner_url
    network = copy(networks["cutover"], tmp_path / "net")
    first_block = json.loads((network / "truth.json").read_text())["record_files"]["first_wrapped_block"]
    held = tmp_path / "held"
    shutil.move(network / "block", held)
    assert import_stream(url, network).files == first_block  # the record stream only, so far
    shutil.copytree(held, network / "block")
    missing = block_path(network, first_block)
    kept = missing.read_bytes()
    missing.unlink()
    assert import_stream(url, network).files == 0  # later blocks are there, the next one is not: no gap
    assert fetch(url, "select count(*) from import_status")[0][0] == 0
    missing.write_bytes(kept)
    assert import_stream(url, network).files == FILES - first_block
    assert [row["index"] for row in _files(url)] == list(range(FILES))


class _StopWhen(LogProgress):
    """Stops a following import once the file named ``last`` is committed; adds the blocks after the records."""

    def __init__(self, stop: asyncio.Event, last: str, on_commit: Callable[[ImportStats], None]) -> None:
        self.stop, self.last, self.on_commit = stop, last, on_commit

    def committed(self, stats: ImportStats) -> None:
        self.on_commit(stats)
        if stats.last_name == self.last:
            self.stop.set()


def test_a_following_importer_switches_to_blocks_when_they_appear(
    database: Prepared, networks: dict[str, Path], tmp_path: Path
) -> None:
    network = copy(networks["cutover"], tmp_path / "net")
    truth = json.loads((network / "truth.json").read_text())
    listed = truth["record_files"]["files"]
    first_block = truth["record_files"]["first_wrapped_block"]
    held = tmp_path / "held"
    shutil.move(network / "block", held)

    def publish_blocks(stats: ImportStats) -> None:
        if stats.last_name == listed[first_block - 1]["name"] and not (network / "block").exists():
            shutil.copytree(held, network / "block")  # the network cuts over while the importer follows

    async def go() -> None:
        stop = asyncio.Event()
        options = ImportOptions(
            address_book=network / "addressbook.bin",
            initial_balances=network / "initial-balances.pb.gz",
            poll_seconds=0.02,
            max_poll_seconds=0.05,
        )
        conn = await asyncpg.connect(database.owner_url)
        try:
            progress = _StopWhen(stop, listed[-1]["name"], publish_blocks)
            await run_stream(conn, str(network), options, "auto", stop=stop, progress=progress)
        finally:
            await conn.close()

    asyncio.run(asyncio.wait_for(go(), 120))
    rows = _files(database.owner_url)
    assert [row["index"] for row in rows] == list(range(FILES))
    wrapped = [row["wrapped_record_block_hash"] is not None for row in rows]
    assert wrapped == [index >= first_block for index in range(FILES)]


# Tampering ----------------------------------------------------------------------------------------------------


def _items_class() -> Any:
    return hapi_module("block.stream.block_item_pb2").BlockItem


def _edit(kind: int, change: Callable[[Any], None]) -> Callable[[list[tuple[int, bytes]]], list[bytes]]:
    def edit(items: list[tuple[int, bytes]]) -> list[bytes]:
        out = []
        for item_kind, data in items:
            if item_kind != kind:
                out.append(data)
                continue
            message = _items_class().FromString(data)
            change(message)
            out.append(message.SerializeToString())
        return out

    return edit


def _flip_record_contents(message: Any) -> None:
    contents = message.record_file.record_file_contents
    contents.record_stream_items[0].record.memo += "!"


def _break_chain(message: Any) -> None:
    footer = message.block_footer
    footer.previous_block_root_hash = bytes(48)


def _drop_signatures(message: Any) -> None:
    del message.block_proof.signed_record_file_proof.record_file_signatures[:]


def _swap_signers(message: Any) -> None:
    for entry in message.block_proof.signed_record_file_proof.record_file_signatures:
        entry.node_id = 1 - entry.node_id


def _no_proof(message: Any) -> None:
    message.block_proof.ClearField("signed_record_file_proof")


def _flip_stored(network: Path) -> None:
    path = block_path(network, TAMPERED)
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))


def _reorder(network: Path) -> None:
    one, other = block_path(network, TAMPERED), block_path(network, TAMPERED + 1)
    first, second = one.read_bytes(), other.read_bytes()
    one.write_bytes(second)
    other.write_bytes(first)


TAMPERS: dict[str, tuple[Callable[[Path], None], str]] = {
    "a flipped byte in the stored file": (_flip_stored, "parse"),
    "a changed record in the wrapped file": (
        lambda n: rewrite_block(n, TAMPERED, _edit(block_hash.RECORD_FILE, _flip_record_contents)),
        "consensus",
    ),
    "a broken root hash chain": (
        lambda n: rewrite_block(n, TAMPERED, _edit(block_hash.BLOCK_FOOTER, _break_chain)),
        "previous hash",
    ),
    "every signature dropped": (
        lambda n: rewrite_block(n, TAMPERED, _edit(block_hash.BLOCK_PROOF, _drop_signatures)),
        "consensus",
    ),
    "signatures attributed to the other node": (
        lambda n: rewrite_block(n, TAMPERED, _edit(block_hash.BLOCK_PROOF, _swap_signers)),
        "consensus",
    ),
    "no proof": (lambda n: rewrite_block(n, TAMPERED, _edit(block_hash.BLOCK_PROOF, _no_proof)), "block proof"),
    "blocks swapped": (_reorder, "block number"),
}


@pytest.mark.parametrize("tamper", list(TAMPERS))
def test_a_tampered_block_is_refused_with_nothing_written(
    database: Prepared, networks: dict[str, Path], tmp_path: Path, tamper: str
) -> None:
    url = database.owner_url
    network = copy(networks["blocks"], tmp_path / "net")
    change, check = TAMPERS[tamper]
    change(network)
    truth = json.loads((network / "truth.json").read_text())
    with pytest.raises(StreamFileError) as refused:
        import_stream(url, network, "blocks", files_per_transaction=2)
    assert refused.value.check == check
    assert refused.value.file_name.endswith((f"{TAMPERED:03d}.blk.zstd", f"{TAMPERED:03d}.blk"))
    assert [row["index"] for row in _files(url)] == list(range(TAMPERED))
    before = sum(file["count"] for file in truth["record_files"]["files"][:TAMPERED])
    assert fetch(url, "select count(*) from transaction")[0][0] == before
    assert fetch(url, "select last_index from import_status")[0][0] == TAMPERED - 1


def _amend(message: Any) -> None:
    """Amend the last block's first item (another fee charged) and add an item 1 ns after its last."""
    wrapped = message.record_file
    items = wrapped.record_file_contents.record_stream_items
    changed = wrapped.amendments.add()
    changed.CopyFrom(items[0])
    changed.record.transactionFee = 12_345
    added = wrapped.amendments.add()
    added.CopyFrom(items[-1])
    added.record.consensusTimestamp.nanos += 1
    added.record.transactionFee = 54_321


def test_amendments_replace_and_add_items_of_a_wrapped_block(
    database: Prepared, networks: dict[str, Path], tmp_path: Path
) -> None:
    url = database.owner_url
    network = copy(networks["blocks"], tmp_path / "net")
    last = FILES - 1
    rewrite_block(network, last, _edit(block_hash.RECORD_FILE, _amend))
    truth = json.loads((network / "truth.json").read_text())
    listed = truth["record_files"]["files"][last]
    assert import_stream(url, network, "blocks").files == FILES
    fees = {
        row["consensus_timestamp"]: row["charged_tx_fee"]
        for row in fetch(url, "select consensus_timestamp, charged_tx_fee from transaction")
    }
    assert fees[listed["consensus_start"]] == 12_345
    assert fees[listed["consensus_end"] + 1] == 54_321
    row = fetch(url, "select count, consensus_end from record_file where index = $1", last)[0]
    assert (row["count"], row["consensus_end"]) == (listed["count"] + 1, listed["consensus_end"] + 1)


def test_an_empty_database_starts_at_the_first_block_of_the_start_date(
    database: Prepared, networks: dict[str, Path]
) -> None:
    url = database.owner_url
    network = networks["blocks"]
    listed = json.loads((network / "truth.json").read_text())["record_files"]["files"]
    stats = import_stream(url, network, "blocks", start=listed[3]["consensus_start"] - 1)
    assert stats.files == FILES - 3
    assert [row["index"] for row in _files(url)] == list(range(3, FILES))
    assert import_stream(url, network, "blocks", start=listed[0]["consensus_start"]).files == 0  # resumes
