"""getNodes against the real server, ported from the reference's ``NetworkControllerTest`` and
``NetworkServiceTest`` (``grpc/src/test/java/org/hiero/mirror/grpc/``): each test names its source and takes
the expected values from it. The SDK's own reading of the answer is in ``test_grpc_sdk.py``."""

from __future__ import annotations

import grpc
import pytest
from hiero_sdk_python.hapi.mirror import mirror_network_service_pb2 as network
from hiero_sdk_python.hapi.mirror import mirror_network_service_pb2_grpc as network_grpc
from hiero_sdk_python.hapi.services import basic_types_pb2
from tests.support import Ledger

Stub = network_grpc.NetworkServiceStub
BOOK = 1  # the reference's fixtures: file 0.0.102 with a book starting at timestamp 1


def add_book(ledger: Ledger, file: int = 102, start: int = BOOK) -> None:
    ledger.execute(
        "insert into address_book (start_consensus_timestamp, file_id, file_data) values ($1, $2, $3)",
        start,
        file,
        b"book",
    )


def add_entry(
    ledger: Ledger,
    node: int,
    *,
    book: int = BOOK,
    memo: str | None = None,
    public_key: str | None = None,
    cert_hash: bytes | None = None,
    description: str | None = None,
    stake: int | None = None,
    endpoints: tuple[tuple[str, int, str], ...] = (),
) -> None:
    ledger.execute(
        "insert into address_book_entry (consensus_timestamp, node_id, node_account_id, memo, public_key, "
        "node_cert_hash, description, stake) values ($1, $2, $3, $4, $5, $6, $7, $8)",
        book,
        node,
        node + 3,
        memo,
        public_key,
        cert_hash,
        description,
        stake,
    )
    for address, port, domain in endpoints:
        ledger.execute(
            "insert into address_book_service_endpoint (consensus_timestamp, node_id, ip_address_v4, port, "
            "domain_name) values ($1, $2, $3, $4, $5)",
            book,
            node,
            address,
            port,
            domain,
        )


def add_stake(ledger: Ledger, node: int, stake: int, timestamp: int = 10) -> None:
    ledger.execute(
        "insert into node_stake (consensus_timestamp, epoch_day, node_id, reward_rate, stake, stake_rewarded, "
        "staking_period, max_stake, min_stake, stake_not_rewarded) values ($1, 0, $2, 0, $3, 0, 0, 0, 0, 0)",
        timestamp,
        node,
        stake,
    )


def nodes(stub: Stub, file: int | None = 102, limit: int = 0, **ids: int) -> list[basic_types_pb2.NodeAddress]:
    request = network.AddressBookQuery(limit=limit)
    if file is not None:
        request.file_id.CopyFrom(basic_types_pb2.FileID(fileNum=file, **ids))
    return list(stub.getNodes(request, timeout=10))


def failure(stub: Stub, request: network.AddressBookQuery) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as raised:
        list(stub.getNodes(request, timeout=10))
    return raised.value.code(), raised.value.details()


def full_entry(ledger: Ledger, node: int) -> None:
    add_entry(
        ledger,
        node,
        memo=f"0.0.{node + 3}",
        public_key=f"30820{node}",
        cert_hash=f"cert {node}".encode(),
        description=f"node {node}",
        endpoints=((f"127.0.0.{node + 1}", 50211, ""),),
    )


# NetworkControllerTest ------------------------------------------------------------------------------------


