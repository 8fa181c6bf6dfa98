"""Rewrites ``src/ledgermirror/simulator/evm_contracts.json``, the bytecode the simulator deploys, from
``compiled.json`` (run after recompiling the Solidity here: ``node compile.js *.sol > compiled.json``)."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
TARGET = HERE.parents[1] / "src" / "ledgermirror" / "simulator" / "evm_contracts.json"
NAMES = ("Erc20", "Erc721", "TokenReader")


def subset(compiled: dict[str, object]) -> dict[str, object]:
    contracts = compiled["contracts"]
    assert isinstance(contracts, dict)
    return {
        "compiler": compiled["compiler"],
        "sources": "tests/contracts/*.sol (compiled.json there; this is its subset the simulator deploys)",
        "contracts": {
            name: {key: contracts[name][key] for key in ("source", "bytecode", "runtime")} for name in NAMES
        },
    }


if __name__ == "__main__":
    document = subset(json.loads((HERE / "compiled.json").read_text()))
    TARGET.write_text(json.dumps(document, indent=1) + "\n")
