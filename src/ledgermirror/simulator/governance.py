"""Privileged network work besides the system files: nodes created, updated and deleted (HIP-869) by the
address book admin, an upgrade prepared and aborted (freeze transactions), and a user file created, then
deleted and restored by the system admin (system delete and undelete). Privileged payers pay no fee.

The consensus nodes (0..N-1) are never touched: the address book of 0.0.102 stays what signs the stream."""

from __future__ import annotations

import hashlib

from ledgermirror.simulator import picks
from ledgermirror.simulator.emitter import Emitter, Tx
from ledgermirror.simulator.hapi import set_timestamp
from ledgermirror.simulator.ledger_state import Node, UserFile
from ledgermirror.simulator.picks import HBAR
from ledgermirror.simulator.system import ADDRESS_BOOK_ADMIN, SYSTEM_ADMIN

UPGRADE_FILE = 150
PREPARE_UPGRADE = 2
FREEZE_UPGRADE = 3
FREEZE_ABORT = 4


def create_node(em: Emitter) -> bool:
    """A candidate node joins the node list (not the address book that signs the stream)."""
    ledger = em.ledger
    account = picks.payer(em, HBAR)
    if account is None:
        return False
    node_id = len(em.node_accounts) + len(ledger.nodes)
    admin_key = picks.ed25519_key(em)
    body = em.hapi.bodies["node_create"].NodeCreateTransactionBody(
        account_id=em.account_id(account),
        description=f"candidate node {node_id}",
        admin_key=picks.key_message(em, admin_key),
        gossip_ca_certificate=em.rng.randbytes(64),
        decline_reward=em.rng.random() < 0.5,
    )
    for endpoints in (body.gossip_endpoint, body.service_endpoint):
        endpoints.add(domain_name=f"node{node_id}.candidates.ledgermirror.test", port=50211)
    record = em.new_record()
    record.receipt.node_id = node_id
    stamp = em.emit(Tx(ADDRESS_BOOK_ADMIN, "nodeCreate", body, 0), record)
    ledger.nodes[node_id] = Node(node_id, account, admin_key, stamp, body.description, body.decline_reward)
    ledger.accounts[account].pinned = True
    return True


def update_or_delete_node(em: Emitter) -> bool:
    """A candidate node's description and reward choice change, or (one time in four) it leaves."""
    live = [node for node in em.ledger.nodes.values() if not node.deleted]
    if not live:
        return False
    node = em.rng.choice(live)
    if em.rng.random() < 0.25:
        body = em.hapi.bodies["node_delete"].NodeDeleteTransactionBody(node_id=node.node_id)
        em.emit(Tx(ADDRESS_BOOK_ADMIN, "nodeDelete", body, 0))
        node.deleted = True
        return True
    body = em.hapi.bodies["node_update"].NodeUpdateTransactionBody(node_id=node.node_id)
    body.description.value = f"candidate node {node.node_id} (update {em.rng.randrange(1, 100)})"
    body.decline_reward.value = not node.decline_reward
    em.emit(Tx(ADDRESS_BOOK_ADMIN, "nodeUpdate", body, 0))
    node.description, node.decline_reward = body.description.value, body.decline_reward.value
    return True


def freeze(em: Emitter) -> bool:
    """An upgrade prepared from file 0.0.150 (PREPARE_UPGRADE with the file's hash; FREEZE_UPGRADE an hour
    ahead when ``ledger.upgrade_freezes``), or the last one aborted (FREEZE_ABORT)."""
    ledger = em.ledger
    body = em.hapi.bodies["freeze"].FreezeTransactionBody()
    prepared = bool(ledger.freezes) and ledger.freezes[-1]["type"] in (PREPARE_UPGRADE, FREEZE_UPGRADE)
    if prepared:
        body.freeze_type = FREEZE_ABORT
        set_timestamp(body.start_time, em.now)
    else:
        body.freeze_type = FREEZE_UPGRADE if ledger.upgrade_freezes else PREPARE_UPGRADE
        body.update_file.fileNum = UPGRADE_FILE
        body.file_hash = hashlib.sha384(em.rng.randbytes(64)).digest()
        set_timestamp(body.start_time, em.now + 3_600_000_000_000)
    stamp = em.emit(Tx(SYSTEM_ADMIN, "freeze", body, 0))
    ledger.freezes.append(
        {
            "consensus_timestamp": stamp,
            "type": body.freeze_type,
            "file_id": f"0.0.{UPGRADE_FILE}" if body.HasField("update_file") else None,
            "file_hash": bytes(body.file_hash).hex(),
            "start_time": body.start_time.seconds * 1_000_000_000 + body.start_time.nanos,
        }
    )
    return True


def create_file(em: Emitter) -> bool:
    payer = picks.payer(em, 100 * HBAR)
    if payer is None:
        return False
    num = em.ledger.new_num()
    contents = f"certificate of origin #{num}: {em.rng.randbytes(24).hex()}".encode()
    body = em.hapi.bodies["file_create"].FileCreateTransactionBody(contents=contents, memo="simulated file")
    body.keys.keys.add().CopyFrom(picks.key_message(em, em.ledger.accounts[payer].key))
    body.expirationTime.seconds = em.now // 1_000_000_000 + 7_776_000
    record = em.new_record()
    record.receipt.fileID.fileNum = num
    stamp = em.emit(Tx(payer, "fileCreate", body, picks.fee(em, "fileCreate")), record)
    em.ledger.user_files[num] = UserFile(num, contents, stamp, payer)
    return True


def update_or_delete_file(em: Emitter) -> bool:
    """The creator replaces a live file's contents, or (one time in four) deletes it."""
    ledger = em.ledger
    chosen = picks.sample(
        em,
        list(ledger.user_files.values()),
        lambda f: not f.deleted and not ledger.accounts[f.owner].deleted and ledger.balance(f.owner) >= 10 * HBAR,
    )
    if chosen is None:
        return False
    if em.rng.random() < 0.25:
        body = em.hapi.bodies["file_delete"].FileDeleteTransactionBody()
        body.fileID.fileNum = chosen.num
        em.emit(Tx(chosen.owner, "fileDelete", body, picks.fee(em, "fileCreate")))
        chosen.deleted = True
        return True
    contents = f"certificate of origin #{chosen.num}, revised: {em.rng.randbytes(24).hex()}".encode()
    body = em.hapi.bodies["file_update"].FileUpdateTransactionBody(contents=contents)
    body.fileID.fileNum = chosen.num
    em.emit(Tx(chosen.owner, "fileUpdate", body, picks.fee(em, "fileCreate")))
    chosen.contents = contents
    return True


def system_delete_or_undelete(em: Emitter) -> bool:
    """The system admin deletes a live user file, or restores one it deleted."""
    files = [f for f in em.ledger.user_files.values() if f.system_deleted or not f.deleted]
    if not files:
        return False
    chosen = em.rng.choice(files)
    undelete = chosen.system_deleted
    name = "systemUndelete" if undelete else "systemDelete"
    module = em.hapi.bodies["system_undelete" if undelete else "system_delete"]
    body = (module.SystemUndeleteTransactionBody if undelete else module.SystemDeleteTransactionBody)()
    body.fileID.fileNum = chosen.num
    if not undelete:
        body.expirationTime.seconds = em.now // 1_000_000_000 + 86_400
    em.emit(Tx(SYSTEM_ADMIN, name, body, 0))
    chosen.deleted = chosen.system_deleted = not undelete
    return True
