"""Contract results, logs, sidecar state changes, actions and bytecode, and Ethereum transactions."""

from __future__ import annotations

from typing import Any

from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    SECOND,
    T0,
    basic,
    body,
    encoded,
    fetch,
    record_file,
    record_item,
    timestamp,
    write,
)
from tests.support import Ledger

from ledgermirror.importer.ethereum_data import decode_ethereum_data
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.file_rows import rows_of_file
from ledgermirror.importer.record_file import RecordItem
from ledgermirror.importer.sidecar_file import SidecarFile
from ledgermirror.simulator.evm import RlpItem, keccak256, rlp

CONTRACT = 2000
TOPIC = b"\x00" * 31 + b"\x07"
SLOT_READ, SLOT_WRITTEN = b"\x01", b"\x02"


def contract(num: int) -> Any:
    return basic.ContractID(contractNum=num)


def _module(name: str) -> Any:
    import importlib

    return importlib.import_module("hiero_sdk_python.hapi.services." + name)


def _streams(name: str) -> Any:
    import importlib

    return importlib.import_module("hiero_sdk_python.hapi.streams." + name)


def function_result(**fields: Any) -> Any:
    return _module("contract_types_pb2").ContractFunctionResult(**fields)


def sidecar_records(at: int, *, bytecode: tuple[bytes, bytes] | None = None) -> list[Any]:
    sidecar = _streams("sidecar_file_pb2")
    state = sidecar.TransactionSidecarRecord(consensus_timestamp=timestamp(at))
    change = state.state_changes.contract_state_changes.add()
    change.contract_id.CopyFrom(contract(CONTRACT))
    change.storage_changes.add(slot=SLOT_READ, value_read=b"\x05")
    written = change.storage_changes.add(slot=SLOT_WRITTEN, value_read=b"")
    written.value_written.value = b"\x09"
    actions = sidecar.TransactionSidecarRecord(consensus_timestamp=timestamp(at))
    top = actions.actions.contract_actions.add(
        call_type=1, gas=50_000, gas_used=20_000, input=b"\xab", value=3, output=b"\x01", call_operation_type=1
    )
    top.calling_account.CopyFrom(basic.AccountID(accountNum=PAYER))
    top.recipient_contract.CopyFrom(contract(CONTRACT))
    inner = actions.actions.contract_actions.add(
        call_type=1, gas=10, gas_used=5, call_depth=1, revert_reason=b"no"
    )
    inner.calling_contract.CopyFrom(contract(CONTRACT))
    inner.targeted_address = b"\x33" * 20
    records = [state, actions]
    if bytecode is not None:
        code = sidecar.TransactionSidecarRecord(consensus_timestamp=timestamp(at))
        code.bytecode.contract_id.CopyFrom(contract(CONTRACT))
        code.bytecode.initcode, code.bytecode.runtime_bytecode = bytecode
        records.append(code)
    return records


def import_with_sidecars(
    url: str, items: list[RecordItem], records: list[Any], hapi: tuple[int, int, int] = (0, 60, 0)
) -> dict[str, int]:
    batch = Batch()
    rows_of_file(record_file(items, hapi), batch, [SidecarFile("s_01.rcd.gz", b"", tuple(records), 0)])
    return write(url, batch)


