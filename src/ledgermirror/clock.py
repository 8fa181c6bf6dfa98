"""The service's notion of "now", injectable so tests and spec fixtures can fix it."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_ns(self) -> int: ...


class SystemClock:
    def now_ns(self) -> int:
        return time.time_ns()


class FrozenStartClock:
    """Starts at a given instant and keeps ticking from there (the reference harness's fake time)."""

    def __init__(self, start_ns: int) -> None:
        self._offset = start_ns - time.monotonic_ns()

    def now_ns(self) -> int:
        return time.monotonic_ns() + self._offset
