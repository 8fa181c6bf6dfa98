"""``NetworkService.getNodes``: the nodes of the current address book of file 0.0.101 or 0.0.102, by node id,
as the reference rebuilds them from ``address_book_entry``, ``address_book_service_endpoint``, ``node`` (the
node account, when set) and the newest ``node_stake`` (the stake; 0 for a node without one)."""

from __future__ import annotations

import ipaddress
from collections import defaultdict
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import asyncpg

from ledgermirror.db import node_addresses
from ledgermirror.db.pool import Database
from ledgermirror.grpc_api.failures import invalid, not_found
from ledgermirror.grpc_api.requests import nodes_filter
from ledgermirror.grpc_api.wire import mirror
from ledgermirror.ledger.entity_id import decode_entity_id, encode_entity_id

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.mirror.mirror_network_service_pb2 import AddressBookQuery
    from hiero_sdk_python.hapi.services.basic_types_pb2 import NodeAddress

ADDRESS_BOOK_FILES = (101, 102)
NOT_AN_ADDRESS_BOOK = "Not a valid address book file"


class NetworkService:
    def __init__(self, db: Database, shard: int, realm: int, page: int = 100) -> None:
        self.db = db
        self.files = {encode_entity_id(shard, realm, num) for num in ADDRESS_BOOK_FILES}
        self.page = page

    async def get_nodes(self, request: AddressBookQuery, send: Callable[[NodeAddress], Awaitable[None]]) -> None:
        wanted = nodes_filter(request)
        if wanted.file.encoded not in self.files:
            raise invalid(NOT_AN_ADDRESS_BOOK)
        books = await self.db.fetch(node_addresses.current_book(wanted.file.encoded))
        if not books:
            raise not_found(wanted.file.text)
        book = books[0]["start_consensus_timestamp"]
        stakes = {row["node_id"]: row["stake"] for row in await self.db.fetch(node_addresses.latest_stakes())}
        sent, from_node = 0, 0
        while True:
            want = self.page if not wanted.limit else min(self.page, wanted.limit - sent)
            entries = await self.db.fetch(node_addresses.entries(book, from_node, want))
            endpoints: defaultdict[int, list[asyncpg.Record]] = defaultdict(list)
            if entries:
                nodes = [entry["node_id"] for entry in entries]
                for row in await self.db.fetch(node_addresses.endpoints(book, nodes)):
                    endpoints[row["node_id"]].append(row)
            for entry in entries:
                await send(node_address(entry, endpoints[entry["node_id"]], stakes.get(entry["node_id"], 0)))
                sent += 1
            if len(entries) < want or (wanted.limit and sent >= wanted.limit):
                return
            from_node = entries[-1]["node_id"] + 1


def node_address(entry: asyncpg.Record, endpoints: list[asyncpg.Record], stake: int) -> NodeAddress:
    node = mirror().NodeAddress()
    node.memo = (entry["memo"] or "").encode()
    node.RSA_PubKey = entry["public_key"] or ""
    node.nodeId = entry["node_id"]
    account = node.nodeAccountId
    account.shardNum, account.realmNum, account.accountNum = decode_entity_id(entry["node_account_id"])
    node.nodeCertHash = bytes(entry["node_cert_hash"] or b"")
    for row in endpoints:
        endpoint = node.serviceEndpoint.add()
        endpoint.ipAddressV4 = _ipv4_bytes(row["ip_address_v4"])
        endpoint.port = row["port"]
        endpoint.domain_name = row["domain_name"] or ""
    node.description = entry["description"] or ""
    node.stake = stake
    return node


def _ipv4_bytes(text: str | None) -> bytes:
    """The 4 bytes of a dotted quad; empty for a blank (never read as the loopback) or unreadable address."""
    try:
        return ipaddress.IPv4Address((text or "").strip()).packed if text and text.strip() else b""
    except ValueError:
        return b""
