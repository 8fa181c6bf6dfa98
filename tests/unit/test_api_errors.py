"""api/errors.py: the error envelope, and how the data layer's own errors become answers."""

from __future__ import annotations

import orjson

from ledgermirror.api.errors import ANSWERED, ApiError, BadRequest, InternalError, ServiceUnavailable, api_error
from ledgermirror.db.errors import DatabaseUnavailable


def test_database_unavailable_is_answered_503_with_our_body() -> None:
    assert issubclass(DatabaseUnavailable, ANSWERED)
    error = api_error(DatabaseUnavailable("connection refused"))
    assert isinstance(error, ServiceUnavailable)
    assert error.status == 503
    assert orjson.loads(error.body()) == {"_status": {"messages": [{"message": "Service unavailable"}]}}


def test_api_errors_answer_for_themselves() -> None:
    bad = BadRequest("Invalid parameter: limit")
    assert api_error(bad) is bad
    assert isinstance(api_error(ValueError("x")), InternalError)
    assert not issubclass(ValueError, ANSWERED)


def test_the_data_layer_knows_nothing_of_http() -> None:
    assert not issubclass(DatabaseUnavailable, ApiError)
