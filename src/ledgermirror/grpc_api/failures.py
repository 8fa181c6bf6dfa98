"""The statuses a call ends with when it fails, with the reference's codes and descriptions."""

from __future__ import annotations

import grpc

DATA_SOURCE = "Error querying the data source. Please retry later"
LAGGING = "Client lags too much behind. Please retry later"
UNKNOWN = "Unknown error"


class RpcFailure(Exception):
    """Ends a call with ``code`` and ``message`` (the status description a client reads as ``details()``)."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> RpcFailure:
    return RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(entity: str) -> RpcFailure:
    return RpcFailure(grpc.StatusCode.NOT_FOUND, f"{entity} does not exist")


def data_source_unavailable() -> RpcFailure:
    return RpcFailure(grpc.StatusCode.UNAVAILABLE, DATA_SOURCE)


def data_source_timeout() -> RpcFailure:
    return RpcFailure(grpc.StatusCode.RESOURCE_EXHAUSTED, DATA_SOURCE)
