"""The statements of the gRPC address book (``NetworkService.getNodes``): the current book of a file, the
latest node stakes, and a page of the book's entries by node id with their service endpoints."""

from __future__ import annotations

from collections.abc import Sequence

from ledgermirror.db.sql import Statement, template

_BOOK = (
    "select start_consensus_timestamp from address_book where file_id = {file} "
    "order by start_consensus_timestamp desc limit 1"
)

_STAKES = (
    "select node_id, stake from node_stake "
    "where consensus_timestamp = (select max(consensus_timestamp) from node_stake)"
)

_ENTRIES = (
    "select e.node_id, e.memo, e.public_key, e.node_cert_hash, e.description, "
    "coalesce(n.account_id, e.node_account_id) as node_account_id "
    "from address_book_entry e left join node n on n.node_id = e.node_id "
    "where e.consensus_timestamp = {book} and e.node_id >= {from_node} "
    "order by e.node_id limit {limit}"
)

_ENDPOINTS = (
    "select node_id, ip_address_v4, port, domain_name from address_book_service_endpoint "
    "where consensus_timestamp = {book} and node_id = any({nodes}::bigint[]) "
    "order by node_id, ip_address_v4, port, domain_name"
)


def current_book(file_id: int) -> Statement:
    """The start timestamp of the file's newest address book (no row: the file has none)."""
    return template(_BOOK, file=file_id)


def latest_stakes() -> Statement:
    """``(node_id, stake)`` at the newest ``node_stake`` timestamp (no rows when the table is empty)."""
    return template(_STAKES)


def entries(book: int, from_node: int, limit: int) -> Statement:
    """At most ``limit`` entries of the book with ``node_id >= from_node``, by node id; the node account is the
    ``node`` table's when it has one."""
    return template(_ENTRIES, book=book, from_node=from_node, limit=limit)


def endpoints(book: int, nodes: Sequence[int]) -> Statement:
    """The service endpoints of ``nodes`` in the book."""
    return template(_ENDPOINTS, book=book, nodes=list(nodes))
