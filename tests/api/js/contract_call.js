// The JavaScript SDK's mirror contract queries (@hashgraph/sdk) against our POST /api/v1/contracts/call: a call
// and an estimate of a view, and a call with parameters. For a mirror at 127.0.0.1 the SDK sends contract calls
// to port 8545 over HTTP, as to a local node's web3 service. Prints one JSON object with the answers.
const {
    Client,
    ContractFunctionParameters,
    ContractId,
    MirrorNodeContractCallQuery,
    MirrorNodeContractEstimateQuery,
} = require("@hashgraph/sdk");

async function main() {
    const [mirror, contract] = process.argv.slice(2);
    const client = Client.forNetwork({}).setMirrorNetwork([mirror]);
    const contractId = ContractId.fromString(contract);
    const product = await new MirrorNodeContractCallQuery()
        .setContractId(contractId)
        .setFunction("multiplySimpleNumbers")
        .execute(client);
    const value = await new MirrorNodeContractCallQuery()
        .setContractId(contractId)
        .setFunction("values", new ContractFunctionParameters().addUint256(7))
        .execute(client);
    const estimate = await new MirrorNodeContractEstimateQuery()
        .setContractId(contractId)
        .setFunction("increment")
        .execute(client);
    let failure = null;
    try {
        await new MirrorNodeContractCallQuery()
            .setContractId(contractId)
            .setFunction("revertWithReason")
            .execute(client);
    } catch (error) {
        failure = String(error.message);
    }
    client.close();
    process.stdout.write(JSON.stringify({ product, value, estimate, failure }) + "\n");
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
