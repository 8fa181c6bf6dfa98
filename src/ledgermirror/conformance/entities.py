"""Setup converters for entities and what hangs off them: ``accounts``, ``entities``, ``contracts``,
``balances``, ``cryptoAllowances``, ``stakingRewardTransfers``, ``entityStakes`` and ``entityTransactions``.

Each converter merges one spec item over the reference loader's defaults, converts ids and bytes exactly as
the reference does, and returns the rows to insert.
"""

from __future__ import annotations

from typing import Any

from ledgermirror.conformance.ids import Context, encoded_id, spec_id, string_id
from ledgermirror.conformance.rows import Row, pick, routed
from ledgermirror.conformance.values import (
    base32_decode,
    hex_or_bytes,
    is_history,
    js_truthy,
    to_bigint,
    value_to_buffer,
)
from ledgermirror.ledger.entity_id import encode_entity_id

DEFAULT_PUBLIC_KEY = "4a5ad514f0957fa170a676210c9bdbddf3bc9519702cf915fa6767a40463b96f"
_NANOS_PER_DAY = 86_400 * 1_000_000_000


def _entity_defaults(ctx: Context) -> dict[str, Any]:
    return {
        "alias": None,
        "auto_renew_account_id": None,
        "auto_renew_period": None,
        "balance": None,
        "balance_timestamp": None,
        "created_timestamp": None,
        "decline_reward": False,
        "delegation_address": None,
        "deleted": False,
        "ethereum_nonce": None,
        "evm_address": None,
        "expiration_timestamp": None,
        "id": None,
        "key": None,
        "max_automatic_token_associations": None,
        "memo": "entity memo",
        "num": 0,
        "obtainer_id": None,
        "permanent_removal": None,
        "proxy_account_id": None,
        "public_key": None,
        "realm": ctx.realm,
        "receiver_sig_required": False,
        "shard": ctx.shard,
        "staked_account_id": None,
        "staked_node_id": -1,
        "stake_period_start": -1,
        "timestamp_range": "[0,)",
        "type": "ACCOUNT",
    }


_ENTITY_COLUMNS = tuple(sorted(_entity_defaults(Context())))


def _entity(item: dict[str, Any], ctx: Context, overrides: dict[str, Any]) -> dict[str, Any]:
    """The converted entity (all columns), the reference's ``addEntity``."""
    entity = {**_entity_defaults(ctx), **overrides, **item}
    if js_truthy(entity["num"]):
        num_source = entity["num"]
    elif js_truthy(entity["id"]):
        num_source = entity["id"]
    else:
        num_source = 0
    entity["id"] = encode_entity_id(
        to_bigint(entity["shard"], "shard"),
        to_bigint(entity["realm"], "realm"),
        to_bigint(num_source, "num"),
    )
    entity["alias"] = base32_decode(entity["alias"])
    entity["evm_address"] = value_to_buffer(entity["evm_address"])
    entity["delegation_address"] = value_to_buffer(entity["delegation_address"])
    for column in ("staked_account_id", "obtainer_id", "proxy_account_id", "auto_renew_account_id"):
        entity[column] = spec_id(entity[column], ctx)
    entity["key"] = hex_or_bytes(entity["key"])
    return entity


def entity_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``entities``: plain entity defaults (memo "entity memo", type ACCOUNT)."""
    return [routed("entity", pick(_entity(item, ctx, {}), _ENTITY_COLUMNS))]


def account_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``accounts``: entity defaults plus a public key and max_automatic_token_associations 0."""
    overrides = {"max_automatic_token_associations": 0, "public_key": DEFAULT_PUBLIC_KEY, "type": "ACCOUNT"}
    return [routed("entity", pick(_entity(item, ctx, overrides), _ENTITY_COLUMNS))]


