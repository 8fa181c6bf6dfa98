"""The Statuspage v1 management API (``/v1/pages/{page_id}/...``), beside ``/manage/v1``, on the same
operations (``*_ops.py``) and rows, so the real Statuspage clients work against this service unmodified.

* Auth: ``Authorization: OAuth <key>`` (also ``Bearer <key>`` and a bare key, which the PyPI client sends
  when no prefix is configured) or the ``api_key`` query parameter; otherwise 401.
* Bodies: wrapped in the resource's key (``{"component": {...}}``, ``{"component_group": {...}}`` with
  ``description`` beside or inside, ``{"incident": {...}}``, ``{"incident_update": {...}}``), parsed as JSON
  whatever the ``Content-Type``; unknown keys are ignored; timestamps without an offset are UTC.
* Answers: the full objects (:mod:`.v1_objects`), lists as bare arrays; 201 on create, 204 on a component
  delete, 200 otherwise; errors ``{"message": ...}`` with 400 (body), 401, 404, 422 (validation).
* Pagination: ``page``/``per_page`` (components, groups, the filtered incident lists), ``q``/``limit``/``page``
  (incidents); at most 100 rows a page.
* Scheduled maintenances are incidents with ``scheduled_for``: created, changed and listed through the incident
  routes; their status family is ``scheduled``/``in_progress``/``verifying``/``completed``.
* Deleting a component hides it for good (``deleted_at``; its history stays for the uptime of the past),
  deleting a group ungroups its components first; deleting an incident removes it with its updates.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from ledgermirror.status import audit, components_ops, incidents_ops, keys, maintenances_ops, v1_objects
from ledgermirror.status.db import ACQUIRE_SECONDS, Conn, execute, fetch, fetchrow, fetchval
from ledgermirror.status.errors import BodyTooLarge, Conflict, InvalidInput, ManageError, NotFound
from ledgermirror.status.model import MAINTENANCE_STATES, UNRESOLVED_INCIDENT_STATES
from ledgermirror.status.state import StatusState
from ledgermirror.status.wire import from_ns, is_id, timestamp

_log = logging.getLogger(__name__)

MAX_PER_PAGE = 100
INCIDENT_STATES = (*UNRESOLVED_INCIDENT_STATES, "resolved")
COMPONENT_KEYS = ("name", "description", "status", "group_id", "showcase", "only_show_if_degraded", "start_date")

PAGE_ROW_SQL = "select id, created_at from status.page"
DELETE_COMPONENT_SQL = """
update status.component set deleted_at = {now}, hidden = true, group_id = null, updated_at = {now}
where id = {id} and is_group = {is_group} and deleted_at is null
"""
UNGROUP_ALL_SQL = "update status.component set group_id = null, updated_at = {now} where group_id = {id}"
KIND_SQL = "select kind, status from status.incident where id = {id}"
STATUS_OF_SQL = "select status from status.component where id = {id} and deleted_at is null"
INCIDENTS_SQL = """
select id from status.incident i
where {q}::text is null or i.name ilike {q} or i.status ilike {q}
   or exists (select from status.incident_update u where u.incident_id = i.id and u.body ilike {q})
order by i.created_at desc, i.id desc
limit {limit} offset {offset}
"""
UNRESOLVED_SQL = """
select id from status.incident where kind = 'incident' and status in ('investigating', 'identified', 'monitoring')
order by created_at desc, id desc limit {limit} offset {offset}
"""
SCHEDULED_SQL = """
select id from status.incident where kind = 'maintenance'
order by scheduled_for desc, id desc limit {limit} offset {offset}
"""
OPEN_MAINTENANCES_SQL = """
select id from status.incident
where kind = 'maintenance' and status in ('scheduled', 'in_progress', 'verifying') and cancelled_at is null
"""
DELETE_INCIDENT_SQL = (
    "delete from status.incident_update where incident_id = {id}",
    "delete from status.incident_component where incident_id = {id}",
    "update status.component_status_history set incident_id = null where incident_id = {id}",
    "delete from status.incident where id = {id}",
)
UPDATE_ROW_SQL = "select id from status.incident_update where id = {id} and incident_id = {incident_id}"
EDIT_UPDATE_SQL = """
update status.incident_update set body = coalesce({body}, body), display_at = coalesce({display_at}, display_at),
       deliver_notifications = coalesce({notify}, deliver_notifications), updated_at = {now}
