"""The network routes: exchange rate, fee schedule and fee estimate (from system files), nodes, registered
nodes, staking and supply."""
