"""What ``/api/v1/accounts`` and ``/api/v1/accounts/{id}`` share: the account object (field order, derived
values). The columns it reads are in ``account_query.py``, its OpenAPI schema in ``account_schema.py``.

Derived fields, as the reference computes them:

* ``evm_address``: the stored address; else a 20-byte alias; else the long-zero form of the **num** only
  (shard and realm are not encoded); ``null`` for num 0.
* ``expiry_timestamp``: ``expiration_timestamp``; else ``created_timestamp + auto_renew_period`` seconds.
* ``pending_reward``: the staking row's pending reward, or 0 without one, when rewards are declined, when not
  staked to a node, or when the stake period started at or after the row's end period.
* ``stake_period_start``: a day number turned into that day's first nanosecond, only when staked to a node.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.ledger.aliases import format_alias, format_evm_address
from ledgermirror.ledger.entity_id import MAX_NUM, format_encoded, long_zero_address
from ledgermirror.ledger.keys import render_key
from ledgermirror.ledger.timestamps import format_ns

_NANOS_PER_DAY = 86_400 * 1_000_000_000
_UNSET = -1
"""``staked_node_id`` and ``stake_period_start`` use -1 for "none"."""


def staked_to_node(node: int | None) -> bool:
    return node is not None and node != _UNSET


def pending_reward(row: Any) -> int:
    """``row`` carries ``stake_pending`` and ``stake_end`` from the staking row (null without one)."""
    pending = row["stake_pending"]
    if pending is None or row["decline_reward"] or not staked_to_node(row["staked_node_id"]):
        return 0
    start = row["stake_period_start"]
    if start is not None and start >= row["stake_end"]:
        return 0
    return int(pending)


def _evm_address(row: Any) -> str | None:
    if row["evm_address"] is not None:
        return format_evm_address(row["evm_address"])
    alias = row["alias"]
    if alias is not None and len(alias) == 20:
        return format_evm_address(alias)
    num = row["id"] & MAX_NUM
    return None if num == 0 else long_zero_address(num)


def _expiry(row: Any) -> str | None:
    if row["expiration_timestamp"] is not None:
        return format_ns(row["expiration_timestamp"])
    created, period = row["created_timestamp"], row["auto_renew_period"]
    if created is None or period is None:
        return None
    return format_ns(created + period * 1_000_000_000)


def _delegation(raw: bytes | None) -> str:
    if not raw or not any(raw):
        return "0x"
    return "0x" + bytes(raw).hex()


def token_list(token_ids: list[int] | None, balances: list[int] | None) -> list[dict[str, Any]]:
    return [
        {"token_id": format_encoded(token), "balance": balance}
        for token, balance in zip(token_ids or [], balances or [], strict=True)
    ]


def balance_object(balance: int | None, timestamp: int | None, tokens: list[dict[str, Any]]) -> dict[str, Any]:
    return {"balance": balance, "timestamp": format_ns(timestamp), "tokens": tokens}


def current_balance(row: Any) -> dict[str, Any]:
    """Live balances: the entity's balance and its associated tokens (``token_ids``, ``token_balances``)."""
    return balance_object(
        row["balance"], row["balance_timestamp"], token_list(row["token_ids"], row["token_balances"])
    )


def render_account(row: Any, balance: dict[str, Any] | None, *, delegation_address: bool) -> dict[str, Any]:
    """The account object in the reference's field order (``delegation_address`` only when enabled). One dict
    display, the small helpers inlined: this runs for every row of every account list."""
    node = row["staked_node_id"]
    staked = node is not None and node != _UNSET
    period = row["stake_period_start"]
    alias = row["alias"]
    head: dict[str, Any] = {
        "account": format_encoded(row["id"]),
        "alias": None if alias is None else format_alias(alias),
        "auto_renew_period": row["auto_renew_period"],
        "balance": balance,
        "created_timestamp": format_ns(row["created_timestamp"]),
        "decline_reward": row["decline_reward"],
    }
    if delegation_address:
        head["delegation_address"] = _delegation(row["delegation_address"])
    return head | {
        "deleted": row["deleted"],
        "ethereum_nonce": row["ethereum_nonce"],
        "evm_address": _evm_address(row),
        "expiry_timestamp": _expiry(row),
        "key": render_key(row["key"]),
        "max_automatic_token_associations": row["max_automatic_token_associations"],
        "memo": row["memo"],
        "pending_reward": pending_reward(row),
        "receiver_sig_required": row["receiver_sig_required"],
        "staked_account_id": format_encoded(row["staked_account_id"]),
        "staked_node_id": node if staked else None,
        "stake_period_start": format_ns(period * _NANOS_PER_DAY)
        if staked and period not in (None, _UNSET)
        else None,
    }
