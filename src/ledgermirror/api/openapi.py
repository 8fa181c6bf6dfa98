"""The OpenAPI 3.1 document, generated from the endpoint registry (parameters and response schemas)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ledgermirror import __version__
from ledgermirror.api.endpoint import Endpoint
from ledgermirror.api.resources import schemas
from ledgermirror.db.sql import Op


def build_document(
    endpoints: Sequence[Endpoint],
    *,
    limit_default: int,
    limit_max: int,
    max_repeats: int = 100,
    omitted_fields: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """``omitted_fields`` names response properties the settings leave out (``delegation_address``): the
    document then neither lists nor requires them, so it describes exactly what this server answers."""
    paths: dict[str, Any] = {}
    for endpoint in endpoints:
        parameters: list[dict[str, Any]] = list(endpoint.path_params)
        for spec in endpoint.params.specs:
            schema = dict(spec.schema)
            description = spec.description
            if spec.name == "limit":
                schema["default"] = limit_default
                description += f" The maximum is {limit_max}: a larger value is accepted and capped to it."
            if spec.ops and "pattern" in schema and not spec.pattern_has_ops:
                schema["pattern"] = _with_operators(schema["pattern"], spec.doc_ops or spec.ops)
            if spec.repeatable and not spec.single:
                count = min(spec.max_count or max_repeats, max_repeats)
                schema = {"type": "array", "items": schema, "minItems": 1, "maxItems": count}
            parameter: dict[str, Any] = {
                "name": spec.name,
                "in": "query",
                "description": description,
                "schema": schema,
                "explode": True,
            }
            if spec.example is not None:  # an array parameter's example is a list (the docs page fills it in)
                parameter["example"] = [spec.example] if schema.get("type") == "array" else spec.example
            parameters.append(parameter)
        error = {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
        operation: dict[str, Any] = {
            "summary": endpoint.summary,
            "description": endpoint.description,
            "operationId": endpoint.operation_id
            or endpoint.path.strip("/").replace("/", "_").replace("{", "").replace("}", ""),
            "tags": [endpoint.tag],
            "parameters": parameters,
        }
        if endpoint.request_body is not None:
            operation["requestBody"] = endpoint.request_body
        operation["responses"] = {
            "200": {
                "description": "OK",
                "headers": {"Cache-Control": {"schema": {"type": "string"}, "example": endpoint.cache_control}},
                "content": {
                    "application/json": {"schema": endpoint.response_schema},
                    **(
                        {"text/plain": {"schema": endpoint.text_response_schema}}
                        if endpoint.text_response_schema is not None
                        else {}
                    ),
                },
            },
            "400": {"description": "Invalid or unknown parameter", **error},
            "404": {"description": "Not found", **error},
            **{status: {**response, **error} for status, response in endpoint.extra_responses.items()},
            "503": {"description": "Database unavailable or query time budget exceeded", **error},
        }
        paths.setdefault(endpoint.path, {})[endpoint.method.lower()] = operation
    if omitted_fields:
        paths = _without(paths, omitted_fields)
    return {
        "openapi": "3.1.0",
        "info": {
            "title": "Ledger Mirror REST API",
            "version": __version__,
            "description": "A mirror node API, wire-compatible with the Hiero mirror node's /api/v1.",
            "license": {"name": "Apache-2.0"},
        },
        "servers": [{"url": "/"}],
        "tags": [
            {"name": name, "description": description}
            for name, description in TAGS
            if any(endpoint.tag == name for endpoint in endpoints)
        ],
        "paths": paths,
        "components": {"schemas": {"Error": schemas.ERROR}},
    }


TAGS: tuple[tuple[str, str], ...] = (
    ("accounts", "Accounts and contracts: their state, balances, tokens, NFTs, allowances, airdrops and hooks."),
    ("balances", "Account and token balances, now or at a balance snapshot."),
    ("contracts", "Smart contracts, their results, logs and state."),
    ("schedules", "Scheduled transactions and their signatures."),
    ("transactions", "Transactions reached consensus on the network."),
    ("topics", "Consensus service topics and their messages."),
    ("tokens", "Fungible and non-fungible tokens, their balances, NFTs and NFT histories."),
    ("blocks", "Blocks (record files) and their transactions."),
    ("network", "Network-wide facts: nodes, registered nodes, stake, supply, fees and exchange rates."),
)
"""The document's tags in the reference's order (its ``tags`` list, then the tags of its paths as they come):
the order in which the docs page groups the operations."""


def _with_operators(pattern: str, ops: frozenset[Op]) -> str:
    """``^value$`` -> ``^((gt|lt|...):)?value$``: the prefixes the parameter accepts (``eq:`` included)."""
    names = "|".join(sorted(op.value for op in ops))
    return f"^(({names}):)?({pattern.removeprefix('^').removesuffix('$')})$"


def _without(node: Any, fields: frozenset[str]) -> Any:
    """A copy of ``node`` whose object schemas neither list nor require ``fields``."""
    if isinstance(node, list):
        return [_without(item, fields) for item in node]
    if not isinstance(node, dict):
        return node
    copy = {key: _without(value, fields) for key, value in node.items()}
    if copy.get("type") == "object":
        if isinstance(copy.get("properties"), dict):
            copy["properties"] = {name: value for name, value in copy["properties"].items() if name not in fields}
        if isinstance(copy.get("required"), list):
            copy["required"] = [name for name in copy["required"] if name not in fields]
    return copy