def contract_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``contracts``: a CONTRACT entity, plus a ``contract`` row when the entity is current."""
    overrides = {
        "max_automatic_token_associations": 0,
        "memo": "contract memo",
        "receiver_sig_required": None,
        "type": "CONTRACT",
    }
    entity = _entity(item, ctx, overrides)
    rows = [routed("entity", pick(entity, _ENTITY_COLUMNS))]
    if is_history(entity["timestamp_range"]):
        return rows
    contract = {"file_id": None, "id": None, "initcode": None, "runtime_bytecode": None, **entity, **item}
    contract["initcode"] = value_to_buffer(contract["initcode"])
    contract["runtime_bytecode"] = value_to_buffer(contract["runtime_bytecode"])
    contract["file_id"] = spec_id(contract["file_id"], ctx)
    rows.append(Row("contract", pick(contract, ("file_id", "id", "initcode", "runtime_bytecode"))))
    return rows


def balance_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``balances``: one ``account_balance`` row, plus a ``token_balance`` row per ``tokens`` element."""
    balance = {"timestamp": 0, "id": None, "balance": 0, **item}
    account_id = string_id(balance["id"], ctx)
    rows = [
        Row(
            "account_balance",
            {
                "consensus_timestamp": balance["timestamp"],
                "account_id": account_id,
                "balance": balance["balance"],
            },
        )
    ]
    tokens = balance.get("tokens")
    if js_truthy(tokens):
        if not isinstance(tokens, list):
            raise TypeError(f"balances tokens must be an array, not {tokens!r}")
        for token in tokens:
            rows.append(
                Row(
                    "token_balance",
                    {
                        "consensus_timestamp": balance["timestamp"],
                        "account_id": account_id,
                        "balance": token.get("balance"),
                        "token_id": spec_id(token.get("token_num"), ctx),
                    },
                )
            )
    return rows


def crypto_allowance_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``cryptoAllowances``: ids by the spec-value parse; payer defaults to 101."""
    allowance = {
        "amount": 0,
        "amount_granted": 0,
        "owner": 1000,
        "payer_account_id": 101,
        "spender": 2000,
        "timestamp_range": "[0,)",
        **item,
    }
    for column in ("owner", "payer_account_id", "spender"):
        allowance[column] = spec_id(allowance[column], ctx)
    columns = ("amount", "amount_granted", "owner", "payer_account_id", "spender", "timestamp_range")
    return [routed("crypto_allowance", pick(allowance, columns))]


def staking_reward_transfer_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``stakingRewardTransfers``: falsy ids fall back to 1001 / 950; given ids are encoded ids."""
    transfer = {"account_id": 1001, "amount": 100, "consensus_timestamp": None, "payer_account_id": 950, **item}
    account = item.get("account_id")
    payer = item.get("payer_account_id")
    transfer["account_id"] = encoded_id(account, ctx) if js_truthy(account) else 1001
    transfer["payer_account_id"] = encoded_id(payer, ctx) if js_truthy(payer) else 950
    columns = ("account_id", "amount", "consensus_timestamp", "payer_account_id")
    return [Row("staking_reward_transfer", pick(transfer, columns))]


def entity_stake_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``entityStakes``: without a range, it starts just after the end of ``end_stake_period``'s day."""
    stake = {
        "end_stake_period": 1,
        "id": None,
        "pending_reward": 0,
        "staked_node_id_start": 1,
        "staked_to_me": 0,
        "stake_total_start": 0,
        "timestamp_range": None,
        **item,
    }
    if stake["timestamp_range"] is None:
        day = to_bigint(stake["end_stake_period"], "end_stake_period")
        stake["timestamp_range"] = f"[{(day + 1) * _NANOS_PER_DAY + 1},)"
    stake["id"] = spec_id(stake["id"], ctx)
    columns = (
        "end_stake_period",
        "id",
        "pending_reward",
        "staked_node_id_start",
        "staked_to_me",
        "stake_total_start",
        "timestamp_range",
    )
    return [routed("entity_stake", pick(stake, columns))]


def entity_transaction_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``entityTransactions``: exactly the given keys, with entity and payer by the spec-value parse."""
    values = dict(item)
    values["entity_id"] = spec_id(item.get("entity_id"), ctx)
    values["payer_account_id"] = spec_id(item.get("payer_account_id"), ctx)
    return [Row("entity_transaction", values)]
