"""How fresh an answer is, and which database may give it (docs/scaling.md, "Freshness").

Every answer of a JSON endpoint carries :data:`HEADER`, ``X-Newest-Consensus-Timestamp: seconds.nanos``: the
newest consensus timestamp (the end of the newest record file) of the database that answered, as its last probe
found it (``LEDGERMIRROR_REPLICA_CHECK_SECONDS`` ago at most). The database held at least that much when it was
read, so the answer covers the ledger at least up to that instant; a client behind a load balancer compares it
between answers to see whether it was sent to a database further behind. ``Access-Control-Expose-Headers``
names it, so a browser's script may read it across origins. The headers are made once per probe that finds a new
newest timestamp (:func:`stamp`, kept on the database's ``Member``): with one database a request does no
freshness work at all.

A list's next link names the page's last row: a timestamp (``timestamp=lt:...``), an entity id
(``account.id=gt:0.0.1001``), a block number, or a key of no global order (an NFT's serial number, a hook,
a storage slot). With several databases, a request whose query string holds such bounds (:func:`floor_of`) is
read from a database that holds them (``db/pool.Database.choose``): one whose newest consensus timestamp, greatest
entity id and newest block number are at least the greatest of the query's (entity ids and block numbers grow
with consensus time, so a database holding the bound holds every row below it that the page's database held), and
for the keys of no global order one of the freshest. A replica that has not replayed the page the link came from
is skipped for that request, so following a link never loses rows or ends a list early. When none has it, the
freshest answers.
"""

from __future__ import annotations

from urllib.parse import unquote

from ledgermirror.db.replicas import Floor, Member
from ledgermirror.ledger.entity_id import EntityId, InvalidEntityId
from ledgermirror.ledger.timestamps import InvalidTimestamp, format_ns, parse_timestamp

HEADER = "x-newest-consensus-timestamp"
EXPOSE = "access-control-expose-headers"
EXPOSED = "X-Newest-Consensus-Timestamp"
"""What :data:`EXPOSE` says: the freshness header, readable by a browser's script on another origin."""

_TIMESTAMP_KEYS = frozenset({"timestamp"})
_ENTITY_KEYS = frozenset(
    {"account.id", "token.id", "contract.id", "schedule.id", "spender.id", "receiver.id", "sender.id"}
)
"""Query keys holding entity ids, the keys of the lists paged by entity id (and their secondary bounds)."""
_BLOCK_KEYS = frozenset({"block.number"})
_UNORDERED_KEYS = frozenset({"serialnumber", "hook.id", "key", "slot", "index", "node.id", "registerednode.id"})
"""Paging keys whose values grow within one parent only (one token's serial numbers, one account's hooks and
storage, one contract's slots, one transaction's actions) or not with time at all: a bound on one of them asks
for one of the freshest databases."""
_BOUNDS = ("gt:", "gte:", "lt:", "lte:")
_HINTS = ("timestamp", ".id", "block", "serialnumber", "key", "slot", "index")
"""A query string without any of these holds no bound (the common first page skips the parse)."""


def stamp(newest_ns: int) -> dict[str, str]:
    """The freshness headers of answers read from a database whose newest consensus timestamp is ``newest_ns``
    (made once per new value: ``db/replicas.Member.headers``)."""
    return {HEADER: format_ns(newest_ns) or "", EXPOSE: EXPOSED}


def headers_of(member: Member | None) -> dict[str, str]:
    """The freshness headers of an answer read from ``member`` (none while its newest timestamp is unknown)."""
    return {} if member is None else member.headers


def floor_of(query_string: str, *, shard: int = 0, realm: int = 0) -> Floor | None:
    """What a database must hold to answer ``query_string`` (None: anything will do): the greatest timestamp,
    entity id and block number it names (with or without an operator), and whether it bounds a key of no
    global order. Values that do not parse are left out (the query's parse answers them with its 400); entity
    ids in EVM or alias form are left out too (next links write ``shard.realm.num``)."""
    lowered = query_string.lower()
    if not any(hint in lowered for hint in _HINTS):
        return None
    ns: int | None = None
    entity: int | None = None
    block: int | None = None
    freshest = False
    for pair in query_string.split("&"):
        raw_key, _, raw_value = pair.partition("=")
        key = unquote(raw_key).strip().lower()
        value = unquote(raw_value).strip()
        if key in _TIMESTAMP_KEYS:
            try:
                found = parse_timestamp(value.rpartition(":")[2].strip())
            except InvalidTimestamp:
                continue
            ns = found if ns is None or found > ns else ns
        elif key in _ENTITY_KEYS:
            try:
                encoded = EntityId.parse(value.rpartition(":")[2].strip(), shard=shard, realm=realm).encoded
            except InvalidEntityId:
                continue
            entity = encoded if entity is None or encoded > entity else entity
        elif key in _BLOCK_KEYS:
            text = value.rpartition(":")[2].strip()
            if text.isdigit():
                block = int(text) if block is None or int(text) > block else block
        elif key in _UNORDERED_KEYS and value.lower().startswith(_BOUNDS):
            freshest = True
    if ns is None and entity is None and block is None and not freshest:
        return None
    return Floor(ns=ns, entity=entity, block=block, freshest=freshest)
