"""Writing a batch: its segments in order through ``db/`` (COPY, upserts, running values, deferred steps) in
one database transaction (see :mod:`.batch`). Consecutive segments are written as one where their deferred steps
allow it (:func:`coalesce`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import asyncpg

from ledgermirror.db import running, write
from ledgermirror.db.schema import TABLES
from ledgermirror.db.schema import table as table_model
from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch, Segment, Step, add_delta, closes_balance
from ledgermirror.importer.handlers.entity_stakes import update_entity_stakes

_UPSERT_FIRST = ("entity",)
_UPSERT_LAST = ("token", "token_account", "nft")  # the reference's flush order (DomainClassComparator)


def _upsert_order(names: list[str]) -> list[str]:
    middle = [name for name in names if name not in _UPSERT_FIRST and name not in _UPSERT_LAST]
    return [
        *(name for name in _UPSERT_FIRST if name in names),
        *middle,
        *(name for name in _UPSERT_LAST if name in names),
    ]


def _copies(appended: dict[str, list[Any]]) -> list[write.CopyChunk]:
    """The hoisted rows encoded for binary COPY (dicts by column name, or the value tuples of a ``RECORD_COLUMNS``
    table), one COPY per target table and set of columns for the whole batch."""
    copies: list[write.CopyChunk] = []
    for name, rows in appended.items():
        columns = RECORD_COLUMNS.get(name)
        copies.extend(write.encode(name, rows) if columns is None else write.encode_records(name, columns, rows))
    return copies


def _add(total: dict[str, int], more: dict[str, int] | None) -> None:
    for name, count in (more or {}).items():
        total[name] = total.get(name, 0) + count


class _Touched:
    """What the held steps of a write touch in one table, as one set: keys, or prefixes of keys (every row under
    one). Kept as steps join, so that asking whether a later segment's keys meet them costs the same however
    many steps the write holds."""

    __slots__ = ("keys", "lengths")

    def __init__(self) -> None:
        self.keys: set[tuple[Any, ...]] = set()
        self.lengths: set[int] = set()

    def add(self, touched: Iterable[tuple[Any, ...]]) -> None:
        for key in touched:
            self.keys.add(key)
            self.lengths.add(len(key))

    def overlaps(self, keys: Iterable[tuple[Any, ...]]) -> bool:
        """Whether a key of ``keys`` is, or falls under, one of these."""
        held = self.keys
        return any(key[:length] in held for length in self.lengths for key in keys)


@dataclass(slots=True)
class Written:
    """Consecutive segments written as one: their rows together, then their steps in order."""

    rows: Segment
    steps: list[Segment] = field(default_factory=list)
    """The segments whose steps run after ``rows``, in order (added by :meth:`hold`)."""
    touched: dict[str, _Touched | None] = field(default_factory=dict)
    """What the steps touch, by table, gathered from every step that says (None: any row of the table)."""
    unsaid: bool = False
    """Whether a step does not say what it touches (it may touch anything)."""
    after: dict[str, set[tuple[Any, ...]]] = field(default_factory=dict)
    """:func:`_applied_after_rows` of ``rows``, kept as segments join."""
    late_token_balances: dict[tuple[int, int], list[int]] = field(default_factory=dict)
    """Token balance deltas of joined segments on keys a held step touches: applied after the steps (an airdrop
    claim's association step, then the claim's own transfer of the token)."""
    planned: Planned | None = None
    """:func:`plan_merges` of ``rows``, once the batch is planned (:func:`plan_batch`)."""

    def hold(self, segment: Segment) -> None:
        """Run ``segment``'s step after the rows, after the steps held before it."""
        self.steps.append(segment)
        if segment.touches is None:
            self.unsaid = True
            return
        for name, keys in segment.touches.items():
            if name in self.touched and self.touched[name] is None:
                continue
            if keys is None:
                self.touched[name] = None
                continue
            held = self.touched.get(name)
            if held is None:
                held = self.touched[name] = _Touched()
            held.add(keys)


_HISTORY_TWINS = frozenset(model.history_name for model in TABLES.values() if model.history)

_KEYS = {
    "entity": ("id",),
    "node": ("node_id",),
    "token_account": ("account_id", "token_id"),
    "crypto_allowance": ("owner", "spender"),
    "token_allowance": ("owner", "spender", "token_id"),
}


