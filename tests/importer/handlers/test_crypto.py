"""Crypto service and the common rows, written into the test database and read back."""

from __future__ import annotations

from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    PAYER,
    SECOND,
    T0,
    account,
    body,
    create_account,
    crypto_transfer,
    encoded,
    fetch,
    import_items,
    module,
    record_item,
)
from tests.support import Ledger

INSUFFICIENT_PAYER_BALANCE = 10


def seed_payer(ledger: Ledger, balance: int = 1_000_000) -> None:
    ledger.execute(
        "insert into entity (id, num, realm, shard, type, balance, timestamp_range, created_timestamp)"
        " values ($1, $1, 0, 0, 'ACCOUNT', $2, '[1,)', 1)",
        PAYER,
        balance,
    )


def test_transfer_rows_and_balances(ledger: Ledger) -> None:
    seed_payer(ledger)
    t1, t2 = T0 + 1, T0 + 2
    counts = import_items(
        ledger.url,
        create_account(1001, at=t1, initial=500),
        crypto_transfer([(PAYER, -200), (1001, 200)], at=t2, fee=7),
    )
    assert counts["transaction"] == 2
    assert counts["crypto_transfer"] == 6
    assert counts["transaction_hash"] == 2
    transaction = fetch(ledger.url, "select * from transaction where consensus_timestamp = $1", t2)[0]
    assert transaction["type"] == 14
    assert transaction["result"] == 22
    assert transaction["payer_account_id"] == PAYER
    assert transaction["node_account_id"] == 3
    assert transaction["entity_id"] is None
    assert transaction["valid_start_ns"] == t2 - SECOND
    assert transaction["valid_duration_seconds"] == 120
    assert transaction["max_fee"] == 100_000
    assert transaction["charged_tx_fee"] == 7
    assert transaction["memo"] == b""
    assert transaction["index"] == 1
    assert transaction["initial_balance"] == 0
    assert len(transaction["transaction_hash"]) == 48
    assert transaction["nft_transfer"] is None
    assert transaction["scheduled"] is False
    create = fetch(
        ledger.url, "select entity_id, initial_balance from transaction where consensus_timestamp = $1", t1
    )
    assert create == [{"entity_id": encoded(1001), "initial_balance": 500}]
    hashes = fetch(ledger.url, "select * from transaction_hash where consensus_timestamp = $1", t2)
    assert [(len(row["hash"]), len(row["hash_suffix"])) for row in hashes] == [(32, 16)]
    assert hashes[0]["hash"] + hashes[0]["hash_suffix"] == transaction["transaction_hash"]
    balances = fetch(ledger.url, "select id, balance, balance_timestamp from entity order by id")
    # 0.0.98 (the fee collector) is not in the database: its fee is dropped, as in the reference.
    assert balances == [
        {"id": PAYER, "balance": 1_000_000 - 500 - 200 - 7, "balance_timestamp": t2},
        {"id": encoded(1001), "balance": 700, "balance_timestamp": t2},
    ]


def test_create_entity_columns(ledger: Ledger) -> None:
    t1 = T0 + 5
    import_items(ledger.url, create_account(1001, at=t1, key_seed=9))
    row = fetch(ledger.url, "select * from entity where id = $1", encoded(1001))[0]
    assert row["type"] == "ACCOUNT"
    assert row["created_timestamp"] == t1
    assert row["deleted"] is False
    assert row["balance"] == 0
    assert row["balance_timestamp"] == t1
    assert row["memo"] == "new"
    assert row["max_automatic_token_associations"] == 2
    assert row["key"] == bytes.fromhex("1220") + bytes([9]) * 32
    assert row["public_key"] == (bytes([9]) * 32).hex()
    assert row["timestamp_range"].lower == t1
    assert row["timestamp_range"].upper is None
    assert row["decline_reward"] is False
    assert row["stake_period_start"] == -1


