"""Live topic messages for every subscriber of the process, read once per topic and handed to each.

The importer announces each commit with a ``NOTIFY`` (``db/commit_notify.py``); the hub ``LISTEN``s on one
connection and, at each announcement (or every ``poll_seconds`` when none comes: a missed notification, a lost
listening connection, an importer that is not ours), reads what is new for every topic that has subscribers in
one statement (``db/topic_stream.new_for_topics``: per topic, the messages after the last one it read), turns
each row into its response bytes once, and appends them to the queue of each subscriber of that topic.

A subscriber's queue is bounded: one still holding ``buffer`` messages when a read brings more is marked
``overflowed`` and ends with the reference's ``DEADLINE_EXCEEDED`` (its stream is not read fast enough).

``through`` is the newest consensus time the hub knows to be committed *and* read: announcements carry it, and
for subscriptions with an end time the polls read it from ``record_file``. It moves only after the read that
follows it has handed its rows out, so a subscriber that sees ``through >= end`` has all it needs before ``end``.

Over read replicas (``Database.replicated``) a standby sends no ``NOTIFY`` and a primary's announcement may come
before the standby has replayed the commit: the hub then reads from one member at a time (:attr:`member`, the
freshest usable one, changed only when it fails or falls behind; subscriptions read from it too), takes
``through`` from that member's own replay position (``record_file``) at every read instead of from the
announcements, and uses announcements (from a listening connection to the primary, when given) only as wake-ups:
while the member has not replayed what was announced, it reads again every :data:`REPLAY_WAIT_SECONDS`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import defaultdict

import asyncpg

from ledgermirror.db import topic_stream
from ledgermirror.db.commit_notify import CHANNEL, committed_timestamp
from ledgermirror.db.errors import DatabaseUnavailable
from ledgermirror.db.pool import Database
from ledgermirror.db.sql import Statement
from ledgermirror.grpc_api.metrics import GrpcMetrics
from ledgermirror.grpc_api.topic_messages import TopicMessage, topic_message

_log = logging.getLogger("ledgermirror.grpc")
LISTEN_CONNECT_SECONDS = 5.0
REPLAY_WAIT_SECONDS = 0.05
"""How soon the hub reads a replica again when an announced commit is not replayed there yet."""


class Wake:
    """A one-waiter event (``asyncio.Event`` keeps a deque of waiters per instance: an idle subscription holds
    one of these instead, a fraction of the memory). The subscription awaits the future :meth:`waiter` gives it
    directly, with no coroutine of its own in between (each is a frame held for as long as it is idle)."""

    __slots__ = ("_set", "_waiter")

    def __init__(self) -> None:
        self._set = False
        self._waiter: asyncio.Future[None] | None = None

    def set(self) -> None:
        self._set = True
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def clear(self) -> None:
        self._set = False

    def waiter(self) -> asyncio.Future[None] | None:
        """A future done at the next :meth:`set`, or ``None`` when already set; :meth:`forget` it after."""
        if self._set:
            return None
        self._waiter = asyncio.get_running_loop().create_future()
        return self._waiter

    def forget(self) -> None:
        self._waiter = None


class Subscriber:
    """One subscription's side of the hub: the live messages of its topic not yet sent, and its wake-up."""

    __slots__ = ("overflowed", "queue", "timed", "topic", "wake")

    def __init__(self, topic: int, timed: bool) -> None:
        self.topic = topic
        self.timed = timed
        self.queue: list[TopicMessage] = []
        """Handed over whole to the subscription, which sends it while the next reads fill a new list."""
        self.wake = Wake()
        self.overflowed = False


class _Feed:
    __slots__ = ("cursor", "subscribers")

    def __init__(self, cursor: int) -> None:
        self.cursor = cursor
        """The consensus time of the newest message of the topic read so far."""
        self.subscribers: set[Subscriber] = set()


