"""What handlers hand to each other, passed explicitly: the :class:`ItemContext` of the item being handled
(its ``transaction`` row, the entities it touches) and the :class:`FileState` its file's items share (contract
log indexes, a parent's hook queue or contract result that its children take, atomic batch rows). A handler is
a :data:`Handler`: it reads the item, adds rows to the batch and sets what the item's context holds."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ledgermirror.importer.handlers.batch import RECORD_COLUMNS, Batch
from ledgermirror.importer.handlers.item import Item


@dataclass(slots=True)
class FileState:
    """What the items of one record file hand to later items of the same file."""

    log_index: int = 0
    """The next ``contract_log.index``: runs per record file."""
    hook_queues: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    """(owner, hook id) of the hooks a CryptoTransfer calls, by its consensus timestamp, in execution order:
    its hook executions (child calls to 0.0.365) take them in turn."""
    contract_parents: dict[int, ContractParent] = field(default_factory=dict)
    """Items with a contract result by consensus timestamp: what synthetic logs of their children take."""
    previous: list[int] = field(default_factory=list)
    """Consensus timestamps of the file's items handled so far, in file order (the reference's ``previous``
    chain, walked back to find a hook execution among a child's earlier siblings)."""
    items: dict[int, Item] = field(default_factory=dict)
    """The file's items handled so far by consensus timestamp: a child reads its parent's body and record."""
    ethereum: dict[int, dict[str, Any]] = field(default_factory=dict)
    """Decoded ``ethereum_transaction`` rows by consensus timestamp (the reference's ``EthereumTransaction``
    attached to the record item): children read the parent's call data and sender."""
    synthetic_transfers: list[SyntheticTransfer] = field(default_factory=list)
    """Synthetic ``Transfer`` logs of the file whose topics and bloom the end of the file completes with EVM
    addresses (``synthetic_logs.complete_addresses``, the reference's ``SyntheticLogListener``)."""
    atomic_batches: dict[int, list[Any]] = field(default_factory=dict)
    """``transaction`` rows of atomic batches by consensus timestamp (their inner transactions list)."""


@dataclass(frozen=True, slots=True)
class ContractParent:
    """An item with a contract result, as the synthetic logs of its children see it (the reference's
    ``getContractRelatedParent``)."""

    consensus_timestamp: int
    index: int
    transaction_hash: bytes
    """The Ethereum hash when the item is a decoded EthereumTransaction, else the record hash's first 32 bytes."""
    contract_id: int
    """``contractCallResult.contractID`` (read even for a create result: the reference's choice, 0.0.0 then)."""
    root_contract_id: int
    """The receipt's ``contractID``."""
    result_contract_num: int
    """The num of its own result's ``contractID`` (365: a hook execution)."""


@dataclass(slots=True)
class SyntheticTransfer:
    """A synthetic ``Transfer`` log row and the ids its address-bearing fields stand for."""

    row: dict[str, Any]
    contract_id: int
    sender: int
    receiver: int


_TRANSACTION_INDEX: Mapping[str, int] = MappingProxyType(
    {name: index for index, name in enumerate(RECORD_COLUMNS["transaction"])}
)


class ItemContext:
    """The item being handled: its ``transaction`` row, which handlers complete, and the entities it touches
    (for ``entity_transaction``); ``file`` is its file's :class:`FileState`."""

    __slots__ = ("_entity_transactions", "approved_debits", "file", "touched", "transaction")

    def __init__(self, transaction: list[Any], file: FileState, *, entity_transactions: bool) -> None:
        self.transaction = transaction
        """The ``transaction`` row: every column's value in the model's order (``batch.RECORD_COLUMNS``); read
        and set by name through :meth:`transaction_value` and :meth:`set_transaction`."""
        self.file = file
        self.touched: set[int] = set()
        self._entity_transactions = entity_transactions
        self.approved_debits: Sequence[tuple[int, int]] = ()
        """(account, amount) of the approved debits among a CryptoTransfer's HBAR transfers, as its body lists
        them (its handler reads the body's transfers once; the item's ``crypto_transfer`` rows take them)."""

    def set_transaction(self, **columns: Any) -> None:
        """Set columns of the item's ``transaction`` row."""
        row = self.transaction
        for name, value in columns.items():
            row[_TRANSACTION_INDEX[name]] = value

    def transaction_value(self, name: str) -> Any:
        """A column of the item's ``transaction`` row."""
        return self.transaction[_TRANSACTION_INDEX[name]]

    def touch(self, *entity_ids: int | None) -> None:
        """Entities the item involves (for ``entity_transaction``); None and 0 are ignored."""
        if self._entity_transactions:
            self.touched.update(entity_id for entity_id in entity_ids if entity_id)


Handler = Callable[[Item, Batch, ItemContext], None]
