"""Contract parent/child rules against the reference's own tests: ``ContractCreateTransactionHandlerTest`` (a
child ContractCreate's file and initcode from its parent, ``runtime_bytecode`` from its own bytecode sidecar),
``ContractResultServiceImplIntegrationTest`` (contracts created by contracts before HAPI 0.23) and
``ScheduleCreateTransactionHandlerTest`` (the creator of a schedule made inside an Ethereum transaction). Each
case names the reference test it ports; the records go through the importer's own path
(``rows_of_file_with_lookups``, then ``write_batch``)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import asyncpg
from tests.importer.handlers.items import (
    PAYER,
    SECOND,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    file,
    module,
    record_file,
    record_item,
    timestamp,
)
from tests.support import Ledger

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.batch_writer import write_batch
from ledgermirror.importer.handlers.lookups import rows_of_file_with_lookups
from ledgermirror.importer.record_file import RecordItem
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.simulator.evm import RlpItem, rlp

PARENT, CHILD, OTHER = 2000, 2001, 2500
INITCODE_FILE = 1500
SENDER = 1077
SIDECAR_INITCODE, SIDECAR_RUNTIME = b"\x60\x80\x60\x40", b"\x60\x80"
CALL_DATA = b"\xde\xad\xbe\xef"


def _streams(name: str) -> Any:
    import importlib

    return importlib.import_module("hiero_sdk_python.hapi.streams." + name)


def run_file(
    url: str,
    items: list[RecordItem],
    records: Sequence[Any] = (),
    hapi: tuple[int, int, int] = (0, 60, 0),
) -> None:
    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            batch = Batch()
            sidecars = [SidecarFile("s_01.rcd.gz", b"", tuple(records), 0)] if records else []
            await rows_of_file_with_lookups(conn, record_file(items, hapi), batch, sidecars)
            await write_batch(conn, batch)
        finally:
            await conn.close()

    asyncio.run(main())


def contract_id(num: int) -> Any:
    return basic.ContractID(contractNum=num)


def create_result(num: int, **fields: Any) -> Any:
    return module("contract_types_pb2").ContractFunctionResult(contractID=contract_id(num), gasUsed=1, **fields)


def contract_create(
    num: int,
    *,
    at: int,
    parent: int | None = None,
    initcode: bytes | None = None,
    file_num: int | None = None,
    **result_fields: Any,
) -> RecordItem:
    message = module("contract_create_pb2").ContractCreateTransactionBody(gas=100_000, memo="made")
    if initcode is not None:
        message.initcode = initcode
    if file_num is not None:
        message.fileID.CopyFrom(file(file_num))
    return record_item(
        body("contractCreateInstance", message, nonce=1 if parent is not None else 0),
        at=at,
        parent=parent,
        receipt={"contractID": contract_id(num)},
        contractCreateResult=create_result(num, **result_fields),
    )


def bytecode(at: int, num: int, *, migration: bool = False) -> Any:
    record = _streams("sidecar_file_pb2").TransactionSidecarRecord(
        consensus_timestamp=timestamp(at), migration=migration
    )
    record.bytecode.contract_id.CopyFrom(contract_id(num))
    record.bytecode.initcode, record.bytecode.runtime_bytecode = SIDECAR_INITCODE, SIDECAR_RUNTIME
    return record


def ethereum_data(data: bytes) -> bytes:
    fields: list[RlpItem] = [298, 1, 5, 9, 400_000, b"", 0, data, [], 1]
    return bytes((2,)) + rlp([*fields, b"\x0a" * 32, b"\x0b" * 32])


def ethereum(
    at: int, *, call_data_file: int | None = None, sender: int | None = SENDER, create: bool = True
) -> Any:
    message = module("ethereum_transaction_pb2").EthereumTransactionBody(ethereum_data=ethereum_data(CALL_DATA))
    if call_data_file is not None:
        message.call_data.CopyFrom(file(call_data_file))
    result = create_result(PARENT)
    if sender is not None:
        result.sender_id.CopyFrom(account(sender))
    return record_item(
        body("ethereumTransaction", message),
        at=at,
        **({"contractCreateResult": result} if create else {"contractCallResult": result}),
    )


def contract_row(url: str, num: int) -> dict[str, Any]:
    rows = fetch(url, "select file_id, initcode, runtime_bytecode from contract where id = $1", encoded(num))
    assert len(rows) == 1
    return rows[0]


# ContractCreateTransactionHandlerTest --------------------------------------------------------------------------


def test_child_takes_initcode_of_a_contract_create_parent(ledger: Ledger) -> None:
    """updateContractFromContractCreateWInitCodeParent: a parent ContractCreate with initcode "init code", a
    child without file, initcode or sidecar: the child's initcode is the parent's, no file."""
    parent = contract_create(PARENT, at=T0, initcode=b"init code")
    run_file(ledger.url, [parent, contract_create(CHILD, at=T0 + 1, parent=T0)])
    assert contract_row(ledger.url, CHILD) == {"file_id": None, "initcode": b"init code", "runtime_bytecode": None}


def test_child_takes_the_file_of_a_contract_create_parent(ledger: Ledger) -> None:
    """updateContractFromContractCreateWFileIDParent: a parent created from a file, a child with its own
    bytecode sidecar: initcode from the sidecar, file from the parent (and its runtime bytecode)."""
    parent = contract_create(PARENT, at=T0, file_num=INITCODE_FILE)
    child = contract_create(CHILD, at=T0 + 1, parent=T0)
    run_file(ledger.url, [parent, child], [bytecode(T0 + 1, CHILD)])
    assert contract_row(ledger.url, CHILD) == {
        "file_id": encoded(INITCODE_FILE),
        "initcode": SIDECAR_INITCODE,
        "runtime_bytecode": SIDECAR_RUNTIME,
    }


def test_child_without_a_parent_in_the_file(ledger: Ledger) -> None:
    """updateContractFromContractCreateNoParent: a parent timestamp but no parent item: no parent logic; file
    null, initcode from its own sidecar."""
    run_file(ledger.url, [contract_create(CHILD, at=T0 + 1, parent=T0)], [bytecode(T0 + 1, CHILD)])
    assert contract_row(ledger.url, CHILD) == {
        "file_id": None,
        "initcode": SIDECAR_INITCODE,
        "runtime_bytecode": SIDECAR_RUNTIME,
    }


def test_child_takes_call_data_of_an_ethereum_parent(ledger: Ledger) -> None:
    """updateContractFromEthereumCreateWInitCodeParent: an Ethereum parent without a call data file: the child
    (no sidecar) gets the decoded call data as initcode, no file."""
    run_file(ledger.url, [ethereum(T0), contract_create(CHILD, at=T0 + 1, parent=T0)])
    assert contract_row(ledger.url, CHILD) == {"file_id": None, "initcode": CALL_DATA, "runtime_bytecode": None}


def test_child_takes_the_call_data_file_of_an_ethereum_parent(ledger: Ledger) -> None:
    """updateContractFromEthereumCreateWFileIDParent: the Ethereum parent's call data is a file: the child's
    file is that one, its initcode its own sidecar's."""
    items = [ethereum(T0, call_data_file=INITCODE_FILE), contract_create(CHILD, at=T0 + 1, parent=T0)]
    run_file(ledger.url, items, [bytecode(T0 + 1, CHILD)])
    assert contract_row(ledger.url, CHILD) == {
        "file_id": encoded(INITCODE_FILE),
        "initcode": SIDECAR_INITCODE,
        "runtime_bytecode": SIDECAR_RUNTIME,
    }