def test_contract_create_and_call_results_logs_and_sidecars(ledger: Ledger) -> None:
    t1, t2 = T0 + SECOND, T0 + 2 * SECOND
    create = _module("contract_create_pb2").ContractCreateTransactionBody(
        initcode=b"\x60\x80", initialBalance=7, gas=90_000, constructorParameters=b"\xc0"
    )
    created = function_result(contractID=contract(CONTRACT), gasUsed=60_000, contractCallResult=b"\xfe")
    call = _module("contract_call_pb2").ContractCallTransactionBody(
        contractID=contract(CONTRACT), gas=80_000, amount=3, functionParameters=b"\xab\xcd"
    )
    log = _module("contract_types_pb2").ContractLoginfo(
        contractID=contract(CONTRACT), bloom=b"\x0b", topic=[TOPIC, b"\x00" * 32], data=b"\xda"
    )
    called = function_result(
        contractID=contract(CONTRACT),
        gasUsed=21_000,
        bloom=b"\xb1",
        contractCallResult=b"\x01",
        errorMessage="",
        logInfo=[log, log],
        sender_id=basic.AccountID(accountNum=1001),
        createdContractIDs=[contract(2001)],
    )
    items = [
        record_item(
            body("contractCreateInstance", create),
            at=t1,
            receipt={"contractID": contract(CONTRACT)},
            contractCreateResult=created,
        ),
        record_item(body("contractCall", call, nonce=0), at=t2, contractCallResult=called),
    ]
    import_with_sidecars(
        ledger.url, items, sidecar_records(t2) + sidecar_records(t1, bytecode=(b"\x60\x80", b"\xfe\xed"))
    )

    results = fetch(ledger.url, "select * from contract_result order by consensus_timestamp")
    assert [(r["consensus_timestamp"], r["contract_id"], r["amount"], r["gas_limit"]) for r in results] == [
        (t1, encoded(CONTRACT), 7, 90_000),
        (t2, encoded(CONTRACT), 3, 80_000),
    ]
    first, second = results
    assert first["function_parameters"] == b"\xc0" and first["call_result"] == b"\xfe"
    assert first["gas_used"] == 60_000 and first["failed_initcode"] is None
    assert second["function_parameters"] == b"\xab\xcd"
    assert (second["bloom"], second["error_message"], second["gas_used"]) == (b"\xb1", "", 21_000)
    assert second["sender_id"] == encoded(1001) and first["sender_id"] == encoded(PAYER)
    assert second["created_contract_ids"] == [encoded(2001)]
    assert second["function_result"] == called.SerializeToString()
    assert second["transaction_index"] == 1 and second["transaction_result"] == 22
    assert second["transaction_hash"] == items[1].record.transactionHash[:32]

    logs = fetch(ledger.url, "select * from contract_log order by index")
    assert [(row["consensus_timestamp"], row["index"]) for row in logs] == [(t2, 0), (t2, 1)]
    assert logs[0]["topic0"] == b"\x07" and logs[0]["topic1"] == b"" and logs[0]["topic2"] is None
    assert (logs[0]["root_contract_id"], logs[0]["data"], logs[0]["bloom"]) == (
        encoded(CONTRACT),
        b"\xda",
        b"\x0b",
    )

    changes = fetch(
        ledger.url, "select * from contract_state_change where consensus_timestamp = $1 order by slot", t2
    )
    assert [(c["slot"], c["value_read"], c["value_written"], c["migration"]) for c in changes] == [
        (SLOT_READ, b"\x05", None, False),
        (SLOT_WRITTEN, b"", b"\x09", False),
    ]
    state = fetch(ledger.url, "select * from contract_state")
    # The reference's ContractState pads the slot to 32 bytes and keeps the value as written.
    assert state == [
        {
            "contract_id": encoded(CONTRACT),
            "slot": SLOT_WRITTEN.rjust(32, b"\0"),
            "value": b"\x09",
            "created_timestamp": t1,
            "modified_timestamp": t2,
        }
    ]
    actions = fetch(ledger.url, "select * from contract_action where consensus_timestamp = $1 order by index", t2)
    assert [(a["index"], a["caller"], a["caller_type"]) for a in actions] == [
        (0, encoded(PAYER), "ACCOUNT"),
        (1, encoded(CONTRACT), "CONTRACT"),
    ]
    assert (actions[0]["recipient_contract"], actions[0]["result_data"], actions[0]["result_data_type"]) == (
        encoded(CONTRACT),
        b"\x01",
        11,
    )
    assert (actions[1]["recipient_address"], actions[1]["result_data_type"], actions[1]["call_depth"]) == (
        b"\x33" * 20,
        12,
        1,
    )
    assert (actions[0]["gas"], actions[0]["gas_used"], actions[0]["value"]) == (50_000, 20_000, 3)
    assert fetch(ledger.url, "select initcode, runtime_bytecode from contract") == [
        {"initcode": b"\x60\x80", "runtime_bytecode": b"\xfe\xed"}
    ]
    # Before HAPI 0.69: the top-level action's gas used + 21,000 + 16 per non-zero payload byte (+ 32,000 and
    # the initcode as payload for a create).
    assert [row["gas_consumed"] for row in results] == [20_000 + 21_000 + 32 + 32_000, 20_000 + 21_000 + 32]
    links = fetch(ledger.url, "select * from contract_transaction order by consensus_timestamp, entity_id")
    assert [(row["consensus_timestamp"], row["entity_id"]) for row in links] == [
        (t1, encoded(PAYER)),
        (t1, encoded(CONTRACT)),
        (t2, encoded(PAYER)),
        (t2, encoded(CONTRACT)),
    ]
    assert all(sorted(row["contract_ids"]) == [encoded(PAYER), encoded(CONTRACT)] for row in links)
    assert all(row["payer_account_id"] == encoded(PAYER) for row in links)
    hashes = fetch(ledger.url, "select * from contract_transaction_hash order by consensus_timestamp")
    assert hashes == [
        {
            "consensus_timestamp": stamp,
            "entity_id": encoded(CONTRACT),
            "hash": item.record.transactionHash[:32],
            "payer_account_id": encoded(PAYER),
            "transaction_result": 22,
        }
        for stamp, item in zip((t1, t2), items, strict=True)
    ]


