"""The HAPI protobuf classes the simulator builds messages with (``hiero-sdk-python``), and id helpers.

:func:`load` imports the generated modules once per simulation; the result is passed around, nothing is kept
at module level. Every simulated entity lives in shard 0, realm 0, so an entity id is its ``num``.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

NANOS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Hapi:
    basic: Any
    """``AccountID``, ``TokenID``, ``Key``, ``TransferList``, ``NodeAddressBook``, ``SemanticVersion``..."""
    timestamp: Any
    transaction: Any
    """``Transaction``, ``TransactionBody``."""
    contents: Any
    """``SignedTransaction``."""
    record: Any
    receipt: Any
    codes: Any
    """``ResponseCodeEnum`` values as module attributes (``codes.SUCCESS``)."""
    custom_fees: Any
    contract_types: Any
    schedulable: Any
    node_stake: Any
    exchange_rate: Any
    wrappers: Any
    streams: Any
    """``RecordStreamFile``, ``RecordStreamItem``, ``SidecarMetadata``."""
    hash_object: Any
    signature_file: Any
    sidecar: Any
    state_change: Any
    action: Any
    bytecode: Any
    bodies: dict[str, Any]
    """Transaction body modules by short name (``crypto_create`` → ``crypto_create_pb2``)."""


_BODY_MODULES = (
    "file_delete",
    "token_delete",
    "token_fee_schedule_update",
    "token_update_nfts",
    "token_wipe_account",
    "token_unpause",
    "token_unfreeze_account",
    "token_revoke_kyc",
    "token_reject",
    "token_pause",
    "token_grant_kyc",
    "token_freeze_account",
    "system_undelete",
    "system_delete",
    "node_update",
    "node_delete",
    "node_create",
    "hook_types",
    "hook_store",
    "freeze",
    "file_create",
    "contract_update",
    "contract_delete",
    "consensus_create_topic",
    "consensus_delete_topic",
    "consensus_submit_message",
    "consensus_update_topic",
    "contract_call",
    "contract_create",
    "crypto_approve_allowance",
    "crypto_create",
    "crypto_delete",
    "crypto_delete_allowance",
    "crypto_transfer",
    "crypto_update",
    "ethereum_transaction",
    "file_append",
    "file_update",
    "schedule_create",
    "schedule_delete",
    "schedule_sign",
    "token_airdrop",
    "token_associate",
    "token_burn",
    "token_cancel_airdrop",
    "token_claim_airdrop",
    "token_create",
    "token_dissociate",
    "token_mint",
    "token_update",
    "util_prng",
)


def load() -> Hapi:
    services = "hiero_sdk_python.hapi.services."
    streams = "hiero_sdk_python.hapi.streams."

    def module(name: str) -> Any:
        return importlib.import_module(name)

    return Hapi(
        basic=module(services + "basic_types_pb2"),
        timestamp=module(services + "timestamp_pb2"),
        transaction=module(services + "transaction_pb2"),
        contents=module(services + "transaction_contents_pb2"),
        record=module(services + "transaction_record_pb2"),
        receipt=module(services + "transaction_receipt_pb2"),
        codes=module(services + "response_code_pb2"),
        custom_fees=module(services + "custom_fees_pb2"),
        contract_types=module(services + "contract_types_pb2"),
        schedulable=module(services + "schedulable_transaction_body_pb2"),
        node_stake=module(services + "node_stake_update_pb2"),
        exchange_rate=module(services + "exchange_rate_pb2"),
        wrappers=module("google.protobuf.wrappers_pb2"),
        streams=module(streams + "record_stream_file_pb2"),
        hash_object=module(streams + "hash_object_pb2"),
        signature_file=module(streams + "signature_file_pb2"),
        sidecar=module(streams + "sidecar_file_pb2"),
        state_change=module(streams + "contract_state_change_pb2"),
        action=module(streams + "contract_action_pb2"),
        bytecode=module(streams + "contract_bytecode_pb2"),
        bodies={name: module(f"{services}{name}_pb2") for name in _BODY_MODULES},
    )


def entity(num: int) -> str:
    """``0.0.num``: how ``truth.json`` names entities."""
    return f"0.0.{num}"


def set_timestamp(message: Any, nanos: int) -> None:
    message.seconds, message.nanos = divmod(nanos, NANOS_PER_SECOND)