def test_child_of_an_ethereum_call_keeps_its_own_initcode(ledger: Ledger) -> None:
    """updateContractFromEthereumCallWCallDataFileParent: an Ethereum call parent without a file: file null,
    the child's own sidecar initcode kept (the parent fills only what is missing)."""
    items = [ethereum(T0, create=False), contract_create(CHILD, at=T0 + 1, parent=T0)]
    run_file(ledger.url, items, [bytecode(T0 + 1, CHILD)])
    assert contract_row(ledger.url, CHILD)["file_id"] is None
    assert contract_row(ledger.url, CHILD)["initcode"] == SIDECAR_INITCODE


def test_runtime_bytecode_only_from_the_contracts_own_sidecar(ledger: Ledger) -> None:
    """migrationBytecodeNotProcessed and ``createContract``: a ContractCreate whose only bytecode sidecars are a
    migration record and a record of another contract gets neither initcode nor runtime bytecode from them; the
    migration record's contract gets its runtime bytecode and the CONTRACT type (``SidecarContractMigration``);
    an Ethereum create's
    bytecode sidecar writes no ``contract`` row."""
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, created_timestamp, deleted, timestamp_range)"
        " values ($1, $1, 0, 0, 'ACCOUNT', 1, false, '[5,)')",
        encoded(OTHER),
    )
    ledger.execute(
        "insert into entity_history (id, num, realm, shard, type, created_timestamp, deleted, timestamp_range)"
        " values ($1, $1, 0, 0, 'ACCOUNT', 1, false, '[1,5)')",
        encoded(OTHER),
    )
    items = [contract_create(PARENT, at=T0, file_num=INITCODE_FILE), ethereum(T0 + 1)]
    records = [bytecode(T0, OTHER, migration=True), bytecode(T0, 2600), bytecode(T0 + 1, 2700)]
    run_file(ledger.url, items, records)
    # SidecarContractMigration.updateContractType: the migrated contract is a CONTRACT, history included
    for table in ("entity", "entity_history"):
        assert fetch(ledger.url, f"select type from {table} where id = $1", encoded(OTHER)) == [
            {"type": "CONTRACT"}
        ]
    assert contract_row(ledger.url, PARENT) == {
        "file_id": encoded(INITCODE_FILE),
        "initcode": None,
        "runtime_bytecode": None,
    }
    assert contract_row(ledger.url, OTHER) == {
        "file_id": None,
        "initcode": None,
        "runtime_bytecode": SIDECAR_RUNTIME,
    }
    assert fetch(ledger.url, "select id from contract where id in ($1, $2)", encoded(2600), encoded(2700)) == []


