"""The token rows every item may carry: token transfers, NFT transfers, automatic associations, custom fees."""

from __future__ import annotations

import json
from typing import Any

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

from ledgermirror.ledger.transaction_codes import result_number

FUNGIBLE, NFT = 5000, 6000
ALICE, BOB = 1001, 1002
FAIL_INVALID = result_number("FAIL_INVALID")  # 23
INVALID_SIGNATURE = 7


def seed(ledger: Ledger) -> None:
    for account_num in (ALICE, BOB):
        for token_num, balance in ((FUNGIBLE, 1000), (NFT, 1)):
            ledger.execute(
                "insert into token_account (account_id, token_id, associated, balance, created_timestamp,"
                " timestamp_range) values ($1, $2, true, $3, 1, '[1,)')",
                encoded(account_num),
                encoded(token_num),
                balance if account_num == ALICE else 0,
            )
    ledger.execute(
        "insert into nft (token_id, serial_number, account_id, created_timestamp, spender, timestamp_range)"
        " values ($1, 1, $2, 1, $3, '[1,)')",
        encoded(NFT),
        encoded(ALICE),
        encoded(BOB),
    )


def transfer_lists(approval: bool) -> list[Any]:
    return [
        basic.TokenTransferList(
            token=token(FUNGIBLE),
            transfers=[
                basic.AccountAmount(accountID=account(ALICE), amount=-300, is_approval=approval),
                basic.AccountAmount(accountID=account(BOB), amount=300),
            ],
        ),
        basic.TokenTransferList(
            token=token(NFT),
            nftTransfers=[
                basic.NftTransfer(
                    senderAccountID=account(ALICE),
                    receiverAccountID=account(BOB),
                    serialNumber=1,
                    is_approval=approval,
                )
            ],
        ),
    ]


def token_transfer(at: int, *, status: int = 22, **record_fields: Any) -> Any:
    message = module("crypto_transfer_pb2").CryptoTransferTransactionBody(tokenTransfers=transfer_lists(True))
    return record_item(
        body("cryptoTransfer", message, payer=BOB),
        at=at,
        status=status,
        tokenTransferLists=transfer_lists(False),
        **record_fields,
    )


def test_token_and_nft_transfers(ledger: Ledger) -> None:
    seed(ledger)
    fee = module("custom_fees_pb2").AssessedCustomFee(
        amount=5, token_id=token(FUNGIBLE), fee_collector_account_id=account(98),
        effective_payer_account_id=[account(BOB)],
    )  # fmt: skip
    hbar_fee = module("custom_fees_pb2").AssessedCustomFee(amount=6, fee_collector_account_id=account(98))
    association = basic.TokenAssociation(token_id=token(7000), account_id=account(BOB))
    import_items(
        ledger.url,
        token_transfer(T0, assessed_custom_fees=[fee, hbar_fee], automatic_token_associations=[association]),
    )
    rows = fetch(
        ledger.url, "select account_id, amount, is_approval, payer_account_id from token_transfer order by 2"
    )
    assert rows == [
        {"account_id": encoded(ALICE), "amount": -300, "is_approval": True, "payer_account_id": encoded(BOB)},
        {"account_id": encoded(BOB), "amount": 300, "is_approval": False, "payer_account_id": encoded(BOB)},
    ]
    balances = fetch(
        ledger.url, "select account_id, token_id, balance, balance_timestamp from token_account order by 2, 1"
    )
    assert [(row["token_id"], row["account_id"], row["balance"]) for row in balances] == [
        (encoded(FUNGIBLE), encoded(ALICE), 700),
        (encoded(FUNGIBLE), encoded(BOB), 300),
        (encoded(NFT), encoded(ALICE), 0),
        (encoded(NFT), encoded(BOB), 1),
        (encoded(7000), encoded(BOB), 0),
    ]
    assert {row["balance_timestamp"] for row in balances} == {T0}
    association_row = fetch(ledger.url, "select * from token_account where token_id = 7000")[0]
    assert association_row["automatic_association"] is True
    assert association_row["associated"] is True
    assert association_row["created_timestamp"] == T0
    nft = fetch(ledger.url, "select account_id, spender, timestamp_range from nft")[0]
    assert (nft["account_id"], nft["spender"], nft["timestamp_range"].lower) == (encoded(BOB), None, T0)
    history = fetch(ledger.url, "select account_id, spender, timestamp_range from nft_history")
    assert [(row["account_id"], row["spender"], row["timestamp_range"].upper) for row in history] == [
        (encoded(ALICE), encoded(BOB), T0)
    ]
    nft_transfer = fetch(ledger.url, "select nft_transfer from transaction")[0]["nft_transfer"]
    assert json.loads(nft_transfer) == [
        {"is_approval": True, "receiver_account_id": encoded(BOB), "sender_account_id": encoded(ALICE),
         "serial_number": 1, "token_id": encoded(NFT)}
    ]  # fmt: skip
    fees = fetch(ledger.url, "select * from assessed_custom_fee order by amount")
    assert fees == [
        {"amount": 5, "collector_account_id": 98, "consensus_timestamp": T0, "token_id": encoded(FUNGIBLE),
         "effective_payer_account_ids": [encoded(BOB)], "payer_account_id": encoded(BOB)},
        {"amount": 6, "collector_account_id": 98, "consensus_timestamp": T0, "token_id": None,
         "effective_payer_account_ids": [], "payer_account_id": encoded(BOB)},
    ]  # fmt: skip


def test_fail_invalid_writes_token_rows_other_failures_do_not(ledger: Ledger) -> None:
    seed(ledger)
    import_items(
        ledger.url, token_transfer(T0, status=INVALID_SIGNATURE), token_transfer(T0 + 1, status=FAIL_INVALID)
    )
    rows = fetch(ledger.url, "select distinct consensus_timestamp from token_transfer")
    assert rows == [{"consensus_timestamp": T0 + 1}]
    nft_transfers = fetch(
        ledger.url, "select nft_transfer is null as empty from transaction order by consensus_timestamp"
    )
    assert nft_transfers == [{"empty": True}, {"empty": False}]
    # FAIL_INVALID is not success: no approved-debit allowance tracking, but balances move.
    assert fetch(ledger.url, "select balance from token_account where account_id = $1 and token_id = $2",
                 encoded(BOB), encoded(FUNGIBLE)) == [{"balance": 300}]  # fmt: skip


def test_token_balance_of_unknown_association_is_dropped(ledger: Ledger) -> None:
    import_items(ledger.url, token_transfer(T0))
    assert fetch(ledger.url, "select count(*) from token_account") == [{"count": 0}]
    assert fetch(ledger.url, "select count(*) from token_transfer") == [{"count": 2}]
    assert PAYER != BOB
