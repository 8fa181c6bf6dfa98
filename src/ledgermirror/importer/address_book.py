"""Address books (``NodeAddressBook`` protobuf, files 0.0.101/0.0.102): the nodes whose signatures count.

Each entry gives a node id, its account, its RSA public key (``RSA_PubKey``: hex of an X.509
SubjectPublicKeyInfo DER) and, when the book carries one, its stake. Entries are read as the reference reads
them: the account is ``nodeAccountId``, else the memo parsed as ``shard.realm.num``; a legacy book's
``nodeId`` 0 on an account below 0.0.20 other than 0.0.3 means node ``num - 3``; a repeated node id keeps its
first entry, but every entry counts in :attr:`AddressBook.entry_count` (the reference's ``node_count``, the total
weight of a consensus without node stakes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from cryptography.hazmat.primitives.asymmetric.rsa import RSAPublicKey
from cryptography.hazmat.primitives.serialization import load_der_public_key

from ledgermirror.importer._proto import protos
from ledgermirror.importer.errors import AddressBookError

_LEGACY_ACCOUNT_LIMIT = 20
_FIRST_NODE_ACCOUNT = 3


class AccountId(NamedTuple):
    shard: int
    realm: int
    num: int

    def __str__(self) -> str:
        return f"{self.shard}.{self.realm}.{self.num}"


@dataclass(frozen=True, slots=True)
class NodeEntry:
    node_id: int
    account: AccountId
    public_key_hex: str
    public_key: RSAPublicKey
    stake: int | None
    """The book's stake for the node; ``None`` when the book has none (proto3 reads an absent stake as 0)."""


@dataclass(frozen=True, slots=True)
class AddressBook:
    nodes: tuple[NodeEntry, ...]
    entry_count: int
    """``NodeAddress`` entries in the book, a node's duplicates included (the reference's ``node_count``)."""

    def node(self, node_id: int) -> NodeEntry | None:
        return next((entry for entry in self.nodes if entry.node_id == node_id), None)

    def node_of_account(self, account: AccountId) -> NodeEntry | None:
        return next((entry for entry in self.nodes if entry.account == account), None)


def read_address_book(data: bytes, name: str = "address book") -> AddressBook:
    modules = protos()
    try:
        book = modules.basic_types.NodeAddressBook.FromString(data)
    except modules.decode_error as error:
        raise AddressBookError(name, f"bad NodeAddressBook: {error}") from error
    nodes: dict[int, NodeEntry] = {}
    for address in book.nodeAddress:
        entry = _entry(name, address)
        nodes.setdefault(entry.node_id, entry)
    if not nodes:
        raise AddressBookError(name, "no nodes")
    return AddressBook(tuple(nodes.values()), len(book.nodeAddress))


def node_account(address: Any) -> AccountId | None:
    """A ``NodeAddress``'s account: ``nodeAccountId``, else its memo read as ``shard.realm.num``; ``None`` when
    neither gives one."""
    if address.HasField("nodeAccountId"):
        account = address.nodeAccountId
        return AccountId(account.shardNum, account.realmNum, account.accountNum)
    parts = bytes(address.memo).decode("utf-8", "replace").strip().split(".")
    if len(parts) != 3 or not all(part.isdigit() for part in parts):
        return None
    return AccountId(int(parts[0]), int(parts[1]), int(parts[2]))


def node_id(address: Any, account: AccountId) -> int:
    """A ``NodeAddress``'s node id; legacy books leave it 0 for every node, so it comes from the account
    (0.0.3 is node 0, 0.0.4 node 1, ...)."""
    if address.nodeId == 0 and account.num < _LEGACY_ACCOUNT_LIMIT and account.num != _FIRST_NODE_ACCOUNT:
        return int(account.num - _FIRST_NODE_ACCOUNT)
    return int(address.nodeId)


def _entry(name: str, address: Any) -> NodeEntry:
    account = node_account(address)
    if account is None:
        memo = bytes(address.memo).decode("utf-8", "replace").strip()
        raise AddressBookError(name, f"Invalid NodeAddress.nodeAccountId: no account and memo {memo!r}")
    number = node_id(address, account)
    key_hex = address.RSA_PubKey.strip()
    try:
        key = load_der_public_key(bytes.fromhex(key_hex.removeprefix("0x")))
    except ValueError as error:
        raise AddressBookError(name, f"node {number}: bad RSA_PubKey ({error})") from error
    if not isinstance(key, RSAPublicKey):
        raise AddressBookError(name, f"node {number}: RSA_PubKey is not an RSA key")
    return NodeEntry(number, account, key_hex, key, address.stake or None)