# ContractResultServiceImplIntegrationTest ----------------------------------------------------------------------


def test_contracts_created_by_contracts_before_0_23(ledger: Ledger) -> None:
    """processContractCreate (HAPI 0.0.0): created_contract_ids = [new, parent]; the new contract gets an
    ``entity`` row (balance 0, created and balance timestamps and range from the transaction, not deleted, no
    automatic associations, CONTRACT, the body's memo, renewal period, admin key and proxy) and a ``contract``
    row with the body's file. processContractCreateNoChildren (HAPI 0.24.0): no row for it."""
    create_body = module("contract_create_pb2").ContractCreateTransactionBody(
        gas=100_000,
        memo="made",
        fileID=file(INITCODE_FILE),
        adminKey=basic.Key(ed25519=b"\x03" * 32),
        autoRenewPeriod=module("duration_pb2").Duration(seconds=7_776_000),
        proxyAccountID=account(800),
    )
    create = record_item(
        body("contractCreateInstance", create_body),
        at=T0,
        receipt={"contractID": contract_id(PARENT)},
        contractCreateResult=create_result(PARENT, createdContractIDs=[contract_id(CHILD), contract_id(PARENT)]),
    )
    run_file(ledger.url, [create], hapi=(0, 0, 0))
    result = fetch(ledger.url, "select created_contract_ids from contract_result")
    assert result == [{"created_contract_ids": [encoded(CHILD), encoded(PARENT)]}]
    entity = fetch(ledger.url, "select * from entity where id = $1", encoded(CHILD))[0]
    assert {
        name: entity[name]
        for name in (
            "balance",
            "balance_timestamp",
            "created_timestamp",
            "deleted",
            "max_automatic_token_associations",
            "type",
            "memo",
            "auto_renew_period",
            "key",
            "proxy_account_id",
        )
    } == {
        "balance": 0,
        "balance_timestamp": T0,
        "created_timestamp": T0,
        "deleted": False,
        "max_automatic_token_associations": 0,
        "type": "CONTRACT",
        "memo": "made",
        "auto_renew_period": 7_776_000,
        "key": basic.Key(ed25519=b"\x03" * 32).SerializeToString(),
        "proxy_account_id": encoded(800),
    }
    assert entity["timestamp_range"].lower == T0
    assert contract_row(ledger.url, CHILD)["file_id"] == encoded(INITCODE_FILE)

    later = record_item(
        body("contractCreateInstance", create_body, valid_start=T0 + SECOND),
        at=T0 + SECOND,
        receipt={"contractID": contract_id(3000)},
        contractCreateResult=create_result(3000, createdContractIDs=[contract_id(3001), contract_id(3000)]),
    )
    run_file(ledger.url, [later], hapi=(0, 24, 0))
    assert fetch(ledger.url, "select id from entity where id = $1", encoded(3001)) == []
    assert fetch(ledger.url, "select id from contract where id = $1", encoded(3001)) == []


# ScheduleCreateTransactionHandlerTest ----------------------------------------------------------------------------


def _schedule_create(at: int, parent: int) -> RecordItem:
    schedule = module("schedule_create_pb2").ScheduleCreateTransactionBody(memo="later")
    return record_item(
        body("scheduleCreate", schedule, nonce=1),
        at=at,
        parent=parent,
        receipt={"scheduleID": basic.ScheduleID(scheduleNum=4000 + at % 100)},
    )


def test_schedule_created_inside_an_ethereum_transaction(ledger: Ledger) -> None:
    """handleScheduleCreateWithParentEthereumTransaction (create and call results): the creator (and payer, the
    body naming none) is the parent's function result sender; updateTransactionEthereumWithEmptyFunctionResult:
    a parent result without sender leaves the child's payer."""
    items = [
        ethereum(T0),
        _schedule_create(T0 + 1, T0),
        ethereum(T0 + 2, create=False),
        _schedule_create(T0 + 3, T0 + 2),
        ethereum(T0 + 4, sender=None),
        _schedule_create(T0 + 5, T0 + 4),
    ]
    run_file(ledger.url, items)
    rows = fetch(
        ledger.url, "select creator_account_id, payer_account_id from schedule order by consensus_timestamp"
    )
    assert rows == [
        {"creator_account_id": encoded(SENDER), "payer_account_id": encoded(SENDER)},
        {"creator_account_id": encoded(SENDER), "payer_account_id": encoded(SENDER)},
        {"creator_account_id": encoded(PAYER), "payer_account_id": encoded(PAYER)},
    ]
