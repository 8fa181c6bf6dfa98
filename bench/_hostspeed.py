"""How fast the host runs, while a benchmark runs: a fixed piece of work timed on its own thread's CPU clock.

The import's CPU a transaction moves from one hour to the next on this host for the same code and stream (by
more than a third: docs/performance.md, "the host changed speed under these runs"), and within a run, so a slow
window may be the host's and not the import's. :class:`SpeedProbe` runs the same work every ``interval`` seconds
on a thread of its own and records the CPU time it took (``time.thread_time``, so waiting for the other cores or
for the interpreter lock does not count): hashing a megabyte (memory and caches) and a short loop of the
interpreter. A window whose probe took longer ran on a slower host. The work takes about 1.5 ms on a fast hour,
under a thousandth of the interval.
"""

from __future__ import annotations

import hashlib
import statistics
import threading
import time
from collections.abc import Sequence
from types import TracebackType

WORK_BYTES = b"\x5a" * (1 << 20)
LOOP_STEPS = 20_000


def probe_once() -> float:
    """The work's CPU time on this thread, in microseconds."""
    started = time.thread_time()
    hashlib.sha256(WORK_BYTES).digest()
    total = 0
    for step in range(LOOP_STEPS):
        total += step & 7
    return (time.thread_time() - started) * 1e6


class SpeedProbe:
    """Probes taken every ``interval`` seconds on a daemon thread, as (``time.perf_counter()`` when it ended,
    microseconds), from ``with`` to its end."""

    def __init__(self, interval: float = 2.0) -> None:
        if interval <= 0:
            raise ValueError("the probe's interval must be positive")
        self.interval = interval
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bench-speed-probe", daemon=True)

    def _run(self) -> None:
        while True:
            took = probe_once()
            self.samples.append((time.perf_counter(), took))
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> SpeedProbe:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()


def median_between(samples: Sequence[tuple[float, float]], start: float, end: float) -> float | None:
    """The median probe of those that ended in ``(start, end]``; None when none did."""
    inside = [took for at, took in samples if start < at <= end]
    return round(statistics.median(inside), 1) if inside else None
