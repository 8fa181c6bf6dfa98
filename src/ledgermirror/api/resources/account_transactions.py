"""The transactions embedded in ``/api/v1/accounts/{id}``, the render side: one transaction in the reference's
list form. The statements are in ``account_transactions_query.py``.
"""

from __future__ import annotations

import base64
from typing import Any

import orjson

from ledgermirror.api.resources.account_codes import result_name, type_name
from ledgermirror.ledger.entity_id import EntityId, format_encoded
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns


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
        "max_custom_fees": custom_fee_limits(row["max_custom_fees"]),
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
        "transaction_id": f"{EntityId.decode(row['payer_account_id'])}-{seconds}-{nanos:09d}",
        "transfers": [
            {"account": format_encoded(account), "amount": amount, "is_approval": bool(approval)}
            for account, amount, approval in transfers
        ],
        "valid_duration_seconds": _text(row["valid_duration_seconds"]),
        "valid_start_timestamp": format_ns(valid_start),
    }


def _base64(raw: bytes | None) -> str | None:
    return None if raw is None else base64.b64encode(raw).decode()


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
    """Each fee of each protobuf ``CustomFeeLimit`` (account 1, repeated ``FixedFee`` 2) as one entry."""
    entries: list[dict[str, Any]] = []
    for limit in limits or []:
        fields = _fields(limit)
        account = _entity(fields.get(1, [b""])[-1])
        for fee in fields.get(2, []):
            fee_fields = _fields(fee)
            amount = _signed(fee_fields.get(1, [0])[-1])
            token = fee_fields.get(2)
            entries.append(
                {
                    "account_id": account,
                    "amount": amount,
                    "denominating_token_id": None if token is None else _entity(token[-1]),
                }
            )
    return entries


def _entity(raw: Any) -> str | None:
    """An ``AccountID``/``TokenID`` message (shard 1, realm 2, num 3) as ``shard.realm.num``; None for num 0."""
    fields = _fields(raw) if isinstance(raw, bytes) else {}
    shard, realm, num = (_signed(fields.get(number, [0])[-1]) for number in (1, 2, 3))
    try:
        return format_encoded(EntityId(shard, realm, num).encoded)
    except ValueError:
        return None


def _signed(value: Any) -> int:
    number = int(value) if isinstance(value, int) else 0
    return number - (1 << 64) if number >= 1 << 63 else number


def _fields(data: bytes) -> dict[int, list[Any]]:
    """A protobuf message's varint and length-delimited fields by number (others are skipped)."""
    fields: dict[int, list[Any]] = {}
    position = 0
    try:
        while position < len(data):
            tag, position = _varint(data, position)
            number, wire = tag >> 3, tag & 7
            if wire == 0:
                value, position = _varint(data, position)
                fields.setdefault(number, []).append(value)
            elif wire == 2:
                size, position = _varint(data, position)
                fields.setdefault(number, []).append(bytes(data[position : position + size]))
                position += size
            elif wire in (1, 5):
                position += 8 if wire == 1 else 4
            else:
                break
    except IndexError:
        pass
    return fields


def _varint(data: bytes, position: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[position]
        position += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value & ((1 << 64) - 1), position
