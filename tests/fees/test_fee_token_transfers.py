"""CryptoTransfer and TokenAirdrop service extras as consensus node 0.75's calculators count them (docs/fees.md):
TOKEN_TYPES per token transfer list in INTRINSIC mode, once over counted units in STATE mode, and an airdrop
priced as a CryptoTransfer of its token transfers under the CryptoTransfer entry."""

from __future__ import annotations

from typing import Any

from tests.fees.builders import body, signed

from ledgermirror.fees import schedule
from ledgermirror.fees.calculator import calculate
from ledgermirror.fees.transaction import parse
from ledgermirror.fees.usage import State

SCHEDULE = schedule.default()
FUNGIBLE = (0, 0, 5001)
NFT = (0, 0, 5002)


def service(message: Any, state: State | None = None) -> list[tuple[str, int, int, int]]:
    result = calculate(SCHEDULE, parse(signed(message, 1)), state)
    assert result.service_base == 0
    return [(extra.name, extra.count, extra.included, extra.charged) for extra in result.service_extras]


def service_total(message: Any, state: State | None = None) -> int:
    result = calculate(SCHEDULE, parse(signed(message, 1)), state)
    return sum(extra.subtotal for extra in result.service_extras)


def fungible_list(lists: Any, token: tuple[int, int, int], *moves: tuple[int, int]) -> None:
    item = lists.add()
    item.token.tokenNum = token[2]
    for account, amount in moves:
        item.transfers.add(amount=amount).accountID.accountNum = account


def nft_list(lists: Any, token: tuple[int, int, int], serials: int) -> None:
    item = lists.add()
    item.token.tokenNum = token[2]
    for serial in range(1, serials + 1):
        nft = item.nftTransfers.add(serialNumber=serial)
        nft.senderAccountID.accountNum = 1001
        nft.receiverAccountID.accountNum = 1002


def test_one_fungible_list_of_two_transfers() -> None:
    message = body()
    fungible_list(message.cryptoTransfer.tokenTransfers, FUNGIBLE, (1001, -5), (1002, 5))
    assert service(message) == [("TOKEN_TYPES", 2, 1, 1)]
    assert service_total(message) == 1_000_000
    # STATE: one unit for the list, the transfer base instead
    assert service(message, State()) == [("TOKEN_TRANSFER_BASE", 1, 0, 1)]
    assert service_total(message, State()) == 9_000_000


def test_the_same_token_in_two_lists_is_charged_per_list() -> None:
    message = body()
    lists = message.cryptoTransfer.tokenTransfers
    fungible_list(lists, FUNGIBLE, (1001, -5), (1002, 5))
    fungible_list(lists, FUNGIBLE, (1001, -1), (1002, 1))
    assert service(message) == [("TOKEN_TYPES", 2, 1, 1), ("TOKEN_TYPES", 2, 1, 1)]
    assert service_total(message) == 2_000_000
    assert service(message, State()) == [("TOKEN_TRANSFER_BASE", 1, 0, 1), ("TOKEN_TYPES", 2, 1, 1)]


def test_nft_transfers_count_each_serial() -> None:
    message = body()
    nft_list(message.cryptoTransfer.tokenTransfers, NFT, 3)
    assert service(message) == [("TOKEN_TYPES", 3, 1, 2)]
    known = State(non_fungible_tokens=frozenset({NFT}))
    assert service(message, known) == [("TOKEN_TRANSFER_BASE", 1, 0, 1), ("TOKEN_TYPES", 3, 1, 2)]
    custom = State(non_fungible_tokens=frozenset({NFT}), tokens_with_custom_fees=frozenset({NFT}))
    assert service(message, custom) == [("TOKEN_TRANSFER_BASE_CUSTOM_FEES", 1, 0, 1), ("TOKEN_TYPES", 3, 1, 2)]
    # a token the database does not know counts as fungible: an NFT list has no fungible transfers
    assert service(message, State()) == []


