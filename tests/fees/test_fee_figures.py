"""The calculator against every figure of the reference's tests (fees-and-streams.md, section A.8).

The reference estimates its ``RecordItemBuilder`` default transactions; here each is rebuilt with the parts
that are charged (keys, hooks, custom fees, metadata, message bytes), and the totals hold in both modes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from tests.fees.builders import body, key, legacy, signed

from ledgermirror.fees import schedule
from ledgermirror.fees.calculator import calculate
from ledgermirror.fees.transaction import parse
from ledgermirror.fees.usage import State

SCHEDULE = schedule.default()
TOKEN = (0, 0, 5001)
TOPIC = (0, 0, 6001)


def estimate(data: bytes, state: State | None = None, throttle: int = 0) -> Any:
    return calculate(SCHEDULE, parse(data), state, throttle)


def _transfer(message: Any) -> None:
    for account, amount in ((1001, -10), (1002, 10)):
        item = message.cryptoTransfer.transfers.accountAmounts.add(amount=amount)
        item.accountID.accountNum = account


def _crypto_create(message: Any) -> None:
    message.cryptoCreateAccount.key.CopyFrom(key())
    message.cryptoCreateAccount.hook_creation_details.add(hook_id=1)


def _crypto_update(message: Any) -> None:
    message.cryptoUpdateAccount.key.CopyFrom(key())
    message.cryptoUpdateAccount.hook_creation_details.add(hook_id=2)
    message.cryptoUpdateAccount.hook_ids_to_delete.append(1)


def _topic_create(message: Any) -> None:
    topic = message.consensusCreateTopic
    for name, seed in (("adminKey", 1), ("submitKey", 2), ("fee_schedule_key", 3)):
        getattr(topic, name).CopyFrom(key(seed))
    topic.custom_fees.add().fixed_fee.amount = 100


def _topic_update(message: Any) -> None:
    topic = message.consensusUpdateTopic
    for name, seed in (("adminKey", 1), ("submitKey", 2), ("fee_schedule_key", 3)):
        getattr(topic, name).CopyFrom(key(seed))
    topic.fee_exempt_key_list.keys.extend([key(4), key(5)])


def _submit(size: int) -> Callable[[Any], None]:
    def build(message: Any) -> None:
        message.consensusSubmitMessage.topicID.topicNum = TOPIC[2]
        message.consensusSubmitMessage.message = b"m" * size

    return build


def _contract_create(message: Any) -> None:
    message.contractCreateInstance.adminKey.CopyFrom(key())
    message.contractCreateInstance.gas = 30_000
    message.contractCreateInstance.hook_creation_details.add(hook_id=1)


def _contract_update(message: Any) -> None:
    message.contractUpdateInstance.adminKey.CopyFrom(key())
    message.contractUpdateInstance.hook_creation_details.add(hook_id=2)
    message.contractUpdateInstance.hook_ids_to_delete.append(1)


def _file(case: str) -> Callable[[Any], None]:
    def build(message: Any) -> None:
        part = getattr(message, case)
        part.contents = b"c" * 1000
        if case != "fileAppend":
            part.keys.keys.append(key())

    return build


_TOKEN_KEYS = ("adminKey", "kycKey", "freezeKey", "wipeKey", "supplyKey", "fee_schedule_key", "pause_key")


def _token_create(message: Any) -> None:
    for seed, name in enumerate((*_TOKEN_KEYS, "metadata_key"), start=1):
        getattr(message.tokenCreation, name).CopyFrom(key(seed))
    message.tokenCreation.custom_fees.add().fixed_fee.amount = 1


def _token_update(message: Any) -> None:
    for seed, name in enumerate((*_TOKEN_KEYS, "metadata_key"), start=1):
        getattr(message.tokenUpdate, name).CopyFrom(key(seed))


def _token_mint(message: Any) -> None:
    message.tokenMint.token.tokenNum = TOKEN[2]
    message.tokenMint.metadata.extend([b"nft 1", b"nft 2"])


def _tokens(case: str) -> Callable[[Any], None]:
    def build(message: Any) -> None:
        getattr(message, case).tokens.add(tokenNum=TOKEN[2])

    return build


def _schedule_create(message: Any) -> None:
    message.scheduleCreate.adminKey.CopyFrom(key())
    message.scheduleCreate.scheduledTransactionBody.cryptoTransfer.SetInParent()


def _empty(case: str) -> Callable[[Any], None]:
    return lambda message: getattr(message, case).SetInParent()


FIGURES: list[tuple[str, Callable[[Any], None], int]] = [
    ("CryptoTransfer", _transfer, 1_000_000),
    ("CryptoDelete", _empty("cryptoDelete"), 50_000_000),
    ("CryptoCreate", _crypto_create, 10_500_000_000),
    ("CryptoUpdate", _crypto_update, 20_002_200_000),
    ("ConsensusCreateTopic", _topic_create, 20_300_000_000),
    ("ConsensusDeleteTopic", _empty("consensusDeleteTopic"), 50_000_000),
    ("ConsensusSubmitMessage", _submit(128), 1_890_400),
    ("ConsensusUpdateTopic", _topic_update, 402_200_000),
    ("ContractCall", _empty("contractCall"), 0),
    ("ContractCreate", _contract_create, 20_000_000_000),
    ("ContractDelete", _empty("contractDeleteInstance"), 70_000_000),
    ("ContractUpdate", _contract_update, 20_260_000_000),
    ("EthereumTransaction", _empty("ethereumTransaction"), 1_000_000),
    ("FileAppend", _file("fileAppend"), 500_000_000),
    ("FileCreate", _file("fileCreate"), 500_000_000),
    ("FileUpdate", _file("fileUpdate"), 500_000_000),
    ("FileDelete", _empty("fileDelete"), 70_000_000),
    ("ScheduleCreate", _schedule_create, 100_000_000),
    ("ScheduleDelete", _empty("scheduleDelete"), 10_000_000),
    ("ScheduleSign", _empty("scheduleSign"), 10_000_000),
    ("TokenAssociate", _tokens("tokenAssociate"), 500_000_000),
    ("TokenDissociate", _tokens("tokenDissociate"), 500_000_000),
    ("TokenCreate", _token_create, 20_700_000_000),
    ("TokenMint", _token_mint, 400_000_000),
    ("TokenUpdate", _token_update, 710_000_000),
    *(
        (name, _empty(case), 10_000_000)
        for name, case in (
            ("TokenBurn", "tokenBurn"),
            ("TokenDelete", "tokenDeletion"),
            ("Freeze", "tokenFreeze"),
            ("Unfreeze", "tokenUnfreeze"),
            ("GrantKyc", "tokenGrantKyc"),
            ("RevokeKyc", "tokenRevokeKyc"),
            ("Pause", "token_pause"),
            ("Unpause", "token_unpause"),
            ("Wipe", "tokenWipe"),
            ("UtilPrng", "util_prng"),
        )
    ),
]


@pytest.mark.parametrize("state", [None, State()], ids=["INTRINSIC", "STATE"])
@pytest.mark.parametrize(("name", "build", "total"), FIGURES, ids=[figure[0] for figure in FIGURES])
def test_reference_totals(name: str, build: Callable[[Any], None], total: int, state: State | None) -> None:
    message = body()
    build(message)
    assert estimate(signed(message, 1), state).total == total


def test_empty_crypto_transfer_without_signatures() -> None:
    result = estimate(signed(body(cryptoTransfer=None)))
    assert result.to_json() == {
        "high_volume_multiplier": 1,
        "network": {"multiplier": 9, "subtotal": 900_000},
        "node": {"base": 100_000, "extras": []},
        "service": {"base": 0, "extras": []},
        "total": 1_000_000,
    }
    assert result.raw_multiplier == 1000


TWO_SIGNATURES = {
    "high_volume_multiplier": 1,
    "network": {"multiplier": 9, "subtotal": 1_800_000},
    "node": {
        "base": 100_000,
        "extras": [
            {
                "charged": 1,
                "count": 2,
                "fee_per_unit": 100_000,
                "included": 1,
                "name": "SIGNATURES",
                "subtotal": 100_000,
            }
        ],
    },
    "service": {"base": 0, "extras": []},
    "total": 2_000_000,
}


@pytest.mark.parametrize("state", [None, State()], ids=["INTRINSIC", "STATE"])
def test_two_signatures_and_the_legacy_form(state: State | None) -> None:
    message = body(cryptoTransfer=None)
    assert estimate(signed(message, 2), state).to_json() == TWO_SIGNATURES
    assert estimate(legacy(message, 2), state).to_json() == TWO_SIGNATURES
    assert estimate(legacy(message), state).total == 1_000_000


def test_service_bases() -> None:
    crypto_delete = estimate(signed(body(cryptoDelete=None)))
    assert (crypto_delete.service_base, crypto_delete.total) == (49_000_000, 50_000_000)
    message = body()
    _crypto_create(message)
    create = estimate(signed(message))
    assert create.service_base == 499_000_000
    assert [(extra.name, extra.charged, extra.subtotal) for extra in create.service_extras] == [
        ("HOOK_UPDATES", 1, 10_000_000_000)
    ]
    message = body()
    _submit(128)(message)
    assert estimate(signed(message)).service_base == 700_000


def test_large_message_pays_bytes_and_processing_bytes() -> None:
    message = body()
    _submit(2000)(message)
    result = estimate(signed(message))
    service_total = 700_000 + 1_900 * 6_800
    node_total = result.node_base + sum(extra.subtotal for extra in result.node_extras)
    assert node_total > 100_000
    assert [extra.name for extra in result.node_extras] == ["PROCESSING_BYTES"]
    assert result.total == node_total * 10 + service_total


def test_topic_with_custom_fees() -> None:
    message = body()
    _submit(128)(message)
    data = signed(message, 1)
    assert estimate(data).total == 1_890_400
    assert estimate(data, State(topics_with_custom_fees=frozenset({TOPIC}))).total == 500_000_000


def test_token_transfer_with_custom_fees_costs_ten_million_more() -> None:
    message = body()
    tokens = message.cryptoTransfer.tokenTransfers.add()
    tokens.token.tokenNum = TOKEN[2]
    for account, amount in ((1001, -1), (1002, 1)):
        tokens.transfers.add(amount=amount).accountID.accountNum = account
    data = signed(message, 1)
    plain = estimate(data, State())
    custom = estimate(data, State(tokens_with_custom_fees=frozenset({TOKEN})))
    assert custom.total - plain.total == 10_000_000
    assert [extra.name for extra in plain.service_extras] == ["TOKEN_TRANSFER_BASE"]
    assert [extra.name for extra in custom.service_extras] == ["TOKEN_TRANSFER_BASE_CUSTOM_FEES"]
    # INTRINSIC ignores state: no transfer base, TOKEN_TYPES per list (2 transfers, 1 included)
    assert [(extra.name, extra.charged) for extra in estimate(data).service_extras] == [("TOKEN_TYPES", 1)]
