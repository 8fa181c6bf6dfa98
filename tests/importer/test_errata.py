"""Mainnet's errata (the reference's ``ErrataMigration``) applied by the import, with ``ErrataMigrationTest``'s
expected values: a signed stream of our own whose files span mainnet's missing transactions (2019-09 to
2023-02) is imported as mainnet's ledger, through the record pipeline and as wrapped record blocks."""

from __future__ import annotations

import fnmatch
import tomllib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa
from hiero_sdk_python.hapi.services import (  # type: ignore[import-untyped]
    basic_types_pb2,
    transaction_contents_pb2,
    transaction_pb2,
    transaction_record_pb2,
)
from tests.importer import importing, signed_streams, stream_writer
from tests.importer.blocks_support import import_stream
from tests.importer.importing import fetch

from ledgermirror.importer import errata
from ledgermirror.importer.address_book import AddressBook, read_address_book
from ledgermirror.importer.errors import StreamParseError
from ledgermirror.importer.progress import ImportStats
from ledgermirror.runtime import Prepared
from ledgermirror.simulator import block_files, stream_files
from ledgermirror.simulator.emitter import StreamItem

pytestmark = pytest.mark.usefixtures("ledger")

# ErrataMigrationTest's constants
BAD_TIMESTAMP1 = 1568415600193620000
BAD_TIMESTAMP2 = 1568528100472477002
BAD_TIMESTAMP_FIXED_OFFSET = 1658421000626004000
RECEIVER_PAYER_TIMESTAMP = 1570118944399195000
OUTSIDE_PERIOD = 1577836799000000000
CRYPTO_TRANSFER, CRYPTO_DELETE = 14, 12
AFTER_THE_LAST = 1677628800000000000  # 2023-03-01T00:00:00Z, after the last missing transaction
MISSED_TOKEN_TRANSFERS = 1675995378649144003  # 2023-02-10T02:16:18.649144003Z
HAPI = (0, 28, 0)


def run(url: str, source: str | Path, **options: Any) -> ImportStats:
    """An import as ``ErrataMigrationTest`` sees one: without balance snapshots (the reference's migration test
    runs no historical balance service, whose synthetic treasury entity its entity counts do not expect)."""
    return importing.run(url, source, balance_snapshots=None, **options)


@pytest.fixture(scope="module")
def keys() -> list[rsa.RSAPrivateKey]:
    return signed_streams.node_keys(2)


def _transfer(
    nanos: int, result: int, kind: int, *, receiver_is_payer: bool, sender_is_payer: bool, serial: int
) -> stream_writer.Item:
    """ErrataMigrationTest.spuriousTransfer as a record item: the body moves 100000 from a sender to a receiver;
    the record lists them, the node (0.0.3 +1), 0.0.98 (+2, +4) and the payer's fees (-3, -4)."""
    payer = 2000 + serial
    sender = payer if sender_is_payer else 3000 + serial
    receiver = payer if receiver_is_payer else 4000 + serial
    transaction_id = basic_types_pb2.TransactionID(
        accountID=basic_types_pb2.AccountID(accountNum=payer),
        transactionValidStart=signed_streams.stamp(max(nanos - 1_000_000_000, 0)),
    )
    body = transaction_pb2.TransactionBody(
        transactionID=transaction_id, nodeAccountID=basic_types_pb2.AccountID(accountNum=3), transactionFee=7
    )
    if kind == CRYPTO_TRANSFER:
        for account, amount in ((sender, -100_000), (receiver, 100_000)):
            body.cryptoTransfer.transfers.accountAmounts.add(
                accountID=basic_types_pb2.AccountID(accountNum=account), amount=amount
            )
    else:
        body.cryptoDelete.deleteAccountID.accountNum = sender
        body.cryptoDelete.transferAccountID.accountNum = receiver
    signed = transaction_contents_pb2.SignedTransaction(bodyBytes=body.SerializeToString())
    transaction = transaction_pb2.Transaction(signedTransactionBytes=signed.SerializeToString())
    record = transaction_record_pb2.TransactionRecord(
        consensusTimestamp=signed_streams.stamp(nanos), transactionID=transaction_id, transactionFee=7
    )
    record.receipt.status = result
    listed = [(sender, -100_000), (receiver, 100_000), (3, 1), (98, 2), (98, 4), (payer, -3), (payer, -4)]
    for account, amount in listed:
        record.transferList.accountAmounts.add(
            accountID=basic_types_pb2.AccountID(accountNum=account), amount=amount
        )
    return stream_writer.Item(record.SerializeToString(), transaction.SerializeToString())