def _add_keys(found: dict[str, set[tuple[Any, ...]] | None], name: str, keys: Iterable[tuple[Any, ...]]) -> None:
    held = found.setdefault(name, set())
    if held is not None:
        held.update(keys)


def keys_of(segment: Segment, *, token_balances: bool = True) -> dict[str, set[tuple[Any, ...]] | None]:
    """What a segment's rows write or read (not its step's): table -> keys of the rows, None for any row.
    Appended rows count as any row of their table, except closed versions appended to a history twin: a step only
    adds to a history twin too, and additions commute (its table's rows are what a step touches)."""
    found: dict[str, set[tuple[Any, ...]] | None] = {}
    for name in segment.inserts:
        if name not in _HISTORY_TWINS:
            found[name] = None
    for name, rows in segment.upserts.items():
        key = table_model(name).key
        _add_keys(found, name, (tuple(row[column] for column in key) for row in rows))
    _add_keys(found, "entity", ((entity,) for entity in segment.entity_balances))
    if token_balances:
        _add_keys(found, "token_account", segment.token_balances)
    for owner, spender, token in segment.allowance_debits:
        if token is None:
            _add_keys(found, "crypto_allowance", [(owner, spender)])
        else:
            _add_keys(found, "token_allowance", [(owner, spender, token)])
    return found


class _KeysOf:
    """:func:`keys_of` a segment (``token_balances=False``), a table's keys collected only when asked for: a
    held step touches a few tables, and the segment's balances hold every account its transfers name."""

    __slots__ = ("_keys", "_segment")

    def __init__(self, segment: Segment) -> None:
        self._segment = segment
        self._keys: dict[str, set[tuple[Any, ...]] | None] = {}

    def holds(self, name: str) -> bool:
        """Whether ``keys_of`` would name the table."""
        segment = self._segment
        if (name in segment.inserts and name not in _HISTORY_TWINS) or name in segment.upserts:
            return True
        if name == "entity":
            return True  # keys_of always adds the entity balances' keys, perhaps none
        if name in ("crypto_allowance", "token_allowance"):
            crypto = name == "crypto_allowance"
            return any((token is None) == crypto for _, _, token in segment.allowance_debits)
        return False

    def keys(self, name: str) -> set[tuple[Any, ...]] | None:
        """``keys_of(segment, token_balances=False)[name]`` for a table :meth:`holds` names."""
        if name in self._keys:
            return self._keys[name]
        segment = self._segment
        found: set[tuple[Any, ...]] | None
        if name in segment.inserts and name not in _HISTORY_TWINS:
            found = None
        else:
            found = set()
            if name in segment.upserts:
                key = table_model(name).key
                found.update(tuple(row[column] for column in key) for row in segment.upserts[name])
            if name == "entity":
                found.update((entity,) for entity in segment.entity_balances)
            elif name == "crypto_allowance":
                found.update(key[:2] for key in segment.allowance_debits if key[2] is None)
            elif name == "token_allowance":
                found.update(key for key in segment.allowance_debits if key[2] is not None)
        self._keys[name] = found
        return found


def _overlap(touched: frozenset[tuple[Any, ...]], keys: set[tuple[Any, ...]]) -> bool:
    """Whether a key of ``keys`` is, or falls under, a key of ``touched`` (a prefix: every row under it)."""
    return any(key[:length] in touched for length in {len(key) for key in touched} for key in keys)


def _applied_after_rows(held: Segment) -> dict[str, set[tuple[Any, ...]]]:
    """Keys whose row ``held`` changes after its upserts (running values, cleared sentinels): writing a later
    segment's upserts of those keys first would change the result. Entity balances are not among them: a later
    upsert of such an entity starts a phase of the write instead (:attr:`Segment.entity_phases`)."""
    return {
        "entity": {(row["id"],) for row in held.upserts.get("entity", ()) if row.get("public_key") == ""},
        "node": {
            (row["node_id"],)
            for row in held.upserts.get("node", ())
            if (row.get("grpc_proxy_endpoint") or {}).get("port") == -1
        },
        "token_account": set(held.token_balances),
        "crypto_allowance": {(owner, spender) for owner, spender, token in held.allowance_debits if token is None},
        "token_allowance": {key for key in held.allowance_debits if key[2] is not None},
    }


