"""Which handler runs for which transaction: ``HANDLERS`` by ``TransactionBody`` ``data`` oneof name.

Every handler module exposes its own read-only ``HANDLERS`` mapping (and may expose ``COMMON``: extra steps
that run for every item after its handler, e.g. a scheduled child's ``schedule.executed_timestamp``); this
module merges the modules listed in ``_MODULES``. To add handlers, write a module and add it to ``_MODULES``.
A name registered twice is an error (two modules would claim one transaction type).
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType, ModuleType

from ledgermirror.importer.handlers import (
    airdrops,
    contracts,
    crypto,
    files,
    hooks,
    network,
    registered_nodes,
    schedules,
    token_accounts,
    tokens,
    topics,
)
from ledgermirror.importer.handlers.context import Handler

_MODULES: tuple[ModuleType, ...] = (
    crypto,
    files,
    network,
    registered_nodes,
    contracts,
    hooks,
    tokens,
    token_accounts,
    airdrops,
    topics,
    schedules,
)


def _handlers() -> Mapping[str, Handler]:
    merged: dict[str, Handler] = {}
    for module in _MODULES:
        for name, handler in module.HANDLERS.items():
            if name in merged:
                raise ValueError(f"{module.__name__}: handler for {name} registered twice")
            merged[name] = handler
    return MappingProxyType(merged)


def _common() -> tuple[Handler, ...]:
    return tuple(step for module in _MODULES for step in getattr(module, "COMMON", ()))


HANDLERS: Mapping[str, Handler] = _handlers()
"""body name (``"cryptoTransfer"``) -> handler; items without one get only the common rows."""

COMMON: tuple[Handler, ...] = _common()
"""Steps every item goes through after its own handler, in module order."""
