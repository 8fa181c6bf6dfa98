"""What handlers hand to each other, passed explicitly: the :class:`ItemContext` of the item being handled
(its ``transaction`` row, the entities it touches) and the :class:`FileState` its file's items share (contract
log indexes, a parent's hook queue or contract result that its children take, atomic batch rows). A handler is
a :data:`Handler`: it reads the item, adds rows to the batch and sets what the item's context holds."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ledgermirror.importer.handlers.batch import Batch
from ledgermirror.importer.handlers.item import Item


@dataclass(slots=True)
class FileState:
    """What the items of one record file hand to later items of the same file."""

    log_index: int = 0
    """The next ``contract_log.index``: runs per record file."""
    hook_queues: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """(owner, hook id) of the hooks a CryptoTransfer calls, by its consensus timestamp, in execution order:
    its hook executions (child calls to 0.0.365) take them in turn."""
    contract_parents: dict[int, tuple[int, int, bytes]] = field(default_factory=dict)
    """Items with a contract result by consensus timestamp: (timestamp, index, 32-byte hash) that synthetic
    logs of their children take."""
    atomic_batches: dict[int, dict[str, Any]] = field(default_factory=dict)
    """``transaction`` rows of atomic batches by consensus timestamp (their inner transactions list)."""


class ItemContext:
    """The item being handled: its ``transaction`` row, which handlers complete, and the entities it touches
    (for ``entity_transaction``); ``file`` is its file's :class:`FileState`."""

    __slots__ = ("_entity_transactions", "file", "touched", "transaction")

    def __init__(self, transaction: dict[str, Any], file: FileState, *, entity_transactions: bool) -> None:
        self.transaction = transaction
        self.file = file
        self.touched: set[int] = set()
        self._entity_transactions = entity_transactions

    def set_transaction(self, **columns: Any) -> None:
        """Set columns of the item's ``transaction`` row."""
        self.transaction.update(columns)

    def touch(self, *entity_ids: int | None) -> None:
        """Entities the item involves (for ``entity_transaction``); None and 0 are ignored."""
        if self._entity_transactions:
            self.touched.update(entity_id for entity_id in entity_ids if entity_id)


Handler = Callable[[Item, Batch, ItemContext], None]
