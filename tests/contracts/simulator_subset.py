"""Rewrites the compiled contracts production code ships, from ``compiled.json`` (run after recompiling the
Solidity here: ``node compile.js *.sol > compiled.json``): ``src/ledgermirror/simulator/evm_contracts.json``, the
bytecode the simulator deploys, and ``src/ledgermirror/dataset/evm_contracts.json``, the bytecode a share of the
data set's contracts run (``dataset/evm_code.py``)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "src" / "ledgermirror" / "simulator" / "evm_contracts.json"
NAMES = ("Erc20", "Erc721", "TokenReader")
DATASET_TARGET = HERE.parents[1] / "src" / "ledgermirror" / "dataset" / "evm_contracts.json"
DATASET_NAMES = ("Erc20", "CallTarget")


def subset(
    compiled: dict[str, object], names: tuple[str, ...] = NAMES, user: str = "the simulator"
) -> dict[str, object]:
    contracts = compiled["contracts"]
    assert isinstance(contracts, dict)
    return {
        "compiler": compiled["compiler"],
        "sources": f"tests/contracts/*.sol (compiled.json there; this is its subset {user} deploys)",
        "contracts": {
            name: {key: contracts[name][key] for key in ("source", "bytecode", "runtime")} for name in names
        },
    }


def dataset_subset(compiled: dict[str, object]) -> dict[str, object]:
    return subset(compiled, DATASET_NAMES, "the data set")


if __name__ == "__main__":
    document = json.loads((HERE / "compiled.json").read_text())
    TARGET.write_text(json.dumps(subset(document), indent=1) + "\n")
    DATASET_TARGET.write_text(json.dumps(dataset_subset(document), indent=1) + "\n")
