"""The topic routes: one topic, its messages (a list, one by sequence number, one by consensus timestamp)."""
