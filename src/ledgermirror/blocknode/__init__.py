"""The block node API (HIP-1081) over gRPC: a client that streams blocks from block nodes, and a block node of
our own that serves a folder of block files (tests, simulations, benchmarks). No database here.

Modules: ``subscribe.proto`` (our description of ``org.hiero.block.api``'s ``subscribeBlockStream`` and
``serverStatus``) and :mod:`.codegen` (the build step that generates ``subscribe_pb2*`` from it with
``grpcio-tools``); :mod:`.wire` (the typed door to the generated code); :mod:`.client` (``BlockNodeClient``:
status, subscription, resume, fallback, backoff); :mod:`.server` and :mod:`.folder` (the block node);
:mod:`.command` (the ``ledgermirror blocknode`` command line) and :mod:`.serve` (running it).
``importer/block_node.py`` makes the client a block source of the importer. See docs/blocknode.md.
"""