def test_gas_consumed_is_gas_used_from_hapi_0_69(ledger: Ledger) -> None:
    call = _module("contract_call_pb2").ContractCallTransactionBody(contractID=contract(CONTRACT), gas=9)
    called = function_result(contractID=contract(CONTRACT), gasUsed=12_345)
    items = [record_item(body("contractCall", call), at=T0, contractCallResult=called)]
    import_with_sidecars(ledger.url, items, sidecar_records(T0), hapi=(0, 69, 0))
    assert fetch(ledger.url, "select gas_used, gas_consumed from contract_result") == [
        {"gas_used": 12_345, "gas_consumed": 12_345}
    ]


def test_gas_consumed_is_null_before_0_69_without_actions(ledger: Ledger) -> None:
    call = _module("contract_call_pb2").ContractCallTransactionBody(contractID=contract(CONTRACT), gas=9)
    called = function_result(contractID=contract(CONTRACT), gasUsed=12_345)
    import_with_sidecars(
        ledger.url, [record_item(body("contractCall", call), at=T0, contractCallResult=called)], []
    )
    assert fetch(ledger.url, "select gas_consumed from contract_result") == [{"gas_consumed": None}]


def test_failed_create_keeps_its_initcode(ledger: Ledger) -> None:
    create = _module("contract_create_pb2").ContractCreateTransactionBody(initcode=b"\x60\x00", gas=5)
    import_with_sidecars(ledger.url, [record_item(body("contractCreateInstance", create), at=T0, status=30)], [])
    rows = fetch(
        ledger.url, "select contract_id, failed_initcode, gas_used, transaction_result from contract_result"
    )
    assert rows == [{"contract_id": 0, "failed_initcode": b"\x60\x00", "gas_used": None, "transaction_result": 30}]


def _eip1559(nonce: int, data: bytes) -> bytes:
    access: list[RlpItem] = [[b"\x22" * 20, [b"\x01" * 32]]]
    fields: list[RlpItem] = [298, nonce, 5, 9, 400_000, b"\x11" * 20, 12, data, access, 1]
    return bytes((2,)) + rlp([*fields, b"\x0a" * 32, b"\x0b" * 32])


def test_decode_types() -> None:
    legacy = rlp([3, 7, 21_000, b"\x44" * 20, 0, b"", 298 * 2 + 35 + 1, b"\x01" * 32, b"\x02" * 32])
    decoded = decode_ethereum_data(legacy)
    assert (decoded["type"], decoded["nonce"], decoded["gas_limit"], decoded["recovery_id"]) == (0, 3, 21_000, 1)
    assert decoded["chain_id"] == (298).to_bytes(2, "big") and decoded["gas_price"] == b"\x07"
    typed = decode_ethereum_data(_eip1559(4, b"\xca"))
    assert (typed["type"], typed["nonce"], typed["max_priority_fee_per_gas"], typed["max_fee_per_gas"]) == (
        2,
        4,
        b"\x05",
        b"\x09",
    )
    assert typed["access_list"] == rlp([[b"\x22" * 20, [b"\x01" * 32]]])
    assert (typed["to_address"], typed["value"], typed["call_data"]) == (b"\x11" * 20, b"\x0c", b"\xca")
    authorization: list[RlpItem] = [298, b"\x55" * 20, 1, 0, b"\x01", b"\x02"]
    eip7702 = bytes((4,)) + rlp(
        [298, 0, 1, 2, 50_000, b"\x11" * 20, 0, b"", [], [authorization], 0, b"\x03", b"\x04"]
    )
    assert decode_ethereum_data(eip7702)["authorization_list"] == [
        {"chain_id": "0x012a", "address": "0x" + "55" * 20, "nonce": 1, "y_parity": 0, "r": "0x01", "s": "0x02"}
    ]


