"""Every error the API can answer with, and the one function that builds every error body.

Exception tree (status on the class)::

    ApiError
    ├── BadRequest            400  invalid or unknown parameters, conflicting filters
    ├── Unauthorized          401  Basic credentials that match no configured user
    ├── NotFound              404  unknown route or resource
    ├── MethodNotAllowed      405  a known path asked with a method it does not answer
    ├── UnsupportedMediaType  415
    ├── PayloadTooLarge       413
    ├── InternalError         500  never shows internals
    ├── Unimplemented         501  a reference route this mirror cannot answer (the EVM routes)
    └── ServiceUnavailable    503  the database is down or a query ran out of time

The data layer raises its own :class:`~ledgermirror.db.errors.DatabaseUnavailable` (``db/`` knows nothing of
HTTP); :func:`api_error` turns it into :class:`ServiceUnavailable` for the handlers that answer errors.
"""

from __future__ import annotations

from typing import ClassVar

import orjson

from ledgermirror.db.errors import DatabaseUnavailable


def error_body(*messages: str, detail: str | None = None) -> bytes:
    """``{"_status":{"messages":[{"message": ...}, ...]}}``, the reference's error envelope; ``detail`` is added
    to the last message (``{"message": "Invalid parameter: account.id", "detail": "..."}``)."""
    items: list[dict[str, str]] = [{"message": message} for message in messages]
    if detail is not None and items:
        items[-1]["detail"] = detail
    return orjson.dumps({"_status": {"messages": items}})


class ApiError(Exception):
    status: ClassVar[int] = 500
    default_message: ClassVar[str] = "Internal error"

    def __init__(self, *messages: str, detail: str | None = None) -> None:
        self.messages = messages or (self.default_message,)
        self.detail = detail
        super().__init__("; ".join(self.messages))

    def body(self) -> bytes:
        return error_body(*self.messages, detail=self.detail)


class BadRequest(ApiError):
    status = 400
    default_message = "Bad request"


class Unauthorized(ApiError):
    status = 401
    default_message = "Invalid credentials"


class NotFound(ApiError):
    status = 404
    default_message = "Not found"


class MethodNotAllowed(ApiError):
    status = 405
    default_message = "Method not allowed"

    @classmethod
    def for_method(cls, method: str) -> MethodNotAllowed:
        """The reference's Java wording (``Request method 'POST' is not supported``)."""
        return cls(f"Request method '{method}' is not supported")


class PayloadTooLarge(ApiError):
    status = 413
    default_message = "Payload too large"


class UnsupportedMediaType(ApiError):
    status = 415
    default_message = "Unsupported media type"


class InternalError(ApiError):
    status = 500
    default_message = "Internal error"


class Unimplemented(ApiError):
    status = 501
    default_message = "Not implemented"


class ServiceUnavailable(ApiError):
    status = 503
    default_message = "Service unavailable"


ANSWERED: tuple[type[Exception], ...] = (ApiError, DatabaseUnavailable)
"""What :func:`api_error` turns into an answer; anything else is a bug (logged, ``500``)."""


def api_error(error: Exception) -> ApiError:
    """The error to answer with for one of :data:`ANSWERED`: an ``ApiError`` itself, ``503`` for an outage."""
    if isinstance(error, ApiError):
        return error
    if isinstance(error, DatabaseUnavailable):
        return ServiceUnavailable()
    return InternalError()
