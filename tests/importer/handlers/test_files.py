"""The file service: file_data, entity rows of files, address books 0.0.101/0.0.102, system delete/undelete."""

from __future__ import annotations

from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    T0,
    basic,
    body,
    crypto_transfer,
    encoded,
    fetch,
    file,
    import_items,
    module,
    record_item,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.record_file import RecordItem

FILE_CREATE, FILE_UPDATE, FILE_APPEND = 17, 19, 16


def update(num: int, contents: bytes, *, at: int, status: int = 22, memo: str | None = None) -> RecordItem:
    message = module("file_update_pb2").FileUpdateTransactionBody(fileID=file(num), contents=contents)
    if memo is not None:
        message.memo.CopyFrom(wrappers_pb2.StringValue(value=memo))
    return record_item(body("fileUpdate", message, payer=50), at=at, status=status)


def append(num: int, contents: bytes, *, at: int) -> RecordItem:
    message = module("file_append_pb2").FileAppendTransactionBody(fileID=file(num), contents=contents)
    return record_item(body("fileAppend", message, payer=50), at=at)


def book(*nodes: tuple[int, int, str]) -> bytes:
    """A NodeAddressBook of (node id, account num, ip) entries."""
    message = basic.NodeAddressBook(
        nodeAddress=[
            basic.NodeAddress(
                nodeId=node_id,
                nodeAccountId=basic.AccountID(accountNum=num),
                RSA_PubKey="308201a2" + f"{node_id:02x}" * 8,
                nodeCertHash=b"ab" * 48,
                description=f"node {node_id}",
                stake=1000 + node_id,
                serviceEndpoint=[
                    basic.ServiceEndpoint(ipAddressV4=bytes(int(part) for part in ip.split(".")), port=50211),
                    basic.ServiceEndpoint(domain_name=f"node{node_id}.example", port=50212),
                ],
            )
            for node_id, num, ip in nodes
        ]
    )
    return bytes(message.SerializeToString())


def test_file_create_update_append_delete(ledger: Ledger) -> None:
    t1, t2, t3, t4 = T0 + 1, T0 + 2, T0 + 3, T0 + 4
    keys = basic.KeyList(keys=[basic.Key(ed25519=b"\x03" * 32)])
    create = module("file_create_pb2").FileCreateTransactionBody(contents=b"abc", keys=keys, memo="f")
    delete = module("file_delete_pb2").FileDeleteTransactionBody(fileID=file(1500))
    import_items(
        ledger.url,
        record_item(body("fileCreate", create), at=t1, receipt={"fileID": file(1500)}),
        update(1500, b"", at=t2, memo="g"),
        append(1500, b"def", at=t3),
        record_item(body("fileDelete", delete), at=t4),
    )
    data = fetch(ledger.url, "select * from file_data order by consensus_timestamp")
    assert data == [
        {
            "file_data": b"abc",
            "consensus_timestamp": t1,
            "entity_id": encoded(1500),
            "transaction_type": FILE_CREATE,
        },
        {"file_data": b"", "consensus_timestamp": t2, "entity_id": encoded(1500), "transaction_type": FILE_UPDATE},
        {
            "file_data": b"def",
            "consensus_timestamp": t3,
            "entity_id": encoded(1500),
            "transaction_type": FILE_APPEND,
        },
    ]
    entity = fetch(ledger.url, "select * from entity")[0]
    assert (entity["type"], entity["memo"], entity["deleted"], entity["created_timestamp"]) == (
        "FILE",
        "g",
        True,
        t1,
    )
    assert entity["key"] == keys.SerializeToString()
    assert entity["balance"] is None
    assert len(fetch(ledger.url, "select * from entity_history")) == 2
    types = fetch(ledger.url, "select type, entity_id from transaction order by consensus_timestamp")
    assert types == [{"type": t, "entity_id": encoded(1500)} for t in (17, 19, 16, 18)]


def test_failed_file_update_writes_no_file_data(ledger: Ledger) -> None:
    import_items(ledger.url, update(121, b"x", at=T0, status=7))
    assert fetch(ledger.url, "select count(*) from file_data") == [{"count": 0}]
    assert fetch(ledger.url, "select count(*) from entity") == [{"count": 0}]


def test_update_of_unseen_file_creates_its_entity(ledger: Ledger) -> None:
    """Like the FileUpdate of 0.0.121 in the reference's v6 fixture: no created_timestamp, not deleted."""
    import_items(ledger.url, update(121, b"props", at=T0))
    row = fetch(ledger.url, "select created_timestamp, deleted, type, balance from entity where id = 121")
    assert row == [{"created_timestamp": None, "deleted": False, "type": "FILE", "balance": None}]


