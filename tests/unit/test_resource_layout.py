"""The layout of ``api/resources/`` (ARCHITECTURE.md): one subpackage per route family, what all families share
at the root, and one name pattern for list declarations: a module that declares a list is the family's plural
(its top-level list, ``tokens/tokens.py``) or starts with the family's singular (``tokens/token_balances.py``),
and its ``ListSpec`` is named ``LIST`` (``<WHICH>_LIST`` when the module declares two)."""

from __future__ import annotations

import importlib
import pkgutil

from ledgermirror.api import resources
from ledgermirror.api.listing import ListSpec

FAMILIES = {
    "accounts": "account",
    "balances": "balance",
    "blocks": "block",
    "contracts": "contract",
    "network": "network",
    "schedules": "schedule",
    "tokens": "token",
    "topics": "topic",
    "transactions": "transaction",
}
SHARED = {"evm_lookup", "health", "schemas"}


def _lists() -> dict[str, list[str]]:
    """Module name (``family.module``) -> the names of the ``ListSpec``s it declares."""
    found: dict[str, list[str]] = {}
    for family in FAMILIES:
        package = importlib.import_module(f"{resources.__name__}.{family}")
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            names = [name for name, value in vars(module).items() if isinstance(value, ListSpec)]
            if names:
                found[f"{family}.{info.name}"] = names
    return found


def test_the_root_holds_the_families_and_what_they_share() -> None:
    entries = {(info.name, info.ispkg) for info in pkgutil.iter_modules(resources.__path__)}
    assert entries == {(name, True) for name in FAMILIES} | {(name, False) for name in SHARED}


def test_list_modules_are_named_for_their_family() -> None:
    lists = _lists()
    assert len(lists) >= 25
    wrong = [
        name
        for name in lists
        for family, module in [name.split(".")]
        if module != family and not module.startswith(FAMILIES[family] + "_")
    ]
    assert wrong == []


def test_list_declarations_are_named_list() -> None:
    wrong = [
        f"{module}.{name}"
        for module, names in _lists().items()
        for name in names
        if name != "LIST" and not name.endswith("_LIST")
    ]
    assert wrong == []
