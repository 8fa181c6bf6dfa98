"""Default components: the mirror's REST API and importer, and one per consensus node of the current address
book grouped as the consensus network. Idempotent: rows are keyed by ``source_ref`` and made only once.

The nodes and the importer start automatic (``auto:node``, ``auto:importer``: the evaluator of
:mod:`.automation` sets their status), the REST API manual until a readiness probe is configured
(``auto:readiness``); ``source_ref`` says what each watches (``node:<id>``, ``mirror:importer``, ...).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ledgermirror.db.sql import template
from ledgermirror.ledger.entity_id import EntityId, encode_entity_id
from ledgermirror.ledger.system_files import ADDRESS_BOOK_FILE, NODE_DETAILS_FILE
from ledgermirror.status import audit
from ledgermirror.status.components_ops import HISTORY_SQL, INSERT_SQL
from ledgermirror.status.db import Conn
from ledgermirror.status.wire import new_id

BOOK_SQL = """
select e.node_id, e.node_account_id, e.description
from address_book_entry e
where e.consensus_timestamp = (
    select start_consensus_timestamp from address_book where file_id = {file_id}
    order by start_consensus_timestamp desc limit 1)
order by e.node_id
"""
AUTO_NAME_SQL = "update status.component set auto_name = name where id = {id}"
EXISTING_SQL = "select source_ref, id from status.component where source_ref is not null"
NEW_STORE_SQL = "select not exists (select from status.component) and not exists (select from status.incident)"


@dataclass(frozen=True, slots=True)
class BookNode:
    node_id: int
    account: str
    description: str | None


async def book_nodes(conn: Conn, shard: int = 0, realm: int = 0) -> list[BookNode]:
    """The nodes of the newest address book (file 0.0.102, else 0.0.101)."""
    for num in (NODE_DETAILS_FILE, ADDRESS_BOOK_FILE):
        book = template(BOOK_SQL, file_id=encode_entity_id(shard, realm, num))
        rows = await conn.fetch(book.text, *book.args)
        if rows:
            return [
                BookNode(
                    int(row["node_id"]),
                    str(EntityId.decode(int(row["node_account_id"]))),
                    row["description"] or None,
                )
                for row in rows
            ]
    return []


async def current_nodes(conn: Conn, shard: int, realm: int) -> list[tuple[int, str]]:
    """``(node_id, node account)`` of the newest address book (file 0.0.102, else 0.0.101)."""
    return [(node.node_id, node.account) for node in await book_nodes(conn, shard, realm)]


async def ensure_defaults(
    conn: Conn, now: dt.datetime, actor: str, *, shard: int = 0, realm: int = 0
) -> list[str]:
    """Create the missing default components; return the ids created."""
    created: list[str] = []
    async with conn.transaction():
        existing = {row["source_ref"]: row["id"] for row in await conn.fetch(EXISTING_SQL)}

        async def make(
            ref: str, name: str, *, group: bool, group_id: str | None, position: int, **extra: object
        ) -> str:
            if ref in existing:
                return str(existing[ref])
            component_id = new_id()
            description = extra.get("description")
            insert = template(
                INSERT_SQL,
                id=component_id,
                name=name,
                description=description,
                is_group=group,
                group_id=group_id,
                position=position,
                status="operational",
                status_source=str(extra.get("source", "manual")),
                source_ref=ref,
                showcase=True,
                only_show_if_degraded=bool(extra.get("only_show_if_degraded", False)),
                start_date=None if group else now.date(),
                now=now,
            )
            await conn.execute(insert.text, *insert.args)
            named = template(AUTO_NAME_SQL, id=component_id)
            await conn.execute(named.text, *named.args)
            if not group:
                history = template(
                    HISTORY_SQL,
                    component_id=component_id,
                    old_status=None,
                    new_status="operational",
                    changed_at=now,
                    incident_id=None,
                )
                await conn.execute(history.text, *history.args)
            existing[ref] = component_id
            created.append(component_id)
            return component_id

        await make("mirror:rest-api", "Mirror Node REST API", group=False, group_id=None, position=1)
        await make(
            "mirror:importer",
            "Record stream importer",
            group=False,
            group_id=None,
            position=2,
            source="auto:importer",
        )
        nodes = await current_nodes(conn, shard, realm)
        if nodes:
            network = await make("network", "Consensus nodes", group=True, group_id=None, position=3)
            for index, (node_id, account) in enumerate(nodes, start=1):
                await make(
                    f"node:{node_id}",
                    f"Node {node_id} ({account})",
                    group=False,
                    group_id=network,
                    position=index,
                    description=f"Consensus node {node_id}, account {account}",
                    only_show_if_degraded=True,
                    source="auto:node",
                )
        if created:
            await audit.record(
                conn, now, actor, "defaults.create", "component", target_id=None, details={"ids": created}
            )
    return created


async def ensure_on_first_start(
    conn: Conn, now: dt.datetime, actor: str, *, shard: int = 0, realm: int = 0
) -> list[str]:
    """Create the default components when the store is new: no component and no incident or maintenance
    (components cannot be deleted, so an empty component table has never held one). A store an operator has
    used is never touched. Returns the ids created."""
    async with conn.transaction():
        await conn.execute("lock table status.component in share row exclusive mode")
        if not await conn.fetchval(NEW_STORE_SQL):
            return []
        return await ensure_defaults(conn, now, actor, shard=shard, realm=realm)