def _spurious() -> list[stream_writer.Item]:
    """migrateMainnet's six transactions: three expected to be marked, three not (success, CryptoDelete, the
    end of the period)."""
    cases = [
        (1, 15, CRYPTO_TRANSFER, False, False),
        (2, 15, CRYPTO_TRANSFER, False, True),
        (3, 22, CRYPTO_TRANSFER, False, False),  # wrong result
        (4, 10, CRYPTO_DELETE, True, False),  # wrong type
        (RECEIVER_PAYER_TIMESTAMP, 10, CRYPTO_TRANSFER, True, False),
        (OUTSIDE_PERIOD, 10, CRYPTO_TRANSFER, False, False),  # outside the period
    ]
    return [
        _transfer(nanos, result, kind, receiver_is_payer=receiver, sender_is_payer=sender, serial=serial)
        for serial, (nanos, result, kind, receiver, sender) in enumerate(cases)
    ]


def _missing_item(nanos: int) -> stream_writer.Item:
    [entry] = [m for m in errata.missing_transactions() if m.consensus_timestamp == nanos]
    return stream_writer.Item(entry.item.record_bytes, entry.item.transaction_bytes)


def _stream(root: Path, keys: Sequence[rsa.RSAPrivateKey], carried: int | None = None) -> Path:
    """Two files: the spurious transfers (from 1 ns to 2019-12-31), then one transfer on 2023-03-01, after
    the missing transaction at ``carried`` when given (the second file then starts with it)."""
    end = signed_streams.write_file(root, 1, _spurious(), signed_streams.GENESIS_HASH, 0, keys=keys)
    last = _transfer(AFTER_THE_LAST, 22, CRYPTO_TRANSFER, receiver_is_payer=False, sender_is_payer=False, serial=9)
    items = [_missing_item(carried), last] if carried is not None else [last]
    signed_streams.write_file(root, carried or AFTER_THE_LAST, items, end, 1, keys=keys)
    return root


def _book(root: Path, keys: Sequence[rsa.RSAPrivateKey]) -> Path:
    path = root / "book.bin"
    path.write_bytes(stream_writer.address_book(keys))
    return path


def _balance_files(url: str, *stamps: int) -> None:
    for stamp in stamps:
        fetch(
            url,
            "insert into account_balance_file (consensus_timestamp, count, load_start, load_end, name) "
            "values ($1, 0, 0, 0, $2) returning 1",
            stamp,
            f"{stamp}_Balances.pb.gz",
        )


def _errata_counts(url: str) -> dict[str, Any]:
    def grouped(table: str) -> dict[str | None, int]:
        return {row[0]: row[1] for row in fetch(url, f"select errata::text, count(*) from {table} group by 1")}

    return {
        "transaction": grouped("transaction"),
        "crypto_transfer": grouped("crypto_transfer"),
        "deleted at": sorted(
            {
                row[0]
                for row in fetch(url, "select consensus_timestamp from crypto_transfer where errata = 'DELETE'")
            }
        ),
        "contract_result": fetch(url, "select count(*) from contract_result")[0][0],
        "token_transfer": fetch(url, "select count(*) from token_transfer")[0][0],
        "entity": [tuple(row) for row in fetch(url, "select id, type::text, created_timestamp from entity")],
        "offsets": {
            row[0]: row[1]
            for row in fetch(
                url, "select consensus_timestamp, time_offset from account_balance_file where time_offset <> 0"
            )
        },
    }


EXPECTED_OFFSETS = {BAD_TIMESTAMP1: -1, BAD_TIMESTAMP2: -1, BAD_TIMESTAMP_FIXED_OFFSET: 53}


def _assert_mainnet(counts: dict[str, Any], *, own_transactions: int = 7) -> None:
    # ErrataMigrationTest.migrateMainnet
    assert counts["offsets"] == EXPECTED_OFFSETS
    assert counts["contract_result"] == 1
    # The reference writes no entity (0). Ours: one partial row, the stake period start of 0.0.786918, paid
    # staking rewards by three of the 2023-02 transactions: our writer inserts a partial entity state that the
    # reference's upsert skips when the entity does not exist (no created_timestamp). In a mainnet import the
    # account exists and nothing differs; the difference is the writer's, on every network (docs/importer.md).
    assert counts["entity"] == [(786918, "UNKNOWN", None)]
    assert counts["token_transfer"] == 24
    assert counts["transaction"].get("INSERT") == 113
    assert "DELETE" not in counts["transaction"]
    assert counts["transaction"][None] == own_transactions
    assert counts["crypto_transfer"].get("INSERT") == 566
    assert counts["crypto_transfer"].get("DELETE") == 6
    assert counts["deleted at"] == [1, 2, RECEIVER_PAYER_TIMESTAMP]


