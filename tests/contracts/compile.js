// Compiles the Solidity files named on the command line with solc-js (the npm package `solc`, found through
// NODE_PATH) and prints, per contract, its ABI, creation bytecode and runtime bytecode as one JSON object.
const fs = require("fs");
const path = require("path");
const solc = require("solc");

const sources = {};
for (const file of process.argv.slice(2)) {
    sources[path.basename(file)] = { content: fs.readFileSync(file, "utf8") };
}
const input = {
    language: "Solidity",
    sources,
    settings: {
        optimizer: { enabled: true, runs: 200 },
        evmVersion: "shanghai",
        outputSelection: { "*": { "*": ["abi", "evm.bytecode.object", "evm.deployedBytecode.object"] } },
    },
};
const output = JSON.parse(solc.compile(JSON.stringify(input)));
const errors = (output.errors || []).filter((e) => e.severity === "error");
if (errors.length > 0) {
    console.error(errors.map((e) => e.formattedMessage).join("\n"));
    process.exit(1);
}
const result = { compiler: solc.version(), contracts: {} };
for (const [file, contracts] of Object.entries(output.contracts)) {
    for (const [name, contract] of Object.entries(contracts)) {
        result.contracts[name] = {
            source: file,
            abi: contract.abi,
            bytecode: contract.evm.bytecode.object,
            runtime: contract.evm.deployedBytecode.object,
        };
    }
}
process.stdout.write(JSON.stringify(result, null, 1) + "\n");
