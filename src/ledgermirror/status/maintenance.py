"""How scheduled maintenances move by time alone (pure functions of the stored state and "now").

Stored state changes only when an operator acts; the public state is derived at read time, so the read-only
public endpoints need no writer: Scheduled -> In Progress at ``scheduled_for`` (when ``auto_in_progress``),
then at ``scheduled_until`` -> Completed (when ``auto_completed``) or Verifying (left for an operator to
complete). While in progress, the maintenance's components are shown under maintenance.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from ledgermirror.status.wire import derived_id

AUTO_BODIES = {
    "in_progress": "Scheduled maintenance is currently in progress. We will provide updates as necessary.",
    "verifying": "Verification is currently underway for the maintenance items.",
    "completed": "The scheduled maintenance has been completed.",
}


@dataclass(frozen=True, slots=True)
class Window:
    id: str
    status: str
    scheduled_for: dt.datetime
    scheduled_until: dt.datetime
    auto_in_progress: bool
    auto_completed: bool


@dataclass(frozen=True, slots=True)
class Transition:
    """An automatic move that has happened by "now" (rendered as a synthetic incident update)."""

    id: str
    status: str
    at: dt.datetime


def transitions(window: Window, now: dt.datetime) -> list[Transition]:
    """The automatic moves of one maintenance that have happened by ``now``, oldest first."""
    moves: list[tuple[str, dt.datetime]] = []
    status = window.status
    if status == "scheduled" and window.auto_in_progress and now >= window.scheduled_for:
        status = "in_progress"
        moves.append((status, window.scheduled_for))
    if status == "in_progress" and now >= window.scheduled_until:
        status = "completed" if window.auto_completed else "verifying"
        moves.append((status, window.scheduled_until))
    return [Transition(derived_id(window.id, name, at.isoformat()), name, at) for name, at in moves]


def effective_status(window: Window, now: dt.datetime) -> str:
    moves = transitions(window, now)
    return moves[-1].status if moves else window.status


def is_upcoming(status: str) -> bool:
    return status == "scheduled"


def is_active(status: str) -> bool:
    return status in ("in_progress", "verifying")


def is_open(status: str) -> bool:
    """Shown in summary.json: upcoming or under way."""
    return status != "completed"
