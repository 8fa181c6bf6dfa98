"""The mirror's gRPC API: ``ConsensusService.subscribeTopic`` and ``NetworkService.getNodes``, wire-compatible
with the reference (``com.hedera.mirror.api.proto``), on grpcio's asyncio server (see docs/grpc.md)."""