class TopicHub:
    def __init__(
        self,
        db: Database,
        listen_dsn: str | None,
        *,
        poll_seconds: float,
        page: int,
        buffer: int,
        metrics: GrpcMetrics,
    ) -> None:
        self.db = db
        self.listen_dsn = listen_dsn
        self.poll_seconds = poll_seconds
        self.page = page
        self.buffer = buffer
        self.metrics = metrics
        self.feeds: dict[int, _Feed] = {}
        self._opening: dict[int, asyncio.Future[_Feed]] = {}
        self._timed: set[Subscriber] = set()
        self.through: int | None = None
        self._announced: int | None = None
        self._noticed = 0.0
        self._wake = asyncio.Event()
        self._listener: asyncpg.Connection | None = None
        self._task: asyncio.Task[None] | None = None
        self.closing = False
        self.trust_announcements = not db.replicated
        self.member = db.freshest()
        """The database the hub and its subscriptions read from (the only one, without replicas)."""
        self._replaying = False

    @property
    def listening(self) -> bool:
        return self._listener is not None and not self._listener.is_closed()

    async def start(self) -> None:
        await self._listen()
        self._task = asyncio.create_task(self._run(), name="topic-hub")

    async def close(self) -> None:
        """Stop reading; every subscriber is woken and sees ``closing``."""
        self.closing = True
        for feed in self.feeds.values():
            for subscriber in feed.subscribers:
                subscriber.wake.set()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        if self._listener is not None:
            with contextlib.suppress(Exception):
                await self._listener.close(timeout=2)

    # Subscribers ------------------------------------------------------------------------------------------

    async def join(self, topic: int, timed: bool) -> Subscriber:
        """A new subscriber of ``topic``: every message of the topic committed after this returns reaches its
        queue (a topic new to the hub starts reading after the topic's newest message at this moment)."""
        feed = self.feeds.get(topic)
        if feed is None:
            opening = self._opening.get(topic)
            if opening is None:
                opening = asyncio.get_running_loop().create_future()
                self._opening[topic] = opening
                try:
                    newest = await self.db.fetchval(*_args(topic_stream.newest(topic)))
                    feed = self.feeds.setdefault(topic, _Feed(int(newest)))
                    opening.set_result(feed)
                except BaseException as error:
                    opening.set_exception(error)
                    opening.exception()  # retrieved: later joins see it through their own await
                    raise
                finally:
                    del self._opening[topic]
            else:
                feed = await asyncio.shield(opening)
            feed = self.feeds.setdefault(topic, feed)
        subscriber = Subscriber(topic, timed)
        feed.subscribers.add(subscriber)
        if timed:
            self._timed.add(subscriber)
        return subscriber

    def leave(self, subscriber: Subscriber) -> None:
        self._timed.discard(subscriber)
        feed = self.feeds.get(subscriber.topic)
        if feed is None:
            return
        feed.subscribers.discard(subscriber)
        if not feed.subscribers:
            del self.feeds[subscriber.topic]

    # Reading ----------------------------------------------------------------------------------------------

    def _notified(self, conn: object, pid: int, channel: str, payload: object) -> None:
        committed = committed_timestamp(str(payload))
        if committed is not None and (self._announced is None or committed > self._announced):
            self._announced = committed
        if not self._noticed:
            self._noticed = time.monotonic()
        self._wake.set()

    def _lost(self, conn: object) -> None:
        """The listening connection ended: read now (and listen again) rather than at the next poll."""
        self._wake.set()

    async def _listen(self) -> None:
        if self.listen_dsn is None or self.listening:
            return
        try:
            conn = await asyncpg.connect(self.listen_dsn, timeout=LISTEN_CONNECT_SECONDS)
            await conn.add_listener(CHANNEL, self._notified)
            conn.add_termination_listener(self._lost)
        except (OSError, asyncpg.PostgresError, asyncpg.InterfaceError, TimeoutError) as error:
            _log.warning("cannot listen for commits; polling only", extra={"error": str(error)})
            return
        self._listener = conn
        self._wake.set()  # what was committed while nobody listened

    async def _run(self) -> None:
        while True:
            cause = "notify"
            try:
                wait = REPLAY_WAIT_SECONDS if self._replaying else self.poll_seconds
                await asyncio.wait_for(self._wake.wait(), wait)
            except TimeoutError:
                cause = "poll"
            self._wake.clear()
            if not self.listening:
                await self._listen()
            try:
                await self._read(cause)
            except DatabaseUnavailable as error:
                _log.warning("live topic read failed", extra={"error": str(error)})
                await asyncio.sleep(self.poll_seconds)
            except Exception:
                _log.exception("live topic read failed")
                await asyncio.sleep(self.poll_seconds)

    async def _read(self, cause: str) -> None:
        if not self.member.usable:
            self.member = self.db.freshest()
        with self.db.pinned(member=self.member):
            await self._read_pinned(cause)

    async def _read_pinned(self, cause: str) -> None:
        noticed = self._noticed or time.monotonic()
        self._noticed = 0.0
        through = self._announced
        if not self.trust_announcements:
            position = await self.db.fetchval(*_args(topic_stream.importer_position()))
            through = None if position is None else int(position)
            announced = self._announced
            self._replaying = announced is not None and (through is None or through < announced)
            if self._replaying:
                self._noticed = noticed  # the announced rows are still to come: keep when they were noticed
        elif cause == "poll" and self._timed:
            position = await self.db.fetchval(*_args(topic_stream.importer_position()))
            through = None if position is None else max(int(position), through or 0)
        full = False
        if self.feeds:
            self.metrics.live_reads.labels(cause).inc()
            topics = list(self.feeds)
            cursors = [self.feeds[topic].cursor for topic in topics]
            rows = await self.db.fetch(topic_stream.new_for_topics(topics, cursors, self.page))
            by_topic: defaultdict[int, list[TopicMessage]] = defaultdict(list)
            for row in rows:
                by_topic[row["topic_id"]].append(topic_message(row, row["topic_id"], noticed))
            for topic, messages in by_topic.items():
                full = full or len(messages) >= self.page
                feed = self.feeds.get(topic)
                if feed is not None:
                    feed.cursor = max(feed.cursor, messages[-1].consensus_timestamp)
                    self._hand_out(feed, messages)
        if full:
            self._wake.set()  # more than a page came: read on before claiming anything is through
            return
        if through is not None and (self.through is None or through != self.through):
            self.through = through
            for subscriber in self._timed:
                subscriber.wake.set()

    def _hand_out(self, feed: _Feed, messages: list[TopicMessage]) -> None:
        limit = self.buffer
        for subscriber in feed.subscribers:
            queue = subscriber.queue
            if len(queue) >= limit:  # it has not sent what the reads before brought
                subscriber.overflowed = True
            else:
                queue.extend(messages)
            subscriber.wake.set()


def _args(statement: Statement) -> tuple[str, *tuple[object, ...]]:
    return (statement.text, *statement.args)