def test_get_nodes_missing_file_id(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesMissingFileId: an empty query -> INVALID_ARGUMENT
    assert failure(network_stub, network.AddressBookQuery()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "getNodes.filter.fileId: must not be null",
    )


def test_get_nodes_invalid_file_id(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesInvalidFileId: fileNum -1 -> INVALID_ARGUMENT "Invalid entity ID"
    request = network.AddressBookQuery(file_id=basic_types_pb2.FileID(fileNum=-1))
    assert failure(network_stub, request) == (grpc.StatusCode.INVALID_ARGUMENT, "Invalid entity ID: 0.0.-1")


def test_get_nodes_invalid_limit(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesInvalidLimit: empty FileID, limit -1
    code, details = failure(network_stub, network.AddressBookQuery(file_id=basic_types_pb2.FileID(), limit=-1))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "limit: must be greater than or equal to 0" in details


def test_get_nodes_not_found(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesNotFound / NetworkServiceTest.addressBookNotFound: "0.0.102 does not exist"
    request = network.AddressBookQuery(file_id=basic_types_pb2.FileID(fileNum=102))
    assert failure(network_stub, request) == (grpc.StatusCode.NOT_FOUND, "0.0.102 does not exist")


def test_get_nodes_no_limit(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesNoLimit: 2 entries -> 2 nodes in node-id order, every field
    add_book(ledger)
    full_entry(ledger, 1)
    full_entry(ledger, 0)
    add_stake(ledger, 0, 100)
    add_stake(ledger, 1, 200)
    got = nodes(network_stub)
    assert [node.nodeId for node in got] == [0, 1]
    first = got[0]
    assert first.memo == b"0.0.3"
    assert first.RSA_PubKey == "308200"
    assert first.nodeAccountId == basic_types_pb2.AccountID(accountNum=3)
    assert first.nodeCertHash == b"cert 0"
    assert first.description == "node 0"
    assert first.stake == 100
    assert list(first.serviceEndpoint) == [
        basic_types_pb2.ServiceEndpoint(ipAddressV4=bytes([127, 0, 0, 1]), port=50211, domain_name="")
    ]
    assert not first.ipAddress and not first.portno  # deprecated fields, never set


def test_get_nodes_service_endpoint_with_domain_name(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesNoLimitServiceEndpointWithDomainName: domain www.example-node.com, IP "",
    # port 5000 -> empty ipAddressV4, that domain, 5000
    add_book(ledger)
    add_entry(ledger, 0, endpoints=(("", 5000, "www.example-node.com"),))
    (node,) = nodes(network_stub)
    assert list(node.serviceEndpoint) == [
        basic_types_pb2.ServiceEndpoint(ipAddressV4=b"", port=5000, domain_name="www.example-node.com")
    ]


def test_get_nodes_empty_domain_name_and_ip_address(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesTestWithEmptyDomainNameAndIpAddress: "" / "" / 0 -> empty ipAddressV4
    # (never 127.0.0.1), "", 0
    add_book(ledger)
    add_entry(ledger, 0, endpoints=(("", 0, ""),))
    (node,) = nodes(network_stub)
    assert list(node.serviceEndpoint) == [basic_types_pb2.ServiceEndpoint(ipAddressV4=b"", port=0, domain_name="")]


def test_get_nodes_limit_reached(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesLimitReached / NetworkServiceTest.limitReached: 2 entries, limit 1
    add_book(ledger)
    full_entry(ledger, 0)
    full_entry(ledger, 1)
    assert [node.nodeId for node in nodes(network_stub, limit=1)] == [0]


def test_get_nodes_null_fields(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkControllerTest.getNodesNullFields: NULL description, memo, cert hash, key, stake -> "", b"", b"",
    # "", 0; node id and account set
    add_book(ledger)
    add_entry(ledger, 0)
    (node,) = nodes(network_stub)
    assert (node.description, node.memo, node.nodeCertHash, node.RSA_PubKey, node.stake) == ("", b"", b"", "", 0)
    assert (node.nodeId, node.nodeAccountId) == (0, basic_types_pb2.AccountID(accountNum=3))


# NetworkServiceTest ----------------------------------------------------------------------------------------


def test_invalid_filter(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkServiceTest.invalidFilter: no file, limit -1 -> both violations
    code, details = failure(network_stub, network.AddressBookQuery(limit=-1))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "limit: must be greater than or equal to 0" in details
    assert "fileId: must not be null" in details


@pytest.mark.parametrize("file", ["0.0.1001", "2.0.101", "0.2.101", "1.0.102", "0.1.102"])
def test_invalid_file_id(network_stub: Stub, ledger: Ledger, file: str) -> None:
    # NetworkServiceTest.invalidFileId -> "Not a valid address book file"
    shard, realm, num = (int(part) for part in file.split("."))
    request = network.AddressBookQuery(file_id=basic_types_pb2.FileID(shardNum=shard, realmNum=realm, fileNum=num))
    assert failure(network_stub, request) == (grpc.StatusCode.INVALID_ARGUMENT, "Not a valid address book file")


def test_no_nodes(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkServiceTest.noNodes: a book without entries -> empty, complete
    add_book(ledger)
    assert nodes(network_stub) == []


@pytest.mark.parametrize("count", [1, 2, 3, 101, 205])
def test_pages(network_stub: Stub, ledger: Ledger, count: int) -> None:
    # NetworkServiceTest.lessThanPageSize / equalToPageSize / moreThanPageSize (page size 2 there; 100 here, so
    # also 101 and 205 entries): every entry, in order
    add_book(ledger)
    for node in range(count):
        add_entry(ledger, node)
    assert [node.nodeId for node in nodes(network_stub)] == list(range(count))


def test_newest_book_of_the_requested_file(network_stub: Stub, ledger: Ledger) -> None:
    # AddressBookRepositoryTest.findLatestTimestamp: the newest book of the file asked for; 0.0.101 served apart
    add_book(ledger, file=102, start=1)
    add_book(ledger, file=102, start=5)
    add_book(ledger, file=101, start=7)
    add_entry(ledger, 0, book=1)
    add_entry(ledger, 1, book=5)
    add_entry(ledger, 2, book=7)
    assert [node.nodeId for node in nodes(network_stub, file=102)] == [1]
    assert [node.nodeId for node in nodes(network_stub, file=101)] == [2]


def test_override_stake_to_zero_when_empty_node_stake_table(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkServiceTest.overrideStakeToZeroWhenEmptyNodeStakeTable: entry stake 10, node_stake empty -> 0
    add_book(ledger)
    add_entry(ledger, 0, stake=10)
    assert [node.stake for node in nodes(network_stub)] == [0]


def test_override_stake_from_node_stake_table(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkServiceTest.overrideStakeFromNodeStakeTable: stakes 10 / default / 30; node_stake rows (ts 10) of
    # 100 for the first two -> 100, 100, 0 (only the newest node_stake timestamp counts)
    add_book(ledger)
    add_entry(ledger, 0, stake=10)
    add_entry(ledger, 1)
    add_entry(ledger, 2, stake=30)
    add_stake(ledger, 2, 999, timestamp=5)  # an older staking period
    add_stake(ledger, 0, 100)
    add_stake(ledger, 1, 100)
    assert [node.stake for node in nodes(network_stub)] == [100, 100, 0]


def test_override_node_account_id_when_present(network_stub: Stub, ledger: Ledger) -> None:
    # NetworkServiceTest.overrideNodeAccountIdWhenPresent / keepExistingNodeAccountIdWhenRepositoryAccountIdIsEmpty
    add_book(ledger)
    add_entry(ledger, 0)
    add_entry(ledger, 1)
    ledger.load({"nodes": [{"node_id": 0, "account_id": 1005}, {"node_id": 1, "account_id": None}]})
    accounts = [node.nodeAccountId.accountNum for node in nodes(network_stub)]
    assert accounts == [1005, 4]