where id = {id}
"""


class Unprocessable(ManageError):
    status_code = 422


class BadRequest(ManageError):
    """A body that is not JSON, or not wrapped in the resource's key; bad pagination parameters."""

    status_code = 400


@dataclass(slots=True)
class Call:
    """One request's context, inside its connection."""

    conn: Conn
    state: StatusState
    request: Request
    now: dt.datetime
    actor: str
    data: Any

    def param(self, name: str) -> str:
        value = str(self.request.path_params[name]).removesuffix(".json")
        if not is_id(value):
            raise NotFound(f"no such id {value}")
        return value

    async def view(self, incident_ids: list[str] | None = None) -> v1_objects.V1View:
        return await v1_objects.read(self.conn, self.now, self.state.settings, incident_ids or [])


Handler = Callable[[Call], Awaitable[tuple[int, Any]]]


def _json(status_code: int, payload: Any) -> Response:
    if status_code == 204:
        return Response(b"", status_code=204)
    return Response(orjson.dumps(payload), status_code=status_code, media_type="application/json")


def _token(request: Request) -> str | None:
    header = request.headers.get("authorization", "").strip()
    scheme, _, value = header.partition(" ")
    if value.strip() and scheme.lower() in ("oauth", "bearer"):
        return value.strip()
    if header and not value:
        return header
    return request.query_params.get("api_key") or None


