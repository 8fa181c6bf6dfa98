"""Roll-ups as pure functions: the page's indicator and text, a group's status, an incident's impact."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from ledgermirror.status.model import (
    DEGRADED,
    DESCRIPTIONS,
    IMPACT_OF_STATUS,
    IMPACT_RANK,
    MAJOR,
    OPERATIONAL,
    PARTIAL,
    UNDER_MAINTENANCE,
    worst_impact,
    worst_status,
)


class Overall(NamedTuple):
    indicator: str
    description: str


def component_rollup(statuses: Sequence[str]) -> Overall:
    """Indicator and text from the statuses of the non-group components (first matching rule wins)."""
    if not statuses:
        return Overall("none", "All Systems Operational")
    present = set(statuses)
    if present == {MAJOR}:
        return Overall("critical", "Major System Outage")
    if MAJOR in present or present == {PARTIAL}:
        return Overall("major", "Partial System Outage")
    if PARTIAL in present:
        return Overall("minor", "Minor Service Outage")
    if present == {DEGRADED}:
        return Overall("minor", "Degraded System Service")
    if DEGRADED in present:
        return Overall("minor", "Partially Degraded Service")
    if UNDER_MAINTENANCE in present:
        return Overall("maintenance", "Service Under Maintenance")
    return Overall("none", "All Systems Operational")


def overall(statuses: Sequence[str], unresolved_impacts: Sequence[str], *, superset: bool = True) -> Overall:
    """The page's roll-up: the component-derived level, raised to the worst unresolved incident impact.

    With ``superset`` false the ``maintenance`` indicator is not used (``none`` with its text instead).
    """
    derived = component_rollup(statuses)
    level = "none" if derived.indicator == "maintenance" else derived.indicator
    incident_level = worst_impact(list(unresolved_impacts))
    if IMPACT_RANK[incident_level] > IMPACT_RANK[level]:
        return Overall(incident_level, DESCRIPTIONS[incident_level])
    if derived.indicator == "maintenance" and not superset:
        return Overall("none", derived.description)
    return derived


def group_status(children: Sequence[str]) -> str:
    """A group's status: its worst child (operational when it has none)."""
    return worst_status(list(children))


def incident_impact(affected: Sequence[str], override: str | None = None, peak: str = "none") -> str:
    """An incident's impact: an override wins; else the worst affected component's level, never below ``peak``."""
    if override is not None:
        return override
    derived = worst_impact([IMPACT_OF_STATUS[status] for status in affected])
    return worst_impact([derived, peak])


def effective_component_status(stored: str, under_maintenance: bool) -> str:
    """A component's shown status: an in-progress maintenance turns an operational component under_maintenance."""
    if under_maintenance and stored == OPERATIONAL:
        return UNDER_MAINTENANCE
    return stored
