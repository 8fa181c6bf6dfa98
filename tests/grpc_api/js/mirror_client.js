// The JavaScript SDK (@hashgraph/sdk) against our gRPC server: reads the address book of 0.0.102 with its
// AddressBookQuery, then subscribes to a topic from the start of time with TopicMessageQuery and prints one
// JSON line per event on stdout (the Python test writes live messages once the history has arrived).
// Usage: node mirror_client.js <host:port> <topic> <limit>
"use strict";
const { Client, TopicMessageQuery, AddressBookQuery, FileId, TopicId, Timestamp } = require("@hashgraph/sdk");

const [address, topic, limit] = process.argv.slice(2);
const say = (event) => process.stdout.write(JSON.stringify(event) + "\n");

async function main() {
    const client = Client.forNetwork({});
    client.setMirrorNetwork([address]);
    const book = await new AddressBookQuery().setFileId(FileId.ADDRESS_BOOK).execute(client);
    say({
        kind: "book",
        nodes: book.nodeAddresses.map((node) => ({
            nodeId: node.nodeId.toNumber(),
            accountId: node.accountId.toString(),
            description: node.description,
            endpoints: node.addresses.map((endpoint) => endpoint.toString()),
        })),
    });
    await new Promise((resolve) => {
        new TopicMessageQuery()
            .setTopicId(TopicId.fromString(topic))
            .setStartTime(new Timestamp(0, 0))
            .setLimit(Number(limit))
            .setCompletionHandler(() => {
                say({ kind: "complete" });
                resolve();
            })
            .subscribe(
                client,
                (message, error) => {
                    say({ kind: "error", error: String(error) });
                    resolve();
                },
                (message) => {
                    say({
                        kind: "message",
                        sequence: message.sequenceNumber.toNumber(),
                        contents: Buffer.from(message.contents).toString(),
                        seconds: message.consensusTimestamp.seconds.toString(),
                        nanos: message.consensusTimestamp.nanos.toNumber(),
                    });
                },
            );
    });
    client.close();
}

main().catch((error) => {
    say({ kind: "error", error: String(error && error.stack ? error.stack : error) });
    process.exit(1);
});
