"""Accounts given by alias and contracts given by EVM address, resolved as the reference does (the batch's own
creates, else ``entity``); storage changes of hook executions under the parent transfer's hooks."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    T0,
    account,
    basic,
    body,
    create_account,
    encoded,
    fetch,
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

ALIAS = basic.Key(ed25519=b"\x05" * 32).SerializeToString()
CREATE2 = bytes.fromhex("06bd279138d5918402fc8ad500526cb2ee0eb985")
CONTRACT = 3000


def import_looked_up(url: str, items: list[RecordItem], records: tuple[Any, ...] = ()) -> None:
    """One file of ``items`` (with sidecar ``records``) the way the importer builds it: lookups first."""

    async def main() -> None:
        conn = await asyncpg.connect(url)
        try:
            batch = Batch()
            sidecars = [SidecarFile("s_01.rcd.gz", b"", records, 0)] if records else []
            await rows_of_file_with_lookups(conn, record_file(items), batch, sidecars)
            await write_batch(conn, batch)
        finally:
            await conn.close()

    asyncio.run(main())


def by_alias(alias: bytes) -> Any:
    return basic.AccountID(alias=alias)


def aliased_create(num: int, *, at: int) -> RecordItem:
    """An account created for a key alias (the child CryptoCreate of a transfer to the alias)."""
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(key=basic.Key(ed25519=b"\x05" * 32))
    return record_item(
        body("cryptoCreateAccount", create, valid_start=at - 1),
        at=at,
        receipt={"accountID": account(num)},
        alias=ALIAS,
    )


def test_update_and_delete_by_alias_are_not_resolved(ledger: Ledger) -> None:
    """The reference's CryptoUpdate and CryptoDelete handlers take their entity with ``EntityId.of(AccountID)``,
    not the alias lookup: an account given by alias (created in the same file, or stored) is neither updated
    nor deleted, and the transaction has no entity."""
    update = module("crypto_update_pb2").CryptoUpdateTransactionBody(
        accountIDToUpdate=by_alias(ALIAS), memo=wrappers_pb2.StringValue(value="renamed")
    )
    import_looked_up(
        ledger.url,
        [
            create_account(1400, at=T0),
            aliased_create(1500, at=T0 + 1),
            record_item(body("cryptoUpdateAccount", update), at=T0 + 2),
        ],
    )
    assert fetch(ledger.url, "select memo from entity where id = $1", encoded(1500)) == [{"memo": ""}]
    delete = module("crypto_delete_pb2").CryptoDeleteTransactionBody(
        deleteAccountID=by_alias(ALIAS), transferAccountID=account(1400)
    )
    import_looked_up(ledger.url, [record_item(body("cryptoDelete", delete), at=T0 + 3)])
    assert fetch(ledger.url, "select id from entity where deleted") == []
    assert fetch(
        ledger.url,
        "select entity_id from transaction where consensus_timestamp in ($1, $2) order by 1",
        T0 + 2,
        T0 + 3,
    ) == [{"entity_id": None}, {"entity_id": None}]
    assert fetch(ledger.url, "select count(*) from entity where id = 0") == [{"count": 0}]


def test_delete_obtainer_by_alias_is_resolved(ledger: Ledger) -> None:
    """The obtainer of a CryptoDelete is looked up (``entityIdService.lookup``): an alias stored in ``entity``
    names its account."""
    import_looked_up(ledger.url, [create_account(1400, at=T0), aliased_create(1500, at=T0 + 1)])
    delete = module("crypto_delete_pb2").CryptoDeleteTransactionBody(
        deleteAccountID=account(1400), transferAccountID=by_alias(ALIAS)
    )
    import_looked_up(ledger.url, [record_item(body("cryptoDelete", delete), at=T0 + 3)])
    rows = fetch(ledger.url, "select id, deleted, obtainer_id from entity where deleted order by id")
    assert rows == [{"id": encoded(1400), "deleted": True, "obtainer_id": encoded(1500)}]


def _contract_create(at: int) -> RecordItem:
    create = module("contract_create_pb2").ContractCreateTransactionBody(initcode=b"\x60", gas=5)
    result = module("contract_types_pb2").ContractFunctionResult(
        contractID=basic.ContractID(contractNum=CONTRACT),
        evm_address=wrappers_pb2.BytesValue(value=CREATE2),
    )
    return record_item(
        body("contractCreateInstance", create),
        at=at,
        receipt={"contractID": basic.ContractID(contractNum=CONTRACT)},
        contractCreateResult=result,
    )


def _call(at: int, address: bytes) -> RecordItem:
    call = module("contract_call_pb2").ContractCallTransactionBody(
        contractID=basic.ContractID(evm_address=address), gas=7
    )
    result = module("contract_types_pb2").ContractFunctionResult(gasUsed=1)
    return record_item(body("contractCall", call), at=at, contractCallResult=result)


def test_contract_named_by_evm_address(ledger: Ledger) -> None:
    """A create2 address learned from a ContractCreate in an earlier file, and a long-zero address: the call's
    entity and result name the contract."""
    import_looked_up(ledger.url, [_contract_create(T0)])
    long_zero = bytes(12) + CONTRACT.to_bytes(8, "big")
    import_looked_up(ledger.url, [_call(T0 + 1, CREATE2), _call(T0 + 2, long_zero)])
    rows = fetch(
        ledger.url,
        "select t.entity_id, r.contract_id from transaction t join contract_result r using (consensus_timestamp)"
        " where t.type = 7 order by t.consensus_timestamp",
    )
    assert rows == [{"entity_id": encoded(CONTRACT), "contract_id": encoded(CONTRACT)}] * 2


def test_unknown_evm_address_stays_empty(ledger: Ledger) -> None:
    import_looked_up(ledger.url, [_call(T0, b"\x77" * 20)])
    assert fetch(ledger.url, "select entity_id from transaction") == [{"entity_id": None}]


def _streams(name: str) -> Any:
    import importlib

    return importlib.import_module("hiero_sdk_python.hapi.streams." + name)


def test_hook_execution_storage_changes(ledger: Ledger) -> None:
    """A CryptoTransfer calling the pre-transaction hook 7 of 0.0.1001; its execution (a child call to 0.0.365)
    changes 0.0.365's storage: the change is the hook's (``hook_storage_change``), not a contract state change."""
    entry = basic.AccountAmount(accountID=account(1001), amount=-5)
    entry.pre_tx_allowance_hook.hook_id = 7
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody(
        transfers=basic.TransferList(
            accountAmounts=[entry, basic.AccountAmount(accountID=account(PAYER), amount=5)]
        )
    )
    parent = record_item(body("cryptoTransfer", transfer), at=T0)
    call = module("contract_call_pb2").ContractCallTransactionBody(contractID=basic.ContractID(contractNum=365))
    child = record_item(
        body("contractCall", call, nonce=1),
        at=T0 + 1,
        parent=T0,
        contractCallResult=module("contract_types_pb2").ContractFunctionResult(gasUsed=3),
    )
    sidecar = _streams("sidecar_file_pb2").TransactionSidecarRecord(consensus_timestamp=timestamp(T0 + 1))
    change = sidecar.state_changes.contract_state_changes.add()
    change.contract_id.CopyFrom(basic.ContractID(contractNum=365))
    written = change.storage_changes.add(slot=b"\x01", value_read=b"\x02")
    written.value_written.value = b"\x03"
    import_looked_up(ledger.url, [parent, child], (sidecar,))
    assert fetch(ledger.url, "select * from hook_storage_change") == [
        {
            "consensus_timestamp": T0 + 1,
            "hook_id": 7,
            "owner_id": encoded(1001),
            "key": b"\x01",
            "value_read": b"\x02",
            "value_written": b"\x03",
            "deleted": False,
        }
    ]
    assert fetch(ledger.url, "select count(*) from contract_state_change") == [{"count": 0}]
    assert fetch(ledger.url, "select count(*) from contract_state") == [{"count": 0}]


def test_auto_renew_account_by_evm_address(ledger: Ledger) -> None:
    """A topic's auto-renew account given by the EVM address of an ECDSA account created earlier."""
    address = bytes.fromhex("b794f5ea0ba39494ce839613fffba74279579268")
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(key=basic.Key(ed25519=b"\x06" * 32))
    created = record_item(
        body("cryptoCreateAccount", create), at=T0, receipt={"accountID": account(1600)}, evm_address=address
    )
    import_looked_up(ledger.url, [created])
    topic = module("consensus_create_topic_pb2").ConsensusCreateTopicTransactionBody(
        autoRenewAccount=by_alias(address)
    )
    import_looked_up(
        ledger.url,
        [
            record_item(
                body("consensusCreateTopic", topic), at=T0 + 1, receipt={"topicID": basic.TopicID(topicNum=1700)}
            )
        ],
    )
    assert fetch(ledger.url, "select auto_renew_account_id from entity where id = $1", encoded(1700)) == [
        {"auto_renew_account_id": encoded(1600)}
    ]
