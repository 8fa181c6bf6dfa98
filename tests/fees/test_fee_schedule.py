"""The shipped default schedule equals the upstream values; decoding file 0.0.113 bytes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.fees.builders import SHIPPED_SCHEDULE, UPSTREAM_SCHEDULE, schedule_bytes, schedule_json

from ledgermirror.fees import schedule
from ledgermirror.fees.schedule import UndecodableSchedule


def test_default_matches_upstream_json() -> None:
    data = schedule_json()
    default = schedule.default()
    assert default.source == "default"
    assert default.node_base == data["node"]["baseFee"]
    assert default.node_extras == tuple((e["name"], e.get("includedCount", 0)) for e in data["node"]["extras"])
    assert default.network_multiplier == data["network"]["multiplier"]
    assert dict(default.unit_fees) == {e["name"]: e["fee"] for e in data["extras"]}
    definitions = [entry for service in data["services"] for entry in service["schedule"]]
    assert sorted(default.services) == sorted(entry["name"] for entry in definitions)
    for entry in definitions:
        fee = default.services[entry["name"]]
        assert fee.base == entry.get("baseFee", 0)
        assert fee.extras == tuple((e["name"], e.get("includedCount", 0)) for e in entry.get("extras", []))
        assert fee.free == entry.get("free", False)
        assert fee.node_network_exempt == entry.get("nodeNetworkFeeExempt", False)
        rates = entry.get("highVolumeRates")
        if rates is None:
            assert fee.high_volume is None
        else:
            assert fee.high_volume is not None
            assert fee.high_volume.max_multiplier == rates["maxMultiplier"]
            points = rates.get("pricingCurve", {}).get("piecewiseLinear", {}).get("points", [])
            assert fee.high_volume.points == tuple(
                (p.get("utilizationBasisPoints", 0), p["multiplier"]) for p in points
            )


def test_decoded_protobuf_equals_default() -> None:
    decoded = schedule.decode(schedule_bytes(), source="0.0.113@1.000000002")
    default = schedule.default()
    assert decoded.source == "0.0.113@1.000000002"
    assert decoded.node_base == default.node_base
    assert decoded.node_extras == default.node_extras
    assert decoded.network_multiplier == default.network_multiplier
    assert dict(decoded.unit_fees) == dict(default.unit_fees)
    assert dict(decoded.services) == dict(default.services)


def _without_services(data: dict[str, Any]) -> None:
    data["services"] = []


def _without_node(data: dict[str, Any]) -> None:
    del data["node"]


@pytest.mark.parametrize(
    "data",
    [b"\xff\xff", b"\x0a\x05\x08", schedule_bytes(_without_services), schedule_bytes(_without_node), b""],
)
def test_undecodable(data: bytes) -> None:
    with pytest.raises(UndecodableSchedule):
        schedule.decode(data, source="x")


def test_unknown_enum_values_are_skipped() -> None:
    from hiero_sdk_python.hapi.fees import fee_schedule_pb2

    message = fee_schedule_pb2.FeeSchedule.FromString(schedule_bytes())
    message.extras.add(name=999, fee=1)
    message.services[0].schedule.add(name=9999, base_fee=1)
    decoded = schedule.decode(message.SerializeToString(), source="x")
    assert dict(decoded.unit_fees) == dict(schedule.default().unit_fees)
    assert dict(decoded.services) == dict(schedule.default().services)


@pytest.mark.skipif(
    not UPSTREAM_SCHEDULE.exists(), reason="the reference fee schedule is not beside this checkout"
)
def test_shipped_schedule_is_the_reference_one() -> None:
    assert json.loads(SHIPPED_SCHEDULE.read_text()) == json.loads(UPSTREAM_SCHEDULE.read_text())
