"""pytest imports a test module by its basename (``rootdir`` mode, no packages under ``tests/``): two modules named
alike in different folders stop the whole suite at collection ("import file mismatch"), so every one is unique."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_has_a_basename_of_its_own() -> None:
    by_name: dict[str, list[str]] = defaultdict(list)
    for module in TESTS.rglob("test_*.py"):
        if "node_modules" not in module.parts:
            by_name[module.name].append(str(module.relative_to(TESTS)))
    assert len(by_name) > 100  # the suite's modules were found
    assert {name: paths for name, paths in by_name.items() if len(paths) > 1} == {}
