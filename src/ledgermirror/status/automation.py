"""The evaluator: components kept in step with the network and their status set from the mirror's evidence,
with no person involved.

One :meth:`Automation.evaluate` is one transaction on the owner connection (serialised between status services
by a transaction-level advisory lock):

1. **components follow the address book in force** (:func:`sync_nodes`): every node of the newest book
   (0.0.102, else 0.0.101) is a component of the "Consensus nodes" group (``source_ref`` ``node:<id>``, named
   by node id and account, described by the book's description); a node that leaves the book is hidden (its
   row and history are kept, ``retired_at`` set) and shown again if it comes back; a renamed node is renamed
   unless an operator renamed it (``name`` differs from ``auto_name``). An operator may hide any component.
2. **automatic status** (:mod:`.rules`) for every component whose ``status_source`` is ``auto:<source>``:
   ``auto:node`` (signature evidence), ``auto:importer`` (lag and stall), ``auto:readiness`` (the services'
   readiness probes, run before the transaction). A component set to ``manual`` is never touched: that is the
   operator's override (a management ``PATCH`` of ``status`` on an automatic component makes it manual; setting
   ``status_source`` back to ``auto:...`` hands it back).

3. **automatic incidents** (opt-in, :mod:`.auto_incidents`) for the changes of step 2;
4. **maintenances from the ledger** (:mod:`.freezes`): freeze transactions scheduling a freeze or an upgrade,
   and their aborts.

Every automatic change goes into ``component_status_history`` (with the reason and evidence, so the uptime bars
show it) and the audit log (actor ``auto:evaluator``).
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from ledgermirror.db import evidence
from ledgermirror.status import audit, auto_incidents, defaults, freezes
from ledgermirror.status.components_ops import INSERT_SQL
from ledgermirror.status.db import Conn, execute, fetch, fetchrow
from ledgermirror.status.rules import (
    Rules,
    Verdict,
    importer_verdict,
    node_verdict,
    readiness_verdict,
)
from ledgermirror.status.wire import new_id

_log = logging.getLogger(__name__)

ACTOR = "auto:evaluator"
NODE_SOURCE = "auto:node"
IMPORTER_SOURCE = "auto:importer"
READINESS_SOURCE = "auto:readiness"
GROUP_REF = "network"
GROUP_NAME = "Consensus nodes"
IMPORTER_REF = "mirror:importer"
_LOCK_KEY = 0x6C6D_7374_6576
"""The transaction-level advisory lock that serialises evaluators (``lmst`` ``ev``)."""

Readiness = Callable[[], Awaitable[tuple[bool, str]]]
"""A readiness probe: (ready, detail)."""


@dataclass(frozen=True, slots=True)
class Service:
    """A service whose component follows its readiness probe."""

    ref: str
    name: str
    position: int
    probe: Readiness


@dataclass(frozen=True, slots=True)
class Change:
    component_id: str
    name: str
    old: str
    new: str
    reason: str | None


@dataclass(frozen=True, slots=True)
class Evaluation:
    changes: list[Change]
    wrote: bool
    """Anything was written (components made, renamed, hidden, statuses or reasons): the page changed."""


WROTE_SQL = "select txid_current_if_assigned() is not null"
LOCK_SQL = "select pg_advisory_xact_lock({key})"
NODES_SQL = """
select id, source_ref, name, auto_name, hidden, retired_at, status_source from status.component
where source_ref like 'node:%' and not is_group
"""
GROUP_SQL = "select id from status.component where source_ref = {ref} and is_group order by created_at limit 1"
BY_REF_SQL = "select id from status.component where source_ref = {ref} order by created_at limit 1"
AUTO_SQL = """
select id, name, source_ref, status_source, status, auto_reason, rules from status.component
where status_source like 'auto:%' and not is_group
"""
SET_STATUS_SQL = """
update status.component set status = {status}, auto_reason = {reason}, auto_evidence = {evidence}::jsonb,
       updated_at = {now}
where id = {id}
"""
SET_REASON_SQL = """
update status.component set auto_reason = {reason}, auto_evidence = {evidence}::jsonb where id = {id}
"""
HISTORY_SQL = """
insert into status.component_status_history (component_id, old_status, new_status, changed_at, incident_id,
                                             reason, evidence)
