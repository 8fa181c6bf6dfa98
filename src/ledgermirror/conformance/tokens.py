"""Setup converters for tokens and their satellites: ``tokens`` (with inline ``custom_fees``), ``customfees``,
``tokenaccounts``, ``nfts``, ``tokenAllowances`` and ``tokenBalance``.

Token keys and NFT metadata are *raw* values: they reach PostgreSQL as text and go through the bytea input
function (``"2\\\\000"`` is the two bytes ``32 00``; ``[1,2,3]`` is the text ``{"1","2","3"}``).
"""

from __future__ import annotations

import copy
from typing import Any

from ledgermirror.conformance.ids import Context, encoded_id, spec_id, string_id
from ledgermirror.conformance.rows import Row, every_column, routed
from ledgermirror.conformance.values import is_history, js_str, js_truthy, json_text, value_to_buffer
from ledgermirror.db import schema
from ledgermirror.ledger.int64 import INT64_MAX

_TOKEN_DEFAULTS: dict[str, Any] = {
    "created_timestamp": 0,
    "decimals": 1000,
    "fee_schedule_key": None,
    "freeze_default": False,
    "freeze_key": None,
    "freeze_status": 0,
    "initial_supply": 1000000,
    "kyc_key": None,
    "kyc_status": 0,
    "max_supply": str(INT64_MAX),
    "metadata": [],
    "metadata_key": None,
    "name": "Token name",
    "pause_key": None,
    "pause_status": "NOT_APPLICABLE",
    "supply_key": None,
    "supply_type": "INFINITE",
    "symbol": "YBTJBOAZ",
    "timestamp_range": None,
    "token_id": "0.0.0",
    "total_supply": 1000000,
    "treasury_account_id": "0.0.98",
    "type": "FUNGIBLE_COMMON",
    "wipe_key": None,
}
_CUSTOM_FEE_LISTS = ("fixed_fees", "fractional_fees", "royalty_fees")


def token_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``tokens``: the token row, then its custom fee rows (a default empty schedule if none are given)."""
    token = {**_TOKEN_DEFAULTS, **item}
    if token["type"] == "NON_FUNGIBLE_UNIQUE":
        token["decimals"] = 0
        token["initial_supply"] = 0
    if not js_truthy(token["timestamp_range"]):
        token["timestamp_range"] = f"[{js_str(token['created_timestamp'])},)"
    token["token_id"] = spec_id(token["token_id"], ctx)
    token["treasury_account_id"] = spec_id(token["treasury_account_id"], ctx)
    token["metadata"] = value_to_buffer(token["metadata"])
    rows = [routed("token", every_column("token", token))]
    fees = token.get("custom_fees")
    if not js_truthy(fees):
        default_fee = {
            "entity_id": token["token_id"],
            "timestamp_range": f"[{js_str(token['created_timestamp'])},)",
        }
        rows.extend(custom_fee_rows(default_fee, ctx))
    else:
        if not isinstance(fees, list):
            raise TypeError(f"custom_fees must be an array, not {fees!r}")
        for fee in fees:
            rows.extend(custom_fee_rows(fee, ctx))
    return rows


def _convert_fee(fee: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """One fee object: default collector 0.0.300 and exemption flag, ids replaced by encoded ids."""
    converted = {"all_collectors_are_exempt": False, "collector_account_id": ctx.id_text(300), **fee}
    converted["collector_account_id"] = encoded_id(converted["collector_account_id"], ctx)
    if converted.get("denominating_token_id") is not None:
        converted["denominating_token_id"] = encoded_id(converted["denominating_token_id"], ctx)
    return converted


def custom_fee_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``customfees`` (and inline token ``custom_fees``): fee arrays stored as JSONB as written."""
    fee = copy.deepcopy(item)
    for name in _CUSTOM_FEE_LISTS:
        fee_list = fee.get(name)
        if fee_list is None:
            continue
        if not isinstance(fee_list, list):
            raise TypeError(f"{name} must be an array, not {fee_list!r}")
        converted = [_convert_fee(entry, ctx) for entry in fee_list]
        if name == "royalty_fees":
            for entry in converted:
                fallback = entry.get("fallback_fee")
                if isinstance(fallback, dict) and fallback.get("denominating_token_id") is not None:
                    fallback["denominating_token_id"] = encoded_id(fallback["denominating_token_id"], ctx)
        fee[name] = converted
    values = {
        "entity_id": encoded_id(fee.get("entity_id"), ctx),
        **{name: json_text(fee[name]) if js_truthy(fee.get(name)) else None for name in _CUSTOM_FEE_LISTS},
        "timestamp_range": fee.get("timestamp_range"),
    }
    history = "timestamp_range" in fee and is_history(fee["timestamp_range"])
    return [Row(schema.routed("custom_fee", history).name, values)]