def test_address_book_from_update_and_append(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 10, T0 + 20, T0 + 30
    contents = book((0, 3, "10.0.0.1"), (1, 4, "10.0.0.2"))
    batch = Batch()
    import_items(ledger.url, update(102, contents[:20], at=t1), append(102, contents[20:], at=t2), batch=batch)
    assert batch.address_book_changed
    books = fetch(ledger.url, "select * from address_book")
    assert books == [
        {"start_consensus_timestamp": t2 + 1, "end_consensus_timestamp": None, "file_id": encoded(102),
         "node_count": 2, "file_data": contents}
    ]  # fmt: skip
    entries = fetch(ledger.url, "select * from address_book_entry order by node_id")
    assert [(row["node_id"], row["node_account_id"], row["stake"]) for row in entries] == [
        (0, 3, 1000),
        (1, 4, 1001),
    ]
    assert entries[0]["consensus_timestamp"] == t2 + 1
    assert entries[0]["public_key"] == "308201a2" + "00" * 8
    assert entries[0]["node_cert_hash"] == b"ab" * 48
    assert entries[0]["description"] == "node 0"
    endpoints = fetch(
        ledger.url,
        "select node_id, ip_address_v4, port, domain_name from address_book_service_endpoint order by 1, 3",
    )
    assert endpoints == [
        {"node_id": 0, "ip_address_v4": "10.0.0.1", "port": 50211, "domain_name": ""},
        {"node_id": 0, "ip_address_v4": "", "port": 50212, "domain_name": "node0.example"},
        {"node_id": 1, "ip_address_v4": "10.0.0.2", "port": 50211, "domain_name": ""},
        {"node_id": 1, "ip_address_v4": "", "port": 50212, "domain_name": "node1.example"},
    ]
    # A later update replaces the book: the previous one ends at that transaction.
    import_items(ledger.url, update(102, book((0, 3, "10.0.0.9")), at=t3))
    books = fetch(
        ledger.url, "select start_consensus_timestamp, end_consensus_timestamp, node_count from address_book"
    )
    assert sorted(books, key=lambda row: row["start_consensus_timestamp"]) == [
        {"start_consensus_timestamp": t2 + 1, "end_consensus_timestamp": t3, "node_count": 2},
        {"start_consensus_timestamp": t3 + 1, "end_consensus_timestamp": None, "node_count": 1},
    ]


def test_other_system_files_are_plain_file_data(ledger: Ledger) -> None:
    batch = Batch()
    import_items(ledger.url, update(111, b"fees", at=T0), update(112, b"rates", at=T0 + 1), batch=batch)
    assert not batch.address_book_changed
    assert fetch(ledger.url, "select count(*) from address_book") == [{"count": 0}]
    assert fetch(ledger.url, "select entity_id from file_data order by 1") == [
        {"entity_id": 111},
        {"entity_id": 112},
    ]


def test_system_delete_and_undelete(ledger: Ledger) -> None:
    system_delete = module("system_delete_pb2").SystemDeleteTransactionBody(fileID=file(1600))
    system_undelete = module("system_undelete_pb2").SystemUndeleteTransactionBody(
        contractID=basic.ContractID(contractNum=1700)
    )
    import_items(
        ledger.url,
        record_item(body("systemDelete", system_delete), at=T0),
        record_item(body("systemUndelete", system_undelete), at=T0 + 1),
    )
    rows = fetch(ledger.url, "select id, type, deleted from entity order by id")
    assert rows == [
        {"id": encoded(1600), "type": "FILE", "deleted": True},
        {"id": encoded(1700), "type": "CONTRACT", "deleted": False},
    ]


def test_deferred_address_book_keeps_balances_of_the_whole_batch(ledger: Ledger) -> None:
    """An address book update splits the batch into segments; transfers before and after it all count."""
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, balance, timestamp_range)"
        " values ($1, $1, 0, 0, 'ACCOUNT', 1000, '[1,)')",
        PAYER,
    )
    batch = Batch()
    import_items(
        ledger.url,
        crypto_transfer([], at=T0, fee=10),
        update(102, book((0, 3, "10.0.0.1")), at=T0 + 1),
        crypto_transfer([], at=T0 + 2, fee=20),
        batch=batch,
    )
    assert len(batch.segments) == 2
    assert fetch(ledger.url, "select balance, balance_timestamp from entity where id = $1", PAYER) == [
        {"balance": 970, "balance_timestamp": T0 + 2}
    ]
    assert fetch(ledger.url, "select count(*) from address_book") == [{"count": 1}]
