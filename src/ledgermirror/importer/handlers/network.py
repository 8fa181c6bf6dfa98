"""Consensus nodes, node stake updates, freeze and PRNG (reference §3.7, §3.8)."""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import key_or_none
from ledgermirror.importer.handlers.item import Item

NANOS_PER_MINUTE = 60_000_000_000
PROXY_CLEARED_PORT = -1
"""A NodeUpdate with a default (empty) gRPC proxy endpoint clears it: written as port -1, stored as NULL."""


# Nodes (HIP-869) -----------------------------------------------------------------------------------------------


def _endpoint(message: Any) -> dict[str, Any]:
    ip = bytes(message.ipAddressV4)
    return {
        "domain_name": message.domain_name,
        "ip_address_v4": str(ipaddress.IPv4Address(ip)) if len(ip) == 4 else "",
        "port": message.port,
    }


def _node_transaction(item: Item, batch: Batch, context: ItemContext, account: int) -> None:
    """Node transactions keep their bytes: REST reads them."""
    context.set_transaction(
        entity_id=ids.nullable(account),
        transaction_bytes=item.transaction_bytes,
        transaction_record_bytes=item.record_bytes,
    )


def _node_row(item: Item, node_id: int, **fields: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"node_id": node_id, "timestamp_range": item.consensus_timestamp}
    row.update({name: value for name, value in fields.items() if value is not None})
    return row


def node_create(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.nodeCreate
    account = batch.account_of(body.account_id) if body.HasField("account_id") else 0
    _node_transaction(item, batch, context, account)
    if not item.successful:
        return
    row = _node_row(
        item,
        item.record.receipt.node_id,
        account_id=account or None,
        admin_key=key_or_none(body, "admin_key"),
        associated_registered_nodes=list(body.associated_registered_node),
        created_timestamp=item.consensus_timestamp,
        decline_reward=body.decline_reward,
        deleted=False,
        grpc_proxy_endpoint=_endpoint(body.grpc_proxy_endpoint) if body.HasField("grpc_proxy_endpoint") else None,
    )
    batch.upsert("node", row)


def node_update(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.nodeUpdate
    account = batch.account_of(body.account_id) if body.HasField("account_id") else 0
    _node_transaction(item, batch, context, account)
    if not item.successful:
        return
    endpoint = None
    if body.HasField("grpc_proxy_endpoint"):
        endpoint = _endpoint(body.grpc_proxy_endpoint)
        if not body.grpc_proxy_endpoint.ByteSize():
            endpoint["port"] = PROXY_CLEARED_PORT
    associated = None
    if body.HasField("associated_registered_node_list"):
        associated = list(body.associated_registered_node_list.associated_registered_node)
    row = _node_row(
        item,
        body.node_id,
        account_id=account or None,
        admin_key=key_or_none(body, "admin_key"),
        associated_registered_nodes=associated,
        decline_reward=body.decline_reward.value if body.HasField("decline_reward") else None,
        deleted=False,
        grpc_proxy_endpoint=endpoint,
        created_timestamp=item.consensus_timestamp if item.record.transactionID.nonce > 0 else None,
    )
    batch.upsert("node", row)


def node_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    _node_transaction(item, batch, context, 0)
    if item.successful:
        batch.upsert("node", _node_row(item, item.body.nodeDelete.node_id, deleted=True))


# Staking -------------------------------------------------------------------------------------------------------


def node_stake_update(item: Item, batch: Batch, context: ItemContext) -> None:
    """One ``network_stake`` row and one ``node_stake`` row per node, for the staking day that just ended."""
    if not item.successful:
        return
    body = item.body.node_stake_update
    stamp = item.consensus_timestamp
    epoch_day = ids.epoch_day(stamp) - 1
    period = ids.nanos(body.end_of_staking_period)
    for stake in body.node_stake:
        batch.insert(
            "node_stake",
            {
                "consensus_timestamp": stamp,
                "epoch_day": epoch_day,
                "node_id": stake.node_id,
                "reward_rate": stake.reward_rate,
                "stake": stake.stake,
                "stake_rewarded": stake.stake_rewarded,
                "staking_period": period,
                "max_stake": stake.max_stake,
                "min_stake": stake.min_stake,
                "stake_not_rewarded": stake.stake_not_rewarded,
            },
        )
    batch.insert(
        "network_stake",
        {
            "consensus_timestamp": stamp,
            "epoch_day": epoch_day,
            "max_staking_reward_rate_per_hbar": body.max_staking_reward_rate_per_hbar,
            "node_reward_fee_denominator": body.node_reward_fee_fraction.denominator,
            "node_reward_fee_numerator": body.node_reward_fee_fraction.numerator,
            "stake_total": sum(stake.stake_rewarded + stake.stake_not_rewarded for stake in body.node_stake),
            "staking_period": period,
            "staking_period_duration": body.staking_period,
            "staking_periods_stored": body.staking_periods_stored,
            "staking_reward_fee_denominator": body.staking_reward_fee_fraction.denominator,
            "staking_reward_fee_numerator": body.staking_reward_fee_fraction.numerator,
            "staking_reward_rate": body.staking_reward_rate,
            "staking_start_threshold": body.staking_start_threshold,
            "max_stake_rewarded": body.max_stake_rewarded,
            "max_total_reward": body.max_total_reward,
            "reserved_staking_rewards": body.reserved_staking_rewards,
            "reward_balance_threshold": body.reward_balance_threshold,
            "unreserved_staking_reward_balance": body.unreserved_staking_reward_balance,
        },
    )


# Freeze and PRNG -----------------------------------------------------------------------------------------------


def freeze(item: Item, batch: Batch, context: ItemContext) -> None:
    body = item.body.freeze
    file_id = ids.file_id(body.update_file) if body.HasField("update_file") else 0
    context.set_transaction(entity_id=ids.nullable(file_id))
    if not item.successful:
        return
    stamp = item.consensus_timestamp
    end_time = None
    if body.HasField("start_time"):
        start_time = ids.nanos(body.start_time)
    else:
        day = stamp - stamp % ids.NANOS_PER_DAY
        start_time = day + (body.startHour * 60 + body.startMin) * NANOS_PER_MINUTE
        end_time = day + (body.endHour * 60 + body.endMin) * NANOS_PER_MINUTE
        if body.startHour > body.endHour:
            end_time += ids.NANOS_PER_DAY
    batch.insert(
        "network_freeze",
        {
            "consensus_timestamp": stamp,
            "end_time": end_time,
            "file_hash": bytes(body.file_hash),
            "file_id": ids.nullable(file_id),
            "payer_account_id": item.payer_account_id,
            "start_time": start_time,
            "type": body.freeze_type,
        },
    )


def util_prng(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    record = item.record
    entropy = record.WhichOneof("entropy")
    batch.insert(
        "prng",
        {
            "consensus_timestamp": item.consensus_timestamp,
            "payer_account_id": item.payer_account_id,
            "range": item.body.util_prng.range,
            "prng_bytes": bytes(record.prng_bytes) if entropy == "prng_bytes" else None,
            "prng_number": record.prng_number if entropy == "prng_number" else None,
        },
    )


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "nodeCreate": node_create,
        "nodeUpdate": node_update,
        "nodeDelete": node_delete,
        "node_stake_update": node_stake_update,
        "freeze": freeze,
        "util_prng": util_prng,
    }
)
