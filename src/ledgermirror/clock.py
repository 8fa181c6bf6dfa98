"""The service's notion of "now", injectable so tests and spec fixtures can fix it."""

from __future__ import annotations

import time
from typing import Protocol


class Clock(Protocol):
    def now_ns(self) -> int: ...


class SystemClock:
    def now_ns(self) -> int:
        return time.time_ns()


class FixedClock:
    """Always the same instant: the reference harness's fake time as a request sees it within the fake clock's
    first tick (its timers advance in 20 ms steps, so the spec files expect "now" to be exactly the fake time)."""

    def __init__(self, now_ns: int) -> None:
        self._now_ns = now_ns

    def now_ns(self) -> int:
        return self._now_ns
