"""The network: address books 0.0.101 and 0.0.102 with their entries and service endpoints, ``node`` rows,
``node_stake`` history, one ``network_stake`` row and the system files (``file_data``) behind them: both address
books, the fee schedule 0.0.111 and the exchange rate 0.0.112, serialised with the HAPI protobuf classes of
``hiero-sdk-python``.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from asyncpg import Range
from hiero_sdk_python.hapi.services import basic_types_pb2, exchange_rate_pb2

from ledgermirror.dataset.tables import (
    ADDRESS_BOOK,
    ADDRESS_BOOK_ENTRY,
    ADDRESS_BOOK_SERVICE_ENDPOINT,
    FILE_DATA,
    NETWORK_STAKE,
    NODE,
    NODE_STAKE,
    Emit,
)
from ledgermirror.dataset.world import (
    DAY,
    GENESIS,
    HBAR,
    NODE_ACCOUNTS,
    REALM,
    SECOND,
    SHARD,
    SYSTEM_CREATED,
    Tag,
    World,
    entity_id,
)
from ledgermirror.ledger.system_files import ADDRESS_BOOK_FILE as ADDRESS_BOOK_101
from ledgermirror.ledger.system_files import EXCHANGE_RATE_FILE, FEE_SCHEDULE_FILE
from ledgermirror.ledger.system_files import NODE_DETAILS_FILE as ADDRESS_BOOK_102
from ledgermirror.ledger.transaction_codes import FILEUPDATE as FILE_UPDATE

NETWORK_SETUP = GENESIS - DAY // 2  # system files are written between the system accounts and the first block
_CITIES = ("Dallas", "Frankfurt", "Singapore", "Sydney", "Toronto", "London", "Tokyo", "Zurich")
_GRPC_PORT = 50211
_GRPC_TLS_PORT = 50212
_BASE_STAKES = (6_100_000_000, 5_400_000_000, 4_900_000_000, 3_700_000_000)  # hbar, one per node
_RSA_HEADER = bytes.fromhex("308201a2300d06092a864886f70d01010105000382018f003082018a0282018100")
_RSA_EXPONENT = bytes.fromhex("0203010001")
_HBAR_EQUIV = 30_000
_CENT_EQUIV = 180_000
# HederaFunctionality numbers and the gas price (servicedata.gas) of the contract operations.
_GAS_PRICES = {6: 852_000, 7: 852_000, 84: 953_000}


def _node_ids() -> range:
    return range(len(NODE_ACCOUNTS))


def _rsa_public_key(world: World, node: int) -> str:
    """Hex of a well-formed X.509 SubjectPublicKeyInfo for a 3072-bit RSA key (random modulus)."""
    modulus = bytearray(b"".join(world.digest(f"rsa-{node}", part, 64) for part in range(6)))
    modulus[0] |= 0x80
    return (_RSA_HEADER + bytes(modulus) + _RSA_EXPONENT).hex()


def _cert_hash(world: World, node: int) -> bytes:
    """The UTF-8 bytes of a 96-hex-char SHA-384, as the address book stores node certificate hashes."""
    return hashlib.sha384(world.digest("node-cert", node)).hexdigest().encode()


def _endpoints(node: int, book: int) -> list[tuple[str, int]]:
    address = f"127.0.0.{node + 1}"
    return (
        [(address, _GRPC_PORT)] if book == ADDRESS_BOOK_101 else [(address, _GRPC_PORT), (address, _GRPC_TLS_PORT)]
    )


def _description(node: int) -> str:
    return f"Ledger Mirror demo node {node} | {_CITIES[node % len(_CITIES)]}"


def _address_book_bytes(world: World, book: int) -> bytes:
    nodes = [
        basic_types_pb2.NodeAddress(
            memo=f"0.0.{NODE_ACCOUNTS[node]}".encode(),
            RSA_PubKey=_rsa_public_key(world, node),
            nodeId=node,
            nodeAccountId=basic_types_pb2.AccountID(
                shardNum=SHARD, realmNum=REALM, accountNum=NODE_ACCOUNTS[node]
            ),
            nodeCertHash=_cert_hash(world, node),
            serviceEndpoint=[
                basic_types_pb2.ServiceEndpoint(
                    ipAddressV4=bytes(int(part) for part in address.split(".")), port=port
                )
                for address, port in _endpoints(node, book)
            ],
            description=_description(node),
            stake=_BASE_STAKES[node] * HBAR,
        )
        for node in _node_ids()
    ]
    return bytes(basic_types_pb2.NodeAddressBook(nodeAddress=nodes).SerializeToString())


def _fee_schedule_bytes(expiry_seconds: int) -> bytes:
    def schedule(expiry: int) -> Any:
        return basic_types_pb2.FeeSchedule(
            transactionFeeSchedule=[
                basic_types_pb2.TransactionFeeSchedule(
                    hederaFunctionality=basic_types_pb2.HederaFunctionality.Name(functionality),
                    fees=[basic_types_pb2.FeeData(servicedata={"max": 1_000_000_000_000_000, "gas": gas})],
                )
                for functionality, gas in _GAS_PRICES.items()
            ],
            expiryTime={"seconds": expiry},
        )

    both = basic_types_pb2.CurrentAndNextFeeSchedule(
        currentFeeSchedule=schedule(expiry_seconds), nextFeeSchedule=schedule(expiry_seconds + 86_400)
    )
    return bytes(both.SerializeToString())


def _exchange_rate_bytes(expiry_seconds: int, cents: int) -> bytes:
    def rate(cent_equiv: int, expiry: int) -> Any:
        return exchange_rate_pb2.ExchangeRate(
            hbarEquiv=_HBAR_EQUIV, centEquiv=cent_equiv, expirationTime={"seconds": expiry}
        )

    rates = exchange_rate_pb2.ExchangeRateSet(
        currentRate=rate(cents, expiry_seconds), nextRate=rate(cents + 600, expiry_seconds + 3_600)
    )
    return bytes(rates.SerializeToString())


def _next_hour(timestamp: int) -> int:
    return (timestamp // SECOND // 3_600 + 1) * 3_600


def system_files(world: World) -> Emit:
    """``file_data`` for 0.0.111, 0.0.112 (twice) and both address books; ``address_book`` and its entries."""
    fee_at = NETWORK_SETUP + 1 * SECOND
    yield FILE_DATA, (fee_at, entity_id(FEE_SCHEDULE_FILE), _fee_schedule_bytes(_next_hour(fee_at)), FILE_UPDATE)
    rate_at = NETWORK_SETUP + 2 * SECOND
    late_rate_at = world.end - 2 * 3_600 * SECOND
    for at, cents in ((rate_at, _CENT_EQUIV), (late_rate_at, _CENT_EQUIV + 1_200)):
        data = _exchange_rate_bytes(_next_hour(at), cents)
        yield FILE_DATA, (at, entity_id(EXCHANGE_RATE_FILE), data, FILE_UPDATE)
    for offset, book in ((3, ADDRESS_BOOK_101), (4, ADDRESS_BOOK_102)):
        written = NETWORK_SETUP + offset * SECOND
        start = written + 1
        data = _address_book_bytes(world, book)
        yield FILE_DATA, (written, entity_id(book), data, FILE_UPDATE)
        yield ADDRESS_BOOK, (start, None, entity_id(book), len(NODE_ACCOUNTS), data)
        for node in _node_ids():
            yield ADDRESS_BOOK_ENTRY, (
                start, f"0.0.{NODE_ACCOUNTS[node]}", _rsa_public_key(world, node), node,
                entity_id(NODE_ACCOUNTS[node]), _cert_hash(world, node), _description(node),
                _BASE_STAKES[node] * HBAR,
            )  # fmt: skip
            for address, port in _endpoints(node, book):
                yield ADDRESS_BOOK_SERVICE_ENDPOINT, (start, address, node, port, "")


def nodes(world: World) -> Emit:
    """``node`` rows, ``node_stake`` for the last staking days and ``network_stake`` for the last one."""
    for node in _node_ids():
        created = SYSTEM_CREATED + (10 + node) * SECOND
        proxy = json.dumps({"domain_name": f"node{node}.grpc-web.example.com", "ip_address_v4": "", "port": 443})
        yield NODE, (
            node, entity_id(NODE_ACCOUNTS[node]), world.key_pair("node-admin", node, ecdsa=False).key, created,
            False, Range(created, None), node == len(NODE_ACCOUNTS) - 1, proxy,
        )  # fmt: skip
    last = world.last_epoch_day
    total = 0
    for day in range(last - world.profile.staking_days + 1, last + 1):
        at = world.stake_update_time(day)
        total = 0
        for node in _node_ids():
            drift = world.hash(Tag.NETWORK, day * 16 + node) % 41
            stake = _BASE_STAKES[node] * (980 + drift) // 1_000 * HBAR
            rewarded = stake * 4 // 5
            total += stake
            yield NODE_STAKE, (
                at, day, node, 20_000 + world.hash(Tag.NETWORK, day * 16 + node + 8) % 10_000, stake, rewarded,
                (day + 1) * DAY - 1, 12_000_000_000 * HBAR, 500_000_000 * HBAR, stake - rewarded,
            )  # fmt: skip
    yield NETWORK_STAKE, (
        world.stake_update_time(last), last, 17_808, 0, 100, total, (last + 1) * DAY - 1, 1_440, 365, 100, 100,
        100_000_000_000, 25_000_000_000_000_000, 20_000_000_000 * HBAR, 5_500_000 * HBAR, 3_000_000 * HBAR,
        8_500_000 * HBAR, 180_000_000 * HBAR,
    )  # fmt: skip
