"""The status vocabulary: component statuses, incident and maintenance states, impacts and indicators."""

from __future__ import annotations

from typing import Final

OPERATIONAL: Final = "operational"
DEGRADED: Final = "degraded_performance"
PARTIAL: Final = "partial_outage"
MAJOR: Final = "major_outage"
UNDER_MAINTENANCE: Final = "under_maintenance"

COMPONENT_STATUSES: Final = (OPERATIONAL, UNDER_MAINTENANCE, DEGRADED, PARTIAL, MAJOR)
"""Every component status, from best to worst (under_maintenance ranks just above operational)."""
SETTABLE_COMPONENT_STATUSES: Final = (OPERATIONAL, DEGRADED, PARTIAL, MAJOR, UNDER_MAINTENANCE)

STATUS_RANK: Final = {status: rank for rank, status in enumerate(COMPONENT_STATUSES)}

INCIDENT_STATES: Final = ("investigating", "identified", "monitoring", "resolved", "postmortem")
UNRESOLVED_INCIDENT_STATES: Final = ("investigating", "identified", "monitoring")
MAINTENANCE_STATES: Final = ("scheduled", "in_progress", "verifying", "completed")

IMPACTS: Final = ("none", "minor", "major", "critical")
IMPACT_RANK: Final = {impact: rank for rank, impact in enumerate(IMPACTS)}

INDICATORS: Final = ("none", "minor", "major", "critical", "maintenance")

STATUS_SOURCE_MANUAL: Final = "manual"

DESCRIPTIONS: Final = {
    "none": "All Systems Operational",
    "minor": "Minor Service Outage",
    "major": "Partial System Outage",
    "critical": "Major System Outage",
    "maintenance": "Service Under Maintenance",
}
"""The canonical roll-up text for an indicator raised by an incident."""

IMPACT_OF_STATUS: Final = {
    OPERATIONAL: "none",
    UNDER_MAINTENANCE: "none",
    DEGRADED: "minor",
    PARTIAL: "major",
    MAJOR: "critical",
}


def worst_status(statuses: list[str] | tuple[str, ...]) -> str:
    """The worst of some component statuses (operational when there are none)."""
    return max(statuses, key=STATUS_RANK.__getitem__, default=OPERATIONAL)


def worst_impact(impacts: list[str] | tuple[str, ...]) -> str:
    """The worst of some impacts; ``maintenance`` counts as ``none``."""
    ranked = [impact for impact in impacts if impact in IMPACT_RANK]
    return max(ranked, key=IMPACT_RANK.__getitem__, default="none")