def test_ethereum_transactions(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    ethereum = _module("ethereum_transaction_pb2").EthereumTransactionBody
    good, failed, garbage = _eip1559(4, b"\xca"), _eip1559(5, b"\xcb"), b"\x02\xff"
    result = function_result(
        contractID=contract(CONTRACT),
        gasUsed=30_000,
        gas=400_000,
        amount=12,
        functionParameters=b"\xca",
        sender_id=basic.AccountID(accountNum=1001),
        signer_nonce=wrappers_pb2.Int64Value(value=5),
    )
    items = [
        record_item(
            body("ethereumTransaction", ethereum(ethereum_data=good, max_gas_allowance=77)),
            at=t1,
            contractCallResult=result,
            ethereum_hash=b"\xee" * 32,
        ),
        record_item(body("ethereumTransaction", ethereum(ethereum_data=failed)), at=t2, status=33),
        record_item(body("ethereumTransaction", ethereum(ethereum_data=garbage)), at=t3, status=33),
    ]
    import_with_sidecars(ledger.url, items, [])
    rows = fetch(ledger.url, "select * from ethereum_transaction order by consensus_timestamp")
    assert [row["consensus_timestamp"] for row in rows] == [t1, t2]  # the undecodable one has no row
    assert (rows[0]["hash"], rows[0]["max_gas_allowance"], rows[0]["payer_account_id"]) == (
        b"\xee" * 32,
        77,
        encoded(PAYER),
    )
    assert rows[1]["hash"] == keccak256(failed) and rows[1]["data"] == failed
    assert (rows[0]["type"], rows[0]["nonce"], rows[0]["gas_limit"], rows[0]["call_data"]) == (
        2,
        4,
        400_000,
        b"\xca",
    )
    results = fetch(ledger.url, "select * from contract_result order by consensus_timestamp")
    assert [(r["consensus_timestamp"], r["contract_id"], r["gas_limit"], r["amount"]) for r in results] == [
        (t1, encoded(CONTRACT), 400_000, 12),
        (t2, 0, 400_000, None),
    ]
    assert results[0]["transaction_hash"] == b"\xee" * 32 and results[0]["sender_id"] == encoded(1001)
    assert (results[1]["gas_used"], results[1]["function_parameters"], results[1]["sender_id"]) == (
        0,
        b"\xcb",
        encoded(PAYER),
    )


def test_sender_nonce_before_hapi_47_is_the_rlp_nonce_plus_one(ledger: Ledger) -> None:
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, timestamp_range)"
        " values ($1, $1, 0, 0, 'ACCOUNT', '[1,)')",
        encoded(1001),
    )
    ethereum = _module("ethereum_transaction_pb2").EthereumTransactionBody
    result = function_result(contractID=contract(CONTRACT), sender_id=basic.AccountID(accountNum=1001))
    items = [
        record_item(
            body("ethereumTransaction", ethereum(ethereum_data=_eip1559(4, b""))),
            at=T0 + 1,
            contractCallResult=result,
        ),
        record_item(  # INVALID_SIGNATURE: the nonce stays
            body("ethereumTransaction", ethereum(ethereum_data=_eip1559(9, b""))),
            at=T0 + 2,
            status=7,
            contractCallResult=result,
        ),
    ]
    import_with_sidecars(ledger.url, items, [], hapi=(0, 46, 0))
    assert fetch(ledger.url, "select ethereum_nonce from entity") == [{"ethereum_nonce": 5}]
