"""The balances route: live balances, or those of the snapshot in effect at a timestamp."""
