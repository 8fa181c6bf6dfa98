"""Management of components and groups: create, update, status changes with history, all audited."""

from __future__ import annotations

import datetime as dt
from typing import Any

import asyncpg

from ledgermirror.db.sql import Statement, template, update
from ledgermirror.status import audit, fields
from ledgermirror.status.db import Conn
from ledgermirror.status.errors import InvalidInput, NotFound
from ledgermirror.status.model import SETTABLE_COMPONENT_STATUSES
from ledgermirror.status.wire import new_id

COMPONENT_FIELDS: dict[str, fields.Check] = {
    "name": fields.text,
    "description": fields.optional_text,
    "group_id": fields.optional_ident,
    "position": fields.position,
    "status": fields.one_of(*SETTABLE_COMPONENT_STATUSES),
    "status_source": fields.status_source,
    "source_ref": fields.optional_text,
    "showcase": fields.boolean,
    "only_show_if_degraded": fields.boolean,
    "start_date": fields.start_date,
    "hidden": fields.boolean,
    "rules": fields.rules,
}
GROUP_FIELDS: dict[str, fields.Check] = {
    "name": fields.text,
    "description": fields.optional_text,
    "position": fields.position,
    "showcase": fields.boolean,
    "only_show_if_degraded": fields.boolean,
    "components": fields.ident_list,
}
_TABLE = "status.component"
_COLUMNS = frozenset(COMPONENT_FIELDS) - {"status"}
"""Writable columns (a fixed allow-list: user input only ever selects among these names)."""

ROW_SQL = """
select id, name, is_group, group_id, status, status_source from status.component where id = {id} for update
"""
HISTORY_SQL = """
insert into status.component_status_history (component_id, old_status, new_status, changed_at, incident_id)
values ({component_id}, {old_status}, {new_status}, {changed_at}, {incident_id})
"""
INSERT_SQL = """
insert into status.component (id, name, description, is_group, group_id, position, status, status_source,
                              source_ref, showcase, only_show_if_degraded, start_date, created_at, updated_at)
values ({id}, {name}, {description}, {is_group}, {group_id}, {position}, {status}, {status_source}, {source_ref},
        {showcase}, {only_show_if_degraded}, {start_date}, {now}, {now})
"""
MEMBERS_SQL = (
    "update status.component set group_id = {group_id}, updated_at = {now} where id = any({members}::text[])"
)
UNGROUP_SQL = """
update status.component set group_id = null, updated_at = {now}
where group_id = {group_id} and not (id = any({members}::text[]))
"""


async def _row(conn: Conn, component_id: str, *, group: bool | None = None) -> asyncpg.Record:
    row = await _fetch_row(conn, component_id)
    if row is None or (group is not None and row["is_group"] != group):
        raise NotFound(f"no {'group' if group else 'component'} {component_id}")
    found: asyncpg.Record = row
    return found


async def _check_group(conn: Conn, group_id: str | None) -> None:
    if group_id is not None:
        row = await _fetch_row(conn, group_id)
        if row is None or not row["is_group"]:
            raise InvalidInput(f"group_id {group_id} is not a group")


async def set_status(
    conn: Conn, component_id: str, new: str, now: dt.datetime, incident_id: str | None = None
) -> str:
    """Change one component's status (with a history row); returns the old status."""
    row = await _row(conn, component_id, group=False)
    old: str = row["status"]
    if old != new:
        await _execute(conn, update(_TABLE, {"status": new, "updated_at": now}, {"id": component_id}))
        await _history(conn, component_id, old, new, now, incident_id=incident_id)
    return old


