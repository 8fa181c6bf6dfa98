"""Token service handlers: record items built from HAPI messages, imported into the test database, and the
rows the reference writes (importer-transaction-handlers.md §3.2, §5.3), history included."""

from __future__ import annotations

import json

import pytest
from google.protobuf import wrappers_pb2 as wrappers
from tests.importer.tokentopics.records import (
    INVALID_SIGNATURE,
    SECOND,
    T0,
    account,
    body,
    encoded,
    fetch,
    item,
    key,
    key_bytes,
    module,
    ranges,
    run,
    token,
    token_transfers,
)
from tests.support import Ledger

from ledgermirror.runtime import Prepared

TREASURY, ALICE, BOB, COLLECTOR = 1001, 1002, 1003, 1004
FUNGIBLE, NFT = 5001, 5002
_create = module("token_create_pb2")
_custom = module("custom_fees_pb2")
_basic = module("basic_types_pb2")


@pytest.fixture
def url(database: Prepared, ledger: Ledger) -> str:
    return database.owner_url


def _accounts(url: str, *nums: int) -> None:
    """Accounts already in the database (created before the mirror's start)."""
    for num in nums:
        fetch(
            url,
            "insert into entity (id, num, realm, shard, type, timestamp_range, balance) "
            "values ($1, $2, 0, 0, 'ACCOUNT', int8range(0, null), 1000)",
            encoded(num),
            num,
        )


def _fractional_fee() -> object:
    return _custom.CustomFee(
        fractional_fee=_custom.FractionalFee(
            fractional_amount=_basic.Fraction(numerator=1, denominator=100), minimum_amount=1, maximum_amount=0
        ),
        fee_collector_account_id=account(COLLECTOR),
    )


def _fixed_hbar_fee() -> object:
    return _custom.CustomFee(fixed_fee=_custom.FixedFee(amount=5), fee_collector_account_id=account(COLLECTOR))


def create_fungible(at: int, status: int = 22) -> object:
    message = _create.TokenCreateTransactionBody(
        name="Coin",
        symbol="COIN",
        decimals=2,
        initialSupply=1_000,
        treasury=account(TREASURY),
        adminKey=key(1),
        freezeKey=key(2),
        kycKey=key(3),
        freezeDefault=True,
        autoRenewAccount=account(TREASURY),
        autoRenewPeriod=module("duration_pb2").Duration(seconds=7_776_000),
        memo="a\x00coin",
        maxSupply=0,
        custom_fees=[_fractional_fee(), _fixed_hbar_fee()],
    )
    transfers = [token_transfers(FUNGIBLE, [(TREASURY, 1_000)])] if status == 22 else []
    return item(
        body("tokenCreation", message, at=at),
        at=at,
        status=status,
        receipt={"tokenID": token(FUNGIBLE)},
        tokenTransferLists=transfers,
    )


def create_nft_class(at: int) -> object:
    message = _create.TokenCreateTransactionBody(
        name="Art",
        symbol="ART",
        treasury=account(TREASURY),
        adminKey=key(1),
        supplyKey=key(4),
        pause_key=key(5),
        tokenType=1,
        supplyType=1,
        maxSupply=10,
        metadata=b"class",
        metadata_key=key(6),
    )
    return item(body("tokenCreation", message, at=at), at=at, receipt={"tokenID": token(NFT)})


def mint_nfts(at: int, serials: list[int]) -> object:
    message = module("token_mint_pb2").TokenMintTransactionBody(
        token=token(NFT), metadata=[f"nft{serial}".encode() for serial in serials]
    )
    return item(
        body("tokenMint", message, at=at),
        at=at,
        receipt={"newTotalSupply": len(serials), "serialNumbers": serials},
        tokenTransferLists=[token_transfers(NFT, nfts=[(0, TREASURY, serial) for serial in serials])],
    )