def token_account_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``tokenaccounts``: associated by default, range from created_timestamp unless given."""
    account = {
        "account_id": None,
        "associated": True,
        "automatic_association": False,
        "balance": 0,
        "balance_timestamp": 0,
        "created_timestamp": 0,
        "freeze_status": None,
        "kyc_status": None,
        "timestamp_range": None,
        "token_id": None,
        **item,
    }
    account["account_id"] = spec_id(account["account_id"], ctx)
    account["token_id"] = spec_id(account["token_id"], ctx)
    if account["timestamp_range"] is None:
        account["timestamp_range"] = f"[{js_str(account['created_timestamp'])},)"
    return [routed("token_account", every_column("token_account", account))]


def nft_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``nfts``: owner 0.0.0 (encoded 0, not null) by default; metadata is raw bytea text (``\\x`` = empty)."""
    nft = {
        "account_id": "0.0.0",
        "created_timestamp": 0,
        "delegating_spender": None,
        "deleted": False,
        "metadata": "\\x",
        "serial_number": 0,
        "spender": None,
        "timestamp_range": None,
        "token_id": "0.0.0",
        **item,
    }
    if not js_truthy(nft["timestamp_range"]):
        nft["timestamp_range"] = f"[{js_str(nft['created_timestamp'])},)"
    for column in ("account_id", "delegating_spender", "spender"):
        nft[column] = encoded_id(nft[column], ctx, nullable=True)
    nft["token_id"] = encoded_id(nft["token_id"], ctx)
    return [routed("nft", every_column("nft", nft))]


def token_allowance_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``tokenAllowances``: ids by ``EntityId.parseString(String(x))``; payer defaults to 1000."""
    return _allowance_row("token_allowance", {"amount": 0, "amount_granted": 0}, item, ctx)


def nft_allowance_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``nftAllowances``: ours (the reference's harness has no such key; its NFT allowance route is tested in
    Java): one ``nft_allowance`` row with the ``tokenAllowances`` rules (ids by ``EntityId.parseString``, payer
    1000)."""
    return _allowance_row("nft_allowance", {"approved_for_all": False}, item, ctx)


def _allowance_row(table: str, defaults: dict[str, Any], item: dict[str, Any], ctx: Context) -> list[Row]:
    """One row of a token or NFT allowance table: owner 1000, payer 1000, spender 2000, token 3000 and an open
    range unless given, ids by ``EntityId.parseString(String(x))``."""
    allowance = {
        **defaults,
        "owner": 1000,
        "payer_account_id": 1000,
        "spender": 2000,
        "token_id": 3000,
        "timestamp_range": "[0,)",
        **item,
    }
    for column in ("owner", "payer_account_id", "spender", "token_id"):
        allowance[column] = string_id(allowance[column], ctx)
    return [routed(table, every_column(table, allowance))]


def token_balance_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``tokenBalance``: one ``token_balance`` row; ids are encoded ids."""
    balance = {"consensus_timestamp": 0, "account_id": "0.0.0", "balance": 0, "token_id": "0.0.0", **item}
    values = {
        "consensus_timestamp": balance["consensus_timestamp"],
        "account_id": encoded_id(balance["account_id"], ctx),
        "balance": balance["balance"],
        "token_id": encoded_id(balance["token_id"], ctx),
    }
    return [Row("token_balance", values)]
