"""Registered nodes (types 78-80) into ``registered_node`` with history, and the ledger id (type 77)."""

from __future__ import annotations

import orjson
from google.protobuf import wrappers_pb2
from tests.importer.handlers.items import (
    T0,
    basic,
    body,
    fetch,
    import_items,
    module,
    record_item,
    transaction_pb2,
)
from tests.support import Ledger

endpoints = module("registered_service_endpoint_pb2")


def test_registered_node_create_update_delete(ledger: Ledger) -> None:
    t1, t2, t3 = T0 + 1, T0 + 2, T0 + 3
    admin = basic.Key(ed25519=b"\x04" * 32)
    block = endpoints.RegisteredServiceEndpoint(ip_address=bytes([10, 0, 0, 1]), port=8080, requires_tls=True)
    block.block_node.endpoint_api.extend([1, 3])
    relay = endpoints.RegisteredServiceEndpoint(domain_name="relay.example", port=443)
    relay.rpc_relay.SetInParent()
    create = module("registered_node_create_pb2").RegisteredNodeCreateTransactionBody(
        admin_key=admin, description="first", service_endpoint=[relay, block]
    )
    mirror = endpoints.RegisteredServiceEndpoint(domain_name="mirror.example", port=5600)
    mirror.mirror_node.SetInParent()
    update = module("registered_node_update_pb2").RegisteredNodeUpdateTransactionBody(
        registered_node_id=9, description=wrappers_pb2.StringValue(value="second"), service_endpoint=[mirror]
    )
    delete = module("registered_node_delete_pb2").RegisteredNodeDeleteTransactionBody(registered_node_id=9)
    import_items(
        ledger.url,
        record_item(body("registeredNodeCreate", create), at=t1, receipt={"registered_node_id": 9}),
        record_item(body("registeredNodeUpdate", update), at=t2),
        record_item(body("registeredNodeDelete", delete), at=t3),
        record_item(body("registeredNodeDelete", delete), at=t3 + 1, status=21),  # failed: nothing
    )
    node = fetch(ledger.url, "select * from registered_node")[0]
    assert (node["registered_node_id"], node["admin_key"], node["created_timestamp"]) == (
        9,
        admin.SerializeToString(),
        t1,
    )
    assert (node["description"], node["deleted"], node["type"]) == ("second", True, [3])
    assert node["timestamp_range"].lower == t3
    history = fetch(ledger.url, "select * from registered_node_history order by lower(timestamp_range)")
    assert [(row["timestamp_range"].lower, row["timestamp_range"].upper) for row in history] == [
        (t1, t2),
        (t2, t3),
    ]
    first = history[0]
    assert first["type"] == [1, 4] and first["description"] == "first"
    assert orjson.loads(first["service_endpoints"]) == [
        {"domain_name": "relay.example", "port": 443, "requires_tls": False, "rpc_relay": {}},
        {"ip_address": "10.0.0.1", "port": 8080, "requires_tls": True,
         "block_node": {"endpoint_apis": ["STATUS", "SUBSCRIBE_STREAM"]}},
    ]  # fmt: skip
    assert orjson.loads(history[1]["service_endpoints"]) == [
        {"domain_name": "mirror.example", "port": 5600, "requires_tls": False, "mirror_node": {}}
    ]
    assert fetch(ledger.url, "select type, entity_id from transaction order by consensus_timestamp") == [
        {"type": 78, "entity_id": None},
        {"type": 79, "entity_id": None},
        {"type": 80, "entity_id": None},
        {"type": 80, "entity_id": None},
    ]
    assert fetch(ledger.url, "select count(*) from entity") == [{"count": 0}]


def test_ledger_id_publication(ledger: Ledger) -> None:
    publication_class = transaction_pb2.TransactionBody.DESCRIPTOR.fields_by_name["ledger_id_publication"]
    from google.protobuf import message_factory

    publication = message_factory.GetMessageClass(publication_class.message_type)(
        ledger_id=b"\x01\x02", history_proof_verification_key=b"\x0a" * 4
    )
    publication.node_contributions.add(node_id=0, weight=10, history_proof_key=b"\xbe\xef")
    later = message_factory.GetMessageClass(publication_class.message_type)(
        ledger_id=b"\x01\x02", history_proof_verification_key=b"\x0b" * 4
    )
    import_items(
        ledger.url,
        record_item(body("ledger_id_publication", publication), at=T0),
        record_item(body("ledger_id_publication", later), at=T0 + 1),
    )
    rows = fetch(ledger.url, "select * from ledger")
    assert len(rows) == 1
    row = rows[0]
    assert (row["ledger_id"], row["consensus_timestamp"], row["history_proof_verification_key"]) == (
        b"\x01\x02",
        T0 + 1,
        b"\x0b" * 4,
    )
    assert orjson.loads(row["node_contributions"]) == []
    import_items(ledger.url, record_item(body("ledger_id_publication", publication), at=T0 + 2))
    assert orjson.loads(fetch(ledger.url, "select node_contributions from ledger")[0]["node_contributions"]) == [
        {"node_id": 0, "weight": 10, "history_proof_key": "beef"}
    ]