def test_token_create_writes_the_entity_token_fees_and_treasury_association(url: str) -> None:
    _accounts(url, TREASURY, COLLECTOR)
    at = T0 + SECOND
    run(url, create_fungible(at))

    entity = fetch(url, "select * from entity where id = $1", encoded(FUNGIBLE))[0]
    assert (entity["type"], entity["memo"], entity["created_timestamp"], entity["deleted"]) == (
        "TOKEN",
        "a\ufffdcoin",
        at,
        False,
    )
    assert entity["key"] == key_bytes(1)
    assert (entity["auto_renew_account_id"], entity["auto_renew_period"]) == (encoded(TREASURY), 7_776_000)
    assert entity["balance"] is None

    row = fetch(url, "select * from token where token_id = $1", encoded(FUNGIBLE))[0]
    assert row["created_timestamp"] == at
    assert (row["name"], row["symbol"], row["decimals"]) == ("Coin", "COIN", 2)
    assert (row["initial_supply"], row["total_supply"], row["max_supply"]) == (1_000, 1_000, 0)
    assert (row["type"], row["supply_type"], row["treasury_account_id"]) == (
        "FUNGIBLE_COMMON",
        "INFINITE",
        encoded(TREASURY),
    )
    assert (row["freeze_key"], row["kyc_key"], row["supply_key"]) == (key_bytes(2), key_bytes(3), None)
    assert (row["freeze_default"], row["freeze_status"], row["kyc_status"]) == (True, 1, 2)
    assert row["pause_status"] == "NOT_APPLICABLE"
    assert row["metadata"] == b""  # HAPI 0.60: metadata is stored (empty when not given)

    fee = fetch(url, "select * from custom_fee where entity_id = $1", encoded(FUNGIBLE))[0]
    assert json.loads(fee["fractional_fees"]) == [
        {
            "all_collectors_are_exempt": False,
            "collector_account_id": encoded(COLLECTOR),
            "denominator": 100,
            "minimum_amount": 1,
            "net_of_transfers": False,
            "numerator": 1,
        }
    ]
    assert json.loads(fee["fixed_fees"]) == [
        {"all_collectors_are_exempt": False, "amount": 5, "collector_account_id": encoded(COLLECTOR)}
    ]
    assert fee["royalty_fees"] is None

    # treasury and the collector of the fractional fee (charged in the token itself), not the HBAR fee's
    associations = fetch(
        url, "select * from token_account where token_id = $1 order by account_id", encoded(FUNGIBLE)
    )
    assert [row["account_id"] for row in associations] == [encoded(TREASURY), encoded(COLLECTOR)]
    for association in associations:
        assert association["associated"] is True
        assert association["automatic_association"] is False
        assert (association["created_timestamp"], association["balance_timestamp"]) == (at, at)
        assert (association["freeze_status"], association["kyc_status"]) == (2, 1)
    assert [row["balance"] for row in associations] == [1_000, 0]  # the initial supply's token transfer


def test_a_failed_token_create_writes_no_token_rows(url: str) -> None:
    _accounts(url, TREASURY)
    at = T0 + SECOND
    run(url, create_fungible(at, status=INVALID_SIGNATURE))
    assert fetch(url, "select entity_id, result from transaction") == [
        {"entity_id": encoded(FUNGIBLE), "result": INVALID_SIGNATURE}
    ]
    for table, column in (
        ("entity", "id"),
        ("token", "token_id"),
        ("token_account", "token_id"),
        ("custom_fee", "entity_id"),
    ):
        assert fetch(url, f"select * from {table} where {column} = $1", encoded(FUNGIBLE)) == []


