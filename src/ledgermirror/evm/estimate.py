"""The gas a call needs, as the reference's web3 estimates it (``BinaryGasEstimator``, upstream-web3.md §3.7).

The call is run once with the request's gas; its gas used is the lower bound and the request's gas the upper.
Then a binary search: a run with the middle that fails (or uses no gas) raises the lower bound, one that succeeds
lowers the upper bound, and the search stops when two successive middles are closer than ``threshold_percent``
of the first gas used, the bounds meet, or after ``max_iterations`` runs. The answer is the upper bound.
"""

from __future__ import annotations

from collections.abc import Callable


def estimate_gas(
    run: Callable[[int], tuple[bool, int]],
    used: int,
    gas: int,
    *,
    threshold_percent: float = 0.10,
    max_iterations: int = 20,
) -> int:
    """``run(gas) -> (success, gas_used)``; ``used`` is the first run's gas used with ``gas``."""
    if used >= gas:
        return used
    low, high, previous = used, gas, used
    threshold = int(used * threshold_percent)
    iterations = 0
    while low + 1 < high and iterations < max_iterations:
        middle = (low + high) // 2
        success, spent = run(middle)
        iterations += 1
        if not success or spent == 0:
            low = middle
        else:
            high = middle
            if abs(previous - middle) < threshold:
                low = high
        previous = middle
    return high
