"""Per-component uptime per day (90 days by default), from ``status.component_status_history``.

The rule (the Statuspage weighting; see ``docs/status.md``): within a day, time in ``major_outage`` counts fully
as down, time in ``partial_outage`` counts 30 % as down, time in ``degraded_performance``, ``under_maintenance``
or ``operational`` counts as up. A day's uptime is ``1 - weighted_down / observed`` where ``observed`` is the
part of the day during which the component existed (its first history row) and that is not in the future. A day
with nothing observed has no uptime (``None``: shown as "no data", never as green). Each day also keeps the worst
status seen in it, so a short outage still colours its bar.

:func:`daily_uptime` is pure; :func:`read_history` is the (index-backed) query that feeds it.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from zoneinfo import ZoneInfo

from ledgermirror.status.db import Conn, fetch
from ledgermirror.status.model import MAJOR, OPERATIONAL, PARTIAL, worst_status

DAYS = 90
DOWN_WEIGHT = {MAJOR: 1.0, PARTIAL: 0.3}
"""Share of a second counted as down, per status; every other status counts as up."""


@dataclass(frozen=True, slots=True)
class Change:
    """The component's status became ``status`` at ``at``."""

    at: dt.datetime
    status: str


@dataclass(frozen=True, slots=True)
class Day:
    date: dt.date
    uptime: float | None
    """Share of the observed part of the day counted as up (0..1), None when nothing was observed."""
    worst: str | None
    """The worst status held at any time in the day (None when nothing was observed)."""
    observed_seconds: float
    down_seconds: float
    """Weighted seconds down."""


def day_bounds(now: dt.datetime, zone: str, days: int = DAYS) -> list[tuple[dt.date, dt.datetime, dt.datetime]]:
    """The last ``days`` calendar days in ``zone`` ending with today's: (date, start, end), oldest first."""
    tz = ZoneInfo(zone)
    today = now.astimezone(tz).date()
    bounds = []
    for back in range(days - 1, -1, -1):
        day = today - dt.timedelta(days=back)
        start = dt.datetime.combine(day, dt.time(), tz)
        end = dt.datetime.combine(day + dt.timedelta(days=1), dt.time(), tz)
        bounds.append((day, start, end))
    return bounds


def daily_uptime(
    changes: Sequence[Change], now: dt.datetime, zone: str = "Etc/UTC", days: int = DAYS
) -> list[Day]:
    """Uptime of one component for each of the last ``days`` days (oldest first).

    ``changes`` is the component's history (any order); the component does not exist before its first change.
    Changes after ``now`` are ignored.
    """
    ordered = sorted((change for change in changes if change.at <= now), key=lambda change: change.at)
    result = []
    for day, start, day_end in day_bounds(now, zone, days):
        end = min(day_end, now)
        observed = down = 0.0
        seen: list[str] = []
        for status, seg_start, seg_end in _segments(ordered, now):
            lo, hi = max(seg_start, start), min(seg_end, end)
            if hi <= lo:
                continue
            seconds = (hi - lo).total_seconds()
            observed += seconds
            down += seconds * DOWN_WEIGHT.get(status, 0.0)
            seen.append(status)
        if observed <= 0.0:
            result.append(Day(day, None, None, 0.0, 0.0))
        else:
            result.append(Day(day, 1.0 - down / observed, worst_status(seen), observed, down))
    return result


def _segments(ordered: Sequence[Change], now: dt.datetime) -> Iterable[tuple[str, dt.datetime, dt.datetime]]:
    for index, change in enumerate(ordered):
        end = ordered[index + 1].at if index + 1 < len(ordered) else now
        yield change.status, change.at, end


def overall(days: Sequence[Day]) -> float | None:
    """Uptime over several days, weighted by observed time (None when nothing was observed)."""
    observed = sum(day.observed_seconds for day in days)
    if observed <= 0.0:
        return None
    return 1.0 - sum(day.down_seconds for day in days) / observed


def combine(members: Sequence[Sequence[Day]]) -> list[Day]:
    """A group's days from its children's: observed and down time added up, worst status of any child."""
    if not members:
        return []
    result = []
    for column in zip(*members, strict=True):
        observed = sum(day.observed_seconds for day in column)
        down = sum(day.down_seconds for day in column)
        seen = [day.worst for day in column if day.worst is not None]
        worst = worst_status(seen) if seen else None
        uptime = None if observed <= 0.0 else 1.0 - down / observed
        result.append(Day(column[0].date, uptime, worst, observed, down))
    return result


HISTORY_SQL = """
select c.id as component_id, h.new_status, h.changed_at
from status.component c
cross join lateral (
    (select new_status, changed_at from status.component_status_history
     where component_id = c.id and changed_at < {since} order by changed_at desc limit 1)
    union all
    (select new_status, changed_at from status.component_status_history
     where component_id = c.id and changed_at >= {since} order by changed_at)
) h
where not c.is_group
"""
"""Per component: the last change before the window (the state it entered with) and every change in it; both
branches are range scans of the ``(component_id, changed_at)`` index."""


async def read_history(conn: Conn, since: dt.datetime) -> dict[str, list[Change]]:
    """Component id -> the changes :func:`daily_uptime` needs for a window starting at ``since``."""
    found: dict[str, list[Change]] = {}
    for row in await fetch(conn, HISTORY_SQL, since=since):
        found.setdefault(row["component_id"], []).append(Change(row["changed_at"], row["new_status"]))
    return found


def fallback(created_at: dt.datetime, status: str = OPERATIONAL) -> list[Change]:
    """History for a component that has none (made outside the management code): its status since creation."""
    return [Change(created_at, status)]