def _late_keys(written: Written, later: Segment) -> set[tuple[Any, ...]]:
    """``later``'s token balance keys that a held step touches (applied after the steps if ``later`` joins)."""
    if not later.token_balances or "token_account" not in written.touched:
        return set()
    touched = written.touched["token_account"]
    if touched is None:
        return set(later.token_balances)
    return {key for key in later.token_balances if touched.overlaps((key,))}


def _may_join(written: Written, later: Segment) -> bool:
    """Whether ``later``'s rows may be written with ``written``'s, before its steps, with the same result: every
    step held says what it touches and ``later``'s rows touch none of it (but token balances, which then wait
    for the steps: :func:`_late_keys`, unless ``later``'s own step touches one of the keys waiting), and
    ``later`` upserts no key whose row ``written`` changes after its upserts."""
    if written.steps:
        found = _KeysOf(later)
        late = _late_keys(written, later) | set(written.late_token_balances)
        if late and later.step is not None:
            own = None if later.touches is None else later.touches.get("token_account", frozenset())
            if own is None or _overlap(own, late):
                return False
        if written.unsaid:
            return False
        for name, touched in written.touched.items():
            if not found.holds(name):
                continue
            keys = found.keys(name)
            if touched is None or keys is None or touched.overlaps(keys):
                return False
    for name, held in written.after.items():
        if held and name in later.upserts and held & _upserted(later, name, _KEYS[name]):
            return False
    return True


def _upserted(segment: Segment, name: str, key: tuple[str, ...]) -> set[tuple[Any, ...]]:
    return {tuple(row[column] for column in key) for row in segment.upserts.get(name, ())}


def _join(rows: Segment, later: Segment, late: dict[tuple[int, int], list[int]] | None = None) -> None:
    """Add ``later``'s rows to ``rows`` (rows in order; running deltas summed, the later timestamp kept); token
    balance deltas of the keys in ``late`` go there instead."""
    for name, inserted in later.inserts.items():
        rows.inserts.setdefault(name, []).extend(inserted)
    offset = len(rows.upserts.get("entity", ()))
    rows.entity_phases.extend((offset + at, due) for at, due in later.entity_phases)
    for name, upserted in later.upserts.items():
        rows.upserts.setdefault(name, []).extend(upserted)
    balances = rows.entity_balances
    for entity, later_held in later.entity_balances.items():  # add_delta inline: a key for every account paid
        held = balances.get(entity)
        if held is None:
            balances[entity] = [later_held[0], later_held[1]]
        else:
            held[0] += later_held[0]
            held[1] = later_held[1]
    for pair, (delta, stamp) in later.token_balances.items():
        add_delta(late if late is not None and pair in late else rows.token_balances, pair, delta, stamp)
    for debit, amount in later.allowance_debits.items():
        rows.allowance_debits[debit] = rows.allowance_debits.get(debit, 0) + amount


def coalesce(segments: list[Segment]) -> list[Written]:
    """The segments as fewer writes: a segment joins the write before it when :func:`_may_join` allows. Each
    step still runs after the rows gathered before it and before the rows of any table it touches that were
    gathered after it; the running values of a key still follow the upserts before them and precede the later
    ones."""
    written: list[Written] = []
    for segment in segments:
        if not written or not _may_join(written[-1], segment):
            written.append(Written(Segment()))
        part = written[-1]
        _start_entity_phase(part, segment)
        for key in _late_keys(part, segment):
            part.late_token_balances.setdefault(key, [0, 0])
        _join(part.rows, segment, part.late_token_balances)
        for name, keys in _applied_after_rows(segment).items():
            part.after.setdefault(name, set()).update(keys)
        if segment.step is not None:
            written[-1].hold(segment)
    return written


def _start_entity_phase(part: Written, later: Segment) -> None:
    """Before ``later`` joins ``part``: the balance deltas gathered so far of the entities ``later`` upserts
    become a phase, applied before ``later``'s upserts (their history rows close the balance with them). A
    partial update that neither makes a history row nor sets the balance (an EVM nonce) commutes with the
    deltas and starts none (``batch.closes_balance``)."""
    pending = part.rows.entity_balances
    if not pending:
        return
    upserted = {row["id"] for row in later.upserts.get("entity", ()) if closes_balance(row)}
    due = {key: pending.pop(key) for key in upserted & pending.keys()}
    if due:
        part.rows.entity_phases.append((len(part.rows.upserts.get("entity", ())), due))


_RUNNING_TABLES = frozenset(("entity", "token_account", "crypto_allowance", "token_allowance"))