def test_packaged_data() -> None:
    missing = errata.missing_transactions()
    assert len(missing) == 113
    assert [m.consensus_timestamp for m in missing] == sorted(m.consensus_timestamp for m in missing)
    transfers = sum(len(m.item.record.transferList.accountAmounts) for m in missing)
    token_transfers = sum(len(listed.transfers) for m in missing for listed in m.item.record.tokenTransferLists)
    assert (transfers, token_transfers) == (566, 24)
    offsets = errata.balance_offset_timestamps()
    assert (len(offsets), min(offsets), max(offsets)) == (6949, 1568415600193620000, 1599580800153882000)


# ErrataMigrationTest.onEndWithoutOffset, onEndWithOffset
@pytest.mark.parametrize(
    ("stamp", "offset"), [(1, 0), (BAD_TIMESTAMP1, -1), (BAD_TIMESTAMP_FIXED_OFFSET, 53), (BAD_TIMESTAMP2, -1)]
)
def test_balance_file_time_offset(stamp: int, offset: int) -> None:
    assert errata.balance_file_time_offset(stamp) == offset


# ErrataMigrationTest.onEndWithOffset for a balance file the import starts from (--balance-files): the offset
# on mainnet only
@pytest.mark.parametrize(
    ("network", "stamp", "offset"),
    [("mainnet", BAD_TIMESTAMP1, -1), ("mainnet", BAD_TIMESTAMP_FIXED_OFFSET, 53), ("testnet", BAD_TIMESTAMP1, 0)],
)
def test_a_started_from_balance_file_takes_its_offset_on_mainnet_only(
    network: str, stamp: int, offset: int
) -> None:
    book = AddressBook(nodes=(), entry_count=0)
    assert errata.balance_file_offset_on(book, network, stamp) == offset


def test_a_bad_errata_file_is_refused() -> None:
    with pytest.raises(StreamParseError, match="Expected value between 1 and 65536 but got 0"):
        errata.read_missing_transaction("x.bin", b"\0\0\0\0")


def test_mainnet_is_recognized_by_its_address_book(keys: list[rsa.RSAPrivateKey]) -> None:
    mainnet = Path("/work/shared/upstream/streams/addressbook")  # the shared books are testnet's and tests'
    for name in ("testnet", "test-v6-4n.bin"):
        assert not errata.is_mainnet(read_address_book((mainnet / name).read_bytes()))
    own = read_address_book(stream_writer.address_book(keys))
    assert not errata.is_mainnet(own)
    assert errata.is_mainnet(own, "mainnet") and errata.is_mainnet(own, "MainNet-staging")
    assert not errata.is_mainnet(own, "testnet")


def test_mainnet_book_fingerprints_are_packaged() -> None:
    assert len(errata.mainnet_key_fingerprints()) == 13


