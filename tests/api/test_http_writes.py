"""A response's head and body leave in one write (``http_server.HeadHoldingTransport``), and every kind of
response still arrives whole: GET, HEAD (no body write), 304, errors, ``100 Continue`` before a POST body, and
several requests on one kept-alive connection."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import httpx
import pytest
from tests.live_server import bounded_server
from tests.support import Ledger

from ledgermirror.api.app import create_app
from ledgermirror.http_server import HeadHoldingTransport
from ledgermirror.runtime import Prepared
from ledgermirror.settings import Settings

SETTINGS = Settings()


class Recording:
    """A socket transport's stand-in that records each call reaching it."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, bytes]] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.calls.append(("write", data))

    def writelines(self, chunks: tuple[bytes, ...]) -> None:
        self.calls.append(("writelines", b"".join(chunks)))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed


HEAD = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n"


def test_a_head_waits_for_its_body_and_both_go_in_one_call() -> None:
    sent = Recording()
    transport = HeadHoldingTransport(sent)  # type: ignore[arg-type]
    transport.write(HEAD)
    assert sent.calls == []
    transport.write(b"{}")
    transport.write(b"more")  # a later chunk (a streamed body) passes straight through
    assert sent.calls == [("writelines", HEAD + b"{}"), ("write", b"more")]


def test_a_head_without_a_body_goes_at_flush_or_close_and_interim_heads_are_never_held() -> None:
    sent = Recording()
    transport = HeadHoldingTransport(sent)  # type: ignore[arg-type]
    transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
    assert sent.calls == [("write", b"HTTP/1.1 100 Continue\r\n\r\n")]
    transport.write(HEAD)
    transport.flush()
    transport.flush()
    assert sent.calls[1:] == [("write", HEAD)]
    transport.write(HEAD)
    transport.close()
    assert sent.calls[2:] == [("write", HEAD)] and sent.closed
    assert transport.is_closing()  # everything else is the wrapped transport's


@pytest.fixture(scope="module")
def port(database: Prepared) -> Iterator[int]:
    with bounded_server(create_app(SETTINGS, database.api_url), SETTINGS) as served:
        yield served


def _read_answer(sock: socket.socket, *, head_only: bool = False) -> tuple[bytes, bytes]:
    """One answer: its head, and its body (``content-length`` bytes; none for a HEAD request)."""
    received = b""
    while b"\r\n\r\n" not in received:
        received += sock.recv(65536)
    head, _, body = received.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1]) for line in head.lower().split(b"\r\n") if line.startswith(b"content-length:")
    )
    while not head_only and len(body) < length:
        body += sock.recv(65536)
    return head, body


def test_kept_alive_get_head_error_get_each_arrive_whole(port: int, ledger: Ledger) -> None:
    """On empty tables (``ledger``): another module may have left rows in the session's database."""
    requests = [
        (b"GET /api/v1/tokens HTTP/1.1\r\nHost: t\r\n\r\n", False),
        (b"HEAD /api/v1/tokens HTTP/1.1\r\nHost: t\r\n\r\n", True),
        (b"GET /api/v1/tokens?limit=x HTTP/1.1\r\nHost: t\r\n\r\n", False),
        (b"GET /api/v1/tokens HTTP/1.1\r\nHost: t\r\n\r\n", False),
    ]
    answers = []
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        for request, head_only in requests:
            sock.sendall(request)
            answers.append(_read_answer(sock, head_only=head_only))
    assert [head[:12] for head, _ in answers] == [
        b"HTTP/1.1 200",
        b"HTTP/1.1 200",
        b"HTTP/1.1 400",
        b"HTTP/1.1 200",
    ]
    assert answers[0][1] == answers[3][1] == b'{"tokens":[],"links":{"next":null}}'
    assert answers[1][1] == b"" and f"content-length: {len(answers[0][1])}".encode() in answers[1][0].lower()
    assert b"Invalid parameter: limit" in answers[2][1]


def test_a_304_and_a_continue_before_a_post_body(port: int) -> None:
    with httpx.Client(trust_env=False, timeout=10) as client:
        first = client.get(f"http://127.0.0.1:{port}/api/v1/tokens")
        again = client.get(
            f"http://127.0.0.1:{port}/api/v1/tokens", headers={"if-none-match": first.headers["etag"]}
        )
    assert first.status_code == 200 and again.status_code == 304 and again.content == b""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(
            b"POST /api/v1/network/fees HTTP/1.1\r\nHost: t\r\nContent-Type: application/protobuf\r\n"
            b"Content-Length: 2\r\nExpect: 100-continue\r\n\r\n"
        )
        interim = sock.recv(65536)
        assert interim.startswith(b"HTTP/1.1 100 Continue\r\n\r\n")  # sent at once, never held
        sock.sendall(b"\xff\xff")
        answer = interim[len(b"HTTP/1.1 100 Continue\r\n\r\n") :]
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 4")  # two bytes are not a transaction: a 4xx, whole
