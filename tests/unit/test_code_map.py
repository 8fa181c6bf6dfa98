"""ARCHITECTURE.md is the code map: every module under ``src/ledgermirror/`` (but ``__init__.py`` and the
generated ``blocknode/subscribe_pb2*``) is named in it by its path relative to the package, in backticks, and
every ``.py`` path it names exists (in the package, or from the repository root: ``tests/...``, ``bench/...``)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "ledgermirror"
MAP = ROOT / "ARCHITECTURE.md"
_NAMED = re.compile(r"`([\w./-]+\.py)`")


def modules(package: Path) -> set[str]:
    """Every module the map must name, as a path relative to ``package``."""
    return {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        if path.name != "__init__.py" and not path.name.startswith("subscribe_pb2")
    }


def named(text: str) -> set[str]:
    """Every ``.py`` path the map writes alone in backticks."""
    return set(_NAMED.findall(text))


def exists(path: str) -> bool:
    return (PACKAGE / path).is_file() or (ROOT / path).is_file()


def test_every_module_is_in_the_map() -> None:
    missing = sorted(modules(PACKAGE) - named(MAP.read_text()))
    assert not missing, "ARCHITECTURE.md does not name these modules (add a line each):\n" + "\n".join(missing)


def test_every_path_in_the_map_exists() -> None:
    gone = sorted(path for path in named(MAP.read_text()) if not exists(path))
    assert not gone, "ARCHITECTURE.md names modules that do not exist (fix or remove):\n" + "\n".join(gone)


def test_the_checks_see_what_they_forbid(tmp_path: Path) -> None:
    (tmp_path / "api").mkdir()
    for name in ("api/__init__.py", "api/app.py", "api/new_thing.py", "subscribe_pb2.py", "cli.py"):
        (tmp_path / name).write_text("")
    text = "- `api/app.py`: the app. `cli.py`: the command; not `api/*.py` nor ``api/new_thing.py.bak``."
    assert modules(tmp_path) == {"api/app.py", "api/new_thing.py", "cli.py"}
    assert modules(tmp_path) - named(text) == {"api/new_thing.py"}
    assert named("`api/removed.py` and `tests/unit/test_layers.py`") == {
        "api/removed.py",
        "tests/unit/test_layers.py",
    }
    assert not exists("api/removed.py")
    assert exists("tests/unit/test_layers.py")
    assert exists("api/app.py")
