"""Validation of management input (JSON bodies and CLI options alike): typed values or :class:`InvalidInput`."""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from ledgermirror.pg_text import storable
from ledgermirror.status.errors import InvalidInput
from ledgermirror.status.model import SETTABLE_COMPONENT_STATUSES
from ledgermirror.status.rules import RULE_NAMES
from ledgermirror.status.wire import is_id, parse_timestamp

Check = Callable[[str, Any], Any]
_SOURCE = re.compile(r"^(manual|auto:[a-z0-9_.-]+)$")


def text(name: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(f"{name} must be a non-empty string")
    if len(value) > 10_000:
        raise InvalidInput(f"{name} is too long")
    if not storable(value):
        raise InvalidInput(f"{name} must not contain NUL characters or lone surrogates")
    return value


def optional_text(name: str, value: Any) -> str | None:
    return None if value is None else text(name, value)


def boolean(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise InvalidInput(f"{name} must be true or false")
    return value


def position(name: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 100_000:
        raise InvalidInput(f"{name} must be an integer from 1")
    return value


def ident(name: str, value: Any) -> str:
    if not isinstance(value, str) or not is_id(value):
        raise InvalidInput(f"{name} must be a 12-character id")
    return value


def optional_ident(name: str, value: Any) -> str | None:
    return None if value is None else ident(name, value)


def ident_list(name: str, value: Any) -> list[str]:
    if not isinstance(value, list):
        raise InvalidInput(f"{name} must be a list of ids")
    return list(dict.fromkeys(ident(name, item) for item in value))


def rules(name: str, value: Any) -> str:
    """A component's evaluator thresholds (:class:`~ledgermirror.status.rules.Rules` names, positive
    integers), as the JSON text stored."""
    if not isinstance(value, dict):
        raise InvalidInput(f"{name} must be an object")
    for key, number in value.items():
        if key not in RULE_NAMES:
            raise InvalidInput(f"{name}: unknown rule {key!r} (known: {', '.join(RULE_NAMES)})")
        if type(number) is not int or not 1 <= number <= 1_000_000:
            raise InvalidInput(f"{name}.{key} must be a whole number from 1 to 1000000")
    return orjson.dumps(value).decode()


def one_of(*allowed: str) -> Check:
    def check(name: str, value: Any) -> str:
        if value not in allowed:
            raise InvalidInput(f"{name} must be one of {', '.join(allowed)}")
        return str(value)

    return check


def optional(check: Check) -> Check:
    def wrapped(name: str, value: Any) -> Any:
        return None if value is None else check(name, value)

    return wrapped


def start_date(name: str, value: Any) -> dt.date | None:
    if value is None:
        return None
    try:
        return dt.date.fromisoformat(value) if isinstance(value, str) and len(value) == 10 else _bad_date(name)
    except ValueError:
        return _bad_date(name)


def _bad_date(name: str) -> dt.date:
    raise InvalidInput(f"{name} must be a date YYYY-MM-DD")


def timestamp(name: str, value: Any) -> dt.datetime:
    try:
        if isinstance(value, str):
            return parse_timestamp(value)
    except ValueError:
        pass
    raise InvalidInput(f"{name} must be an ISO 8601 timestamp with an offset")


def status_source(name: str, value: Any) -> str:
    if not isinstance(value, str) or not _SOURCE.match(value):
        raise InvalidInput(f"{name} must be manual or auto:<source>")
    return value


def component_statuses(name: str, value: Any) -> dict[str, str]:
    """``{component_id: new_status}`` as given to incidents."""
    if not isinstance(value, dict):
        raise InvalidInput(f"{name} must be an object of component id -> status")
    checked = one_of(*SETTABLE_COMPONENT_STATUSES)
    return {ident(name, key): checked(f"{name}.{key}", status) for key, status in value.items()}


def parse(data: Any, spec: Mapping[str, Check], required: tuple[str, ...] = ()) -> dict[str, Any]:
    """Check a JSON object against ``spec``: unknown keys and missing required keys are errors."""
    if not isinstance(data, dict):
        raise InvalidInput("the body must be a JSON object")
    unknown = sorted(set(data) - set(spec))
    if unknown:
        raise InvalidInput(f"unknown field(s): {', '.join(unknown)}")
    missing = [name for name in required if name not in data]
    if missing:
        raise InvalidInput(f"missing field(s): {', '.join(missing)}")
    return {name: spec[name](name, value) for name, value in data.items()}
