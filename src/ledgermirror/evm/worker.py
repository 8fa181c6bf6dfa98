"""The worker process a contract call runs in, so that the EVM's CPU never holds the API's interpreter lock.

Started as ``python -m ledgermirror.evm.worker <descriptor>`` with one end of a socket pair. The API sends a
:class:`~ledgermirror.evm.calls.Job` down it; the worker runs it and asks back through the same socket for every
piece of state it touches (``("account", address)``, ``("slot", address, key)``, ...), which the API reads from
PostgreSQL. The worker ends a job with ``("done", JobResult)`` or ``("timeout",)``; after an unexpected error it
sends ``("error", text)`` and exits. One job at a time per worker; no database connection of its own.
"""

from __future__ import annotations

import sys
from multiprocessing.connection import Connection
from typing import Any

from ledgermirror.evm.calls import Job, run_job
from ledgermirror.evm.execution import TimeBudgetExceeded
from ledgermirror.evm.state import AccountState
from ledgermirror.evm.token_facade import NftState, TokenState
from ledgermirror.evm.token_info import TokenDetail


class PipeReader:
    """The state of one job, asked of the API through the pipe (each answer kept for the job)."""

    def __init__(self, conn: Connection, accounts: tuple[tuple[bytes, AccountState | None], ...] = ()) -> None:
        self._conn = conn
        self._answers: dict[tuple[Any, ...], Any] = {("account", address): found for address, found in accounts}

    def _ask(self, *question: Any) -> Any:
        if question not in self._answers:
            self._conn.send(question)
            self._answers[question] = self._conn.recv()
        return self._answers[question]

    def account(self, address: bytes) -> AccountState | None:
        found: AccountState | None = self._ask("account", address)
        return found

    def slot(self, address: bytes, key: int) -> int:
        return int(self._ask("slot", address, key))

    def block_hash(self, number: int) -> bytes:
        return bytes(self._ask("block_hash", number))

    def token(self, address: bytes) -> TokenState | None:
        found: TokenState | None = self._ask("token", address)
        return found

    def token_balance(self, token: bytes, owner: bytes) -> int:
        return int(self._ask("token_balance", token, owner))

    def token_allowance(self, token: bytes, owner: bytes, spender: bytes) -> int:
        return int(self._ask("token_allowance", token, owner, spender))

    def approved_for_all(self, token: bytes, owner: bytes, operator: bytes) -> bool:
        return bool(self._ask("approved_for_all", token, owner, operator))

    def token_detail(self, address: bytes) -> TokenDetail | None:
        found: TokenDetail | None = self._ask("token_detail", address)
        return found

    def nft(self, token: bytes, serial: int) -> NftState | None:
        found: NftState | None = self._ask("nft", token, serial)
        return found

    def token_relation(self, token: bytes, account: bytes) -> tuple[bool, bool] | None:
        found = self._ask("token_relation", token, account)
        return None if found is None else (bool(found[0]), bool(found[1]))

    def exchange_rate(self) -> tuple[int, int]:
        hbars, cents = self._ask("exchange_rate")
        return int(hbars), int(cents)

    def account_alias(self, address: bytes) -> tuple[int, bytes] | None:
        found = self._ask("account_alias", address)
        return None if found is None else (int(found[0]), bytes(found[1]))

    def hbar_allowance(self, owner: bytes, spender: bytes) -> int:
        return int(self._ask("hbar_allowance", owner, spender))

    def token_associated(self, token: bytes, account: bytes) -> bool:
        return bool(self._ask("token_associated", token, account))


def serve(conn: Connection) -> None:
    """A worker's life: jobs until the pipe closes."""
    while True:
        try:
            job: Job = conn.recv()
        except EOFError:
            return
        try:
            conn.send(("done", run_job(job, PipeReader(conn, job.accounts))))
        except TimeBudgetExceeded:
            conn.send(("timeout",))
        except Exception as error:  # a bug of ours or py-evm's: the API answers 500 and logs it
            conn.send(("error", f"{type(error).__name__}: {error}"))
            return


if __name__ == "__main__":  # python -m ledgermirror.evm.worker <socket descriptor>: api/evm_workers.py
    serve(Connection(int(sys.argv[1])))
