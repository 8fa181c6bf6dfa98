"""Uptime per day: the pure rule (weights, no-data days, day boundaries, groups) and the index-backed query."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from tests.status.harness import Status

from ledgermirror.db.sql import template
from ledgermirror.status import uptime
from ledgermirror.status.uptime import Change

NOW = dt.datetime(2025, 3, 10, 12, 0, tzinfo=dt.UTC)
DAY0 = dt.datetime(2025, 3, 9, tzinfo=dt.UTC)


def test_ninety_days_oldest_first_and_no_data_before_creation() -> None:
    days = uptime.daily_uptime([Change(DAY0, "operational")], NOW)
    assert len(days) == 90
    assert days[-1].date == dt.date(2025, 3, 10) and days[0].date == dt.date(2024, 12, 11)
    assert all(day.uptime is None and day.worst is None for day in days[:-2])
    assert days[-2].uptime == 1.0 and days[-2].observed_seconds == 86400
    assert days[-1].uptime == 1.0 and days[-1].observed_seconds == 12 * 3600  # today only up to now


def test_weights_major_full_partial_thirty_percent_degraded_up() -> None:
    changes = [
        Change(DAY0, "operational"),
        Change(DAY0 + dt.timedelta(hours=6), "major_outage"),
        Change(DAY0 + dt.timedelta(hours=8), "partial_outage"),
        Change(DAY0 + dt.timedelta(hours=18), "degraded_performance"),
        Change(DAY0 + dt.timedelta(hours=20), "under_maintenance"),
        Change(DAY0 + dt.timedelta(hours=22), "operational"),
    ]
    day = uptime.daily_uptime(changes, NOW)[-2]
    assert day.down_seconds == pytest.approx(2 * 3600 + 0.3 * 10 * 3600)
    assert day.uptime == pytest.approx(1 - (2 + 3) / 24)
    assert day.worst == "major_outage"
    assert uptime.daily_uptime(changes, NOW)[-1].uptime == 1.0


def test_outage_across_midnight_splits_between_days() -> None:
    changes = [
        Change(DAY0 - dt.timedelta(days=2), "operational"),
        Change(DAY0 - dt.timedelta(hours=6), "major_outage"),
    ]
    changes.append(Change(DAY0 + dt.timedelta(hours=6), "operational"))
    days = uptime.daily_uptime(changes, NOW)
    assert days[-3].uptime == pytest.approx(0.75) and days[-2].uptime == pytest.approx(0.75)
    assert uptime.overall(days) == pytest.approx(1 - 12 / (24 * 3 + 12))


def test_time_zone_moves_the_day_boundary() -> None:
    changes = [Change(DAY0 - dt.timedelta(days=1), "operational"), Change(DAY0, "major_outage")]
    changes.append(Change(DAY0 + dt.timedelta(hours=1), "operational"))
    utc = uptime.daily_uptime(changes, NOW, "Etc/UTC")
    chicago = uptime.daily_uptime(changes, NOW, "America/Chicago")  # 00:00Z is 18:00 the day before
    assert utc[-2].worst == "major_outage" and utc[-3].worst == "operational"
    assert chicago[-3].worst == "major_outage" and chicago[-2].worst == "operational"


def test_group_combines_children() -> None:
    good = uptime.daily_uptime([Change(DAY0, "operational")], NOW, days=3)
    bad = uptime.daily_uptime([Change(DAY0, "major_outage")], NOW, days=3)
    group = uptime.combine([good, bad])
    assert group[0].uptime is None and group[1].uptime == pytest.approx(0.5) and group[1].worst == "major_outage"
    assert uptime.combine([]) == []


STATUSES = st.sampled_from(
    ["operational", "degraded_performance", "partial_outage", "major_outage", "under_maintenance"]
)


@given(st.lists(st.tuples(st.integers(0, 10 * 86400), STATUSES), min_size=1, max_size=20))
def test_properties(raw: list[tuple[int, str]]) -> None:
    changes = [Change(NOW - dt.timedelta(seconds=offset), status) for offset, status in raw]
    days = uptime.daily_uptime(changes, NOW, days=12)
    first = min(change.at for change in changes)
    assert sum(day.observed_seconds for day in days) == pytest.approx((NOW - first).total_seconds())
    for day in days:
        assert day.uptime is None or 0.0 <= day.uptime <= 1.0
        if day.worst in ("operational", "degraded_performance", "under_maintenance"):
            assert day.uptime == 1.0
        if day.uptime is not None and day.uptime < 1.0:
            assert day.worst in ("partial_outage", "major_outage")
    if all(status != "major_outage" for _, status in raw):
        total = uptime.overall(days)
        assert total is None or total >= 0.7 - 1e-9


def test_query_reads_the_state_before_the_window_and_uses_the_index(status: Status) -> None:
    key = status.new_key()
    made = status.write("POST", "components", {"name": "REST API"}, key)["id"]
    status.clock.advance(days=100)
    status.write("PATCH", f"components/{made}", {"status": "major_outage"}, key)
    status.clock.advance(hours=1)
    status.write("PATCH", f"components/{made}", {"status": "operational"}, key)
    since = status.clock.now - dt.timedelta(days=90)

    async def read(conn: object) -> dict[str, list[Change]]:
        return await uptime.read_history(conn, since)  # type: ignore[arg-type]

    history = status.run(read)
    assert [change.status for change in history[made]] == ["operational", "major_outage", "operational"]

    async def plan(conn: object) -> str:
        await conn.execute("set enable_seqscan = off")  # type: ignore[attr-defined]
        statement = template(uptime.HISTORY_SQL, since=since)
        rows = await conn.fetch("explain " + statement.text, *statement.args)  # type: ignore[attr-defined]
        return "\n".join(row[0] for row in rows)

    assert "component_status_history__component_changed" in status.run(plan)
