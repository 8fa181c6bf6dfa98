"""The evaluator's rules, pure: a component's automatic status from the mirror's evidence, with the reason in
words and the evidence as data.

* A consensus node (:func:`node_verdict`), over its newest ``window`` files (those whose book held the node):
  ``major_outage`` after ``missed_major`` consecutive files without its signature, ``partial_outage`` when its
  newest signature (on the newest file that has one) failed verification, ``degraded_performance`` after
  ``missed_degraded`` consecutive missed files, else ``operational``.
* The importer (:func:`importer_verdict`), by the lag (the clock minus the newest consensus end):
  ``major_outage`` from ``stall_seconds`` (the stream, or the importer, stopped), ``degraded_performance`` from
  ``lag_degraded_seconds``, else ``operational``; ``degraded_performance`` before any file (nothing to measure
  is never shown as operational).
* A service (:func:`readiness_verdict`): ``operational`` when its readiness probe answers ready, else
  ``major_outage``.

Thresholds come from :class:`Rules` (the service's settings), overridden per component by its ``rules``
object (same names).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ledgermirror.db.evidence import Evidence

NANOS = 1_000_000_000


@dataclass(frozen=True, slots=True)
class Rules:
    window: int = 30
    """Files a node's verdict looks back over."""
    missed_degraded: int = 3
    missed_major: int = 10
    lag_degraded_seconds: int = 60
    stall_seconds: int = 300

    def overridden(self, overrides: Mapping[str, Any]) -> Rules:
        """These rules with a component's overrides (unknown names and non-positive values are ignored)."""
        known = {field.name for field in dataclasses.fields(self)}
        given = {
            name: value for name, value in overrides.items() if name in known and type(value) is int and value > 0
        }
        return dataclasses.replace(self, **given)


RULE_NAMES = tuple(field.name for field in dataclasses.fields(Rules))


@dataclass(frozen=True, slots=True)
class Verdict:
    status: str
    reason: str | None
    """Why, in words (None when operational)."""
    evidence: dict[str, Any]


def _files(count: int) -> str:
    return f"{count} file" if count == 1 else f"{count} files"


def node_verdict(node_id: int, account: str, newest_first: Sequence[Evidence], rules: Rules) -> Verdict:
    """The status of consensus node ``node_id`` from the newest evidence rows (newest first)."""
    rows = [
        row
        for row in newest_first
        if node_id in row.valid_nodes or node_id in row.failed_nodes or node_id in row.missing_nodes
    ][: rules.window]
    if not rows:
        return Verdict("operational", None, {"files": 0})
    consecutive = 0
    for row in rows:
        if node_id not in row.missing_nodes:
            break
        consecutive += 1
    missed = sum(1 for row in rows if node_id in row.missing_nodes)
    failed = sum(1 for row in rows if node_id in row.failed_nodes)
    newest = rows[0]
    evidence = {
        "files": len(rows),
        "missed": missed,
        "consecutive_missed": consecutive,
        "failed": failed,
        "newest_file": newest.name,
        "newest_consensus_end": newest.consensus_end,
        "first_file": rows[-1].name,
    }
    missed_words = f"node {account}: missed {missed} of the last {_files(len(rows))}"
    if consecutive >= rules.missed_major:
        return Verdict("major_outage", f"{missed_words} ({consecutive} in a row)", evidence)
    present = next((row for row in rows if node_id not in row.missing_nodes), None)
    if present is not None and node_id in present.failed_nodes:
        return Verdict(
            "partial_outage",
            f"node {account}: signature failed verification on {failed} of the last {_files(len(rows))}",
            evidence,
        )
    if consecutive >= rules.missed_degraded:
        return Verdict("degraded_performance", f"{missed_words} ({consecutive} in a row)", evidence)
    return Verdict("operational", None, evidence)


def importer_verdict(
    now_ns: int, newest_consensus_end: int | None, newest_imported_at: int | None, rules: Rules
) -> Verdict:
    """The importer's status from the newest file's consensus end (and, as evidence, when it was imported;
    nanoseconds). A stream that stops and an importer that stops look alike here: both leave the newest
    consensus time behind the clock."""
    if newest_consensus_end is None:
        return Verdict("degraded_performance", "importer: no record file imported yet", {"files": 0})
    lag = max(now_ns - newest_consensus_end, 0) // NANOS
    evidence: dict[str, Any] = {"lag_seconds": lag, "newest_consensus_end": newest_consensus_end}
    if newest_imported_at is not None:
        evidence["imported_at"] = newest_imported_at
    if lag >= rules.stall_seconds:
        return Verdict(
            "major_outage",
            f"importer: no new consensus time for {lag} s (the stream stopped, or the importer)",
            evidence,
        )
    if lag >= rules.lag_degraded_seconds:
        return Verdict(
            "degraded_performance", f"importer: the newest consensus time is {lag} s behind the clock", evidence
        )
    return Verdict("operational", None, evidence)


def readiness_verdict(service: str, ready: bool, detail: str) -> Verdict:
    """A service's status from its readiness probe."""
    if ready:
        return Verdict("operational", None, {"ready": True})
    return Verdict("major_outage", f"{service}: not ready ({detail})", {"ready": False, "detail": detail})
