"""Maintenances from the ledger: a freeze transaction that schedules a freeze (``FREEZE_ONLY``) or an upgrade
(``FREEZE_UPGRADE``) at its start time becomes a scheduled maintenance of the consensus nodes (the "Consensus
nodes" group and its nodes) from that start for the configured expected length; a later ``FREEZE_ABORT``
cancels the ones not yet started. Each maintenance remembers its freeze (source ``auto:freeze``, ``source_ref``
the freeze's consensus timestamp), so it is made once, and cancelled once."""

from __future__ import annotations

import datetime as dt

from ledgermirror.status import maintenances_ops
from ledgermirror.status.db import Conn, execute, fetch, fetchval
from ledgermirror.status.wire import from_ns, timestamp

SOURCE = "auto:freeze"
FREEZE_ONLY = 1
FREEZE_UPGRADE = 3
FREEZE_ABORT = 4
NAMES = {FREEZE_ONLY: "Network freeze", FREEZE_UPGRADE: "Network upgrade"}
LOOK_BACK = dt.timedelta(days=90)
"""Freezes whose window ended longer ago are left out (a mirror importing old history)."""

FREEZES_SQL = """
select consensus_timestamp, start_time, type from network_freeze
where type in (1, 3, 4) and start_time >= {since}
order by consensus_timestamp
"""
MADE_SQL = "select id, status, cancelled_at from status.incident where source = {source} and source_ref = {ref}"
MARK_SQL = "update status.incident set source = {source}, source_ref = {ref} where id = {id}"
GROUP_SQL = "select id from status.component where source_ref = 'network' and is_group order by created_at limit 1"
MEMBERS_SQL = "select id from status.component where group_id = {group} and not hidden order by position, id"


async def follow(conn: Conn, now: dt.datetime, minutes: int, actor: str) -> list[str]:
    """Schedule and cancel maintenances from the freeze transactions; returns the maintenance ids touched."""
    since = int((now - LOOK_BACK).timestamp()) * 1_000_000_000
    freezes = await fetch(conn, FREEZES_SQL, since=since)
    group = await fetchval(conn, GROUP_SQL)
    network = (
        []
        if group is None
        else [str(group), *(str(row["id"]) for row in await fetch(conn, MEMBERS_SQL, group=group))]
    )
    touched: list[str] = []
    made: dict[int, str] = {}
    for freeze in freezes:
        stamp, start, kind = int(freeze["consensus_timestamp"]), int(freeze["start_time"]), int(freeze["type"])
        if kind == FREEZE_ABORT:
            for earlier, maintenance_id in list(made.items()):
                row = await _made(conn, earlier)
                if row is not None and row["cancelled_at"] is None and row["status"] == "scheduled":
                    body = f"Cancelled on the ledger by a FREEZE_ABORT transaction at {_at(stamp)}."
                    await maintenances_ops.cancel(conn, maintenance_id, {"body": body}, now, actor)
                    touched.append(maintenance_id)
                made.pop(earlier)
            continue
        row = await _made(conn, stamp)
        if row is not None:
            if row["cancelled_at"] is None and row["status"] == "scheduled":
                made[stamp] = str(row["id"])
            continue
        begin = from_ns(start)
        kind_name = "FREEZE_UPGRADE" if kind == FREEZE_UPGRADE else "FREEZE_ONLY"
        data = {
            "name": NAMES[kind],
            "scheduled_for": iso_timestamp(begin),
            "scheduled_until": iso_timestamp(begin + dt.timedelta(minutes=minutes)),
            "body": (
                f"Announced on the ledger by a {kind_name} transaction at {_at(stamp)}: the consensus nodes "
                f"freeze at {_at(start)}."
            ),
            "components": network,
        }
        maintenance_id = await maintenances_ops.schedule(conn, data, now, actor)
        await execute(conn, MARK_SQL, source=SOURCE, ref=str(stamp), id=maintenance_id)
        made[stamp] = maintenance_id
        touched.append(maintenance_id)
    return touched


async def _made(conn: Conn, stamp: int) -> dict[str, object] | None:
    rows = await fetch(conn, MADE_SQL, source=SOURCE, ref=str(stamp))
    return dict(rows[0]) if rows else None


def iso_timestamp(value: dt.datetime) -> str:
    text = timestamp(value)
    assert text is not None
    return text


def _at(nanos: int) -> str:
    return iso_timestamp(from_ns(nanos))