def test_update_moves_old_state_to_history(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    wrappers = wrappers_pb2
    update = module("crypto_update_pb2").CryptoUpdateTransactionBody(
        accountIDToUpdate=account(1001),
        memo=wrappers.StringValue(value="updated\x00"),
        staked_node_id=1,
        key=module("basic_types_pb2").Key(
            keyList=module("basic_types_pb2").KeyList(keys=[module("basic_types_pb2").Key(ed25519=b"\x05" * 32)])
        ),
    )
    delete = module("crypto_delete_pb2").CryptoDeleteTransactionBody(
        deleteAccountID=account(1001), transferAccountID=account(PAYER)
    )
    import_items(ledger.url, create_account(1001, at=t1))
    import_items(
        ledger.url,
        record_item(body("cryptoUpdateAccount", update), at=t2),
        record_item(body("cryptoDelete", delete), at=t3),
    )
    current = fetch(ledger.url, "select * from entity where id = $1", encoded(1001))[0]
    assert current["deleted"] is True
    assert current["obtainer_id"] == PAYER
    assert current["memo"] == "updated\ufffd"
    assert current["staked_node_id"] == 1
    assert current["staked_account_id"] == 0
    assert current["stake_period_start"] == t2 // (86_400 * SECOND)
    assert current["public_key"] == (b"\x05" * 32).hex()
    assert current["created_timestamp"] == t1
    assert (current["timestamp_range"].lower, current["timestamp_range"].upper) == (t3, None)
    history = fetch(
        ledger.url, "select * from entity_history where id = $1 order by lower(timestamp_range)", encoded(1001)
    )
    assert [(row["timestamp_range"].lower, row["timestamp_range"].upper) for row in history] == [
        (t1, t2),
        (t2, t3),
    ]
    assert [row["memo"] for row in history] == ["new", "updated\ufffd"]
    assert [row["deleted"] for row in history] == [False, False]
    entity_ids = fetch(ledger.url, "select entity_id from transaction order by consensus_timestamp")
    assert [row["entity_id"] for row in entity_ids] == [encoded(1001)] * 3


def test_failed_transaction_rules(ledger: Ledger) -> None:
    """A failed create: transaction, hash, fee transfers and balances, initial_balance; no entity."""
    seed_payer(ledger)
    t1 = T0 + 1
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(
        key=module("basic_types_pb2").Key(), initialBalance=5
    )
    item = record_item(
        body("cryptoCreateAccount", create),
        at=t1,
        status=INSUFFICIENT_PAYER_BALANCE,
        transfers=[(PAYER, -9), (3, 9)],
        charged=9,
    )
    counts = import_items(ledger.url, item)
    assert counts == {"transaction": 1, "crypto_transfer": 2, "transaction_hash": 1}
    row = fetch(ledger.url, "select result, entity_id, initial_balance from transaction")[0]
    assert row == {"result": INSUFFICIENT_PAYER_BALANCE, "entity_id": None, "initial_balance": 5}
    assert fetch(ledger.url, "select id, balance from entity") == [{"id": PAYER, "balance": 1_000_000 - 9}]


def test_child_of_failed_parent_is_not_successful(ledger: Ledger) -> None:
    t1, t2 = T0 + 1, T0 + 2
    parent = crypto_transfer([], at=t1, status=INSUFFICIENT_PAYER_BALANCE)
    child = create_account(1001, at=t2)
    child.record.parent_consensus_timestamp.CopyFrom(parent.record.consensusTimestamp)
    import_items(ledger.url, parent, child)
    assert fetch(ledger.url, "select count(*) from entity") == [{"count": 0}]
    rows = fetch(ledger.url, "select parent_consensus_timestamp, result from transaction order by 1 nulls first")
    assert rows == [
        {"parent_consensus_timestamp": None, "result": 10},
        {"parent_consensus_timestamp": t1, "result": 22},
    ]


def test_errata_of_failed_2019_transfer(ledger: Ledger) -> None:
    at = 1_570_000_000 * SECOND
    item = crypto_transfer([(PAYER, -5), (1001, 5)], at=at, status=INSUFFICIENT_PAYER_BALANCE)
    item.record.transferList.CopyFrom(
        module("basic_types_pb2").TransferList(
            accountAmounts=[
                module("basic_types_pb2").AccountAmount(accountID=account(PAYER), amount=-5),
                module("basic_types_pb2").AccountAmount(accountID=account(1001), amount=5),
                module("basic_types_pb2").AccountAmount(accountID=account(98), amount=1),
            ]
        )
    )
    import_items(ledger.url, item)
    rows = fetch(ledger.url, "select entity_id, errata from crypto_transfer order by entity_id")
    assert rows == [
        {"entity_id": PAYER, "errata": "DELETE"},
        {"entity_id": 98, "errata": None},
        {"entity_id": encoded(1001), "errata": "DELETE"},
    ]


def test_approve_allowance_and_approved_debit(ledger: Ledger) -> None:
    seed_payer(ledger)
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    allowances = module("crypto_approve_allowance_pb2")
    approve = allowances.CryptoApproveAllowanceTransactionBody(
        cryptoAllowances=[
            allowances.CryptoAllowance(owner=account(PAYER), spender=account(1001), amount=10),
            allowances.CryptoAllowance(spender=account(1001), amount=300),  # owner = payer; last one wins
        ]
    )
    import_items(
        ledger.url, create_account(1001, at=t1), record_item(body("cryptoApproveAllowance", approve), at=t2)
    )
    spend = crypto_transfer([(PAYER, -120), (1001, 120)], at=t3, payer=1001, approvals=[PAYER])
    import_items(ledger.url, spend)
    rows = fetch(
        ledger.url, "select owner, spender, amount, amount_granted, payer_account_id from crypto_allowance"
    )
    assert rows == [
        {"owner": PAYER, "spender": encoded(1001), "amount": 180, "amount_granted": 300, "payer_account_id": PAYER}
    ]
    transfers = fetch(
        ledger.url,
        "select entity_id, is_approval from crypto_transfer where consensus_timestamp = $1 order by 1",
        t3,
    )
    assert transfers == [
        {"entity_id": PAYER, "is_approval": True},
        {"entity_id": encoded(1001), "is_approval": False},
    ]
    assert fetch(ledger.url, "select balance from entity where id = $1", encoded(1001)) == [{"balance": 120}]


def test_staking_reward_sets_stake_period_start(ledger: Ledger) -> None:
    seed_payer(ledger)
    at = T0 + 10
    reward = module("basic_types_pb2").AccountAmount(accountID=account(PAYER), amount=77)
    item = crypto_transfer([(800, -77), (PAYER, 77)], at=at, paid_staking_rewards=[reward])
    import_items(ledger.url, item)
    assert fetch(ledger.url, "select * from staking_reward_transfer") == [
        {"account_id": PAYER, "amount": 77, "consensus_timestamp": at, "payer_account_id": PAYER}
    ]
    row = fetch(ledger.url, "select stake_period_start, balance, type from entity where id = $1", PAYER)[0]
    assert row == {"stake_period_start": at // (86_400 * SECOND) - 1, "balance": 1_000_077, "type": "ACCOUNT"}
    assert len(fetch(ledger.url, "select * from entity_history where id = $1", PAYER)) == 1


def test_nft_allowances_approve_and_delete(ledger: Ledger) -> None:
    ledger.execute(
        "insert into nft (token_id, serial_number, account_id, created_timestamp, timestamp_range)"
        " select 6000, s, $1, 1, '[1,)' from generate_series(1, 3) s",
        PAYER,
    )
    t1, t2 = T0 + 1, T0 + 2
    allowances = module("crypto_approve_allowance_pb2")
    approve = allowances.CryptoApproveAllowanceTransactionBody(
        nftAllowances=[
            allowances.NftAllowance(
                tokenId=module("basic_types_pb2").TokenID(tokenNum=6000),
                spender=account(1001),
                serial_numbers=[1, 2],
                approved_for_all=wrappers_pb2.BoolValue(value=True),
            ),
            allowances.NftAllowance(
                tokenId=module("basic_types_pb2").TokenID(tokenNum=6000),
                spender=account(1002),
                delegating_spender=account(1001),
                serial_numbers=[2],
            ),
        ]
    )
    removals = module("crypto_delete_allowance_pb2")
    delete = removals.CryptoDeleteAllowanceTransactionBody(
        nftAllowances=[
            removals.NftRemoveAllowance(
                token_id=module("basic_types_pb2").TokenID(tokenNum=6000), owner=account(PAYER), serial_numbers=[1]
            )
        ]
    )
    import_items(ledger.url, record_item(body("cryptoApproveAllowance", approve), at=t1))
    nfts = fetch(ledger.url, "select serial_number, account_id, spender, delegating_spender from nft order by 1")
    assert nfts == [
        {"serial_number": 1, "account_id": PAYER, "spender": encoded(1001), "delegating_spender": None},
        {"serial_number": 2, "account_id": PAYER, "spender": encoded(1002), "delegating_spender": encoded(1001)},
        {"serial_number": 3, "account_id": PAYER, "spender": None, "delegating_spender": None},
    ]
    assert fetch(
        ledger.url, "select owner, spender, token_id, approved_for_all, payer_account_id from nft_allowance"
    ) == [
        {
            "owner": PAYER,
            "spender": encoded(1001),
            "token_id": 6000,
            "approved_for_all": True,
            "payer_account_id": PAYER,
        }
    ]
    import_items(ledger.url, record_item(body("cryptoDeleteAllowance", delete), at=t2))
    nfts = fetch(ledger.url, "select serial_number, account_id, spender, timestamp_range from nft order by 1")
    assert [(row["serial_number"], row["account_id"], row["spender"]) for row in nfts] == [
        (1, PAYER, None),
        (2, PAYER, encoded(1002)),
        (3, PAYER, None),
    ]
    assert nfts[0]["timestamp_range"].lower == t2
    history = fetch(ledger.url, "select serial_number, spender from nft_history order by timestamp_range, 1")
    assert history == [
        {"serial_number": 1, "spender": None},
        {"serial_number": 2, "spender": None},
        {"serial_number": 1, "spender": encoded(1001)},
    ]


def test_create_with_an_ecdsa_key_alias(ledger: Ledger) -> None:
    """No key: the key alias is the key; the EVM address is keccak of the uncompressed key (private key 1)."""
    generator = bytes.fromhex("0279be667ef9dcbbac55a06295ce870b07029bfcdb2dce28d959f2815b16f81798")
    alias = module("basic_types_pb2").Key(ECDSA_secp256k1=generator).SerializeToString()
    create = module("crypto_create_pb2").CryptoCreateTransactionBody(alias=alias)
    import_items(
        ledger.url,
        record_item(body("cryptoCreateAccount", create), at=T0, receipt={"accountID": account(1001)}),
    )
    row = fetch(ledger.url, "select key, alias, evm_address, public_key from entity")[0]
    assert row["key"] == alias
    assert row["alias"] == alias
    assert row["evm_address"] == bytes.fromhex("7e5f4552091a69125d5dfcb7b8c2659029395bdf")
    assert row["public_key"] == generator.hex()
