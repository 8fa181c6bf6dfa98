"""The gRPC API's Prometheus metrics: active subscriptions, messages sent, delivery lag (from the moment the
API learns of a commit to the message's hand-off to the client's stream), calls by method and status. They
reach ``/metrics`` of ``serve`` through the multiprocess folder the command prepares (``metrics/exposition``)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

LAG_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class GrpcMetrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry if registry is not None else CollectorRegistry(auto_describe=True)
        self.subscriptions = Gauge(
            "ledgermirror_grpc_subscriptions",
            "Active subscribeTopic streams",
            multiprocess_mode="livesum",
            registry=self.registry,
        )
        self.messages_sent = Counter(
            "ledgermirror_grpc_messages_sent",
            "Topic messages handed to subscribers' streams, by phase (history or live)",
            ["phase"],
            registry=self.registry,
        )
        self.sent_history = self.messages_sent.labels("history")
        self.sent_live = self.messages_sent.labels("live")
        self.delivery_lag = Histogram(
            "ledgermirror_grpc_delivery_lag_seconds",
            "From the commit notification (or the poll) that brought a live message to its hand-off to the stream",
            buckets=LAG_BUCKETS,
            registry=self.registry,
        )
        self.calls = Counter(
            "ledgermirror_grpc_calls",
            "Finished calls by method and status code",
            ["method", "code"],
            registry=self.registry,
        )
        self.live_reads = Counter(
            "ledgermirror_grpc_live_reads",
            "Shared reads of new topic messages (one round trip for every subscribed topic), by cause",
            ["cause"],
            registry=self.registry,
        )
