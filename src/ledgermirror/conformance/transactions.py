"""Setup converters for transactions: ``transactions``, ``cryptotransfers``, ``transactionhashes`` and
``assessedcustomfees``.

A ``transactions`` item expands to one ``transaction`` row, one ``transaction_hash`` row, its
``crypto_transfer`` rows (three synthetic fee transfers when it lists none and was charged a fee) and its
``token_transfer`` rows. A ``cryptotransfers`` item first gets a sender/recipient/treasury transfer list.
"""

from __future__ import annotations

import copy
from typing import Any

from hiero_sdk_python.hapi.services import custom_fees_pb2

from ledgermirror.conformance.ids import Context, encoded_id, spec_id
from ledgermirror.conformance.rows import Row, pick
from ledgermirror.conformance.values import (
    SetupValueError,
    hex_or_bytes,
    js_positive,
    js_str,
    js_truthy,
    json_text,
    to_bigint,
    value_to_buffer,
)
from ledgermirror.ledger.transaction_codes import CRYPTOTRANSFER, SUCCESS

NODE_FEE = 2
NETWORK_FEE = 1
SERVICE_FEE = 4
_DEFAULT_NODE_NUM = 3
_FEE_COLLECTOR_NUM = 98
_MISSING = object()

_TRANSACTION_DEFAULTS: dict[str, Any] = {
    "batch_key": None,
    "charged_tx_fee": NODE_FEE + NETWORK_FEE + SERVICE_FEE,
    "consensus_timestamp": None,
    "entity_id": None,
    "high_volume": False,
    "high_volume_pricing_multiplier": 1,
    "inner_transactions": None,
    "max_custom_fees": [],
    "max_fee": 33,
    "nft_transfer": None,
    "node_account_id": None,
    "nonce": 0,
    "parent_consensus_timestamp": None,
    "payer_account_id": None,
    "result": SUCCESS,
    "scheduled": False,
    "transaction_bytes": "bytes",
    "transaction_hash": bytes(range(1, 49)),
    "type": CRYPTOTRANSFER,
    "valid_duration_seconds": 11,
    "valid_start_ns": None,
    "index": 1,
}
_TRANSACTION_COLUMNS = tuple(_TRANSACTION_DEFAULTS)


# max_custom_fees: serialized CustomFeeLimit messages ---------------------------------------------------------


def _proto_int(value: Any, what: str) -> int:
    return 0 if value is None else to_bigint(value, what)


def _custom_fee_limit(limit: dict[str, Any], ctx: Context) -> bytes:
    """One ``max_custom_fees`` element as a serialized ``CustomFeeLimit`` (account in the configured
    shard/realm; fees are ``FixedFee`` messages)."""
    account = limit.get("accountId") or {}
    fees = []
    for fee in limit.get("fees") or []:
        fixed = custom_fees_pb2.FixedFee(amount=_proto_int(fee.get("amount"), "amount"))
        token = fee.get("denominatingTokenId")
        if isinstance(token, dict) and token:
            fixed.denominating_token_id.shardNum = ctx.shard
            fixed.denominating_token_id.realmNum = ctx.realm
            fixed.denominating_token_id.tokenNum = _proto_int(token.get("tokenNum"), "tokenNum")
        fees.append(fixed)
    message = custom_fees_pb2.CustomFeeLimit(
        account_id={
            "shardNum": ctx.shard,
            "realmNum": ctx.realm,
            "accountNum": _proto_int(account.get("accountNum"), "accountNum"),
        },
        fees=fees,
    )
    return bytes(message.SerializeToString())


# transactions ----------------------------------------------------------------------------------------------


def _nft_transfer_json(transfers: Any, ctx: Context) -> str:
    if not isinstance(transfers, list):
        raise TypeError(f"nft_transfer must be an array, not {transfers!r}")
    converted = []
    for transfer in transfers:
        entry = dict(transfer)
        for key in ("receiver_account_id", "sender_account_id", "token_id"):
            entry[key] = encoded_id(entry.get(key), ctx, nullable=True)
        converted.append(entry)
    return json_text(converted)


def _fee_transfers(consensus: str, payer: int, node: int | None, ctx: Context) -> list[Row]:
    """The three synthetic transfers of a charged transaction without transfers: node +2, 0.0.98 +1,
    payer -3."""
    node_account = node if js_truthy(node) else spec_id(_DEFAULT_NODE_NUM, ctx)
    legs = (
        (NODE_FEE, node_account),
        (NETWORK_FEE, spec_id(_FEE_COLLECTOR_NUM, ctx)),
        (-(NODE_FEE + NETWORK_FEE), payer),
    )
    return [
        Row(
            "crypto_transfer",
            {
                "consensus_timestamp": consensus,
                "amount": amount,
                "entity_id": entity,
                "payer_account_id": payer,
                "is_approval": False,
            },
        )
        for amount, entity in legs
    ]


