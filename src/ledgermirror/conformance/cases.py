"""Spec files -> URL checks: the expected status, body and headers of every URL, matrices expanded.

A check's id is ``<spec path relative to the specs folder> #<n> <url>``, with ``n`` counting the checks of
that file from 1; the expected-failures list names checks by this id.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_HEADERS = {"cache-control": "public, max-age=1"}
BIND_TIMESTAMP_RANGE_MATRIX = "bindTimestampRangeMatrix.js"
HASH_PAYER_NULLED = "transactionHashV1"
"""The variant whose setup ends with every ``transaction_hash.payer_account_id`` set to NULL (older rows)."""
MATRICES: dict[str, tuple[str, dict[str, Any]]] = {
    BIND_TIMESTAMP_RANGE_MATRIX: ("bindTimestampRange=true", {"query": {"bindTimestampRange": True}}),
    "topicMessageLookupMatrix.js": ("topicMessageLookup=true", {"query": {"topicMessageLookup": True}}),
    "transactionHashV1Matrix.js": (HASH_PAYER_NULLED, {}),
}
"""A spec's ``matrix`` file -> its second variant's name (also its ``responseJsonMatrix`` key) and config."""
DIALECT = "js"
"""Specs that give one body per implementation (``js``/``java``) are judged by the Node one: our error style."""

_IN_SCOPE = [
    re.compile(pattern)
    for pattern in (
        r"^/api/v1/tokens/?$",
        r"^/api/v1/accounts/?$",
        r"^/api/v1/accounts/[^/]+/?$",
        r"^/api/v1/accounts/[^/]+/allowances/(crypto|tokens|nfts)/?$",
        r"^/api/v1/accounts/[^/]+/(rewards|nfts)/?$",
        r"^/api/v1/accounts/[^/]+/airdrops/(outstanding|pending)/?$",
        r"^/api/v1/network/(supply|fees|exchangerate|nodes|stake)/?$",
        r"^/api/v1/blocks(/[^/]+)?/?$",
        r"^/api/v1/topics/[^/]+/messages(/[^/]+)?/?$",
        r"^/api/v1/topics/messages/[^/]+/?$",
        r"^/api/v1/schedules(/[^/]+)?/?$",
        r"^/api/v1/balances/?$",
        r"^/api/v1/transactions(/[^/]+)?/?$",
        r"^/api/v1/tokens/[^/]+(/balances|/nfts(/[^/]+(/transactions)?)?)?/?$",
        r"^/api/v1/accounts/[^/]+/tokens/?$",
        # the ten contract routes: list, one contract, its results (one, logs), its state, the global
        # results (one by id or hash, its actions) and logs
        r"^/api/v1/contracts(/[^/]+)?/?$",
        r"^/api/v1/contracts/[^/]+/(results(/[^/]+)?|state)/?$",
        r"^/api/v1/contracts/results/[^/]+(/actions)?/?$",
    )
]


@dataclass(frozen=True, slots=True)
class Check:
    spec: str
    number: int
    url: str
    setup: dict[str, Any]
    status: int
    body: Any
    headers: dict[str, str]
    config: dict[str, Any] = field(default_factory=dict)
    request_headers: dict[str, str] = field(default_factory=dict)
    variant: str = ""

    @property
    def id(self) -> str:
        suffix = f" [{self.variant}]" if self.variant else ""
        return f"{self.spec} #{self.number} {self.url}{suffix}"

    @property
    def in_scope(self) -> bool:
        if self.spec.startswith("route/"):
            return True
        path = self.url.split("?", 1)[0]
        return any(pattern.match(path) for pattern in _IN_SCOPE)


class SpecError(ValueError):
    pass


def discover(root: Path) -> list[Path]:
    return sorted(path for path in root.rglob("*.json") if path.name != "responseHeaders.json")


def folder_headers(root: Path, spec_file: Path) -> dict[str, str]:
    """The nearest ``responseHeaders.json`` from the spec's folder up to its group folder."""
    folder = spec_file.parent
    while True:
        candidate = folder / "responseHeaders.json"
        if candidate.exists():
            loaded: dict[str, str] = json.loads(candidate.read_text())
            return loaded
        if root in (folder, folder.parent) or root not in folder.parents:
            return dict(DEFAULT_HEADERS)
        folder = folder.parent


def load_checks(root: Path, spec_file: Path) -> list[Check]:
    name = spec_file.relative_to(root).as_posix()
    try:
        spec: dict[str, Any] = json.loads(spec_file.read_text())
    except ValueError as error:
        raise SpecError(f"{name}: not JSON: {error}") from error
    headers = {**folder_headers(root, spec_file), **spec.get("responseHeaders", {})}
    tests = spec.get("tests") or [spec]
    matrix = MATRICES.get(spec.get("matrix", ""))
    variants = ["", matrix[0]] if matrix else [""]
    setup = spec.get("setup", {})
    checks: list[Check] = []
    for variant in variants:
        for test in tests:
            checks += _test_checks(
                name=name, setup=setup, test=test, spec=spec, headers=headers, variant=variant, offset=len(checks)
            )
    return checks


def _test_checks(
    *,
    name: str,
    setup: dict[str, Any],
    test: dict[str, Any],
    spec: dict[str, Any],
    headers: dict[str, str],
    variant: str,
    offset: int,
) -> list[Check]:
    urls = [_request_url(url) for url in _as_list(test.get("urls") or ([test["url"]] if "url" in test else []))]
    body = copy.deepcopy(test.get("responseJson"))
    matrix = test.get("responseJsonMatrix") or spec.get("responseJsonMatrix") or {}
    if body is None and DIALECT in matrix:
        body = copy.deepcopy(matrix[DIALECT])  # per-implementation bodies: ours speaks the Node dialect
    config = {**setup.get("config", {}), **test.get("config", {})}
    if variant:
        config = _deep_merge(config, next(extra for name, extra in MATRICES.values() if name == variant))
        overrides = matrix.get(variant, {})
        if isinstance(body, dict):
            body = {**body, **overrides}
    expected_headers = test.get("responseHeaders", headers) if test is not spec else headers
    return [
        Check(
            spec=name,
            number=offset + index + 1,
            url=url,
            setup=setup,
            status=int(test["responseStatus"]),
            body=body,
            headers=expected_headers,
            config=config,
            request_headers=test.get("requestHeaders", {}),
            variant=variant,
        )
        for index, url in enumerate(urls)
    ]


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _request_url(url: str | list[str]) -> str:
    """The URL the reference's harness requests: a ``url`` given as a list is one request, items joined by commas.

    Its harness takes ``test.urls || [test.url]`` and hands each item to the HTTP client, which turns an array into
    its string form (the items joined by ``,``); the spec's expectations are written for that request.
    """
    return url if isinstance(url, str) else ",".join(url)


def _deep_merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in extra.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged
