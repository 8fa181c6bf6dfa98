"""What each transaction type is counted for (the extras the figure tests do not reach)."""

from __future__ import annotations

from typing import Any

from hiero_sdk_python.hapi.services import basic_types_pb2 as basic
from tests.fees.builders import body, key, signed

from ledgermirror.fees.transaction import parse
from ledgermirror.fees.usage import State, count_keys, service_counts


def counts(message: Any, state: State | None = None) -> dict[str, int | tuple[int, ...]]:
    return service_counts(parse(signed(message)), state)


def test_keys_count_recursively() -> None:
    threshold = basic.Key()
    threshold.thresholdKey.threshold = 1
    threshold.thresholdKey.keys.keys.extend([key(1), basic.Key(ECDSA_secp256k1=b"\x02" * 33)])
    nested = basic.Key()
    nested.keyList.keys.extend([threshold, key(3), basic.Key(RSA_3072=b"r"), basic.Key(ECDSA_384=b"p")])
    nested.keyList.keys.add().contractID.contractNum = 5
    assert count_keys(nested) == 4
    assert count_keys(basic.Key()) == 0


def test_crypto_transfer_accounts_tokens_and_hooks() -> None:
    message = body()
    transfer = message.cryptoTransfer
    for account in (1001, 1002, 1001):
        transfer.transfers.accountAmounts.add(amount=1).accountID.accountNum = account
    tokens = transfer.tokenTransfers.add()
    tokens.token.tokenNum = 7
    amount = tokens.transfers.add(amount=1)
    amount.accountID.accountNum = 1003
    amount.pre_tx_allowance_hook.evm_hook_call.gas_limit = 25_000
    nft = transfer.tokenTransfers.add()
    nft.token.tokenNum = 8
    item = nft.nftTransfers.add(serialNumber=1)
    item.senderAccountID.accountNum = 1002
    item.receiverAccountID.accountNum = 1004
    item.pre_tx_receiver_allowance_hook.evm_hook_call.gas_limit = 5_000
    assert counts(message) == {"ACCOUNTS": 4, "TOKEN_TYPES": (1, 1), "HOOK_EXECUTION": 2, "GAS": 30_000}
    assert counts(message, State())["TOKEN_TRANSFER_BASE"] == 1
    # token 8 is unknown, so it counts as fungible and its list has no fungible transfers
    assert counts(message, State())["TOKEN_TYPES"] == 1
    assert counts(message, State(non_fungible_tokens=frozenset({(0, 0, 8)})))["TOKEN_TYPES"] == 2


def test_allowances_airdrops_nfts_hooks_and_schedules() -> None:
    approve = body()
    approve.cryptoApproveAllowance.cryptoAllowances.add(amount=1)
    approve.cryptoApproveAllowance.tokenAllowances.add(amount=1)
    approve.cryptoApproveAllowance.nftAllowances.add()
    assert counts(approve) == {"ALLOWANCES": 3}
    delete = body()
    delete.cryptoDeleteAllowance.nftAllowances.add()
    assert counts(delete) == {"ALLOWANCES": 1}
    airdrop = body()
    tokens = airdrop.tokenAirdrop.token_transfers.add()
    tokens.transfers.add(amount=-2)
    tokens.transfers.add(amount=1)
    tokens.transfers.add(amount=1)
    tokens.nftTransfers.add(serialNumber=1)
    assert counts(airdrop) == {"ACCOUNTS": 1, "TOKEN_TYPES": (4,)}  # a CryptoTransfer of its token lists
    update = body()
    update.token_update_nfts.serial_numbers.extend([1, 2, 3])
    assert counts(update) == {"NFT_UPDATE": 3}
    store = body()
    store.hook_store.storage_updates.add()
    store.hook_store.storage_updates.add()
    assert counts(store) == {"HOOK_SLOT_UPDATE": 2}
    schedule = body()
    schedule.scheduleCreate.adminKey.CopyFrom(key())
    schedule.scheduleCreate.scheduledTransactionBody.contractCall.gas = 1
    assert counts(schedule) == {"KEYS": 1, "SCHEDULE_CREATE_CONTRACT_CALL_BASE": 1}
    fungible = body()
    fungible.tokenMint.amount = 10
    assert counts(fungible) == {"TOKEN_MINT_NFT_BASE": 0, "TOKEN_MINT_NFT": 0}
    assert counts(body(tokenBurn=None)) == {}