def transaction_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``transactions``: payer/node from ``payerAccountId``/``nodeAccountId``, valid start from
    ``valid_start_timestamp`` (else consensus - 1), plus hash, crypto and token transfer rows."""
    tx = {
        **_TRANSACTION_DEFAULTS,
        "transfers": [],
        **copy.deepcopy(item),
        "valid_start_ns": item.get("valid_start_timestamp", _MISSING),
    }
    if tx["high_volume"] is None:
        tx["high_volume"] = False
    tx["entity_id"] = spec_id(tx["entity_id"], ctx)
    node = tx["node_account_id"] = spec_id(tx.get("nodeAccountId"), ctx)
    payer = tx["payer_account_id"] = spec_id(tx.get("payerAccountId"), ctx)

    limits = tx["max_custom_fees"]
    if limits is not None and len(limits) != 0:
        tx["max_custom_fees"] = [_custom_fee_limit(limit, ctx) for limit in limits]
    if tx["nft_transfer"] is not None:
        tx["nft_transfer"] = _nft_transfer_json(tx["nft_transfer"], ctx)
    tx["batch_key"] = hex_or_bytes(tx["batch_key"])
    tx["transaction_hash"] = value_to_buffer(tx["transaction_hash"])
    if tx["valid_start_ns"] is _MISSING:
        tx["valid_start_ns"] = to_bigint(tx["consensus_timestamp"], "consensus_timestamp") - 1
    inner = tx["inner_transactions"]
    if inner is not None and len(inner) > 0:
        tx["inner_transactions"] = [
            spec_id(value, ctx) if index % 2 == 0 else value for index, value in enumerate(inner)
        ]

    rows = [Row("transaction", pick(tx, _TRANSACTION_COLUMNS))]
    rows.extend(
        transaction_hash_rows(
            {
                "consensus_timestamp": tx["consensus_timestamp"],
                "hash": tx["transaction_hash"],
                "payer_account_id": payer,
            },
            ctx,
        )
    )

    consensus = js_str(tx["consensus_timestamp"])
    transfers = tx["transfers"]
    if not isinstance(transfers, list):
        raise TypeError(f"transfers must be an array, not {transfers!r}")
    if not transfers and js_positive(tx["charged_tx_fee"]) and payer is not None and js_truthy(payer):
        rows.extend(_fee_transfers(consensus, payer, node, ctx))
    for transfer in transfers:
        values = {
            "consensus_timestamp": consensus,
            "amount": transfer.get("amount"),
            "entity_id": encoded_id(transfer.get("account"), ctx),
            "payer_account_id": payer,
            "is_approval": transfer.get("is_approval"),
        }
        rows.append(Row("crypto_transfer", values))

    for transfer in tx.get("token_transfer_list") or []:
        values = {
            "consensus_timestamp": consensus,
            "token_id": spec_id(transfer.get("token_id"), ctx),
            "account_id": spec_id(transfer.get("account"), ctx),
            "amount": transfer.get("amount"),
            "payer_account_id": payer,
            "is_approval": transfer.get("is_approval"),
        }
        rows.append(Row("token_transfer", values))
    return rows


def crypto_transfer_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``cryptotransfers``: sender and payer default to each other, amount to 2, recipient to the node; the
    transfer list is sender -(1 + amount), recipient +amount, treasury +1."""
    tx = dict(item)
    if "senderAccountId" not in tx:
        tx["senderAccountId"] = tx.get("payerAccountId")
    if "payerAccountId" not in tx:
        tx["payerAccountId"] = tx.get("senderAccountId")
    if "amount" not in tx:
        tx["amount"] = NODE_FEE
    if "recipientAccountId" not in tx:
        tx["recipientAccountId"] = tx.get("nodeAccountId")
    if "transfers" not in tx:
        tx["transfers"] = [
            {
                "account": spec_id(tx["senderAccountId"], ctx),
                "amount": -NETWORK_FEE - to_bigint(tx["amount"], "amount"),
                "is_approval": False,
            },
            {"account": spec_id(tx["recipientAccountId"], ctx), "amount": tx["amount"], "is_approval": False},
            {"account": spec_id(tx.get("treasuryAccountId"), ctx), "amount": NETWORK_FEE, "is_approval": False},
        ]
    return transaction_rows(tx, ctx)


def transaction_hash_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``transactionhashes``: the hash split into its first 32 bytes and the rest; the payer is required."""
    values = dict(item)
    digest = value_to_buffer(values.get("hash"))
    if not isinstance(digest, (bytes, bytearray)):
        raise SetupValueError(f"transaction hash must be bytes, hex or base64, not {digest!r}")
    values["hash"] = bytes(digest[:32])
    values["hash_suffix"] = bytes(digest[32:]) if len(digest) > 32 else None
    values["payer_account_id"] = encoded_id(values.get("payer_account_id"), ctx)
    return [Row("transaction_hash", values)]


def assessed_custom_fee_rows(item: dict[str, Any], ctx: Context) -> list[Row]:
    """``assessedcustomfees``: payer 0.0.300 and no effective payers by default."""
    fee = {"effective_payer_account_ids": [], "payer_account_id": ctx.id_text(300), **item}
    if fee.get("consensus_timestamp") is None:
        raise SetupValueError("assessed custom fee needs a consensus_timestamp")
    # Array.join renders null as an empty element
    payers = js_str([spec_id(payer, ctx) for payer in fee["effective_payer_account_ids"]])
    values = {
        "amount": fee.get("amount"),
        "collector_account_id": encoded_id(fee.get("collector_account_id"), ctx),
        "consensus_timestamp": js_str(fee["consensus_timestamp"]),
        "effective_payer_account_ids": "{" + payers + "}",
        "token_id": encoded_id(fee.get("token_id"), ctx, nullable=True),
        "payer_account_id": encoded_id(fee["payer_account_id"], ctx),
    }
    return [Row("assessed_custom_fee", values)]
