"""``ConsensusService.subscribeTopic``: a topic's stored messages from the start time, then its new messages as
they are committed, in consensus order, with no gap and no repeat across the switch.

Responses are written with the call's ``write`` (no generator between the queue and the wire).

The switch: the history is read in pages until a short page; the subscription then joins the topic hub (from
then on every newly committed message of the topic reaches its queue) and reads the history once more from its
last message, which covers anything committed between the last page and the join. From there the queue is sent,
each message whose sequence number is not above the last one sent dropped (the catch-up read and the queue may
overlap). A message whose sequence number jumps ahead of the last one sent is held while the missing ones are
read from the database (a few tries, ``gap_polls``); if they cannot be found the stream ends with the
reference's ``UNKNOWN``, never with a hole in it.

The stream ends with OK once ``limit`` messages were sent, or once the end time is reached: a message at or
after it, or the hub knows the importer has committed past it (``TopicHub.through``), or, not knowing that, the
end time was already past when the request came (the reference's rule), or ``end_time_interval`` after the end
time has passed.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import grpc

from ledgermirror.db import topic_stream
from ledgermirror.db.pool import Database
from ledgermirror.grpc_api.failures import LAGGING, UNKNOWN, RpcFailure, invalid, not_found
from ledgermirror.grpc_api.limits import SubscriptionLimits
from ledgermirror.grpc_api.metrics import GrpcMetrics
from ledgermirror.grpc_api.requests import TopicFilter, topic_filter
from ledgermirror.grpc_api.topic_hub import Subscriber, TopicHub
from ledgermirror.grpc_api.topic_messages import TopicMessage, topic_message
from ledgermirror.ledger.int64 import INT64_MAX

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.mirror.consensus_service_pb2 import ConsensusTopicQuery

_log = logging.getLogger("ledgermirror.grpc")
Send = Callable[[bytes], Awaitable[None]]
"""Writes one serialized response to the call."""
Context = grpc.aio.ServicerContext[Any, Any]
SHUTTING_DOWN = "The server is shutting down. Please retry later"
TOO_LONG = "The subscription reached the server's time limit. Please resubscribe"
IDLE = "The subscription was idle too long. Please resubscribe"
NOT_A_TOPIC = "Not a valid topic"
KNOWN_TOPICS = 50_000
"""Topics remembered as existing (the reference's ``entityCacheSize``)."""


@dataclass(frozen=True, slots=True)
class SubscriptionRules:
    page: int = 1000
    """Rows per history read."""
    gap_polls: int = 12
    """Reads of a gap's missing messages before the stream fails."""
    gap_poll_seconds: float = 0.02
    end_time_interval_seconds: float = 30.0
    max_seconds: float = 0.0
    """A subscription's longest life (0: none); it then ends ``UNAVAILABLE`` and the SDKs resubscribe."""
    idle_seconds: float = 0.0
    """Longest time without a message sent (0: none)."""
    check_topic_exists: bool = True


class ConsensusService:
    def __init__(
        self,
        db: Database,
        hub: TopicHub,
        limits: SubscriptionLimits,
        metrics: GrpcMetrics,
        rules: SubscriptionRules,
    ) -> None:
        self.db = db
        self.hub = hub
        self.limits = limits
        self.metrics = metrics
        self.rules = rules
        self.known_topics: set[int] = set()

    def subscribe_topic(self, request: ConsensusTopicQuery, context: Context) -> Coroutine[Any, Any, None]:
        """Serve one subscription, each response (serialized) written with the call's ``write``: the coroutine
        of its :class:`_Subscription` (this method is no coroutine: no frame of its own held while it runs)."""
        return _Subscription(self, topic_filter(request, time.time_ns()), context.write).serve(context.peer())

    async def check_topic(self, wanted: TopicFilter) -> None:
        """The topic must be an entity of type TOPIC. Topics found are remembered (an entity never changes its
        type, and, as in the reference, a deleted topic may still be read); misses are asked again."""
        topic = wanted.topic.encoded
        if not self.rules.check_topic_exists or topic in self.known_topics:
            return
        statement = topic_stream.entity_type(topic)
        kind = await self.db.fetchval(statement.text, *statement.args)
        if kind is None:
            raise not_found(wanted.topic.text)
        if kind != "TOPIC":
            raise invalid(NOT_A_TOPIC)
        if len(self.known_topics) >= KNOWN_TOPICS:
            self.known_topics.clear()
        self.known_topics.add(topic)


class _Subscription:
    __slots__ = ("hub", "last", "last_sent_at", "rules", "send", "sent", "service", "started", "topic", "wanted")

    def __init__(self, service: ConsensusService, wanted: TopicFilter, send: Send) -> None:
        self.service = service
        self.rules = service.rules
        self.hub = service.hub
        self.wanted = wanted
        self.send = send
        self.topic = wanted.topic.encoded
        self.last: TopicMessage | None = None
        self.sent = 0
        self.started = time.monotonic()
        self.last_sent_at = self.started

    @property
    def done(self) -> bool:
        return 0 < self.wanted.limit <= self.sent

    def _take(self, message: TopicMessage) -> bool:
        """Whether ``message`` is the next to send (not a repeat); remembers it as sent."""
        if self.last is not None and message.sequence_number <= self.last.sequence_number:
            return False
        self.last = message
        self.sent += 1
        self.last_sent_at = time.monotonic()
        return True

    async def _history(self, start: int) -> None:
        """Send the stored messages from ``start`` to the end time, page after page until a short page."""
        end = INT64_MAX if self.wanted.end is None else self.wanted.end
        sent_history = self.service.metrics.sent_history
        cursor = start
        while not self.done:
            want = self.rules.page
            if self.wanted.limit:
                want = min(want, self.wanted.limit - self.sent)
            rows = await self.service.db.fetch(topic_stream.page(self.topic, cursor, end, want))
            for row in rows:
                message = topic_message(row, self.topic)
                if self._take(message):
                    sent_history.inc()
                    await self.send(message.payload)
                if self.done:
                    return
            if len(rows) < want:
                return
            cursor = rows[-1]["consensus_timestamp"] + 1

    async def serve(self, peer: str) -> None:
        """Admitted (the topic exists, within the limits), the history, then the live messages (the queue the
        hub fills) until the end, the limit or a rule.

        An idle subscription holds this coroutine and the future it waits on: no context manager and no
        coroutine in between (each would stay, with its frame, for as long as the subscription is idle; the
        memory per idle subscriber counts them)."""
        service = self.service
        # over replicas, the hub's database: the history and the live parts agree (one database: no pin)
        token = service.db.pin(self.hub.member) if service.db.replicated else None
        client: str | None = None
        try:
            await service.check_topic(self.wanted)
            client = service.limits.admit(peer)
            service.metrics.subscriptions.inc()
            await self._history(self.wanted.start)
            if self.done or self._past_end():
                return
            subscriber = await self.hub.join(self.topic, timed=self.wanted.end is not None)
            try:
                resume = self.wanted.start if self.last is None else self.last.consensus_timestamp + 1
                await self._history(resume)  # what was committed before the join
                while not self.done and not await self._send_queued(subscriber) and not self._past_end():
                    waiter = subscriber.wake.waiter()
                    if waiter is not None:
                        timeout = self._timeout()
                        try:
                            await (waiter if timeout is None else asyncio.wait_for(waiter, timeout))
                        except TimeoutError:
                            pass
                        finally:
                            subscriber.wake.forget()
                    self._check_rules()
            finally:
                self.hub.leave(subscriber)
        finally:
            if client is not None:
                service.metrics.subscriptions.dec()
                service.limits.release(client)
            if token is not None:
                service.db.unpin(token)

    async def _send_queued(self, subscriber: Subscriber) -> bool:
        """Send what the hub queued for the subscriber; whether the stream is complete (the end time reached)
        or the limit reached. Raises the reference's status when the server closes or the queue overflowed."""
        end = self.wanted.end
        subscriber.wake.clear()
        if self.hub.closing:
            raise RpcFailure(grpc.StatusCode.UNAVAILABLE, SHUTTING_DOWN)
        if subscriber.overflowed:
            raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, LAGGING)
        while subscriber.queue:
            batch, subscriber.queue = subscriber.queue, []
            for message in batch:
                last = self.last
                if last is not None and message.sequence_number <= last.sequence_number:
                    continue
                if end is not None and message.consensus_timestamp >= end:
                    return True
                if last is not None and message.sequence_number > last.sequence_number + 1:
                    await self._fill_before(last, message)
                    if self.done:
                        return True
                await self._send_live(message)
                if self.done:
                    return True
        return False

    async def _send_live(self, message: TopicMessage) -> None:
        if self._take(message):
            metrics = self.service.metrics
            metrics.sent_live.inc()
            if message.noticed:
                metrics.delivery_lag.observe(time.monotonic() - message.noticed)
            await self.send(message.payload)

    async def _fill_before(self, last: TopicMessage, message: TopicMessage) -> None:
        """Send the messages missing between ``last`` and ``message`` (read from the database), or fail."""
        for missing in await self._fill_gap(last, message):
            if self._take(missing):
                self.service.metrics.sent_live.inc()
                await self.send(missing.payload)
            if self.done:
                return
        current = self.last.sequence_number if self.last is not None else 0
        if current + 1 != message.sequence_number:
            _log.error(
                "Encountered out of order messages",
                extra={"last": current, "current": message.sequence_number},
            )
            raise RpcFailure(grpc.StatusCode.UNKNOWN, UNKNOWN)

    async def _fill_gap(self, last: TopicMessage, following: TopicMessage) -> list[TopicMessage]:
        """The messages between ``last`` and ``following`` read from the database (retried a few times while
        some are missing: a commit on its way); possibly fewer than missing."""
        missing = following.sequence_number - last.sequence_number - 1
        found: list[TopicMessage] = []
        for attempt in range(self.rules.gap_polls):
            statement = topic_stream.page(
                self.topic, last.consensus_timestamp + 1, following.consensus_timestamp, missing
            )
            found = [topic_message(row, self.topic) for row in await self.service.db.fetch(statement)]
            if len(found) >= missing:
                break
            if attempt + 1 < self.rules.gap_polls:
                await asyncio.sleep(self.rules.gap_poll_seconds)
        return found

    def _past_end(self) -> bool:
        end = self.wanted.end
        if end is None:
            return False
        through = self.hub.through
        if through is not None and through >= end:
            return True
        if through is None and end < self.wanted.created:
            return True
        return time.time_ns() > end + int(self.rules.end_time_interval_seconds * 1e9)

    def _timeout(self) -> float | None:
        """Seconds until the next rule is due (the end time's interval, the longest or idle time), if any."""
        now = time.monotonic()
        deadlines: list[float] = []
        if self.wanted.end is not None:
            end_at = (self.wanted.end - time.time_ns()) / 1e9 + self.rules.end_time_interval_seconds
            deadlines.append(now + max(end_at, 0.0) + 0.001)
        if self.rules.max_seconds:
            deadlines.append(self.started + self.rules.max_seconds)
        if self.rules.idle_seconds:
            deadlines.append(self.last_sent_at + self.rules.idle_seconds)
        return max(min(deadlines) - now, 0.0) if deadlines else None

    def _check_rules(self) -> None:
        now = time.monotonic()
        if self.rules.max_seconds and now >= self.started + self.rules.max_seconds:
            raise RpcFailure(grpc.StatusCode.UNAVAILABLE, TOO_LONG)
        if self.rules.idle_seconds and now >= self.last_sent_at + self.rules.idle_seconds:
            raise RpcFailure(grpc.StatusCode.UNAVAILABLE, IDLE)
