"""The block routes: the blocks list and one block."""
