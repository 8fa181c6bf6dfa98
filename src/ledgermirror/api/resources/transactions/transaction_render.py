"""One transaction in the reference's list form: the object ``/api/v1/transactions``,
``/api/v1/transactions/{id}`` and the transactions embedded in ``/api/v1/accounts/{id}`` render. The columns it
reads are ``account_transactions_query.DETAILS_COLUMNS``.
"""

from __future__ import annotations

import binascii
from typing import Any

import orjson

from ledgermirror.ledger.custom_fees import decode_fee_limits
from ledgermirror.ledger.entity_id import format_encoded, format_id
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns
from ledgermirror.ledger.transaction_codes import result_name, type_name


def render(row: Any, staking_account: int) -> dict[str, Any]:
    """One transaction in the reference's list form (no ``assessed_custom_fees``)."""
    transfers = orjson.loads(row["transfers"]) if row["transfers"] else []
    token_transfers = orjson.loads(row["token_transfers"]) if row["token_transfers"] else []
    rewards = orjson.loads(row["staking_rewards"]) if row["staking_rewards"] else []
    if not any(entity == staking_account for entity, _, _ in transfers):
        rewards = []
    valid_start = row["valid_start_ns"]
    seconds, nanos = divmod(valid_start, 1_000_000_000)
    return {
        "batch_key": render_key(row["batch_key"]),
        "bytes": _base64(row["transaction_bytes"]),
        "charged_tx_fee": row["charged_tx_fee"],
        "consensus_timestamp": format_ns(row["consensus_timestamp"]),
        "entity_id": format_encoded(row["entity_id"]),
        "high_volume": bool(row["high_volume"]),
        "high_volume_pricing_multiplier": row["high_volume_pricing_multiplier"],
        "max_custom_fees": custom_fee_limits(row["max_custom_fees"]) if row["max_custom_fees"] else [],
        "max_fee": _text(row["max_fee"]),
        "memo_base64": _base64(row["memo"]),
        "name": type_name(row["type"]),
        "nft_transfers": _nft_transfers(row["nft_transfer"]),
        "node": format_encoded(row["node_account_id"]),
        "nonce": row["nonce"],
        "parent_consensus_timestamp": format_ns(row["parent_consensus_timestamp"]),
        "result": result_name(row["result"]),
        "scheduled": row["scheduled"],
        "staking_reward_transfers": [
            {"account": format_encoded(account), "amount": amount} for account, amount in rewards
        ],
        "token_transfers": [
            {
                "token_id": format_encoded(token),
                "account": format_encoded(account),
                "amount": amount,
                "is_approval": bool(approval),
            }
            for token, account, amount, approval in token_transfers
        ],
        "transaction_hash": _base64(row["transaction_hash"]),
        "transaction_id": f"{format_id(row['payer_account_id'])}-{seconds}-{nanos:09d}",
        "transfers": [
            {"account": format_encoded(account), "amount": amount, "is_approval": bool(approval)}
            for account, amount, approval in transfers
        ],
        "valid_duration_seconds": _text(row["valid_duration_seconds"]),
        "valid_start_timestamp": format_ns(valid_start),
    }


def _base64(raw: bytes | None) -> str | None:
    return None if raw is None else binascii.b2a_base64(raw, newline=False).decode()


def _text(value: int | None) -> str | None:
    return None if value is None else str(value)


def _nft_transfers(raw: str | None) -> list[dict[str, Any]]:
    if not raw:
        return []
    return [
        {
            "is_approval": bool(item.get("is_approval")),
            "receiver_account_id": format_encoded(item.get("receiver_account_id")),
            "sender_account_id": format_encoded(item.get("sender_account_id")),
            "serial_number": item.get("serial_number"),
            "token_id": format_encoded(item.get("token_id")),
        }
        for item in orjson.loads(raw)
    ]


def custom_fee_limits(limits: list[bytes] | None) -> list[dict[str, Any]]:
    """Each fee of each protobuf ``CustomFeeLimit`` as one entry (decoded by ``ledger/custom_fees.py``)."""
    return [
        {"account_id": fee.account_id, "amount": fee.amount, "denominating_token_id": fee.denominating_token_id}
        for fee in decode_fee_limits(limits)
    ]