def test_custom_fees_of_an_uncounted_list_do_not_count() -> None:
    message = body()
    lists = message.cryptoTransfer.tokenTransfers
    fungible_list(lists, FUNGIBLE, (1001, -5), (1002, 5))
    nft_list(lists, NFT, 0)
    state = State(non_fungible_tokens=frozenset({NFT}), tokens_with_custom_fees=frozenset({NFT}))
    assert service(message, state) == [("TOKEN_TRANSFER_BASE", 1, 0, 1)]


def test_extras_follow_the_calculators_order() -> None:
    message = body()
    transfer = message.cryptoTransfer
    for account, amount in ((1001, -3), (1002, 1), (1003, 1), (1004, 1)):
        transfer.transfers.accountAmounts.add(amount=amount).accountID.accountNum = account
    fungible_list(transfer.tokenTransfers, FUNGIBLE, (1005, -1), (1006, 1))
    nft_list(transfer.tokenTransfers, NFT, 2)
    state = State(non_fungible_tokens=frozenset({NFT}))
    assert service(message, state) == [
        ("ACCOUNTS", 6, 2, 4),
        ("TOKEN_TRANSFER_BASE", 1, 0, 1),
        ("TOKEN_TYPES", 3, 1, 2),
    ]
    assert service(message) == [("ACCOUNTS", 6, 2, 4), ("TOKEN_TYPES", 2, 1, 1), ("TOKEN_TYPES", 2, 1, 1)]


def test_hook_gas_is_clamped_per_invocation() -> None:
    message = body()
    amount = message.cryptoTransfer.transfers.accountAmounts.add(amount=-1)
    amount.accountID.accountNum = 1001
    amount.pre_tx_allowance_hook.evm_hook_call.gas_limit = 40_000_000
    message.cryptoTransfer.transfers.accountAmounts.add(amount=1).accountID.accountNum = 1002
    gas = [extra for extra in service(message) if extra[0] == "GAS"]
    assert gas == [("GAS", 15_000_000, 0, 15_000_000)]


def airdrop(recipients: int) -> Any:
    message = body()
    item = message.tokenAirdrop.token_transfers.add()
    item.token.tokenNum = FUNGIBLE[2]
    item.transfers.add(amount=-recipients).accountID.accountNum = 1001
    for recipient in range(recipients):
        item.transfers.add(amount=1).accountID.accountNum = 2001 + recipient
    return message


def test_an_airdrop_is_priced_as_a_crypto_transfer() -> None:
    one = airdrop(1)
    assert service(one) == [("TOKEN_TYPES", 2, 1, 1)]
    assert service_total(one) == 1_000_000  # not AIRDROPS at 500,000,000 each
    assert service(one, State()) == [("TOKEN_TRANSFER_BASE", 1, 0, 1)]
    custom = State(tokens_with_custom_fees=frozenset({FUNGIBLE}))
    assert service(one, custom) == [("TOKEN_TRANSFER_BASE_CUSTOM_FEES", 1, 0, 1)]
    three = airdrop(3)
    assert service(three) == [("ACCOUNTS", 4, 2, 2), ("TOKEN_TYPES", 4, 1, 3)]


def test_an_airdrop_keeps_its_own_node_fee_and_high_volume_curve() -> None:
    message = airdrop(1)
    message.high_volume = True
    as_transfer = body()
    fungible_list(as_transfer.cryptoTransfer.tokenTransfers, FUNGIBLE, (1001, -1), (2001, 1))
    as_transfer.high_volume = True
    drop = calculate(SCHEDULE, parse(signed(message, 1)), State(), 10_000)
    transfer = calculate(SCHEDULE, parse(signed(as_transfer, 1)), State(), 10_000)
    assert drop.raw_multiplier == 100_000  # TokenAirdrop's curve at full utilization
    assert drop.raw_multiplier != transfer.raw_multiplier