values ({component_id}, {old_status}, {new_status}, {changed_at}, null, {reason}, {evidence}::jsonb)
"""
RETIRE_SQL = "update status.component set hidden = true, retired_at = {now}, updated_at = {now} where id = {id}"
RETURN_SQL = "update status.component set hidden = false, retired_at = null, updated_at = {now} where id = {id}"
RENAME_SQL = """
update status.component set name = {name}, auto_name = {name}, description = {description}, updated_at = {now}
where id = {id}
"""
AUTO_NAME_SQL = "update status.component set auto_name = {name} where id = {id}"
BOOK_SQL = """
select e.node_id, e.node_account_id, e.description
from address_book_entry e
where e.consensus_timestamp = (
    select start_consensus_timestamp from address_book where file_id = {file_id}
    order by start_consensus_timestamp desc limit 1)
order by e.node_id
"""


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


async def _insert(
    conn: Conn,
    now: dt.datetime,
    *,
    name: str,
    ref: str,
    source: str,
    group: bool,
    group_id: str | None,
    position: int,
    description: str | None = None,
) -> str:
    component_id = new_id()
    await execute(
        conn,
        INSERT_SQL,
        id=component_id,
        name=name,
        description=description,
        is_group=group,
        group_id=group_id,
        position=position,
        status="operational",
        status_source="manual" if group else source,
        source_ref=ref,
        showcase=True,
        only_show_if_degraded=False,
        start_date=None if group else now.date(),
        now=now,
    )
    await execute(conn, AUTO_NAME_SQL, id=component_id, name=name)
    if not group:
        await execute(
            conn,
            HISTORY_SQL,
            component_id=component_id,
            old_status=None,
            new_status="operational",
            changed_at=now,
            reason=None,
            evidence=None,
        )
    await audit.record(
        conn, now, ACTOR, "component.auto_create", "component", target_id=component_id, details={"ref": ref}
    )
    return component_id


async def sync_nodes(conn: Conn, now: dt.datetime) -> dict[int, str]:
    """Make the node components follow the address book in force; returns node id -> account."""
    nodes = await defaults.book_nodes(conn)
    rows = {row["source_ref"]: row for row in await fetch(conn, NODES_SQL)}
    if nodes:
        group = await fetchrow(conn, GROUP_SQL, ref=GROUP_REF)
        group_id = (
            str(group["id"])
            if group is not None
            else await _insert(
                conn, now, name=GROUP_NAME, ref=GROUP_REF, source="manual", group=True, group_id=None, position=3
            )
        )
    accounts: dict[int, str] = {}
    in_book: set[str] = set()
    for index, node in enumerate(nodes, start=1):
        ref = f"node:{node.node_id}"
        in_book.add(ref)
        accounts[node.node_id] = node.account
        name = f"Node {node.node_id} ({node.account})"
        description = node.description or f"Consensus node {node.node_id}, account {node.account}"
        row = rows.get(ref)
        if row is None:
            await _insert(
                conn,
                now,
                name=name,
                ref=ref,
                source=NODE_SOURCE,
                group=False,
                group_id=group_id,
                position=index,
                description=description,
            )
            continue
        if row["retired_at"] is not None:
            await execute(conn, RETURN_SQL, id=row["id"], now=now)
            await audit.record(
                conn, now, ACTOR, "component.auto_return", "component", target_id=row["id"], details={"ref": ref}
            )
        renamable = row["auto_name"] is None and str(row["status_source"]).startswith("auto:")
        if (row["name"] == row["auto_name"] or renamable) and row["name"] != name:
            await execute(conn, RENAME_SQL, id=row["id"], name=name, description=description, now=now)
            await audit.record(
                conn,
                now,
                ACTOR,
                "component.auto_rename",
                "component",
                target_id=row["id"],
                details={"ref": ref, "old": row["name"], "new": name},
            )
    for ref, row in rows.items():
        if ref not in in_book and row["retired_at"] is None and nodes:
            await execute(conn, RETIRE_SQL, id=row["id"], now=now)
            await audit.record(
                conn, now, ACTOR, "component.auto_retire", "component", target_id=row["id"], details={"ref": ref}
            )
    return accounts


async def _ensure(conn: Conn, now: dt.datetime, ref: str, name: str, *, source: str, position: int) -> None:
    if await fetchrow(conn, BY_REF_SQL, ref=ref) is None:
        await _insert(conn, now, name=name, ref=ref, source=source, group=False, group_id=None, position=position)


class Automation:
    """The evaluator's configuration; :meth:`evaluate` runs it once."""

    def __init__(
        self,
        rules: Rules,
        services: Sequence[Service] = (),
        *,
        incidents: bool = False,
        maintenance_minutes: int = 60,
    ) -> None:
        self.rules = rules
        self.services = tuple(services)
        self.incidents = incidents
        """Open, update and resolve incidents for rule changes (:mod:`.auto_incidents`)."""
        self.maintenance_minutes = maintenance_minutes
        """The expected length of a maintenance announced by a freeze (:mod:`.freezes`)."""

    async def evaluate(self, conn: Conn, now: dt.datetime) -> Evaluation:
        """One evaluation (its own transaction): the status changes made, and whether it wrote anything."""
        readiness = {service.ref: (service.name, await _probe(service)) for service in self.services}
        changes: list[Change] = []
        async with conn.transaction():
            await execute(conn, LOCK_SQL, key=_LOCK_KEY)
            accounts = await sync_nodes(conn, now)
            await _ensure(conn, now, IMPORTER_REF, "Record stream importer", source=IMPORTER_SOURCE, position=2)
            for service in self.services:
                await _ensure(
                    conn, now, service.ref, service.name, source=READINESS_SOURCE, position=service.position
                )
            components = await fetch(conn, AUTO_SQL)
            rules_of = {row["id"]: self.rules.overridden(orjson.loads(row["rules"])) for row in components}
            window = max((rules.window for rules in rules_of.values()), default=self.rules.window)
            recent = await evidence.recent(conn, window)
            newest = await evidence.newest_file(conn)
            now_ns = int(now.timestamp() * 1_000_000) * 1000
            for row in components:
                rules = rules_of[row["id"]]
                verdict = _verdict(row, rules, accounts, recent, newest, now_ns, readiness)
                if verdict is None:
                    continue
                change = await _apply(conn, row, verdict, now)
                if change is not None:
                    changes.append(change)
                    if self.incidents:
                        await auto_incidents.follow(conn, change, now, ACTOR)
            await freezes.follow(conn, now, self.maintenance_minutes, ACTOR)
            wrote = bool(await conn.fetchval(WROTE_SQL))
        return Evaluation(changes, wrote)


