"""Hardening of the management API: bodies are capped, and a finished incident is not
resolved or given a postmortem twice."""

from __future__ import annotations

from collections.abc import Iterator

from tests.status.harness import Status

from ledgermirror.status import audit
from ledgermirror.status.config import StatusSettings

LIMIT = 64 * 1024


def test_the_default_cap_is_64_kib() -> None:
    assert StatusSettings().max_body_bytes == LIMIT


def test_a_declared_large_body_is_refused_with_413(status: Status) -> None:
    key = status.new_key()
    before = status.run(audit.recent)
    big = b'{"name": "' + b"x" * (10 * 1024 * 1024) + b'"}'
    response = status.client.post("/manage/v1/components", content=big, headers={"authorization": f"Bearer {key}"})
    assert response.status_code == 413, response.text
    assert response.json() == {"error": f"the body is larger than {LIMIT} bytes"}
    assert status.run(audit.recent) == before
    assert status.get("components.json")["components"] == []


def test_a_streamed_large_body_is_cut_off_with_413(status: Status) -> None:
    """No ``Content-Length`` (chunked): the server stops reading once the limit is passed."""
    key = status.new_key()

    def chunks() -> Iterator[bytes]:
        yield b'{"name": "'
        for _ in range(200):
            yield b"x" * 4096
        yield b'"}'

    response = status.client.post(
        "/manage/v1/components", content=chunks(), headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 413, response.text
    assert response.json() == {"error": f"the body is larger than {LIMIT} bytes"}
    assert status.get("components.json")["components"] == []


def test_a_body_at_the_limit_is_accepted(status: Status) -> None:
    """The companion of the two above: exactly ``LIMIT`` bytes (JSON padded with spaces) still pass."""
    key = status.new_key()
    prefix, suffix = b'{"name": "x"', b"}"
    body = prefix + b" " * (LIMIT - len(prefix) - len(suffix)) + suffix
    assert len(body) == LIMIT
    response = status.client.post(
        "/manage/v1/components", content=body, headers={"authorization": f"Bearer {key}"}
    )
    assert response.status_code == 201, response.text


def _timeline(status: Status) -> list[tuple[str, str]]:
    item = status.get("incidents.json")["incidents"][0]
    return [(update["status"], update["body"]) for update in item["incident_updates"]]


def test_resolving_a_resolved_incident_is_refused_and_adds_nothing(status: Status) -> None:
    key = status.new_key()
    api = status.write("POST", "components", {"name": "API"}, key)["id"]
    incident = status.write("POST", "incidents", {"name": "Down", "components": {api: "major_outage"}}, key)["id"]
    status.write("POST", f"incidents/{incident}/resolve", {"body": "Fixed."}, key)
    timeline = _timeline(status)
    audited = status.run(audit.recent)
    for body in ({"body": "Fixed."}, {}, {"body": "Fixed again."}):
        response = status.client.post(
            f"/manage/v1/incidents/{incident}/resolve", json=body, headers={"authorization": f"Bearer {key}"}
        )
        assert response.status_code == 409, response.text
        assert response.json() == {"error": f"incident {incident} is already resolved"}
    assert _timeline(status) == timeline
    assert status.run(audit.recent) == audited


def test_a_second_postmortem_is_refused_and_adds_nothing(status: Status) -> None:
    key = status.new_key()
    incident = status.write("POST", "incidents", {"name": "Down"}, key)["id"]
    status.write("POST", f"incidents/{incident}/resolve", {}, key)
    status.write("POST", f"incidents/{incident}/postmortem", {"body": "Root cause."}, key)
    timeline = _timeline(status)
    assert [state for state, _ in timeline] == ["postmortem", "resolved", "investigating"]
    for path, body in (("postmortem", {"body": "Root cause."}), ("resolve", {"body": "Done."})):
        response = status.client.post(
            f"/manage/v1/incidents/{incident}/{path}", json=body, headers={"authorization": f"Bearer {key}"}
        )
        assert response.status_code == 409, response.text
        assert response.json() == {"error": f"incident {incident} is already postmortem"}
    assert _timeline(status) == timeline
    assert status.get("incidents.json")["incidents"][0]["status"] == "postmortem"
