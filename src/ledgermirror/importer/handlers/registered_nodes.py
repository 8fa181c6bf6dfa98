"""Registered nodes (RegisteredNodeCreate/Update/Delete, types 78-80, reference §3.8) and the ledger id
(LedgerIdPublication, type 77, §3.9).

* ``registered_node`` (with history): on success, Create writes the receipt's ``registered_node_id`` with
  ``admin_key``, ``description``, ``service_endpoints`` and ``type`` (the sorted ids of its endpoints' roles:
  BLOCK_NODE 1, GENERAL_SERVICE 2, MIRROR_NODE 3, RPC_RELAY 4), ``created_timestamp``; Update only what it
  carries (endpoints replace the list when it is not empty) and ``deleted = false``; Delete ``deleted = true``.
  A registered node id is no entity id: ``transaction.entity_id`` stays NULL and no ``entity`` row is written.
* ``ledger`` (no history, the last publication wins): ``ledger_id``, ``history_proof_verification_key`` and
  ``node_contributions`` (JSON ``[{node_id, weight, history_proof_key}]``, the key in lowercase hex).

``service_endpoints`` JSON, one object per endpoint: ``ip_address`` (dotted, or the IPv6 text) or
``domain_name``, ``port``, ``requires_tls``, and one role object: ``block_node`` ``{endpoint_apis: [names]}``,
``general_service`` ``{description}``, ``mirror_node`` ``{}`` or ``rpc_relay`` ``{}``.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.context import Handler, ItemContext
from ledgermirror.importer.handlers.entities import key_or_none
from ledgermirror.importer.handlers.item import Item

ROLE_TYPES = MappingProxyType({"block_node": 1, "general_service": 2, "mirror_node": 3, "rpc_relay": 4})
"""``registered_node.type`` id of each endpoint role."""
_IPV4, _IPV6 = 4, 16


def _ip_text(data: bytes) -> str | None:
    if len(data) == _IPV4:
        return str(ipaddress.IPv4Address(data))
    if len(data) == _IPV6:
        return str(ipaddress.IPv6Address(data))
    return None


def _endpoint(message: Any) -> tuple[dict[str, Any], int | None]:
    """One endpoint as stored, and its role's type id."""
    endpoint: dict[str, Any] = {}
    address = message.WhichOneof("address")
    if address == "ip_address":
        text = _ip_text(bytes(message.ip_address))
        if text is not None:
            endpoint["ip_address"] = text
    elif address == "domain_name":
        endpoint["domain_name"] = message.domain_name
    endpoint["port"] = message.port
    endpoint["requires_tls"] = message.requires_tls
    role = message.WhichOneof("endpoint_type")
    if role == "block_node":
        apis = message.block_node.DESCRIPTOR.fields_by_name["endpoint_api"].enum_type
        names = [apis.values_by_number[api].name for api in message.block_node.endpoint_api]
        endpoint["block_node"] = {"endpoint_apis": names}
    elif role == "general_service":
        endpoint["general_service"] = {"description": message.general_service.description}
    elif role in ("mirror_node", "rpc_relay"):
        endpoint[role] = {}
    return endpoint, ROLE_TYPES.get(role or "")


def _endpoints(messages: Iterable[Any]) -> dict[str, Any]:
    endpoints, types = [], set()
    for message in messages:
        endpoint, role = _endpoint(message)
        endpoints.append(endpoint)
        if role is not None:
            types.add(role)
    return {"service_endpoints": endpoints, "type": sorted(types)}


def registered_node_create(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    body = item.body.registeredNodeCreate
    row = {
        "registered_node_id": item.record.receipt.registered_node_id,
        "admin_key": key_or_none(body, "admin_key"),
        "created_timestamp": item.consensus_timestamp,
        "deleted": False,
        "description": body.description,
        "timestamp_range": item.consensus_timestamp,
        **_endpoints(body.service_endpoint),
    }
    batch.upsert("registered_node", row)


def registered_node_update(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    body = item.body.registeredNodeUpdate
    row: dict[str, Any] = {
        "registered_node_id": body.registered_node_id,
        "deleted": False,
        "timestamp_range": item.consensus_timestamp,
    }
    if body.HasField("admin_key"):
        row["admin_key"] = body.admin_key.SerializeToString()
    if body.HasField("description"):
        row["description"] = body.description.value
    if body.service_endpoint:
        row.update(_endpoints(body.service_endpoint))
    batch.upsert("registered_node", row)


def registered_node_delete(item: Item, batch: Batch, context: ItemContext) -> None:
    if item.successful:
        batch.upsert(
            "registered_node",
            {
                "registered_node_id": item.body.registeredNodeDelete.registered_node_id,
                "deleted": True,
                "timestamp_range": item.consensus_timestamp,
            },
        )


def ledger_id_publication(item: Item, batch: Batch, context: ItemContext) -> None:
    if not item.successful:
        return
    body = item.body.ledger_id_publication
    batch.upsert(
        "ledger",
        {
            "ledger_id": bytes(body.ledger_id),
            "consensus_timestamp": item.consensus_timestamp,
            "history_proof_verification_key": bytes(body.history_proof_verification_key),
            "node_contributions": [
                {
                    "node_id": contribution.node_id,
                    "weight": contribution.weight,
                    "history_proof_key": bytes(contribution.history_proof_key).hex(),
                }
                for contribution in body.node_contributions
            ],
        },
    )


HANDLERS: Mapping[str, Handler] = MappingProxyType(
    {
        "registeredNodeCreate": registered_node_create,
        "registeredNodeUpdate": registered_node_update,
        "registeredNodeDelete": registered_node_delete,
        "ledger_id_publication": ledger_id_publication,
    }
)
