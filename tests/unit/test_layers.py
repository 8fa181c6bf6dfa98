"""The layers' import rules (ARCHITECTURE.md), read from the source: ``ledger/`` imports nothing else of ours,
and ``db/``, ``dataset/`` and ``fees/`` never import ``ledgermirror.api``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "ledgermirror"
PENDING = {"db/sql.py"}
"""Still importing ``api.querystring.grammar`` (Op/Order move to a neutral home in issue 11, item 5)."""


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
    return found


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def test_ledger_imports_nothing_else_of_ours() -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules("ledger")
        for name in _imports(path)
        if name.startswith("ledgermirror") and not name.startswith("ledgermirror.ledger")
    }
    assert wrong == set()


@pytest.mark.parametrize("package", ["ledger", "db", "dataset", "fees", "importer"])
def test_no_import_of_the_api(package: str) -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules(package)
        if str(path.relative_to(PACKAGE)) not in PENDING
        for name in _imports(path)
        if name.startswith("ledgermirror.api")
    }
    assert wrong == set()
    assert _modules(package)
