"""Tokens, NFTs, token relationships and airdrops imported by the handlers are served by the REST routes with
the imported values (the columns the API reads are the ones the handlers write)."""

from __future__ import annotations

from starlette.testclient import TestClient
from tests.importer.tokentopics.records import (
    SECOND,
    T0,
    account,
    basic,
    body,
    encoded,
    fetch,
    item,
    key,
    module,
    run,
    token,
    token_transfers,
)

from ledgermirror.runtime import Prepared

TREASURY, ALICE = 1001, 1002
COIN, ART = 5001, 5002


def _import(url: str) -> None:
    for num in (TREASURY, ALICE):
        fetch(
            url,
            "insert into entity (id, num, realm, shard, type, timestamp_range, balance) "
            "values ($1, $2, 0, 0, 'ACCOUNT', '[0,)', 100)",
            encoded(num),
            num,
        )
    create = module("token_create_pb2").TokenCreateTransactionBody
    coin = create(
        name="Coin", symbol="COIN", decimals=2, initialSupply=500, treasury=account(TREASURY), adminKey=key(1)
    )
    art = create(name="Art", symbol="ART", treasury=account(TREASURY), supplyKey=key(2), tokenType=1)
    mint = module("token_mint_pb2").TokenMintTransactionBody(token=token(ART), metadata=[b"a", b"b"])
    associate = module("token_associate_pb2").TokenAssociateTransactionBody(
        account=account(ALICE), tokens=[token(ART)]
    )
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody(
        tokenTransfers=[token_transfers(ART, nfts=[(TREASURY, ALICE, 2)])]
    )
    airdrop = module("token_airdrop_pb2").TokenAirdropTransactionBody(
        token_transfers=[token_transfers(COIN, [(TREASURY, -7), (ALICE, 7)])]
    )
    pending = module("transaction_record_pb2").PendingAirdropRecord(
        pending_airdrop_id=basic.PendingAirdropId(
            sender_id=account(TREASURY), receiver_id=account(ALICE), fungible_token_type=token(COIN)
        ),
        pending_airdrop_value=basic.PendingAirdropValue(amount=7),
    )
    stamps = [T0 + n * SECOND for n in range(1, 7)]
    run(
        url,
        item(
            body("tokenCreation", coin, at=stamps[0]),
            at=stamps[0],
            receipt={"tokenID": token(COIN)},
            tokenTransferLists=[token_transfers(COIN, [(TREASURY, 500)])],
        ),
        item(body("tokenCreation", art, at=stamps[1]), at=stamps[1], receipt={"tokenID": token(ART)}),
        item(
            body("tokenMint", mint, at=stamps[2]),
            at=stamps[2],
            receipt={"newTotalSupply": 2, "serialNumbers": [1, 2]},
            tokenTransferLists=[token_transfers(ART, nfts=[(0, TREASURY, 1), (0, TREASURY, 2)])],
        ),
        item(body("tokenAssociate", associate, at=stamps[3]), at=stamps[3]),
        item(
            body("cryptoTransfer", transfer, at=stamps[4]),
            at=stamps[4],
            tokenTransferLists=[token_transfers(ART, nfts=[(TREASURY, ALICE, 2)])],
        ),
        item(
            body("tokenAirdrop", airdrop, payer=TREASURY, at=stamps[5]),
            at=stamps[5],
            new_pending_airdrops=[pending],
        ),
    )


def test_imported_tokens_nfts_and_airdrops_are_served(database: Prepared, client: TestClient) -> None:
    _import(database.owner_url)
    tokens = client.get("/api/v1/tokens").json()["tokens"]
    assert [(entry["token_id"], entry["symbol"], entry["name"], entry["type"]) for entry in tokens] == [
        ("0.0.5001", "COIN", "Coin", "FUNGIBLE_COMMON"),
        ("0.0.5002", "ART", "Art", "NON_FUNGIBLE_UNIQUE"),
    ]
    assert tokens[0]["decimals"] == 2

    nfts = client.get("/api/v1/accounts/0.0.1002/nfts").json()["nfts"]
    assert [(entry["token_id"], entry["serial_number"], entry["account_id"]) for entry in nfts] == [
        ("0.0.5002", 2, "0.0.1002")
    ]
    assert nfts[0]["metadata"] == "Yg=="  # base64 of b"b"
    assert nfts[0]["created_timestamp"] == f"{(T0 + 3 * SECOND) // SECOND}.000000000"
    treasury_nfts = client.get("/api/v1/accounts/0.0.1001/nfts").json()["nfts"]
    assert [entry["serial_number"] for entry in treasury_nfts] == [1]

    pending = client.get("/api/v1/accounts/0.0.1002/airdrops/pending").json()["airdrops"]
    assert [
        (entry["sender_id"], entry["receiver_id"], entry["token_id"], entry["amount"]) for entry in pending
    ] == [("0.0.1001", "0.0.1002", "0.0.5001", 7)]
