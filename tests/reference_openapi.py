"""The reference's OpenAPI document (``../shared/upstream/openapi.yml``), to validate our answers against."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from jsonschema import Draft202012Validator, ValidationError
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

PATH = Path(__file__).resolve().parents[2] / "shared" / "upstream" / "openapi.yml"


def _string_keys(node: Any) -> Any:
    """YAML reads response codes as integers; JSON pointers need them as text."""
    if isinstance(node, dict):
        return {str(key): _string_keys(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_string_keys(value) for value in node]
    return node


@functools.cache
def registry() -> Registry:  # type: ignore[type-arg]
    """The document under ``urn:reference`` (skips the test when it is not beside this checkout)."""
    if not PATH.exists():
        pytest.skip("the reference OpenAPI document is not beside this checkout")
    document = _string_keys(yaml.safe_load(PATH.read_text()))
    return Registry().with_resource("urn:reference", Resource.from_contents(document, DRAFT202012))


def validator(path: str, status: str = "200") -> Draft202012Validator:  # type: ignore[type-arg]
    """The schema of ``GET path``'s answer with ``status``."""
    pointer = path.replace("~", "~0").replace("/", "~1")
    ref = f"urn:reference#/paths/{pointer}/get/responses/{status}/content/application~1json/schema"
    return Draft202012Validator({"$ref": ref}, registry=registry())


def component(name: str) -> Draft202012Validator:  # type: ignore[type-arg]
    return Draft202012Validator({"$ref": f"urn:reference#/components/schemas/{name}"}, registry=registry())


def schema_errors(path: str, body: Any, *, ignore: Callable[[ValidationError], bool] | None = None) -> list[str]:
    """Where ``body`` breaks the 200 schema of ``GET path`` (errors ``ignore`` accepts are left out)."""
    return [
        f"{list(error.absolute_path)}: {error.message}"
        for error in validator(path).iter_errors(body)
        if ignore is None or not ignore(error)
    ]
