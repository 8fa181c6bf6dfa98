"""The generated code is what our build step makes from subscribe.proto today, and it speaks the published API:
its descriptors carry the published names and numbers, and its block items are the SDK's."""

from __future__ import annotations

from pathlib import Path

from hiero_sdk_python.hapi.block.stream import block_item_pb2

from ledgermirror.blocknode import codegen, subscribe_pb2, wire


def test_committed_code_is_what_the_build_step_generates(tmp_path: Path) -> None:
    written = codegen.generate(tmp_path)
    assert [path.name for path in written] == list(codegen.OUTPUTS)
    for path in written:
        committed = (codegen.PACKAGE_DIR / path.name).read_text()
        assert path.read_text() == committed, f"{path.name} differs: run python -m ledgermirror.blocknode.codegen"
        assert committed.startswith(codegen.HEADER)


def test_the_build_step_takes_block_items_from_the_sdk() -> None:
    from google.protobuf import descriptor_pb2

    files = descriptor_pb2.FileDescriptorSet.FromString(codegen.sdk_descriptor_set())
    names = [file.name for file in files.file]
    assert names[-1] == "block/stream/block_item.proto"
    assert "services/basic_types.proto" in names
    assert names.index("block/stream/block_proof.proto") < names.index("block/stream/block_item.proto")
    field = subscribe_pb2.BlockItemSet.DESCRIPTOR.fields_by_name["block_items"]
    assert field.message_type is block_item_pb2.BlockItem.DESCRIPTOR


def test_published_names_and_numbers() -> None:
    file = subscribe_pb2.DESCRIPTOR
    assert file.package == "org.hiero.block.api"
    request = subscribe_pb2.SubscribeStreamRequest.DESCRIPTOR
    assert {f.name: f.number for f in request.fields} == {"start_block_number": 1, "end_block_number": 2}
    response = subscribe_pb2.SubscribeStreamResponse.DESCRIPTOR
    assert {f.name: f.number for f in response.fields} == {"status": 1, "block_items": 2, "end_of_block": 3}
    assert [f.name for f in response.oneofs_by_name["response"].fields] == [
        "status",
        "block_items",
        "end_of_block",
    ]
    codes = {value.name: value.number for value in response.enum_types_by_name["Code"].values}
    assert codes == {code.name: code.value for code in wire.Code}
    status = subscribe_pb2.ServerStatusResponse.DESCRIPTOR
    assert {f.name: f.number for f in status.fields} == {
        "first_available_block": 1,
        "last_available_block": 2,
        "only_latest_state": 3,
    }
    methods = {
        f"/{service.full_name}/{method.name}"
        for service in file.services_by_name.values()
        for method in service.methods
    }
    assert methods == {wire.SUBSCRIBE_METHOD, wire.SERVER_STATUS_METHOD}
    subscribe = file.services_by_name["BlockStreamSubscribeService"].methods_by_name["subscribeBlockStream"]
    assert subscribe.server_streaming and not subscribe.client_streaming


def test_unparsed_views_are_wire_compatible() -> None:
    item = block_item_pb2.BlockItem()
    item.block_header.number = 42
    parsed = subscribe_pb2.SubscribeStreamResponse()
    parsed.block_items.block_items.append(item)
    unparsed = wire.decode_response(parsed.SerializeToString())
    assert unparsed == wire.Items([item.SerializeToString()])
    back = subscribe_pb2.SubscribeStreamResponse.FromString(wire.encode_items([item.SerializeToString()]))
    assert back.block_items.block_items[0].block_header.number == 42
    end = subscribe_pb2.SubscribeStreamResponse.FromString(wire.encode_block_end(42))
    assert end.end_of_block.block_number == 42
    status = subscribe_pb2.SubscribeStreamResponse.FromString(wire.encode_status(wire.Code.NOT_AVAILABLE))
    assert status.status == subscribe_pb2.SubscribeStreamResponse.NOT_AVAILABLE
    assert wire.header_number(item.SerializeToString()) == 42
    assert wire.is_block_header(item.SerializeToString())
