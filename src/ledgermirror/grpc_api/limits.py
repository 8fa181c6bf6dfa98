"""How many subscriptions the server holds at once: in total and per client (the peer's address without its
port). A subscription beyond either bound is refused with ``RESOURCE_EXHAUSTED`` before it reads anything."""

from __future__ import annotations

import grpc

from ledgermirror.grpc_api.failures import RpcFailure

TOO_MANY = "Too many active subscriptions on this server. Please retry later"
TOO_MANY_FROM_CLIENT = "Too many active subscriptions from this client. Please retry later"


def client_of(peer: str) -> str:
    """``ipv4:127.0.0.1:50000`` -> ``ipv4:127.0.0.1``; ``ipv6:[::1]:50000`` -> ``ipv6:[::1]``."""
    head, _, port = peer.rpartition(":")
    return head if head and port.isdigit() else peer


class SubscriptionLimits:
    def __init__(self, total: int, per_client: int) -> None:
        self.total = total
        self.per_client = per_client
        self.active = 0
        self.by_client: dict[str, int] = {}

    def admit(self, peer: str) -> str:
        """Count a subscription of ``peer`` in, or refuse it; returns the client to :meth:`release` after."""
        client = client_of(peer)
        held = self.by_client.get(client, 0)
        if self.active >= self.total:
            raise RpcFailure(grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY)
        if held >= self.per_client:
            raise RpcFailure(grpc.StatusCode.RESOURCE_EXHAUSTED, TOO_MANY_FROM_CLIENT)
        self.active += 1
        self.by_client[client] = held + 1
        return client

    def release(self, client: str) -> None:
        self.active -= 1
        left = self.by_client[client] - 1
        if left:
            self.by_client[client] = left
        else:
            del self.by_client[client]
