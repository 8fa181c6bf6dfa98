"""The host's speed probe of the benchmarks (``bench/_hostspeed.py``): the same work timed on its thread's CPU
clock, every interval, and the probes of a window."""

from __future__ import annotations

import threading
import time

import pytest

from bench import _hostspeed


def test_a_probe_times_the_work_on_its_own_threads_cpu_clock() -> None:
    quiet = min(_hostspeed.probe_once() for _ in range(5))
    assert quiet > 0
    stop = threading.Event()

    def spin() -> (
        None
    ):  # holds the interpreter half the time: the probe waits, and its CPU clock does not count it
        while not stop.is_set():
            sum(range(1000))

    other = threading.Thread(target=spin)
    other.start()
    try:
        started = time.perf_counter()
        busy = min(_hostspeed.probe_once() for _ in range(5))
        wall = (time.perf_counter() - started) / 5 * 1e6
    finally:
        stop.set()
        other.join()
    assert busy < wall  # the wait for the interpreter lock is left out
    assert busy < quiet * 3


def test_probes_are_taken_every_interval_until_the_end() -> None:
    with _hostspeed.SpeedProbe(interval=0.05) as probe:
        time.sleep(0.4)
    taken = len(probe.samples)
    assert 4 <= taken <= 10
    ends = [at for at, _ in probe.samples]
    assert ends == sorted(ends)
    assert all(took > 0 for _, took in probe.samples)
    time.sleep(0.15)
    assert len(probe.samples) == taken  # stopped with the block


def test_a_windows_probe_is_the_median_of_those_that_ended_in_it() -> None:
    samples = [(1.0, 100.0), (2.0, 300.0), (3.0, 200.0), (4.0, 900.0)]
    assert _hostspeed.median_between(samples, 0.5, 3.0) == 200.0
    assert _hostspeed.median_between(samples, 1.0, 2.0) == 300.0  # the start is the window before's end
    assert _hostspeed.median_between(samples, 1.0, 4.0) == 300.0
    assert _hostspeed.median_between(samples, 4.0, 9.0) is None


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        _hostspeed.SpeedProbe(interval=0)
