"""Simulated networks written as block files, shared by the block node tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from ledgermirror.simulator.run import simulate


@pytest.fixture(scope="session")
def simulated_blocks(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """A network per block format (``blocks``: wrapped record blocks; ``native``: HIP-1056 native blocks),
    simulated once per run: two nodes, 16 simulated seconds at 30 TPS, 8 blocks."""
    made: dict[str, Path] = {}

    def network(fmt: str) -> Path:
        if fmt not in made:
            out = tmp_path_factory.mktemp(fmt)
            simulate(out, nodes=2, seconds=16, tps=30, seed=5, fmt=fmt)
            made[fmt] = out
        return made[fmt]

    return network


@pytest.fixture
def network(simulated_blocks: Callable[[str], Path]) -> Path:
    """The wrapped record blocks' network."""
    return simulated_blocks("blocks")