# ErrataMigrationTest.migrateMainnet
def test_migrate_mainnet(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    _balance_files(url, 1_600_000_000_000_000_000, BAD_TIMESTAMP1, BAD_TIMESTAMP2, BAD_TIMESTAMP_FIXED_OFFSET)
    stats = run(url, _stream(tmp_path / "s", keys), book=_book(tmp_path, keys), network="mainnet")
    assert stats.files == 2
    _assert_mainnet(_errata_counts(url))


# ErrataMigrationTest.migrateNotMainnet
def test_migrate_not_mainnet(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    _balance_files(url, BAD_TIMESTAMP1)
    run(url, _stream(tmp_path / "s", keys), book=_book(tmp_path, keys), network="testnet")
    counts = _errata_counts(url)
    assert counts["offsets"] == {}
    assert "INSERT" not in counts["transaction"] and "INSERT" not in counts["crypto_transfer"]
    assert (counts["contract_result"], counts["entity"], counts["token_transfer"]) == (0, [], 0)
    # the spurious transfers of failed 2019 transfers are the record stream's on every network
    assert counts["crypto_transfer"]["DELETE"] == 6


# ErrataMigrationTest.migrateNotMainnet, the network told by the address book: ours is not mainnet's
def test_an_unknown_book_is_not_mainnet(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    run(url, _stream(tmp_path / "s", keys), book=_book(tmp_path, keys))
    assert "INSERT" not in _errata_counts(url)["transaction"]


# ErrataMigrationTest.migrateOutsideDateRange: an import that starts after them adds none
def test_migrate_outside_date_range(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    run(url, _stream(tmp_path / "s", keys), book=_book(tmp_path, keys), network="mainnet", start=AFTER_THE_LAST)
    counts = _errata_counts(url)
    assert "INSERT" not in counts["transaction"]
    assert (counts["contract_result"], counts["entity"]) == (0, [])
    assert counts["transaction"] == {None: 1}


# ErrataMigrationTest.migrateIdempotency: a rerun (and a restart in between) adds nothing more
def test_migrate_idempotency(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    _balance_files(url, 1_600_000_000_000_000_000, BAD_TIMESTAMP1, BAD_TIMESTAMP2, BAD_TIMESTAMP_FIXED_OFFSET)
    stream, book = _stream(tmp_path / "s", keys), _book(tmp_path, keys)
    assert run(url, stream, book=book, network="mainnet", end=OUTSIDE_PERIOD).files == 1
    assert _errata_counts(url)["transaction"]["INSERT"] == 31  # those of 2019
    assert run(url, stream, book=None, network="mainnet").files == 1
    assert run(url, stream, book=None, network="mainnet").files == 0
    _assert_mainnet(_errata_counts(url))


# ErrataMigrationTest.migrateMissedTokenTransfers: a transaction already there (here: carried by the file
# itself, as a block node's amendment may carry one) is not added again, and its token transfers are there
def test_migrate_missed_token_transfers(database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]) -> None:
    url = database.owner_url
    run(url, _stream(tmp_path / "s", keys, MISSED_TOKEN_TRANSFERS), book=_book(tmp_path, keys), network="mainnet")
    counts = _errata_counts(url)
    assert counts["token_transfer"] == 24
    assert counts["transaction"]["INSERT"] == 112
    assert (
        fetch(url, "select errata from transaction where consensus_timestamp = $1", MISSED_TOKEN_TRANSFERS)[0][0]
        is None
    )


def _blocks(root: Path, keys: Sequence[rsa.RSAPrivateKey]) -> Path:
    """The same two files as wrapped record blocks 0 and 1 (the simulator's block writer), with the book."""
    previous_root = bytes(48)
    start = signed_streams.GENESIS_HASH
    last = _transfer(AFTER_THE_LAST, 22, CRYPTO_TRANSFER, receiver_is_payer=False, sender_is_payer=False, serial=9)
    for number, items in enumerate([_spurious(), [last]]):
        stream_items = [
            StreamItem(instant, item.record, item.transaction, "", "", ())
            for instant, item in ((_instant(item), item) for item in items)
        ]
        data = stream_files.record_file(stream_items, start, number, HAPI, None)
        block = block_files.wrapped_block(
            data, stream_items, previous_root=previous_root, node_keys=list(keys), hapi_version=HAPI, seed=0
        )
        block_files.write_block(root, block)
        previous_root, start = block.root_hash, data.end_running_hash
    (root / "addressbook.bin").write_bytes(stream_writer.address_book(keys))
    return root


def _instant(item: stream_writer.Item) -> int:
    stamp = transaction_record_pb2.TransactionRecord.FromString(item.record).consensusTimestamp
    return int(stamp.seconds) * 1_000_000_000 + int(stamp.nanos)


def test_wrapped_record_blocks_of_mainnet_get_the_errata(
    database: Prepared, tmp_path: Path, keys: list[rsa.RSAPrivateKey]
) -> None:
    """ErrataMigrationTest.migrateMainnet through the block pipeline: the same errata."""
    url = database.owner_url
    _balance_files(url, 1_600_000_000_000_000_000, BAD_TIMESTAMP1, BAD_TIMESTAMP2, BAD_TIMESTAMP_FIXED_OFFSET)
    network = _blocks(tmp_path / "blocks", keys)
    assert (
        import_stream(
            url, network, "blocks", initial_balances=None, network="mainnet", balance_snapshots=None
        ).files
        == 2
    )
    _assert_mainnet(_errata_counts(url))


def test_the_errata_ship_in_the_wheel() -> None:
    """Every file of ``mainnet_errata/`` is named by the package data of ``pyproject.toml``."""
    root = Path(__file__).resolve().parents[2]
    patterns = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    package = root / "src" / "ledgermirror"
    files = [path for path in (package / "importer" / "mainnet_errata").rglob("*") if path.is_file()]
    assert len(files) == 117
    unshipped = [
        path
        for path in files
        if not any(fnmatch.fnmatch(str(path.relative_to(package)), p) for p in patterns["ledgermirror"])
    ]
    assert unshipped == []