def hoisted_tables(segments: list[Segment]) -> set[str]:
    """Append-only tables whose rows of every segment may be written at once, before anything else of the
    batch: no deferred step of the batch may touch them (a step that does not say what it touches may touch
    anything), and no merge or running value reads them. Appended rows commute with one another."""
    steps = [segment for segment in segments if segment.step is not None]
    if any(segment.touches is None for segment in steps):
        return set()
    touched = {name for segment in steps for name in segment.touches or ()}
    touched |= {table_model(name).history_name for name in touched if table_model(name).history}
    kept = touched | _RUNNING_TABLES | {name for segment in segments for name in segment.upserts}
    return {name for segment in segments for name in segment.inserts if name not in kept}


async def _add_entity_balances(conn: asyncpg.Connection, balances: dict[int, list[int]]) -> int:
    return await running.add_entity_balances(
        conn, [(key, delta, stamp) for key, (delta, stamp) in balances.items()]
    )


async def _add_due(conn: asyncpg.Connection, due: dict[int, list[int]], pending: dict[int, list[int]]) -> None:
    """Balance deltas due before what follows, onto the entities the database holds; those of the others join
    ``pending``."""
    if await _add_entity_balances(conn, due) == len(due):
        return
    held = await running.entity_ids_held(conn, list(due))
    for key, (delta, stamp) in due.items():
        if key not in held:
            add_delta(pending, key, delta, stamp)


async def _add_pending(conn: asyncpg.Connection, pending: dict[int, list[int]]) -> None:
    """After ``entity`` rows are merged: the pending deltas of the entities they created."""
    if not pending:
        return
    held = await running.entity_ids_held(conn, list(pending))
    if held:
        await _add_entity_balances(conn, {key: pending.pop(key) for key in held})


Planned = dict[str, list[write.Merge | dict[int, list[int]]]]
"""A segment's merges by table, in the order they are written (:func:`plan_merges`): each table's
:class:`~ledgermirror.db.write.Merge` of its rows, or for ``entity`` with phases, its merges and the phases'
balance deltas in turn."""


Phases = list[tuple[int, dict[int, list[int]]]]
"""Balance deltas to write between ``entity`` upserts: (the index of the first row after them, entity id ->
[delta, last consensus timestamp])."""


Wave = tuple[dict[int, list[int]], list[dict[str, Any]]]
"""Balance deltas to apply, then ``entity`` rows to merge after them."""


def entity_waves(rows: list[dict[str, Any]], phases: Phases) -> list[Wave]:
    """The ``entity`` rows and the phases' deltas as few merges as the phases allow: rows of different entities
    commute, so an entity's rows go into the wave after as many of its phases as come before them, and each
    wave's merge follows the deltas of every entity's phase before it (phases of an entity with no row of it
    between them add up). One merge and one balance statement per phase of the entity with the most, instead of
    one per phase."""
    waves: list[Wave] = [({}, [])]
    wave_of: dict[int, int] = {}
    open_deltas: dict[int, list[int]] = {}
    ordered = iter(phases)
    phase = next(ordered, None)
    for index, row in enumerate(rows):
        while phase is not None and phase[0] <= index:
            for key, (delta, stamp) in phase[1].items():
                add_delta(open_deltas, key, delta, stamp)
            phase = next(ordered, None)
        key = row["id"]
        wave = wave_of.get(key, 0)
        if key in open_deltas:
            wave += 1
            wave_of[key] = wave
            if wave == len(waves):
                waves.append(({}, []))
            waves[wave][0][key] = open_deltas.pop(key)
        waves[wave][1].append(row)
    if open_deltas:  # a phase with no row of its entity after it: applied after every row
        waves.append((open_deltas, []))
    return waves


def plan_merges(segment: Segment) -> Planned:
    """The segment's upserts worked out without the database (``db.write.plan_upsert``), in the reference's
    flush order; the ``entity`` rows in waves (:func:`entity_waves` of :attr:`Segment.entity_phases`), each
    after its balance deltas."""
    planned: Planned = {}
    for name in _upsert_order(list(segment.upserts)):
        rows = segment.upserts[name]
        if name != "entity" or not segment.entity_phases:
            planned[name] = [write.plan_upsert(name, rows)]
            continue
        items: list[write.Merge | dict[int, list[int]]] = []
        for deltas, wave in entity_waves(rows, segment.entity_phases):
            if deltas:
                items.append(deltas)
            if wave:
                items.append(write.plan_upsert(name, wave))
        planned[name] = items
    return planned


