"""The token routes: the tokens list, one token (with its custom fees), its balances, its NFTs and an NFT's
history; the `{tokenId}` path segment."""
