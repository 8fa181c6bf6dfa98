"""The one door to the mirror API's generated classes (``hiero_sdk_python.hapi.mirror`` and the HAPI messages
they carry), imported on first use through :func:`ledgermirror.ledger.protobuf.hapi_module`, and the services'
method paths."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING

from google.protobuf.message import DecodeError

from ledgermirror.ledger.protobuf import hapi_module

if TYPE_CHECKING:
    from hiero_sdk_python.hapi.mirror import consensus_service_pb2, mirror_network_service_pb2
    from hiero_sdk_python.hapi.services import basic_types_pb2

CONSENSUS_SERVICE = "com.hedera.mirror.api.proto.ConsensusService"
NETWORK_SERVICE = "com.hedera.mirror.api.proto.NetworkService"
SUBSCRIBE_TOPIC = "subscribeTopic"
GET_NODES = "getNodes"


@dataclass(frozen=True, slots=True)
class Mirror:
    ConsensusTopicQuery: type[consensus_service_pb2.ConsensusTopicQuery]
    ConsensusTopicResponse: type[consensus_service_pb2.ConsensusTopicResponse]
    AddressBookQuery: type[mirror_network_service_pb2.AddressBookQuery]
    NodeAddress: type[basic_types_pb2.NodeAddress]
    DecodeError: type[Exception]
    service_names: tuple[str, ...]
    """The full names of both services as their descriptors give them (for reflection and health)."""


@functools.cache
def mirror() -> Mirror:
    consensus = hapi_module("mirror.consensus_service_pb2")
    network = hapi_module("mirror.mirror_network_service_pb2")
    basic = hapi_module("services.basic_types_pb2")
    return Mirror(
        ConsensusTopicQuery=consensus.ConsensusTopicQuery,
        ConsensusTopicResponse=consensus.ConsensusTopicResponse,
        AddressBookQuery=network.AddressBookQuery,
        NodeAddress=basic.NodeAddress,
        DecodeError=DecodeError,
        service_names=(
            consensus.DESCRIPTOR.services_by_name["ConsensusService"].full_name,
            network.DESCRIPTOR.services_by_name["NetworkService"].full_name,
        ),
    )