async def _merge(
    conn: asyncpg.Connection,
    name: str,
    items: list[write.Merge | dict[int, list[int]]],
    pending: dict[int, list[int]],
) -> int:
    """One table's planned merges (for ``entity``, with its phases' deltas between them); rows merged."""
    taken = 0
    for item in items:
        if isinstance(item, write.Merge):
            taken += await write.write_merge(conn, item)
            if name == "entity":
                await _add_pending(conn, pending)
        else:
            await _add_due(conn, item, pending)
    return taken


async def write_segment(
    conn: asyncpg.Connection,
    segment: Segment,
    entity_balances: dict[int, list[int]] | None = None,
    steps: list[Step] | None = None,
    *,
    planned: Planned | None = None,
    pending: dict[int, list[int]] | None = None,
) -> dict[str, int]:
    """The segment's rows, upserts, running values and step (or ``steps``); ``entity_balances`` (default: the
    segment's) are the entity balance deltas to apply now, those of :attr:`Segment.entity_phases` between its
    ``entity`` upserts; ``planned``: :func:`plan_merges` of the segment, made already (by default it is made
    here).

    Deltas due before an ``entity`` row (a phase, or ``entity_balances`` before a later write's rows) of an
    entity the database does not hold yet wait in ``pending`` (kept across the writes of a batch) until the
    rows that create it are merged, and then go onto it: the version the entity starts with holds the transfers
    before its creation (a new account's funding transfer), as the reference's merge of a balance-only change
    into the version that follows gives it, wherever the batch's segments fall."""
    counts: dict[str, int] = {}
    balances = segment.entity_balances if entity_balances is None else entity_balances
    if pending is None:
        pending = {}
    _add(counts, await write.copy_chunks(conn, _copies(segment.inserts)))
    for name, items in (plan_merges(segment) if planned is None else planned).items():
        _add(counts, {name: await _merge(conn, name, items, pending)})
        rows = segment.upserts[name]
        if name == "entity":
            await running.clear_empty_public_keys(conn, [row["id"] for row in rows if row.get("public_key") == ""])
        elif name == "node":
            cleared = [row["node_id"] for row in rows if (row.get("grpc_proxy_endpoint") or {}).get("port") == -1]
            await running.clear_proxy_endpoint_sentinels(conn, cleared)
    if balances:
        await _add_due(conn, balances, pending)
    if segment.token_balances:
        await running.add_token_balances(
            conn,
            [
                (account, token, delta, stamp)
                for (account, token), (delta, stamp) in segment.token_balances.items()
            ],
        )
    if segment.allowance_debits:
        await running.add_allowance_debits(
            conn,
            [
                (owner, spender, token, amount)
                for (owner, spender, token), amount in segment.allowance_debits.items()
            ],
        )
    for step in [segment.step] if steps is None and segment.step is not None else steps or []:
        _add(counts, await step(conn))
    return counts


def _entities_upserted_after(segments: list[Segment]) -> list[set[int]]:
    """For each segment, the entity ids that a later segment of the batch upserts."""
    after: list[set[int]] = []
    seen: set[int] = set()
    for segment in reversed(segments):
        after.append(set(seen))
        seen.update(row["id"] for row in segment.upserts.get("entity", ()))
    after.reverse()
    return after


def _entity_balances(segments: list[Segment]) -> tuple[list[dict[int, list[int]]], list[tuple[int, int, int]]]:
    """:attr:`BatchPlan.balances_now` and :attr:`BatchPlan.carried` of the written segments."""
    now_by_segment: list[dict[int, list[int]]] = []
    carried: dict[int, list[int]] = {}
    for segment, later in zip(segments, _entities_upserted_after(segments), strict=True):
        now: dict[int, list[int]] = {}
        for key, (delta, stamp) in segment.entity_balances.items():
            add_delta(now if key in later else carried, key, delta, stamp)
        now_by_segment.append(now)
    return now_by_segment, [(key, delta, stamp) for key, (delta, stamp) in sorted(carried.items())]


def _hoisted_rows(segments: list[Segment], hoisted: set[str]) -> dict[str, list[Any]]:
    """The appended rows of every segment of the ``hoisted`` tables, in order, by table."""
    appended: dict[str, list[Any]] = {name: [] for name in hoisted}
    for name, rows in appended.items():
        for segment in segments:
            rows.extend(segment.inserts.get(name, ()))
    return appended


