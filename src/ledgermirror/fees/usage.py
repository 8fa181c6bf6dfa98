"""What a transaction is charged for: the count of each service ``Extra`` of its type.

Counts come from the body alone (INTRINSIC), plus, in STATE mode, the :class:`State` facts read from the
database: which involved tokens and topics have custom fees. The calculator charges only the extras the
schedule lists for the type, so a count here for an extra the schedule does not price costs nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ledgermirror.fees.transaction import ParsedTransaction


@dataclass(frozen=True, slots=True)
class State:
    """State facts for STATE mode: the involved tokens and topics (shard, realm, num) that have custom fees,
    and the involved tokens that are non-fungible."""

    tokens_with_custom_fees: frozenset[tuple[int, int, int]] = field(default_factory=frozenset)
    non_fungible_tokens: frozenset[tuple[int, int, int]] = field(default_factory=frozenset)
    topics_with_custom_fees: frozenset[tuple[int, int, int]] = field(default_factory=frozenset)


Counts = dict[str, int | tuple[int, ...]]
"""Extra name -> units, in the calculator's call order; a tuple is one charge per element (the consensus node
adds that extra several times, each with its own included count)."""
_Counter = Callable[[Any, State | None], Counts]


def count_keys(key: Any) -> int:
    """Primitive keys in a ``Key``, recursively: Ed25519, ECDSA (secp256k1, P-384) and ML-DSA count 1 each."""
    case = key.WhichOneof("key")
    if case in ("ed25519", "ECDSA_secp256k1", "ECDSA_384", "ML_DSA_44", "ml_dsa_44"):
        return 1
    if case == "keyList":
        return sum(count_keys(child) for child in key.keyList.keys)
    if case == "thresholdKey":
        return sum(count_keys(child) for child in key.thresholdKey.keys.keys)
    return 0


def _keys(message: Any, *names: str) -> int:
    return sum(count_keys(getattr(message, name)) for name in names if message.HasField(name))


def token_ids(body: Any) -> list[tuple[int, int, int]]:
    """The tokens a CryptoTransfer or TokenAirdrop moves (STATE mode looks up their type and custom fees)."""
    case = body.WhichOneof("data")
    if case == "cryptoTransfer":
        return [_token(item.token) for item in body.cryptoTransfer.tokenTransfers]
    if case == "tokenAirdrop":
        return [_token(item.token) for item in body.tokenAirdrop.token_transfers]
    return []


def topic_id(body: Any) -> tuple[int, int, int] | None:
    """The topic a ConsensusSubmitMessage writes to (STATE mode looks up its custom fees)."""
    if body.WhichOneof("data") != "consensusSubmitMessage":
        return None
    topic = body.consensusSubmitMessage.topicID
    return (int(topic.shardNum), int(topic.realmNum), int(topic.topicNum))


def _token(token: Any) -> tuple[int, int, int]:
    return (int(token.shardNum), int(token.realmNum), int(token.tokenNum))


def _hook_calls(item: Any, names: tuple[str, ...]) -> list[Any]:
    return [getattr(item, name) for name in names if item.HasField(name)]


_AMOUNT_HOOKS = ("pre_tx_allowance_hook", "pre_post_tx_allowance_hook")
_NFT_HOOKS = (
    "pre_tx_sender_allowance_hook",
    "pre_post_tx_sender_allowance_hook",
    "pre_tx_receiver_allowance_hook",
    "pre_post_tx_receiver_allowance_hook",
)


# Contracts' ``maxGasPerSec`` in the consensus node's default configuration: the GAS extra of a transfer that
# calls hooks is clamped to this much per hook invocation.
MAX_GAS_PER_SECOND = 15_000_000


def _crypto_transfer(data: Any, state: State | None) -> Counts:
    """CryptoTransferFeeCalculator of consensus node 0.75 (docs/fees.md), in its call order: ACCOUNTS (unique
    accounts), HOOK_EXECUTION and GAS when hooks are called, then the token extras. INTRINSIC charges
    TOKEN_TYPES once per token transfer list, for that list's transfers plus NFT transfers (the included count
    applies to each list). STATE charges one TOKEN_TRANSFER_BASE (or ..._CUSTOM_FEES when a counted token has
    custom fees) and TOKEN_TYPES once: one per fungible list with transfers plus one per NFT transfer, a token
    the database does not know counting as fungible without custom fees."""
    accounts: set[bytes] = set()
    calls: list[Any] = []
    for amount in data.transfers.accountAmounts:
        accounts.add(amount.accountID.SerializeToString(deterministic=True))
        calls += _hook_calls(amount, _AMOUNT_HOOKS)
    for token_list in data.tokenTransfers:
        for amount in token_list.transfers:
            accounts.add(amount.accountID.SerializeToString(deterministic=True))
            calls += _hook_calls(amount, _AMOUNT_HOOKS)
        for nft in token_list.nftTransfers:
            accounts.add(nft.senderAccountID.SerializeToString(deterministic=True))
            accounts.add(nft.receiverAccountID.SerializeToString(deterministic=True))
            calls += _hook_calls(nft, _NFT_HOOKS)
    counts: Counts = {"ACCOUNTS": len(accounts)}
    if calls:
        gas = sum(int(call.evm_hook_call.gas_limit) for call in calls)
        counts["HOOK_EXECUTION"] = len(calls)
        counts["GAS"] = max(0, min(len(calls) * MAX_GAS_PER_SECOND, gas))
    if state is None:
        if len(data.tokenTransfers):
            per_list = (len(item.transfers) + len(item.nftTransfers) for item in data.tokenTransfers)
            counts["TOKEN_TYPES"] = tuple(per_list)
        return counts
    counted, custom = 0, False
    for token_list in data.tokenTransfers:
        token = _token(token_list.token)
        if token in state.non_fungible_tokens:
            units = len(token_list.nftTransfers)
        else:
            units = 1 if len(token_list.transfers) else 0
        counted += units
        custom = custom or (units > 0 and token in state.tokens_with_custom_fees)
    if counted:
        counts["TOKEN_TRANSFER_BASE_CUSTOM_FEES" if custom else "TOKEN_TRANSFER_BASE"] = 1
    counts["TOKEN_TYPES"] = counted
    return counts


def _submit_message(data: Any, state: State | None) -> Counts:
    size = len(data.message)
    topic = (int(data.topicID.shardNum), int(data.topicID.realmNum), int(data.topicID.topicNum))
    if state is not None and topic in state.topics_with_custom_fees:
        return {
            "CONSENSUS_SUBMIT_MESSAGE_WITH_CUSTOM_FEE": 1,
            "CONSENSUS_SUBMIT_MESSAGE_WITH_CUSTOM_FEE_BYTES": size,
        }
    return {"CONSENSUS_SUBMIT_MESSAGE_WITHOUT_CUSTOM_FEE_BYTES": size}


def _account_create(data: Any, state: State | None) -> Counts:
    return {"KEYS": _keys(data, "key"), "HOOK_UPDATES": len(data.hook_creation_details)}


def _account_update(data: Any, state: State | None) -> Counts:
    hooks = len(data.hook_creation_details) + len(data.hook_ids_to_delete)
    return {"KEYS": _keys(data, "key"), "HOOK_UPDATES": hooks}


def _contract_create(data: Any, state: State | None) -> Counts:
    return {"KEYS": _keys(data, "adminKey"), "HOOK_UPDATES": len(data.hook_creation_details)}


def _contract_update(data: Any, state: State | None) -> Counts:
    hooks = len(data.hook_creation_details) + len(data.hook_ids_to_delete)
    return {"KEYS": _keys(data, "adminKey"), "HOOK_UPDATES": hooks}


_TOPIC_KEYS = ("adminKey", "submitKey", "fee_schedule_key")


def _topic_create(data: Any, state: State | None) -> Counts:
    keys = _keys(data, *_TOPIC_KEYS) + sum(count_keys(key) for key in data.fee_exempt_key_list)
    return {"KEYS": keys, "CONSENSUS_CREATE_TOPIC_WITH_CUSTOM_FEE": 1 if len(data.custom_fees) else 0}


def _topic_update(data: Any, state: State | None) -> Counts:
    exempt = sum(count_keys(key) for key in data.fee_exempt_key_list.keys)
    return {"KEYS": _keys(data, *_TOPIC_KEYS) + exempt}


def _file_create(data: Any, state: State | None) -> Counts:
    keys = sum(count_keys(key) for key in data.keys.keys)
    return {"KEYS": keys, "STATE_BYTES": len(data.contents)}


def _file_append(data: Any, state: State | None) -> Counts:
    return {"STATE_BYTES": len(data.contents)}


_TOKEN_KEYS = (
    "adminKey",
    "kycKey",
    "freezeKey",
    "wipeKey",
    "supplyKey",
    "fee_schedule_key",
    "pause_key",
    "metadata_key",
)


def _token_create(data: Any, state: State | None) -> Counts:
    return {"KEYS": _keys(data, *_TOKEN_KEYS), "TOKEN_CREATE_WITH_CUSTOM_FEE": 1 if len(data.custom_fees) else 0}


def _token_update(data: Any, state: State | None) -> Counts:
    return {"KEYS": _keys(data, *_TOKEN_KEYS)}


def _token_mint(data: Any, state: State | None) -> Counts:
    serials = len(data.metadata)
    return {"TOKEN_MINT_NFT_BASE": 1 if serials else 0, "TOKEN_MINT_NFT": serials}


def _token_associate(data: Any, state: State | None) -> Counts:
    return {"TOKEN_ASSOCIATE": len(data.tokens)}


def _airdrop(data: Any, state: State | None) -> Counts:
    """TokenAirdropFeeCalculator: the airdrop's token transfer lists priced as a CryptoTransfer of them (no hbar
    transfers), under the CryptoTransfer schedule entry (:data:`PRICED_AS`); the AIRDROPS extra is unused."""
    return _crypto_transfer(_AirdropAsTransfer(data.token_transfers), state)


@dataclass(frozen=True, slots=True)
class _NoHbar:
    accountAmounts: tuple[Any, ...] = ()


@dataclass(frozen=True, slots=True)
class _AirdropAsTransfer:
    """The synthetic CryptoTransfer body of an airdrop: its token transfer lists and no hbar transfers."""

    tokenTransfers: Any
    transfers: _NoHbar = _NoHbar()


PRICED_AS = {"TokenAirdrop": "CryptoTransfer"}
"""Types whose service fee comes from another type's schedule entry (base fee and extras)."""


