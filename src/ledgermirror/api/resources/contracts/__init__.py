"""The contract routes: contracts, their results, logs, actions, state, and the EVM-only routes answered 501;
the contract path segment, output encodings and block lookups they share."""
