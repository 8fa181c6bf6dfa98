"""A simulated network written as block files (wrapped record blocks), shared by the block node tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledgermirror.simulator.run import simulate


@pytest.fixture(scope="session")
def network(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two nodes, 16 simulated seconds at 30 TPS: 8 blocks."""
    out = tmp_path_factory.mktemp("blocks")
    simulate(out, nodes=2, seconds=16, tps=30, seed=5, fmt="blocks")
    return out
