"""Contracts, entity side: create (self key), update, delete; approved token debits spent by a contract."""

from __future__ import annotations

from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    import_items,
    module,
    record_item,
    token,
)
from tests.support import Ledger


def contract(num: int) -> object:
    return basic.ContractID(contractNum=num)


def test_contract_create_update_delete(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    create = module("contract_create_pb2").ContractCreateTransactionBody(
        fileID=basic.FileID(fileNum=1500), initialBalance=40, memo="c", gas=100_000
    )
    update = module("contract_update_pb2").ContractUpdateTransactionBody(
        contractID=contract(2000),
        memoWrapper=wrappers_pb2.StringValue(value="d"),
        staked_account_id=account(PAYER),
    )
    delete = module("contract_delete_pb2").ContractDeleteTransactionBody(
        contractID=contract(2000), transferAccountID=account(PAYER), permanent_removal=False
    )
    result = module("contract_types_pb2").ContractFunctionResult(
        contractID=contract(2000), evm_address=wrappers_pb2.BytesValue(value=b"\x11" * 20)
    )
    import_items(
        ledger.url,
        record_item(
            body("contractCreateInstance", create),
            at=t1,
            receipt={"contractID": contract(2000)},
            contractCreateResult=result,
            transfers=[(PAYER, -40), (2000, 40)],
        ),
    )
    row = fetch(ledger.url, "select * from entity")[0]
    assert (row["id"], row["type"], row["balance"], row["memo"]) == (encoded(2000), "CONTRACT", 40, "c")
    self_key = basic.Key(contractID=contract(2000)).SerializeToString()
    assert row["key"] == self_key
    assert row["public_key"] is None  # a contract key is no primitive key
    assert row["evm_address"] == b"\x11" * 20
    assert fetch(ledger.url, "select * from contract") == [
        {"id": encoded(2000), "file_id": 1500, "initcode": None, "runtime_bytecode": None}
    ]
    assert fetch(ledger.url, "select initial_balance, entity_id from transaction") == [
        {"initial_balance": 40, "entity_id": encoded(2000)}
    ]
    import_items(
        ledger.url,
        record_item(body("contractUpdateInstance", update), at=t2),
        record_item(body("contractDeleteInstance", delete), at=t3),
    )
    row = fetch(ledger.url, "select * from entity")[0]
    assert (row["memo"], row["deleted"], row["obtainer_id"], row["permanent_removal"]) == ("d", True, PAYER, False)
    assert (row["staked_account_id"], row["staked_node_id"], row["key"]) == (PAYER, -1, self_key)
    assert len(fetch(ledger.url, "select * from entity_history")) == 2


def test_approved_token_debit_spent_by_a_contract(ledger: Ledger) -> None:
    """With a contract call result, the spender of approved token debits is its sender, not the payer."""
    ledger.execute(
        "insert into token_allowance (owner, spender, token_id, amount, amount_granted, payer_account_id,"
        " timestamp_range) values ($1, $2, 5000, 100, 100, $1, '[1,)'), ($1, $3, 5000, 100, 100, $1, '[1,)')",
        PAYER,
        encoded(1001),
        encoded(1002),
    )
    transfers = [
        basic.TokenTransferList(
            token=token(5000),
            transfers=[
                basic.AccountAmount(accountID=account(PAYER), amount=-30, is_approval=True),
                basic.AccountAmount(accountID=account(1003), amount=30),
            ],
        )
    ]
    message = module("crypto_transfer_pb2").CryptoTransferTransactionBody(tokenTransfers=transfers)
    sender = module("contract_types_pb2").ContractFunctionResult(sender_id=account(1002))
    import_items(
        ledger.url, record_item(body("cryptoTransfer", message, payer=1001), at=T0, contractCallResult=sender)
    )
    rows = fetch(ledger.url, "select spender, amount, amount_granted from token_allowance order by spender")
    assert rows == [
        {"spender": encoded(1001), "amount": 100, "amount_granted": 100},
        {"spender": encoded(1002), "amount": 70, "amount_granted": 100},
    ]


def test_ethereum_sender_and_contract_nonces(ledger: Ledger) -> None:
    for num, kind in ((1001, "ACCOUNT"), (2000, "CONTRACT")):
        ledger.execute(
            "insert into entity (id, num, realm, shard, type, timestamp_range) values ($1, $1, 0, 0, $2, '[1,)')",
            encoded(num),
            kind,
        )
    types = module("contract_types_pb2")
    result = types.ContractFunctionResult(
        contractID=contract(2000),
        sender_id=account(1001),
        signer_nonce=wrappers_pb2.Int64Value(value=5),
        contract_nonces=[types.ContractNonceInfo(contract_id=contract(2000), nonce=3)],
    )
    ethereum = module("ethereum_transaction_pb2").EthereumTransactionBody(ethereum_data=b"\xf8")
    import_items(ledger.url, record_item(body("ethereumTransaction", ethereum), at=T0, contractCallResult=result))
    rows = fetch(ledger.url, "select id, ethereum_nonce from entity order by id")
    assert rows == [{"id": encoded(1001), "ethereum_nonce": 5}, {"id": encoded(2000), "ethereum_nonce": 3}]
    assert fetch(ledger.url, "select count(*) from entity_history") == [{"count": 0}]
    assert fetch(ledger.url, "select entity_id from transaction") == [{"entity_id": encoded(2000)}]