async def create_component(conn: Conn, data: Any, now: dt.datetime, actor: str) -> str:
    values = fields.parse(data, COMPONENT_FIELDS, required=("name",))
    component_id = new_id()
    async with conn.transaction():
        await _check_group(conn, values.get("group_id"))
        status = values.get("status", "operational")
        insert = template(
            INSERT_SQL,
            id=component_id,
            name=values["name"],
            description=values.get("description"),
            is_group=False,
            group_id=values.get("group_id"),
            position=values.get("position", 1),
            status=status,
            status_source=values.get("status_source", "manual"),
            source_ref=values.get("source_ref"),
            showcase=values.get("showcase", True),
            only_show_if_degraded=values.get("only_show_if_degraded", False),
            start_date=values.get("start_date"),
            now=now,
        )
        await _execute(conn, insert)
        await _set_columns(conn, component_id, {k: v for k, v in values.items() if k in ("hidden", "rules")}, now)
        await _history(conn, component_id, None, status, now, incident_id=None)
        await audit.record(
            conn, now, actor, "component.create", "component", target_id=component_id, details=values
        )
    return component_id


async def update_component(conn: Conn, component_id: str, data: Any, now: dt.datetime, actor: str) -> None:
    values = fields.parse(data, COMPONENT_FIELDS)
    async with conn.transaction():
        row = await _row(conn, component_id, group=False)
        if "status" in values and "status_source" not in values and str(row["status_source"]).startswith("auto:"):
            values["status_source"] = "manual"  # the operator's override: the evaluator leaves it alone
        if "group_id" in values:
            await _check_group(conn, values["group_id"])
        await _set_columns(conn, component_id, values, now)
        if "status" in values:
            await set_status(conn, component_id, values["status"], now)
        await audit.record(
            conn, now, actor, "component.update", "component", target_id=component_id, details=values
        )


async def _set_columns(conn: Conn, component_id: str, values: dict[str, Any], now: dt.datetime) -> None:
    names = [name for name in values if name in _COLUMNS]
    if not names:
        return
    assignments = {"updated_at": now, **{name: values[name] for name in names}}
    await _execute(conn, update(_TABLE, assignments, {"id": component_id}))


async def create_group(conn: Conn, data: Any, now: dt.datetime, actor: str) -> str:
    values = fields.parse(data, GROUP_FIELDS, required=("name",))
    group_id = new_id()
    async with conn.transaction():
        insert = template(
            INSERT_SQL,
            id=group_id,
            name=values["name"],
            description=values.get("description"),
            is_group=True,
            group_id=None,
            position=values.get("position", 1),
            status="operational",
            status_source="manual",
            source_ref=None,
            showcase=values.get("showcase", True),
            only_show_if_degraded=values.get("only_show_if_degraded", False),
            start_date=None,
            now=now,
        )
        await _execute(conn, insert)
        await _set_members(conn, group_id, values.get("components"), now)
        await audit.record(conn, now, actor, "group.create", "group", target_id=group_id, details=values)
    return group_id


async def update_group(conn: Conn, group_id: str, data: Any, now: dt.datetime, actor: str) -> None:
    values = fields.parse(data, GROUP_FIELDS)
    async with conn.transaction():
        await _row(conn, group_id, group=True)
        await _set_columns(conn, group_id, {k: v for k, v in values.items() if k != "components"}, now)
        await _set_members(conn, group_id, values.get("components"), now)
        await audit.record(conn, now, actor, "group.update", "group", target_id=group_id, details=values)


async def _set_members(conn: Conn, group_id: str, members: list[str] | None, now: dt.datetime) -> None:
    """Make ``members`` exactly the group's children (None: leave them as they are)."""
    if members is None:
        return
    for member in members:
        await _row(conn, member, group=False)
    await _execute(conn, template(UNGROUP_SQL, group_id=group_id, members=members, now=now))
    await _execute(conn, template(MEMBERS_SQL, members=members, group_id=group_id, now=now))


async def _fetch_row(conn: Conn, component_id: str) -> asyncpg.Record | None:
    statement = template(ROW_SQL, id=component_id)
    return await conn.fetchrow(statement.text, *statement.args)


async def _history(
    conn: Conn, component_id: str, old: str | None, new: str, now: dt.datetime, *, incident_id: str | None
) -> None:
    statement = template(
        HISTORY_SQL,
        component_id=component_id,
        old_status=old,
        new_status=new,
        changed_at=now,
        incident_id=incident_id,
    )
    await _execute(conn, statement)


async def _execute(conn: Conn, statement: Statement) -> None:
    await conn.execute(statement.text, *statement.args)
