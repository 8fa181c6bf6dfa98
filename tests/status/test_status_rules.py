"""The evaluator's rules, pure: a node's status from its files, the importer's from its lag, thresholds by
component."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from ledgermirror.db.evidence import Evidence
from ledgermirror.status.rules import Rules, importer_verdict, node_verdict

SECOND = 1_000_000_000
RANK = {"operational": 0, "degraded_performance": 1, "partial_outage": 2, "major_outage": 3}


def _files(marks: str) -> list[Evidence]:
    """Newest first: ``v`` node 7 signed, ``f`` its signature failed, ``m`` missing, ``-`` not in the book."""
    rows = []
    for index, mark in enumerate(marks):
        valid = (7,) if mark == "v" else ()
        failed = (7,) if mark == "f" else ()
        missing = (7,) if mark == "m" else ()
        rows.append(Evidence(1000 - index, f"f{index}", 0, (1, *valid), failed, missing))
    return rows


def test_a_node_by_its_newest_files() -> None:
    rules = Rules(window=5, missed_degraded=2, missed_major=4)
    assert node_verdict(7, "0.0.10", _files(""), rules).status == "operational"
    assert node_verdict(7, "0.0.10", _files("mvvvv"), rules).status == "operational"
    degraded = node_verdict(7, "0.0.10", _files("mmvvvv"), rules)
    assert (degraded.status, degraded.reason) == (
        "degraded_performance",
        "node 0.0.10: missed 2 of the last 5 files (2 in a row)",
    )
    assert node_verdict(7, "0.0.10", _files("mmmmv"), rules).status == "major_outage"
    failing = node_verdict(7, "0.0.10", _files("fvfvv"), rules)
    assert (failing.status, failing.reason) == (
        "partial_outage",
        "node 0.0.10: signature failed verification on 2 of the last 5 files",
    )
    assert node_verdict(7, "0.0.10", _files("mfvvv"), rules).status == "partial_outage"  # failing, then silent
    assert node_verdict(7, "0.0.10", _files("--mm"), rules).evidence["files"] == 2  # files of other books skipped


def test_the_importer_by_its_lag() -> None:
    rules = Rules(lag_degraded_seconds=60, stall_seconds=300)
    assert importer_verdict(100 * SECOND, None, None, rules).status == "degraded_performance"
    assert importer_verdict(100 * SECOND, 90 * SECOND, 95 * SECOND, rules).status == "operational"
    assert importer_verdict(200 * SECOND, 90 * SECOND, None, rules).status == "degraded_performance"
    assert importer_verdict(400 * SECOND, 90 * SECOND, None, rules).status == "major_outage"


def test_overrides_take_known_positive_whole_numbers_only() -> None:
    rules = Rules().overridden({"missed_major": 20, "window": 0, "stall_seconds": 1.5, "unknown": 3})
    assert rules == Rules(missed_major=20)


@given(st.text(alphabet="vfm", max_size=40), st.integers(min_value=0, max_value=10))
def test_one_more_missed_file_never_makes_a_node_look_better(marks: str, extra: int) -> None:
    rules = Rules(window=30, missed_degraded=3, missed_major=10)
    before = node_verdict(7, "0.0.10", _files(marks), rules)
    after = node_verdict(7, "0.0.10", _files("m" * (extra + 1) + marks), rules)
    assert RANK[after.status] >= RANK[before.status]