def _update_nfts(data: Any, state: State | None) -> Counts:
    return {"NFT_UPDATE": len(data.serial_numbers)}


def _approve_allowance(data: Any, state: State | None) -> Counts:
    return {"ALLOWANCES": len(data.cryptoAllowances) + len(data.tokenAllowances) + len(data.nftAllowances)}


def _delete_allowance(data: Any, state: State | None) -> Counts:
    return {"ALLOWANCES": len(data.nftAllowances)}


def _schedule_create(data: Any, state: State | None) -> Counts:
    scheduled = data.scheduledTransactionBody.WhichOneof("data")
    return {
        "KEYS": _keys(data, "adminKey"),
        "SCHEDULE_CREATE_CONTRACT_CALL_BASE": int(scheduled == "contractCall"),
    }


def _hook_store(data: Any, state: State | None) -> Counts:
    return {"HOOK_SLOT_UPDATE": len(data.storage_updates)}


COUNTERS: dict[str, _Counter] = {
    "cryptoTransfer": _crypto_transfer,
    "consensusSubmitMessage": _submit_message,
    "cryptoCreateAccount": _account_create,
    "cryptoUpdateAccount": _account_update,
    "contractCreateInstance": _contract_create,
    "contractUpdateInstance": _contract_update,
    "consensusCreateTopic": _topic_create,
    "consensusUpdateTopic": _topic_update,
    "fileCreate": _file_create,
    "fileUpdate": _file_create,
    "fileAppend": _file_append,
    "tokenCreation": _token_create,
    "tokenUpdate": _token_update,
    "tokenMint": _token_mint,
    "tokenAssociate": _token_associate,
    "tokenAirdrop": _airdrop,
    "token_update_nfts": _update_nfts,
    "cryptoApproveAllowance": _approve_allowance,
    "cryptoDeleteAllowance": _delete_allowance,
    "scheduleCreate": _schedule_create,
    "hook_store": _hook_store,
}
"""Service extras per body ``data`` case; every other priced type is charged its base fee only."""


def service_counts(parsed: ParsedTransaction, state: State | None) -> Counts:
    counter = COUNTERS.get(parsed.data_case)
    if counter is None:
        return {}
    return counter(getattr(parsed.body, parsed.data_case), state)
