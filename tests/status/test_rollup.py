"""Property tests of the roll-up rules (pure functions, no database)."""

from __future__ import annotations

import datetime as dt

from hypothesis import given
from hypothesis import strategies as st

from ledgermirror.status import maintenance, rollup
from ledgermirror.status.model import (
    COMPONENT_STATUSES,
    DESCRIPTIONS,
    IMPACT_OF_STATUS,
    IMPACT_RANK,
    IMPACTS,
    STATUS_RANK,
)

statuses = st.lists(st.sampled_from(COMPONENT_STATUSES), max_size=12)
impacts = st.lists(st.sampled_from(IMPACTS), max_size=5)
LEVEL = {"none": 0, "maintenance": 0, "minor": 1, "major": 2, "critical": 3}
TEXTS = {
    "All Systems Operational",
    "Major System Outage",
    "Partial System Outage",
    "Minor Service Outage",
    "Degraded System Service",
    "Partially Degraded Service",
    "Service Under Maintenance",
}


@given(statuses, impacts, st.booleans())
def test_indicator_never_below_worst_unresolved_impact(
    components: list[str], open_impacts: list[str], sup: bool
) -> None:
    result = rollup.overall(components, open_impacts, superset=sup)
    worst = max((IMPACT_RANK[impact] for impact in open_impacts), default=0)
    assert LEVEL[result.indicator] >= worst
    assert result.description in TEXTS
    if not sup:
        assert result.indicator != "maintenance"


@given(statuses, impacts)
def test_indicator_never_below_component_level(components: list[str], open_impacts: list[str]) -> None:
    result = rollup.overall(components, open_impacts)
    assert LEVEL[result.indicator] >= LEVEL[rollup.component_rollup(components).indicator]
    if (
        open_impacts
        and max(IMPACT_RANK[i] for i in open_impacts) > LEVEL[rollup.component_rollup(components).indicator]
    ):
        assert result.description == DESCRIPTIONS[result.indicator]


@given(statuses)
def test_component_rules(components: list[str]) -> None:
    result = rollup.component_rollup(components)
    present = set(components)
    if not present or present == {"operational"}:
        assert result == ("none", "All Systems Operational")
    elif present == {"major_outage"}:
        assert result == ("critical", "Major System Outage")
    elif "major_outage" in present:
        assert result == ("major", "Partial System Outage")
    elif present <= {"operational", "under_maintenance"}:
        assert result == ("maintenance", "Service Under Maintenance")
    else:
        assert result.indicator in ("minor", "major")
    # Worsening any one component never improves the indicator.
    for index, status in enumerate(components):
        for worse in COMPONENT_STATUSES:
            if STATUS_RANK[worse] > STATUS_RANK[status] and status != "operational":
                changed = [*components[:index], worse, *components[index + 1 :]]
                assert LEVEL[rollup.component_rollup(changed).indicator] >= LEVEL[result.indicator]


def test_single_component_texts() -> None:
    assert rollup.component_rollup(["degraded_performance"]).description == "Degraded System Service"
    assert rollup.component_rollup(["partial_outage"]) == ("major", "Partial System Outage")
    assert rollup.component_rollup(["major_outage"]) == ("critical", "Major System Outage")
    assert rollup.component_rollup(["operational", "partial_outage"]) == ("minor", "Minor Service Outage")
    assert rollup.component_rollup(["operational", "degraded_performance"]).description == (
        "Partially Degraded Service"
    )
    assert rollup.overall([], ["major"]) == ("major", "Partial System Outage")


@given(st.lists(st.sampled_from(COMPONENT_STATUSES), min_size=1, max_size=10))
def test_group_is_worst_child(children: list[str]) -> None:
    status = rollup.group_status(children)
    assert status in children
    assert all(STATUS_RANK[status] >= STATUS_RANK[child] for child in children)


def test_empty_group_is_operational() -> None:
    assert rollup.group_status([]) == "operational"


@given(statuses, st.one_of(st.none(), st.sampled_from(IMPACTS)), st.sampled_from(IMPACTS))
def test_incident_impact(affected: list[str], override: str | None, peak: str) -> None:
    impact = rollup.incident_impact(affected, override, peak)
    if override is not None:
        assert impact == override
    else:
        derived = max((IMPACT_RANK[IMPACT_OF_STATUS[s]] for s in affected), default=0)
        assert IMPACT_RANK[impact] == max(derived, IMPACT_RANK[peak])


def test_incident_impact_mapping() -> None:
    assert rollup.incident_impact(["degraded_performance"]) == "minor"
    assert rollup.incident_impact(["partial_outage", "operational"]) == "major"
    assert rollup.incident_impact(["major_outage"]) == "critical"
    assert rollup.incident_impact([]) == "none"
    assert rollup.incident_impact(["operational"], peak="major") == "major"


T0 = dt.datetime(2025, 1, 1, tzinfo=dt.UTC)


@given(
    st.sampled_from(["scheduled", "in_progress", "verifying", "completed"]),
    st.booleans(),
    st.booleans(),
    st.integers(min_value=-100, max_value=200),
)
def test_maintenance_moves_only_forward(stored: str, auto_start: bool, auto_end: bool, minutes: int) -> None:
    window = maintenance.Window("m" * 12, stored, T0, T0 + dt.timedelta(minutes=60), auto_start, auto_end)
    order = ["scheduled", "in_progress", "verifying", "completed"]
    before = maintenance.effective_status(window, T0 + dt.timedelta(minutes=minutes))
    after = maintenance.effective_status(window, T0 + dt.timedelta(minutes=minutes + 30))
    assert order.index(after) >= order.index(before) >= order.index(stored)
    moves = maintenance.transitions(window, T0 + dt.timedelta(minutes=minutes))
    assert [move.at for move in moves] == sorted(move.at for move in moves)
    assert len({move.id for move in moves}) == len(moves)
