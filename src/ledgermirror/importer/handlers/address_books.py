"""Address books of files 0.0.101 and 0.0.102 into ``address_book``, ``address_book_entry`` and
``address_book_service_endpoint`` (reference §3.4, ``fees-and-streams.md`` §C).

After a successful FileCreate/FileUpdate/FileAppend of one of them, the file's bytes as of that transaction
(the latest create/update plus the later appends) are parsed; a book that does not parse (typically the first
part of a multi-part update) is skipped. A new book starts at ``ts + 1`` and ends the previous one at ``ts``.
"""

from __future__ import annotations

import ipaddress
from typing import Any

import asyncpg

from ledgermirror.db import address_books as stored
from ledgermirror.importer._proto import protos
from ledgermirror.importer.address_book import node_account, node_id
from ledgermirror.importer.handlers import ids
from ledgermirror.importer.handlers.batch import Step

ADDRESS_BOOK_FILES = frozenset({101, 102})


class BookError(ValueError):
    """Bytes that are not a usable address book (``Unable to parse address book``)."""


def rebuild_step(file_id: int, consensus_timestamp: int) -> Step:
    async def rebuild(conn: asyncpg.Connection) -> dict[str, int] | None:
        contents = await stored.file_contents(conn, file_id, consensus_timestamp)
        if not contents:
            return None
        try:
            book, entries, endpoints = book_rows(file_id, consensus_timestamp, contents)
        except BookError:
            return None
        return await stored.save_book(conn, book, entries, endpoints)

    return rebuild


def book_rows(
    file_id: int, consensus_timestamp: int, contents: bytes
) -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
    """The rows of a book taking effect after ``consensus_timestamp`` (:class:`BookError`: it does not parse)."""
    modules = protos()
    try:
        book = modules.basic_types.NodeAddressBook.FromString(contents)
    except modules.decode_error as error:
        raise BookError(str(error)) from error
    start = consensus_timestamp + 1
    shard_realm = ids.parts(file_id)
    entries: dict[int, dict[str, Any]] = {}
    endpoints: dict[tuple[int, str, int, str], dict[str, Any]] = {}
    for address in book.nodeAddress:
        found = node_account(address)
        if found is None:
            raise BookError("Invalid NodeAddress.nodeAccountId")
        if (found.shard, found.realm) != (shard_realm["shard"], shard_realm["realm"]):
            raise BookError(f"Invalid NodeAddress.nodeAccountId: {found}")
        account, number = ids.encoded(*found), node_id(address, found)
        entries.setdefault(
            number,
            {
                "consensus_timestamp": start,
                "memo": _text(bytes(address.memo)),
                "public_key": address.RSA_PubKey,
                "node_id": number,
                "node_account_id": account,
                "node_cert_hash": bytes(address.nodeCertHash),
                "description": address.description,
                "stake": address.stake,
            },
        )
        for ip, port, domain in _endpoints(address):
            endpoints.setdefault(
                (number, ip, port, domain),
                {"consensus_timestamp": start, "ip_address_v4": ip, "node_id": number, "port": port,
                 "domain_name": domain},
            )  # fmt: skip
    if not entries:
        raise BookError("no nodes")
    book_row = {
        "start_consensus_timestamp": start,
        "end_consensus_timestamp": None,
        "file_id": file_id,
        "node_count": len(entries),
        "file_data": contents,
    }
    return book_row, list(entries.values()), list(endpoints.values())


def _text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _endpoints(address: Any) -> list[tuple[str, int, str]]:
    found = []
    if address.ipAddress:
        found.append((_text(bytes(address.ipAddress)), address.portno, ""))
    for endpoint in address.serviceEndpoint:
        ip = bytes(endpoint.ipAddressV4)
        text = str(ipaddress.IPv4Address(ip)) if len(ip) == 4 else ""
        found.append((text, endpoint.port, endpoint.domain_name))
    return found
