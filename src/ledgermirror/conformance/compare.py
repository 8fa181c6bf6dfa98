"""Judging one response against a spec's expectation: status, JSON body and headers.

Bodies are compared as the reference harness does (Jest ``toEqual``): deep equality, object key order free,
array order significant, no missing or extra keys, integers exact. Unlike a plain ``==`` in Python, ``true``
never equals ``1`` and a string never equals a number.
"""

from __future__ import annotations

import json
from typing import Any

_MAX_DIFFS = 12


def diff_json(expected: Any, actual: Any, path: str = "$") -> list[str]:
    """Human-readable differences; empty when equal."""
    found: list[str] = []
    _diff(expected, actual, path, found)
    return found[:_MAX_DIFFS] + ([f"... {len(found) - _MAX_DIFFS} more"] if len(found) > _MAX_DIFFS else [])


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 160 else text[:157] + "..."


def _diff(expected: Any, actual: Any, path: str, found: list[str]) -> None:
    kind = _kind(expected)
    if kind != _kind(actual):
        found.append(f"{path}: expected {_show(expected)}, got {_show(actual)}")
        return
    if kind == "object":
        for key in expected:
            if key not in actual:
                found.append(f"{path}.{key}: missing (expected {_show(expected[key])})")
            else:
                _diff(expected[key], actual[key], f"{path}.{key}", found)
        found.extend(f"{path}.{key}: unexpected {_show(actual[key])}" for key in actual if key not in expected)
    elif kind == "array":
        if len(expected) != len(actual):
            found.append(f"{path}: expected {len(expected)} items, got {len(actual)}")
        for index, (left, right) in enumerate(zip(expected, actual, strict=False)):
            _diff(left, right, f"{path}[{index}]", found)
    elif expected != actual:
        found.append(f"{path}: expected {_show(expected)}, got {_show(actual)}")


def diff_headers(expected: dict[str, str], actual: dict[str, str]) -> list[str]:
    """The expected headers must be a subset of the actual ones (names case-insensitive, values exact)."""
    lowered = {name.lower(): value for name, value in actual.items()}
    problems: list[str] = []
    for name, value in expected.items():
        got = lowered.get(name.lower())
        if got != value:
            problems.append(f"header {name.lower()}: expected {value!r}, got {got!r}")
    return problems


def judge(
    *,
    expected_status: int,
    expected_body: Any,
    expected_headers: dict[str, str],
    status: int,
    headers: dict[str, str],
    body: bytes,
) -> list[str]:
    problems: list[str] = []
    if status != expected_status:
        problems.append(f"status: expected {expected_status}, got {status}")
    content_type = headers.get("content-type", "")
    if "application/json" in content_type:
        try:
            actual: Any = json.loads(body) if body else {}
        except ValueError:
            problems.append(f"body: not JSON: {body[:200]!r}")
            return problems
        problems += diff_json(expected_body, actual)
    elif not content_type:
        problems.append("header content-type: missing")
    elif body.decode(errors="replace") != expected_body:
        problems.append(f"body: expected {_show(expected_body)}, got {_show(body.decode(errors='replace'))}")
    if 200 <= status < 300:
        problems += diff_headers(expected_headers, headers)
    return problems