def test_token_update_pause_and_delete_keep_history(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    created, updated, paused = T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND
    update = module("token_update_pb2").TokenUpdateTransactionBody(
        token=token(NFT),
        name="Art 2",
        wipeKey=key(9),
        memo=wrappers.StringValue(value="renamed"),
    )
    pause = module("token_pause_pb2").TokenPauseTransactionBody(token=token(NFT))
    delete = module("token_delete_pb2").TokenDeleteTransactionBody(token=token(NFT))
    run(
        url,
        create_nft_class(created),
        item(body("tokenUpdate", update, at=updated), at=updated),
        item(body("token_pause", pause, at=paused), at=paused),
    )
    row = fetch(url, "select * from token where token_id = $1", encoded(NFT))[0]
    assert (row["name"], row["symbol"], row["wipe_key"], row["pause_status"]) == (
        "Art 2",
        "ART",
        key_bytes(9),
        "PAUSED",
    )
    assert (row["type"], row["supply_type"], row["max_supply"], row["created_timestamp"]) == (
        "NON_FUNGIBLE_UNIQUE",
        "FINITE",
        10,
        created,
    )
    assert (row["metadata"], row["metadata_key"]) == (b"class", key_bytes(6))
    assert ranges(url, "token", "token_id = $1", encoded(NFT)) == [
        (created, updated),
        (updated, paused),
        (paused, None),
    ]
    history = fetch(url, "select name, pause_status from token_history order by lower(timestamp_range)")
    assert history == [
        {"name": "Art", "pause_status": "UNPAUSED"},
        {"name": "Art 2", "pause_status": "UNPAUSED"},
    ]
    assert fetch(url, "select memo from entity where id = $1", encoded(NFT)) == [{"memo": "renamed"}]

    deleted = T0 + 4 * SECOND
    run(url, item(body("tokenDeletion", delete, at=deleted), at=deleted))
    assert fetch(url, "select deleted, type from entity where id = $1", encoded(NFT)) == [
        {"deleted": True, "type": "TOKEN"}
    ]
    assert fetch(url, "select lower(timestamp_range) as lo from token where token_id = $1", encoded(NFT)) == [
        {"lo": paused}
    ]  # TokenDelete leaves the token row alone


def test_an_update_of_a_token_never_created_is_dropped(url: str) -> None:
    at = T0 + SECOND
    update = module("token_update_pb2").TokenUpdateTransactionBody(token=token(FUNGIBLE), name="Ghost")
    run(url, item(body("tokenUpdate", update, at=at), at=at))
    assert fetch(url, "select * from token") == []  # merged, and nothing inserted without created_timestamp
    assert fetch(url, "select * from token_history") == []
    assert fetch(url, "select type, created_timestamp from entity where id = $1", encoded(FUNGIBLE)) == [
        {"type": "TOKEN", "created_timestamp": None}
    ]  # the entity has no such guard (reference §2.2)


def test_nft_mint_transfer_burn_and_metadata_update(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    created, minted, moved, burned, changed = (T0 + n * SECOND for n in range(1, 6))
    associate = module("token_associate_pb2").TokenAssociateTransactionBody(
        account=account(ALICE), tokens=[token(NFT)]
    )
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody(
        tokenTransfers=[token_transfers(NFT, nfts=[(TREASURY, ALICE, 1)])]
    )
    burn = module("token_burn_pb2").TokenBurnTransactionBody(token=token(NFT), serialNumbers=[2])
    run(
        url,
        create_nft_class(created),
        item(body("tokenAssociate", associate, at=created + 1), at=created + 1),
        mint_nfts(minted, [1, 2]),
        item(
            body("cryptoTransfer", transfer, at=moved),
            at=moved,
            tokenTransferLists=[token_transfers(NFT, nfts=[(TREASURY, ALICE, 1)])],
        ),
        item(
            body("tokenBurn", burn, at=burned),
            at=burned,
            receipt={"newTotalSupply": 1},
            tokenTransferLists=[token_transfers(NFT, nfts=[(TREASURY, 0, 2)])],
        ),
    )
    nfts = fetch(url, "select * from nft order by serial_number")
    assert [(row["serial_number"], row["account_id"], row["deleted"]) for row in nfts] == [
        (1, encoded(ALICE), False),
        (2, None, True),
    ]
    assert [row["metadata"] for row in nfts] == [b"nft1", b"nft2"]
    assert [row["created_timestamp"] for row in nfts] == [minted, minted]
    history = fetch(url, "select serial_number, account_id, deleted from nft_history order by serial_number")
    assert history == [
        {"serial_number": 1, "account_id": encoded(TREASURY), "deleted": False},
        {"serial_number": 2, "account_id": encoded(TREASURY), "deleted": False},
    ]
    assert ranges(url, "nft", "serial_number = 1") == [(minted, moved), (moved, None)]
    assert fetch(url, "select total_supply from token") == [{"total_supply": 1}]
    balances = fetch(url, "select account_id, balance from token_account order by account_id")
    assert balances == [
        {"account_id": encoded(TREASURY), "balance": 0},
        {"account_id": encoded(ALICE), "balance": 1},
    ]

    # TokenUpdateNfts: new metadata, the spender kept
    fetch(url, "update nft set spender = $1 where serial_number = 1", encoded(BOB))
    update = module("token_update_nfts_pb2").TokenUpdateNftsTransactionBody(
        token=token(NFT), serial_numbers=[1], metadata=wrappers.BytesValue(value=b"new")
    )
    run(url, item(body("token_update_nfts", update, at=changed), at=changed))
    row = fetch(url, "select * from nft where serial_number = 1")[0]
    assert (row["metadata"], row["spender"], row["account_id"]) == (b"new", encoded(BOB), encoded(ALICE))
    assert ranges(url, "nft", "serial_number = 1") == [(minted, moved), (moved, changed), (changed, None)]


def test_an_nft_treasury_change_moves_the_treasury_nfts(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    created, minted, changed = T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND
    associate = module("token_associate_pb2").TokenAssociateTransactionBody(
        account=account(ALICE), tokens=[token(NFT)]
    )
    update = module("token_update_pb2").TokenUpdateTransactionBody(token=token(NFT), treasury=account(ALICE))
    run(
        url,
        create_nft_class(created),
        item(body("tokenAssociate", associate, at=created + 1), at=created + 1),
        mint_nfts(minted, [1, 2, 3]),
        item(
            body("tokenUpdate", update, at=changed),
            at=changed,
            tokenTransferLists=[token_transfers(NFT, nfts=[(TREASURY, ALICE, -1)])],
        ),
    )
    assert fetch(url, "select distinct account_id from nft") == [{"account_id": encoded(ALICE)}]
    assert fetch(url, "select count(*) as n from nft_history where upper(timestamp_range) = $1", changed) == [
        {"n": 3}
    ]
    assert fetch(url, "select treasury_account_id from token") == [{"treasury_account_id": encoded(ALICE)}]
    balances = fetch(url, "select account_id, balance from token_account order by account_id")
    assert balances == [
        {"account_id": encoded(TREASURY), "balance": 0},
        {"account_id": encoded(ALICE), "balance": 3},
    ]
    assert (
        fetch(url, "select nft_transfer from transaction where consensus_timestamp = $1", changed)[0][
            "nft_transfer"
        ]
        is not None
    )


def test_association_freeze_kyc_and_dissociation_are_versioned(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    created = T0 + SECOND
    stamps = [T0 + n * SECOND for n in range(2, 7)]
    m = module
    bodies = [
        (
            "tokenAssociate",
            m("token_associate_pb2").TokenAssociateTransactionBody(
                account=account(ALICE), tokens=[token(FUNGIBLE)]
            ),
        ),
        (
            "tokenUnfreeze",
            m("token_unfreeze_account_pb2").TokenUnfreezeAccountTransactionBody(
                token=token(FUNGIBLE), account=account(ALICE)
            ),
        ),
        (
            "tokenGrantKyc",
            m("token_grant_kyc_pb2").TokenGrantKycTransactionBody(token=token(FUNGIBLE), account=account(ALICE)),
        ),
        (
            "tokenFreeze",
            m("token_freeze_account_pb2").TokenFreezeAccountTransactionBody(
                token=token(FUNGIBLE), account=account(ALICE)
            ),
        ),
        (
            "tokenDissociate",
            m("token_dissociate_pb2").TokenDissociateTransactionBody(
                account=account(ALICE), tokens=[token(FUNGIBLE)]
            ),
        ),
    ]
    run(
        url,
        create_fungible(created),
        *(item(body(name, message, at=at), at=at) for (name, message), at in zip(bodies, stamps, strict=True)),
    )
    where = "account_id = $1 and token_id = $2"
    columns = "associated, freeze_status, kyc_status, lower(timestamp_range) as lo"
    versions = fetch(
        url,
        f"select {columns} from token_account_history where {where} "
        f"union all select {columns} from token_account where {where} order by lo",
        encoded(ALICE),
        encoded(FUNGIBLE),
    )
    assert [(row["associated"], row["freeze_status"], row["kyc_status"]) for row in versions] == [
        (True, None, None),
        (True, 2, None),
        (True, 2, 1),
        (True, 1, 1),
        (False, 1, 1),
    ]
    assert ranges(url, "token_account", where, encoded(ALICE), encoded(FUNGIBLE)) == [
        (stamps[0], stamps[1]),
        (stamps[1], stamps[2]),
        (stamps[2], stamps[3]),
        (stamps[3], stamps[4]),
        (stamps[4], None),
    ]
    assert fetch(url, "select entity_id from transaction where consensus_timestamp = $1", stamps[1]) == [
        {"entity_id": encoded(ALICE)}
    ]


def test_fee_schedule_update_replaces_and_clears_the_fees(url: str) -> None:
    _accounts(url, TREASURY, COLLECTOR)
    created, updated, cleared = T0 + SECOND, T0 + 2 * SECOND, T0 + 3 * SECOND
    royalty = _custom.CustomFee(
        royalty_fee=_custom.RoyaltyFee(
            exchange_value_fraction=_basic.Fraction(numerator=1, denominator=10),
            fallback_fee=_custom.FixedFee(amount=7, denominating_token_id=token(0)),
        ),
        fee_collector_account_id=account(COLLECTOR),
        all_collectors_are_exempt=True,
    )
    schedule = module("token_fee_schedule_update_pb2").TokenFeeScheduleUpdateTransactionBody
    run(
        url,
        create_fungible(created),
        item(
            body(
                "token_fee_schedule_update", schedule(token_id=token(FUNGIBLE), custom_fees=[royalty]), at=updated
            ),
            at=updated,
        ),
        item(body("token_fee_schedule_update", schedule(token_id=token(FUNGIBLE)), at=cleared), at=cleared),
    )
    current = fetch(url, "select * from custom_fee")[0]
    assert (current["fixed_fees"], current["fractional_fees"], current["royalty_fees"]) == (None, None, None)
    history = fetch(url, "select * from custom_fee_history order by lower(timestamp_range)")
    assert len(history) == 2
    assert json.loads(history[1]["royalty_fees"]) == [
        {
            "all_collectors_are_exempt": True,
            "collector_account_id": encoded(COLLECTOR),
            "denominator": 10,
            "fallback_fee": {"amount": 7, "denominating_token_id": encoded(FUNGIBLE)},
            "numerator": 1,
        }
    ]
    assert history[1]["fixed_fees"] is None and history[1]["fractional_fees"] is None
    assert ranges(url, "custom_fee", "entity_id = $1", encoded(FUNGIBLE)) == [
        (created, updated),
        (updated, cleared),
        (cleared, None),
    ]


def test_token_reject_and_wipe_main_entities(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    at = T0 + SECOND
    reject = module("token_reject_pb2").TokenRejectTransactionBody(
        rejections=[module("token_reject_pb2").TokenReference(fungible_token=token(FUNGIBLE))]
    )
    wipe = module("token_wipe_account_pb2").TokenWipeAccountTransactionBody(
        token=token(FUNGIBLE), account=account(ALICE), amount=5
    )
    run(
        url,
        create_fungible(at),
        item(body("tokenReject", reject, payer=ALICE, at=at + SECOND), at=at + SECOND),
        item(body("tokenWipe", wipe, at=at + 2 * SECOND), at=at + 2 * SECOND, receipt={"newTotalSupply": 995}),
    )
    assert fetch(url, "select entity_id from transaction order by consensus_timestamp") == [
        {"entity_id": encoded(FUNGIBLE)},
        {"entity_id": encoded(ALICE)},
        {"entity_id": encoded(FUNGIBLE)},
    ]
    assert fetch(url, "select total_supply from token") == [{"total_supply": 995}]
    assert ranges(url, "token", "true") == [(at, None)]  # a supply change makes no history


def test_dissociating_from_a_deleted_token_drops_its_supply_and_nfts(url: str) -> None:
    _accounts(url, TREASURY, ALICE)
    created, minted, moved, deleted, left = (T0 + n * SECOND for n in range(1, 6))
    associate = module("token_associate_pb2").TokenAssociateTransactionBody(
        account=account(ALICE), tokens=[token(NFT)]
    )
    transfer = module("crypto_transfer_pb2").CryptoTransferTransactionBody()
    delete = module("token_delete_pb2").TokenDeleteTransactionBody(token=token(NFT))
    dissociate = module("token_dissociate_pb2").TokenDissociateTransactionBody(
        account=account(ALICE), tokens=[token(NFT)]
    )
    run(
        url,
        create_nft_class(created),
        item(body("tokenAssociate", associate, at=created + 1), at=created + 1),
        mint_nfts(minted, [1, 2, 3]),
        item(
            body("cryptoTransfer", transfer, at=moved),
            at=moved,
            tokenTransferLists=[token_transfers(NFT, nfts=[(TREASURY, ALICE, 1), (TREASURY, ALICE, 2)])],
        ),
        item(body("tokenDeletion", delete, at=deleted), at=deleted),
    )
    run(
        url,
        item(
            body("tokenDissociate", dissociate, payer=ALICE, at=left),
            at=left,
            tokenTransferLists=[token_transfers(NFT, [(ALICE, -2)])],
        ),
    )
    assert fetch(url, "select total_supply from token") == [{"total_supply": 1}]
    nfts = fetch(url, "select serial_number, account_id, deleted from nft order by serial_number")
    assert nfts == [
        {"serial_number": 1, "account_id": None, "deleted": True},
        {"serial_number": 2, "account_id": None, "deleted": True},
        {"serial_number": 3, "account_id": encoded(TREASURY), "deleted": False},
    ]
    assert ranges(url, "nft", "serial_number = 2") == [(minted, moved), (moved, left), (left, None)]
    alice = fetch(url, "select balance from token_account where account_id = $1", encoded(ALICE))
    assert alice == [{"balance": 0}]
    history = fetch(url, "select associated from token_account_history where account_id = $1", encoded(ALICE))
    assert history == [{"associated": True}]  # closed by the dissociation at `left`
    assert ranges(url, "token_account", "account_id = $1", encoded(ALICE)) == [(created + 1, left), (left, None)]
