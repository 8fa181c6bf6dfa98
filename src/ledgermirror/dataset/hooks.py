"""Hooks (HIP-1195) and registered nodes (HIP-1137).

About one account in forty owns one to three EVM hooks (one in six of them deleted), each backed by a contract
when the ledger has contracts, with a few storage slots: the current slot in ``hook_storage`` and every write
in ``hook_storage_change`` (a slot written twice keeps its earlier value in the history; one in eight slots is
deleted, with an empty value). ``registered_node`` holds one node per endpoint role plus a deleted one.
"""

from __future__ import annotations

from asyncpg import Range

from ledgermirror.dataset.world import DAY, SECOND, SYSTEM_CREATED, Emit, Row, Tag, World, between, entity_id

HOOK_SHARE = 40  # one account in this many owns hooks
KEY_BYTES = 32


def _trimmed(value: bytes) -> bytes:
    """A slot value as the reference stores it: leading zero bytes trimmed."""
    return value.lstrip(b"\x00")


def hooks(world: World) -> Emit:
    """``hook``, ``hook_storage`` and ``hook_storage_change`` rows."""
    for account in range(0, world.accounts, HOOK_SHARE):
        if world.is_deleted(account):
            continue
        rng = world.rng(Tag.HOOK, account)
        owner = entity_id(world.account_num(account))
        born = world.account_created(account)
        for hook_id in range(1, 2 + rng.randrange(3)):
            created = between(rng, born + SECOND, world.end - DAY)
            deleted = rng.random() < 1 / 6
            contract = entity_id(world.contract_num(rng.randrange(world.contracts))) if world.contracts else None
            key = world.key_pair("hook admin", account * 8 + hook_id, ecdsa=False).key
            yield "hook", {
                "owner_id": owner, "hook_id": hook_id, "contract_id": contract, "created_timestamp": created,
                "deleted": deleted, "admin_key": key, "timestamp_range": Range(created, None),
            }  # fmt: skip
            for slot in range(rng.randrange(5)):
                yield from _slot(world, owner, hook_id, created, account * 64 + hook_id * 8 + slot)


def _slot(world: World, owner: int, hook_id: int, created: int, index: int) -> Emit:
    rng = world.rng(Tag.HOOK, 1_000_000_000 + index)
    key = index.to_bytes(KEY_BYTES, "big") if index % 3 else world.digest("hook slot", index)
    first = _trimmed(world.digest("hook value", index)[: 1 + rng.randrange(KEY_BYTES)])
    written = between(rng, created + SECOND, world.end - SECOND)
    changes: list[tuple[int, bytes | None]] = [(written, first)]
    if rng.random() < 0.5:
        changes.append((between(rng, written + 1, world.end), _trimmed(rng.randbytes(8))))
    deleted = rng.random() < 1 / 8
    if deleted:
        changes.append((between(rng, changes[-1][0] + 1, world.end), None))
    read = b""
    for at, value in changes:
        row: Row = {
            "consensus_timestamp": at, "hook_id": hook_id, "owner_id": owner, "key": key, "value_read": read,
            "value_written": value, "deleted": value is None,
        }  # fmt: skip
        yield "hook_storage_change", row
        read = value or b""
    yield "hook_storage", {
        "created_timestamp": written, "hook_id": hook_id, "modified_timestamp": changes[-1][0], "owner_id": owner,
        "key": key, "value": changes[-1][1] or b"", "deleted": deleted,
    }  # fmt: skip


_ENDPOINTS: tuple[tuple[str, list[Row]], ...] = (
    (
        "Block node alpha",
        [
            {"domain_name": "block1.alpha.example", "port": 40840, "requires_tls": True,
             "block_node": {"endpoint_apis": ["STATUS", "PUBLISH", "SUBSCRIBE_STREAM"]}},
            {"ip_address": "191.91.239.79", "port": 40841, "requires_tls": False,
             "block_node": {"endpoint_apis": ["STATE_PROOF"]}},
        ],
    ),
    ("General service", [{"ip_address": "10.0.0.7", "port": 8080, "requires_tls": False,
                          "general_service": {"description": "explorer"}}]),
    ("Mirror node", [{"domain_name": "mirror.example", "port": 443, "requires_tls": True, "mirror_node": {}}]),
    ("RPC relay", [{"domain_name": "relay.example", "port": 7546, "requires_tls": True, "rpc_relay": {}}]),
)  # fmt: skip
_ROLE_NUMBERS = {"block_node": 1, "general_service": 2, "mirror_node": 3, "rpc_relay": 4}


def registered_nodes(world: World) -> Emit:
    """One ``registered_node`` per endpoint role, then a deleted one."""
    for number, (description, endpoints) in enumerate((*_ENDPOINTS, ("Retired", [])), start=1):
        created = SYSTEM_CREATED + number * SECOND
        roles = sorted({_ROLE_NUMBERS[key] for item in endpoints for key in _ROLE_NUMBERS if key in item})
        yield "registered_node", {
            "registered_node_id": number, "admin_key": world.key_pair("registered node", number, ecdsa=False).key,
            "created_timestamp": created, "description": description, "service_endpoints": endpoints,
            "type": roles, "deleted": not endpoints, "timestamp_range": Range(created, None),
        }  # fmt: skip
