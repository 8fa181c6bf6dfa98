"""The block node API on the wire: method paths, the messages the client and the server exchange, and a block's
items as bytes.

Everything here goes through the classes generated from ``subscribe.proto`` (``subscribe_pb2``); block items stay
serialized end to end (the ``*Unparsed`` views), so a block that crosses the wire is byte for byte the block the
node holds, and its root hash is the one the network computed.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from ledgermirror.blocknode import subscribe_pb2 as api
from ledgermirror.ledger.protobuf import hapi_module

SUBSCRIBE_METHOD = "/org.hiero.block.api.BlockStreamSubscribeService/subscribeBlockStream"
SERVER_STATUS_METHOD = "/org.hiero.block.api.BlockNodeService/serverStatus"
UINT64_MAX = 2**64 - 1
"""``end_block_number`` of a stream without end (live blocks as they come)."""

_BLOCK_HEADER_TAG = 0x0A
"""The first byte of a serialized ``BlockItem`` whose oneof is ``block_header`` (field 1, length-delimited)."""


class Code(IntEnum):
    """``SubscribeStreamResponse.Code``."""

    UNKNOWN = 0
    SUCCESS = 1
    INVALID_REQUEST = 2
    ERROR = 3
    INVALID_START_BLOCK_NUMBER = 4
    INVALID_END_BLOCK_NUMBER = 5
    NOT_AVAILABLE = 6


class WireError(ValueError):
    """Bytes from the other side that are not a message of the API."""


@dataclass(frozen=True, slots=True)
class Items:
    """Some items of the block being streamed, each a serialized ``BlockItem``."""

    items: list[bytes]


@dataclass(frozen=True, slots=True)
class BlockEnd:
    number: int


@dataclass(frozen=True, slots=True)
class Status:
    code: Code


Response = Items | BlockEnd | Status


@dataclass(frozen=True, slots=True)
class Availability:
    """``ServerStatusResponse``: the blocks a node can stream (``first > last`` when it has none)."""

    first: int
    last: int

    def holds(self, number: int) -> bool:
        return self.first <= number <= self.last


# -- requests ---------------------------------------------------------------------------------------------------


def encode_subscribe(start: int, end: int) -> bytes:
    return api.SubscribeStreamRequest(start_block_number=start, end_block_number=end).SerializeToString()


def decode_subscribe(data: bytes) -> tuple[int, int]:
    request = api.SubscribeStreamRequest.FromString(data)
    return request.start_block_number, request.end_block_number


def encode_status_request() -> bytes:
    return api.ServerStatusRequest().SerializeToString()


def decode_status_request(data: bytes) -> None:
    api.ServerStatusRequest.FromString(data)


# -- responses --------------------------------------------------------------------------------------------------


def encode_items(items: list[bytes]) -> bytes:
    message = api.SubscribeStreamResponseUnparsed()
    message.block_items.block_items.extend(items)
    return message.SerializeToString()


def encode_block_end(number: int) -> bytes:
    message = api.SubscribeStreamResponseUnparsed()
    message.end_of_block.block_number = number
    return message.SerializeToString()


def encode_status(code: Code) -> bytes:
    return api.SubscribeStreamResponseUnparsed(status=int(code)).SerializeToString()  # type: ignore[arg-type]


def decode_response(data: bytes) -> Response:
    try:
        message = api.SubscribeStreamResponseUnparsed.FromString(data)
    except Exception as error:  # protobuf's DecodeError; the runtime's class varies by backend
        raise WireError(f"not a SubscribeStreamResponse: {error}") from error
    kind = message.WhichOneof("response")
    if kind == "block_items":
        return Items(list(message.block_items.block_items))
    if kind == "end_of_block":
        return BlockEnd(message.end_of_block.block_number)
    if kind == "status":
        code = int(message.status)
        return Status(Code(code) if code in Code._value2member_map_ else Code.UNKNOWN)
    raise WireError("a SubscribeStreamResponse with no response set")


def encode_availability(availability: Availability) -> bytes:
    return api.ServerStatusResponse(
        first_available_block=availability.first, last_available_block=availability.last
    ).SerializeToString()


def decode_availability(data: bytes) -> Availability:
    message = api.ServerStatusResponse.FromString(data)
    return Availability(message.first_available_block, message.last_available_block)


# -- blocks as items --------------------------------------------------------------------------------------------


def split_block(block: bytes) -> list[bytes]:
    """A serialized ``Block``'s items, each as the bytes it holds."""
    try:
        return list(api.BlockUnparsed.FromString(block).items)
    except Exception as error:
        raise WireError(f"not a Block: {error}") from error


def join_block(items: list[bytes]) -> bytes:
    """The serialized ``Block`` of these items (the inverse of :func:`split_block`)."""
    message = api.BlockUnparsed()
    message.items.extend(items)
    return message.SerializeToString()


def is_block_header(item: bytes) -> bool:
    return bool(item) and item[0] == _BLOCK_HEADER_TAG


def header_number(item: bytes) -> int:
    """The block number of a serialized ``BlockItem`` holding a ``block_header``."""
    try:
        parsed = hapi_module("block.stream.block_item_pb2").BlockItem.FromString(item)
    except Exception as error:
        raise WireError(f"not a BlockItem: {error}") from error
    if parsed.WhichOneof("item") != "block_header":
        raise WireError("the first item of a block is not a block header")
    return int(parsed.block_header.number)
