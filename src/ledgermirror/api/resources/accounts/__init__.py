"""The account routes: one account, the accounts list, and what an account holds or grants (NFTs, tokens,
airdrops, allowances, staking rewards, hooks and their storage); the path resolver every account route shares."""