async def _body(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"the body is larger than {limit} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge(f"the body is larger than {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    if not raw.strip():
        return {}
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise BadRequest("the body is not valid JSON") from None


def route(path: str, methods: list[str], handler: Handler) -> list[Route]:
    """The route at ``path`` and at ``path.json`` (the docs' examples use the suffix)."""

    async def endpoint(request: Request) -> Response:
        state: StatusState = request.app.state.status
        pool = state.write_pool()
        if pool is None:
            return _json(503, {"message": "the management API is not enabled on this instance"})
        writes = request.method != "GET"
        try:
            async with pool.connection(ACQUIRE_SECONDS) as conn:
                token = _token(request)
                key = await keys.verify(conn, token) if token else None
                if key is None:
                    return _json(401, {"message": "Could not authenticate"})
                page = await fetchrow(conn, PAGE_ROW_SQL)
                if "page_id" in request.path_params and (
                    page is None or str(request.path_params["page_id"]).removesuffix(".json") != page["id"]
                ):
                    return _json(404, {"message": "The requested resource could not be found."})
                data = await _body(request, state.settings.max_body_bytes) if writes else {}
                now = from_ns(state.clock.now_ns())
                call = Call(conn, state, request, now, f"key:{key.id} ({key.name})", data)
                status_code, payload = await handler(call)
        except NotFound as error:
            return _json(404, {"message": error.message})
        except (Conflict, Unprocessable) as error:
            return _json(422, {"message": error.message})
        except InvalidInput as error:
            return _json(422, {"message": error.message})
        except ManageError as error:
            return _json(error.status_code, {"message": error.message})
        if writes:
            state.cache.clear()
        return _json(status_code, payload)

    return [Route(path, endpoint, methods=methods), Route(path + ".json", endpoint, methods=methods)]


def _wrapped(call: Call, key: str) -> dict[str, Any]:
    if not isinstance(call.data, dict) or not isinstance(call.data.get(key), dict):
        raise BadRequest(f"the body must be an object with a {key!r} object")
    inner: dict[str, Any] = call.data[key]
    return inner


def _page_params(call: Call, size_name: str = "per_page") -> tuple[int, int]:
    """``(limit, offset)`` from ``page`` and ``per_page`` (or ``limit``)."""
    params = call.request.query_params
    try:
        page = int(params.get("page", "1"))
        size = int(params.get(size_name, str(MAX_PER_PAGE)))
    except ValueError:
        raise BadRequest(f"page and {size_name} must be whole numbers") from None
    if page < 1 or size < 1:
        raise BadRequest(f"page and {size_name} must be at least 1")
    size = min(size, MAX_PER_PAGE)
    return size, (page - 1) * size


def _timestamp(name: str, value: Any) -> str | None:
    """A v1 timestamp (any ISO 8601 form; no offset = UTC) as the text our operations take."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise Unprocessable(f"{name} must be an ISO 8601 timestamp")
    try:
        parsed = dt.datetime.fromisoformat(value.strip())
    except ValueError:
        raise Unprocessable(f"{name} must be an ISO 8601 timestamp") from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=dt.UTC)
    return timestamp(parsed)


def _group_id(value: Any) -> Any:
    return None if value in (None, "", "null") else value


# --- pages


async def list_pages(call: Call) -> tuple[int, Any]:
    row = await fetchrow(call.conn, PAGE_ROW_SQL)
    assert row is not None
    return 200, [v1_objects.page(row["id"], row["created_at"], call.state.settings)]


async def get_page(call: Call) -> tuple[int, Any]:
    row = await fetchrow(call.conn, PAGE_ROW_SQL)
    assert row is not None
    return 200, v1_objects.page(row["id"], row["created_at"], call.state.settings)


# --- components


async def _component(call: Call, component_id: str, *, group: bool = False) -> dict[str, Any]:
    view = await call.view()
    found = view.components.get(component_id)
    if found is None or found["group"] != group:
        raise NotFound(f"no {'component group' if group else 'component'} {component_id}")
    return v1_objects.group(found) if group else v1_objects.component(found)


async def list_components(call: Call) -> tuple[int, Any]:
    limit, offset = _page_params(call)
    view = await call.view()
    rows = [v1_objects.component(view.components[cid]) for cid in view.ordered_components]
    return 200, rows[offset : offset + limit]


async def get_component(call: Call) -> tuple[int, Any]:
    return 200, await _component(call, call.param("component_id"))


def _component_fields(inner: dict[str, Any]) -> dict[str, Any]:
    values = {key: inner[key] for key in COMPONENT_KEYS if key in inner}
    if "group_id" in values:
        values["group_id"] = _group_id(values["group_id"])
    if values.get("description") == "":
        values["description"] = None
    return values


async def create_component(call: Call) -> tuple[int, Any]:
    values = _component_fields(_wrapped(call, "component"))
    if not values.get("name"):
        raise Unprocessable("component.name is required")
    component_id = await components_ops.create_component(call.conn, values, call.now, call.actor)
    return 201, await _component(call, component_id)


async def update_component(call: Call) -> tuple[int, Any]:
    component_id = call.param("component_id")
    await _component(call, component_id)
    values = _component_fields(_wrapped(call, "component"))
    await components_ops.update_component(call.conn, component_id, values, call.now, call.actor)
    return 200, await _component(call, component_id)


async def delete_component(call: Call) -> tuple[int, Any]:
    component_id = call.param("component_id")
    async with call.conn.transaction():
        done = await fetchval(
            call.conn,
            "with gone as (" + DELETE_COMPONENT_SQL + " returning id) select count(*) from gone",
            id=component_id,
            is_group=False,
            now=call.now,
        )
        if not done:
            raise NotFound(f"no component {component_id}")
        await audit.record(
            call.conn, call.now, call.actor, "component.delete", "component", target_id=component_id, details={}
        )
    return 204, None


# --- component groups


def _group_fields(call: Call, *, create: bool) -> dict[str, Any]:
    inner = _wrapped(call, "component_group")
    values: dict[str, Any] = {}
    if "name" in inner:
        values["name"] = inner["name"]
    if "components" in inner:
        values["components"] = inner["components"]
    description = inner.get("description", call.data.get("description"))
    if description is not None:
        values["description"] = description or None
    if create and (not values.get("name") or "components" not in values):
        raise Unprocessable("component_group.name and component_group.components are required")
    return values


async def list_groups(call: Call) -> tuple[int, Any]:
    limit, offset = _page_params(call)
    view = await call.view()
    rows = [
        v1_objects.group(view.components[cid]) for cid in view.ordered_components if view.components[cid]["group"]
    ]
    return 200, rows[offset : offset + limit]


async def get_group(call: Call) -> tuple[int, Any]:
    return 200, await _component(call, call.param("id"), group=True)


async def create_group(call: Call) -> tuple[int, Any]:
    group_id = await components_ops.create_group(call.conn, _group_fields(call, create=True), call.now, call.actor)
    return 201, await _component(call, group_id, group=True)


async def update_group(call: Call) -> tuple[int, Any]:
    group_id = call.param("id")
    await _component(call, group_id, group=True)
    await components_ops.update_group(call.conn, group_id, _group_fields(call, create=False), call.now, call.actor)
    return 200, await _component(call, group_id, group=True)


async def delete_group(call: Call) -> tuple[int, Any]:
    group_id = call.param("id")
    before = await _component(call, group_id, group=True)
    async with call.conn.transaction():
        await execute(call.conn, UNGROUP_ALL_SQL, id=group_id, now=call.now)
        await execute(call.conn, DELETE_COMPONENT_SQL, id=group_id, is_group=True, now=call.now)
        await audit.record(
            call.conn, call.now, call.actor, "group.delete", "group", target_id=group_id, details={}
        )
    return 200, before


# --- incidents and maintenances


async def _incident(call: Call, incident_id: str) -> dict[str, Any]:
    view = await call.view([incident_id])
    found = view.incidents.get(incident_id)
    if found is None:
        raise NotFound(f"no incident {incident_id}")
    return found


async def _incidents(call: Call, ids: list[str]) -> list[dict[str, Any]]:
    view = await call.view(ids)
    return [view.incidents[incident_id] for incident_id in ids if incident_id in view.incidents]


async def list_incidents(call: Call) -> tuple[int, Any]:
    limit, offset = _page_params(call, "limit")
    q = call.request.query_params.get("q") or None
    pattern = None if q is None else "%" + q.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = await fetch(call.conn, INCIDENTS_SQL, q=pattern, limit=limit, offset=offset)
    return 200, await _incidents(call, [row["id"] for row in rows])


async def list_unresolved(call: Call) -> tuple[int, Any]:
    limit, offset = _page_params(call)
    rows = await fetch(call.conn, UNRESOLVED_SQL, limit=limit, offset=offset)
    return 200, await _incidents(call, [row["id"] for row in rows])


async def list_scheduled(call: Call) -> tuple[int, Any]:
    limit, offset = _page_params(call)
    rows = await fetch(call.conn, SCHEDULED_SQL, limit=limit, offset=offset)
    return 200, await _incidents(call, [row["id"] for row in rows])


async def _open_maintenances(call: Call, states: tuple[str, ...]) -> tuple[int, Any]:
    limit, offset = _page_params(call)
    ids = [row["id"] for row in await fetch(call.conn, OPEN_MAINTENANCES_SQL)]
    chosen = [item for item in await _incidents(call, ids) if item["status"] in states]
    chosen.sort(key=lambda item: (item["scheduled_for"], item["id"]))
    return 200, chosen[offset : offset + limit]


async def list_upcoming(call: Call) -> tuple[int, Any]:
    return await _open_maintenances(call, ("scheduled",))


async def list_active_maintenance(call: Call) -> tuple[int, Any]:
    return await _open_maintenances(call, ("in_progress", "verifying"))


async def get_incident(call: Call) -> tuple[int, Any]:
    return 200, await _incident(call, call.param("incident_id"))


async def _component_map(call: Call, inner: dict[str, Any]) -> dict[str, str] | None:
    """``components`` (id -> status) with ``component_ids`` attached at their current status."""
    given = inner.get("components")
    if given is not None and not isinstance(given, dict):
        raise Unprocessable("incident.components must be an object of component id to status")
    mapping: dict[str, str] = dict(given or {})
    for component_id in mapping:
        if not is_id(str(component_id)) or await fetchval(call.conn, STATUS_OF_SQL, id=component_id) is None:
            raise Unprocessable(f"no component {component_id}")
    ids = inner.get("component_ids")
    if ids is not None:
        if not isinstance(ids, list):
            raise Unprocessable("incident.component_ids must be a list of ids")
        for component_id in ids:
            if component_id in mapping:
                continue
            status = (
                await fetchval(call.conn, STATUS_OF_SQL, id=component_id) if is_id(str(component_id)) else None
            )
            if status is None:
                raise Unprocessable(f"no component {component_id}")
            mapping[component_id] = status
    if given is None and ids is None:
        return None
    return mapping


def _body_of(inner: dict[str, Any]) -> Any:
    body = inner.get("body", inner.get("message"))
    return body if body not in (None, "") else None


def _maintenance_fields(inner: dict[str, Any], mapping: dict[str, str] | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in ("name", "deliver_notifications"):
        if key in inner:
            values[key] = inner[key]
    for key in ("scheduled_for", "scheduled_until"):
        if inner.get(key) is not None:
            values[key] = _timestamp(key, inner[key])
    auto_start = inner.get("scheduled_auto_in_progress", inner.get("scheduled_auto_transition"))
    if auto_start is not None:
        values["auto_in_progress"] = auto_start
    if inner.get("scheduled_auto_completed") is not None:
        values["auto_completed"] = inner["scheduled_auto_completed"]
    body = _body_of(inner)
    if body is not None:
        values["body"] = body
    if mapping is not None:
        values["components"] = list(mapping)
    return values


def _incident_fields(inner: dict[str, Any], mapping: dict[str, str] | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for key in ("name", "status", "impact_override", "deliver_notifications"):
        if key in inner:
            values[key] = inner[key]
    body = _body_of(inner)
    if body is not None:
        values["body"] = body
    if mapping is not None:
        values["components"] = mapping
    return values


def _check_name(inner: dict[str, Any], *, required: bool) -> None:
    name = inner.get("name")
    if name is None:
        if required:
            raise Unprocessable("incident.name is required")
        return
    if not isinstance(name, str) or not name.strip() or len(name) > 255:
        raise Unprocessable("incident.name must be 1 to 255 characters")
    body = _body_of(inner)
    if isinstance(body, str) and len(body) > 25_000:
        raise Unprocessable("incident.body must be at most 25000 characters")


async def create_incident(call: Call) -> tuple[int, Any]:
    inner = _wrapped(call, "incident")
    _check_name(inner, required=True)
    status = inner.get("status")
    scheduled = inner.get("scheduled_for") is not None or status in MAINTENANCE_STATES
    if inner.get("backfilled") and inner.get("components"):
        raise Unprocessable("a backfilled incident cannot name components")
    mapping = await _component_map(call, inner)
    if scheduled:
        if status not in (None, *MAINTENANCE_STATES):
            raise Unprocessable(f"a scheduled maintenance cannot be {status!r}")
        values = _maintenance_fields(inner, mapping)
        if "scheduled_until" not in values:
            raise Unprocessable("incident.scheduled_until is required with scheduled_for")
        async with call.conn.transaction():
            incident_id = await maintenances_ops.schedule(call.conn, values, call.now, call.actor)
            if status not in (None, "scheduled"):
                await maintenances_ops.update_maintenance(
                    call.conn, incident_id, {"status": status}, call.now, call.actor
                )
        return 201, await _incident(call, incident_id)
    if status not in (None, *INCIDENT_STATES):
        raise Unprocessable(f"an incident cannot be {status!r}")
    values = _incident_fields(inner, mapping)
    resolved = values.get("status") == "resolved" or bool(inner.get("backfilled"))
    if resolved:
        values.pop("status", None)
    async with call.conn.transaction():
        incident_id = await incidents_ops.open_incident(call.conn, values, call.now, call.actor)
        if resolved:
            await incidents_ops.update_incident(
                call.conn, incident_id, {"status": "resolved"}, call.now, call.actor
            )
    return 201, await _incident(call, incident_id)


async def update_incident(call: Call) -> tuple[int, Any]:
    incident_id = call.param("incident_id")
    row = await fetchrow(call.conn, KIND_SQL, id=incident_id)
    if row is None:
        raise NotFound(f"no incident {incident_id}")
    inner = _wrapped(call, "incident")
    _check_name(inner, required=False)
    status = inner.get("status")
    mapping = await _component_map(call, inner)
    if row["kind"] == "maintenance":
        if status is not None and status not in MAINTENANCE_STATES:
            raise Unprocessable(f"a scheduled maintenance cannot be {status!r}")
        values = _maintenance_fields(inner, mapping)
        if status is not None:
            values["status"] = status
        await maintenances_ops.update_maintenance(call.conn, incident_id, values, call.now, call.actor)
    else:
        if status is not None and status not in INCIDENT_STATES:
            raise Unprocessable(f"an incident cannot be {status!r}")
        values = _incident_fields(inner, mapping)
        if values.get("status") == row["status"] and "body" not in values and "components" not in values:
            values.pop("status")
        if values:
            await incidents_ops.update_incident(call.conn, incident_id, values, call.now, call.actor)
    return 200, await _incident(call, incident_id)


async def delete_incident(call: Call) -> tuple[int, Any]:
    incident_id = call.param("incident_id")
    before = await _incident(call, incident_id)
    async with call.conn.transaction():
        for statement in DELETE_INCIDENT_SQL:
            await execute(call.conn, statement, id=incident_id)
        await audit.record(
            call.conn, call.now, call.actor, "incident.delete", "incident", target_id=incident_id, details={}
        )
    return 200, before


async def edit_update(call: Call) -> tuple[int, Any]:
    incident_id, update_id = call.param("incident_id"), call.param("incident_update_id")
    if await fetchrow(call.conn, UPDATE_ROW_SQL, id=update_id, incident_id=incident_id) is None:
        raise NotFound(f"no incident update {update_id}")
    inner = _wrapped(call, "incident_update")
    body = inner.get("body")
    if body is not None and (not isinstance(body, str) or not body.strip() or len(body) > 25_000):
        raise Unprocessable("incident_update.body must be 1 to 25000 characters")
    notify = inner.get("deliver_notifications")
    display_at = _timestamp("display_at", inner.get("display_at"))
    async with call.conn.transaction():
        await execute(
            call.conn,
            EDIT_UPDATE_SQL,
            id=update_id,
            body=body,
            display_at=None if display_at is None else dt.datetime.fromisoformat(display_at),
            notify=notify if isinstance(notify, bool) else None,
            now=call.now,
        )
        await audit.record(
            call.conn,
            call.now,
            call.actor,
            "incident_update.edit",
            "incident",
            target_id=incident_id,
            details=inner,
        )
    found = await _incident(call, incident_id)
    return 200, next(update for update in found["incident_updates"] if update["id"] == update_id)


PAGE = "/v1/pages/{page_id}"
ROUTES = [
    *route("/v1/pages", ["GET"], list_pages),
    *route(PAGE, ["GET"], get_page),
    *route(f"{PAGE}/components", ["GET"], list_components),
    *route(f"{PAGE}/components", ["POST"], create_component),
    *route(f"{PAGE}/components/{{component_id}}", ["GET"], get_component),
    *route(f"{PAGE}/components/{{component_id}}", ["PATCH", "PUT"], update_component),
    *route(f"{PAGE}/components/{{component_id}}", ["DELETE"], delete_component),
    *route(f"{PAGE}/component-groups", ["GET"], list_groups),
    *route(f"{PAGE}/component-groups", ["POST"], create_group),
    *route(f"{PAGE}/component-groups/{{id}}", ["GET"], get_group),
    *route(f"{PAGE}/component-groups/{{id}}", ["PATCH", "PUT"], update_group),
    *route(f"{PAGE}/component-groups/{{id}}", ["DELETE"], delete_group),
    *route(f"{PAGE}/incidents", ["GET"], list_incidents),
    *route(f"{PAGE}/incidents", ["POST"], create_incident),
    *route(f"{PAGE}/incidents/unresolved", ["GET"], list_unresolved),
    *route(f"{PAGE}/incidents/scheduled", ["GET"], list_scheduled),
    *route(f"{PAGE}/incidents/upcoming", ["GET"], list_upcoming),
    *route(f"{PAGE}/incidents/active_maintenance", ["GET"], list_active_maintenance),
    *route(f"{PAGE}/incidents/{{incident_id}}", ["GET"], get_incident),
    *route(f"{PAGE}/incidents/{{incident_id}}", ["PATCH", "PUT"], update_incident),
    *route(f"{PAGE}/incidents/{{incident_id}}", ["DELETE"], delete_incident),
    *route(
        f"{PAGE}/incidents/{{incident_id}}/incident_updates/{{incident_update_id}}", ["PATCH", "PUT"], edit_update
    ),
]
"""Literal segments (``unresolved``, ``scheduled``, ...) come before ``{incident_id}``."""