def _verdict(  # noqa: PLR0917
    row: Any,
    rules: Rules,
    accounts: dict[int, str],
    recent: list[evidence.Evidence],
    newest: tuple[int, int] | None,
    now_ns: int,
    readiness: dict[str, tuple[str, tuple[bool, str]]],
) -> Verdict | None:
    source, ref = row["status_source"], row["source_ref"] or ""
    if source == NODE_SOURCE and ref.startswith("node:") and ref[5:].isdigit():
        node_id = int(ref[5:])
        return node_verdict(node_id, accounts.get(node_id, f"id {node_id}"), recent, rules)
    if source == IMPORTER_SOURCE:
        end, imported = newest if newest is not None else (None, None)
        return importer_verdict(now_ns, end, imported, rules)
    if source == READINESS_SOURCE and ref in readiness:
        name, (ready, detail) = readiness[ref]
        return readiness_verdict(name, ready, detail)
    return None


async def _apply(conn: Conn, row: Any, verdict: Verdict, now: dt.datetime) -> Change | None:
    old = str(row["status"])
    evidence_json = _json(verdict.evidence)
    if old == verdict.status:
        if row["auto_reason"] != verdict.reason:
            await execute(conn, SET_REASON_SQL, id=row["id"], reason=verdict.reason, evidence=evidence_json)
        return None
    await execute(
        conn,
        SET_STATUS_SQL,
        id=row["id"],
        status=verdict.status,
        reason=verdict.reason,
        evidence=evidence_json,
        now=now,
    )
    await execute(
        conn,
        HISTORY_SQL,
        component_id=row["id"],
        old_status=old,
        new_status=verdict.status,
        changed_at=now,
        reason=verdict.reason,
        evidence=evidence_json,
    )
    details = {"old": old, "new": verdict.status, "reason": verdict.reason, "evidence": verdict.evidence}
    await audit.record(
        conn, now, ACTOR, "component.auto_status", "component", target_id=row["id"], details=details
    )
    _log.info("automatic status", extra={"component": row["name"], **details})
    return Change(str(row["id"]), str(row["name"]), old, verdict.status, verdict.reason)


async def _probe(service: Service) -> tuple[bool, str]:
    try:
        return await service.probe()
    except Exception as error:
        return False, f"{type(error).__name__}: {error}"