@dataclass(slots=True)
class BatchPlan:
    """What :func:`write_batch` writes, worked out without the database (:func:`plan_batch`): the overlapped
    import plans a batch in the row builder's thread, so that the background writer only writes."""

    copies: list[write.CopyChunk]
    """The hoisted append-only rows (:func:`hoisted_tables`) encoded for COPY (``db.write.encode``), one COPY per
    table for the batch: the checks and conversions done while planning, so that the writer, whose time between
    statements the server waits for, only sends them."""
    written: list[Written]
    """The coalesced writes, without the hoisted rows."""
    balances_now: list[dict[int, list[int]]]
    """For each write, the entity balance deltas applied with it: those of entities a later write upserts."""
    carried: list[tuple[int, int, int]]
    """The other entity balance deltas, summed over the batch and applied at its end in one statement: (id,
    amount, timestamp) in id order, so that the statement probes the key's index and the table's pages in
    order."""
    upserted: list[str]
    """The tables the writes merge into."""


def plan_batch(batch: Batch) -> BatchPlan:
    """The batch's hoisted rows and coalesced writes (:func:`write_batch`); the batch's own segments are left
    as they are. A batch whose synthetic logs still wait for their addresses is refused."""
    if batch.held_addresses:
        raise RuntimeError("the batch's synthetic logs wait for their addresses (lookups.complete_held_addresses)")
    hoisted = hoisted_tables(batch.segments)
    appended = _hoisted_rows(batch.segments, hoisted)
    written = coalesce(batch.segments)
    for part in written:
        for name in hoisted:
            part.rows.inserts.pop(name, None)
        part.planned = plan_merges(part.rows)
    balances_now, carried = _entity_balances([part.rows for part in written])
    return BatchPlan(
        copies=_copies(appended),
        written=written,
        balances_now=balances_now,
        carried=carried,
        upserted=sorted({name for part in written for name in part.rows.upserts}),
    )


async def write_batch(conn: asyncpg.Connection, batch: Batch, plan: BatchPlan | None = None) -> dict[str, int]:
    """Write the batch in one database transaction (the caller's, if one is open); rows written by table.

    Entity balance deltas are carried to the end of the batch and applied in one statement, except for an
    entity that a later segment upserts (created, updated, or a running value such as its nonce): its deltas
    are applied with their own segment, before that upsert (which may create the row, close its version into
    ``entity_history`` or set ``balance_timestamp``). No deferred step reads ``entity``, so the result is the
    same as applying every segment's deltas in turn, with one statement per batch instead of one per segment.
    Which deltas go where is worked out in the plan (:attr:`BatchPlan.balances_now`, :attr:`BatchPlan.carried`).

    The rows of append-only tables that nothing else in the batch reads go first, one COPY per table for the
    batch (:func:`hoisted_tables`). The segments are coalesced (:func:`coalesce`): a deferred step that says
    what it touches lets later rows that touch none of it be written with the rows before it. The merges and
    running values run in one ``db.write.bulk`` block (staging tables created once, joins by index set once).

    A batch holding a NodeStakeUpdate ends with the pending rewards of the period it ended (``entity_stakes``),
    read from the balances and entity versions written before. ``plan``: :func:`plan_batch` of the batch, made
    already (by default it is made here).
    """
    counts: dict[str, int] = {}
    if plan is None:
        plan = plan_batch(batch)
    async with conn.transaction():
        _add(counts, await write.copy_chunks(conn, plan.copies))
        async with write.bulk(conn, plan.upserted):
            pending: dict[int, list[int]] = {}
            for part, now in zip(plan.written, plan.balances_now, strict=True):
                steps = [held.step for held in part.steps if held.step is not None]
                _add(
                    counts, await write_segment(conn, part.rows, now, steps, planned=part.planned, pending=pending)
                )
                if part.late_token_balances:
                    await running.add_token_balances(
                        conn,
                        [
                            (account, token, delta, stamp)
                            for (account, token), (delta, stamp) in part.late_token_balances.items()
                        ],
                    )
            if plan.carried:
                await running.add_entity_balances(conn, plan.carried)
        if any("node_stake" in segment.inserts for segment in batch.segments):
            _add(counts, await update_entity_stakes(conn))
    return counts
