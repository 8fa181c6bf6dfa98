"""How fresh an answer is, and which database may give it (docs/scaling.md, "Freshness").

Every answer of a JSON endpoint carries :data:`HEADER`, ``X-Newest-Consensus-Timestamp: seconds.nanos``: the
newest consensus timestamp (the end of the newest record file) of the database that answered, as its last probe
found it (``LEDGERMIRROR_REPLICA_CHECK_SECONDS`` ago at most). The database held at least that much when it was
read, so the answer covers the ledger at least up to that instant; a client behind a load balancer compares it
between answers to see whether it was sent to a database further behind.

A list's next link names the page's last timestamp (``timestamp=lt:...`` or ``gt:...``). A request whose query
string holds a timestamp (:func:`anchor_ns`, the greatest one) is read from a database whose newest consensus
timestamp is at least that one: a replica that has not replayed the page the link came from is skipped for that
request (``db/pool.Database.choose``), so following a link never loses rows or ends a list early. When no
database has it, the freshest answers.
"""

from __future__ import annotations

from urllib.parse import unquote

from ledgermirror.db.replicas import Member
from ledgermirror.ledger.timestamps import InvalidTimestamp, format_ns, parse_timestamp

HEADER = "x-newest-consensus-timestamp"
_KEYS = frozenset({"timestamp"})


def anchor_ns(query_string: str) -> int | None:
    """The greatest consensus timestamp among the query string's ``timestamp`` values (with or without an
    operator), or None. Values that do not parse are left to the query's parse (its 400)."""
    if "timestamp" not in query_string.lower():
        return None
    greatest: int | None = None
    for pair in query_string.split("&"):
        key, _, value = pair.partition("=")
        if unquote(key).strip().lower() not in _KEYS:
            continue
        text = unquote(value).rpartition(":")[2].strip()
        try:
            found = parse_timestamp(text)
        except InvalidTimestamp:
            continue
        if greatest is None or found > greatest:
            greatest = found
    return greatest


def headers_of(member: Member | None) -> dict[str, str]:
    """The freshness header of an answer read from ``member`` (none while its newest timestamp is unknown)."""
    if member is None or member.newest_ns is None:
        return {}
    return {HEADER: format_ns(member.newest_ns) or ""}
