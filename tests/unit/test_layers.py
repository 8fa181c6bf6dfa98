"""The layers' rules (ARCHITECTURE.md), read from the source: ``ledger/`` imports nothing else of ours;
``db/``, ``dataset/``, ``fees/``, ``importer/`` and ``blocknode/`` never import ``ledgermirror.api``;
``api/querystring`` takes nothing from ``db`` but ``Op`` and ``Order``; and
outside ``db/`` no module numbers a SQL placeholder (``$1``): statements are composed by ``db/sql.py``
(``Select``, ``template``, ``update``) or ``db/write.py``."""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ledgermirror"
_PLACEHOLDER = re.compile(r"\$[1-9]")


def _imports(tree: ast.AST) -> set[str]:
    """Every module an absolute import names (``from ledgermirror import api`` counts as ``ledgermirror.api``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def _parse(path: Path) -> ast.AST:
    return ast.parse(path.read_text(), str(path))


def _modules(package: str) -> list[Path]:
    return sorted((PACKAGE / package).rglob("*.py"))


def _placeholders(tree: ast.AST) -> list[str]:
    """Strings that write a ``$n`` placeholder: a literal ``$1``..``$9``, or an f-string that puts a number
    after a ``$`` (``f"${len(args)}"``, the binders of ``db/sql.py``)."""
    found: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _PLACEHOLDER.search(node.value):
            found.append(node.value)
        elif isinstance(node, ast.JoinedStr):
            found += [
                ast.unparse(node)
                for part, following in itertools.pairwise(node.values)
                if isinstance(part, ast.Constant)
                and str(part.value).endswith("$")
                and isinstance(following, ast.FormattedValue)
            ]
    return found


def test_ledger_imports_nothing_else_of_ours() -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules("ledger")
        for name in _imports(_parse(path))
        if name.startswith("ledgermirror") and not name.startswith("ledgermirror.ledger")
    }
    assert wrong == set()


def test_the_evm_imports_only_the_ledger_of_ours() -> None:
    """``evm/`` reads no database: its state comes through the ``StateReader`` its route answers."""
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules("evm")
        for name in _imports(_parse(path))
        if name.startswith("ledgermirror") and not name.startswith(("ledgermirror.ledger", "ledgermirror.evm"))
    }
    assert wrong == set()
    assert len(_modules("evm")) >= 4


@pytest.mark.parametrize("package", ["ledger", "db", "dataset", "fees", "importer", "blocknode", "evm"])
def test_no_import_of_the_api(package: str) -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules(package)
        for name in _imports(_parse(path))
        if name == "ledgermirror.api" or name.startswith("ledgermirror.api.")
    }
    assert wrong == set()
    assert _modules(package)


def test_the_query_string_language_takes_only_op_and_order_from_db() -> None:
    wrong = {
        f"{path.relative_to(PACKAGE)}: {name}"
        for path in _modules("api/querystring")
        for name in _imports(_parse(path))
        if (name == "ledgermirror.db" or name.startswith("ledgermirror.db."))
        and name not in {"ledgermirror.db.sql", "ledgermirror.db.sql.Op", "ledgermirror.db.sql.Order"}
    }
    assert wrong == set()
    assert len(_modules("api/querystring")) >= 8


def test_no_numbered_placeholder_outside_db() -> None:
    modules = [path for path in PACKAGE.rglob("*.py") if (PACKAGE / "db") not in path.parents]
    modules += sorted((ROOT / "bench").rglob("*.py"))
    wrong = {f"{path.relative_to(ROOT)}: {text!r}" for path in modules for text in _placeholders(_parse(path))}
    assert wrong == set()
    covered = {path.relative_to(PACKAGE).parts[0] for path in modules if PACKAGE in path.parents}
    assert {"api", "status", "conformance", "dataset", "importer", "simulator"} <= covered
    assert "db" not in covered


def test_the_rules_see_what_they_forbid() -> None:
    source = """
from ledgermirror import api
from ledgermirror.api.errors import BadRequest
SQL = "select * from entity where id = $1"
def bind(args: list[int]) -> str:
    return f"${len(args)}"
DOC = "a $n marker, a ${name} brace and a price of $ 5 are not placeholders"
"""
    tree = ast.parse(source)
    assert {"ledgermirror.api", "ledgermirror.api.errors"} <= _imports(tree)
    assert sorted(_placeholders(tree)) == ["f'${len(args)}'", "select * from entity where id = $1"]
    assert _placeholders(ast.parse((PACKAGE / "db" / "sql.py").read_text()))
